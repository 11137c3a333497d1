/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLI_JOBS_H
#define CMDGATE_CLI_JOBS_H

#include "cli.h"

/* The job commands of cmdgate(1): submit, poll, wait, cancel, jobs. */
int	 cmd_submit(struct cli *, int, char **);
int	 cmd_poll(struct cli *, int, char **);
int	 cmd_wait(struct cli *, int, char **);
int	 cmd_cancel(struct cli *, int, char **);
int	 cmd_jobs(struct cli *, int, char **);

#endif
