/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_DAEMON_H
#define CMDGATE_DAEMON_H

/*
 * The daemon's own functions, private to src/daemon/.
 */

#include <stddef.h>
#include <stdio.h>

#include "options.h"

struct options;
struct server;

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

/* instance.c */

/* --instance, "default" when not given: 0, or -1 with err set. */
int	 instance_name(struct options *opt, char *err, size_t errlen);

/*
 * Whether the instance name is free, once the state dir is locked: 0, or
 * -1 with err naming the live broker whose instance file has it (a stale
 * file is not one).
 */
int	 instance_check(const struct options *opt, char *err,
	    size_t errlen);
/* Publish srv's instance file (once it listens): 0, or -1 logged. */
int	 instance_publish(struct server *srv);
/* Remove it, at stop. */
void	 instance_withdraw(struct server *srv);

/* sdnotify.c */

/*
 * systemd's notify protocol: one datagram of "KEY=VALUE" lines to the
 * socket named by $NOTIFY_SOCKET ("@name" for the abstract namespace).
 * Without $NOTIFY_SOCKET nothing is sent.  0 on success or when there is
 * no socket, -1 when sending failed (logged).
 */
int	sdnotify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
