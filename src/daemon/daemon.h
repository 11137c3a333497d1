/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_DAEMON_H
#define CMDGATE_DAEMON_H

#include <stdio.h>

#include "options.h"

/* The daemon's own functions: the broker's command line (options.c). */

enum opt_result {
	OPT_RUN,	/* options parsed, run the broker */
	OPT_EXIT,	/* --help or --version printed, exit 0 */
	OPT_USAGE,	/* bad flag or value, message in err; exit 64 */
};

/*
 * Fill *o from defaults, the environment and argv.  On OPT_USAGE err holds
 * one line naming the flag.  Strings in *o are owned by it: options_free().
 */
enum opt_result	 options_parse(struct options *o, int argc, char **argv,
		    FILE *out, char *err, size_t errlen);
void		 options_free(struct options *o);
void		 options_usage(FILE *);
const char	*options_sync_name(enum sync_mode);

#endif
