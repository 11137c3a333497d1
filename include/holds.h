/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_HOLDS_H
#define CMDGATE_HOLDS_H

#include <json-c/json.h>

#include "scheduler.h"

/*
 * Who holds reloads back (cmdgate-protocol(7), Scheduling): how many
 * connections hold each editor flag, so that the broker-wide state is a
 * look-up, not a walk over every connection; and the editor probe's
 * flags (probe.c), a holder of its own.
 */

#define BUSY_BIT(b)	SCHED_BUSY_BIT(b)

/* What one connection reported (report_editor_state). */
struct editor_flags {
	int	tests_running;
	int	compiling;
	int	busy;
};

/* Connections holding each flag, and the editor probe's flags. */
struct holds {
	unsigned		tests_running;
	unsigned		compiling;
	unsigned		busy;
	struct editor_flags	probe;
};

/* A connection's flags go from from to to: 1 when they differ, else 0. */
int		 holds_change(struct holds *, const struct editor_flags *from,
		    const struct editor_flags *to);
/* The editor probe's flags are f now: 1 when they changed, else 0. */
int		 holds_set_probe(struct holds *, const struct editor_flags *f);
/* The flags held by any connection or the probe. */
void		 holds_get(const struct holds *, struct editor_flags *);
/* What holds reloads: the connections' and the probe's flags, tool_bits (BUSY_BIT()s
 * of the running tools). */
void		 holds_busy(const struct holds *, unsigned tool_bits,
		    struct sched_busy *);
/* The "busy" object of cmdgate-protocol(7).  Caller puts. */
json_object	*holds_json(const struct sched_busy *);

#endif
