/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_PROCLIST_H
#define CMDGATE_PROCLIST_H

#include <sys/types.h>

#include <stddef.h>

/*
 * The children of parent, read from /proc: a worker's leftovers (run.c),
 * a killed worker's tool that the broker was never told of (worker.c).
 * The kernel's children file needs an option; /proc/PID/stat does not.
 * The list (caller frees) and *count; NULL and 0 when there is none or
 * /proc cannot be read.
 */
pid_t	*proc_children(pid_t parent, size_t *count);
/*
 * Whether an entry of pid's environment, as /proc shows it (as it was at
 * its exec; 0 when it cannot be read), starts with prefix
 * ("CMDGATE_TICKET=": a tool).
 */
int	 proc_environ_has(pid_t pid, const char *prefix);

#endif
