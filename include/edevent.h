/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_EDEVENT_H
#define CMDGATE_EDEVENT_H

#include <stdint.h>

#include <json-c/json.h>

#include "upstatus.h"

/*
 * The editor probe's polls, wherever they run (the broker over an editor
 * link, src/engine/edpoll.c; a worker that connects by itself,
 * workers/edwatch.c): how often, how long each may take, and the event
 * one poll's outcome is (wire.h, WIRE_EV_EDITOR).  probe is the table's
 * "editor" object (borrowed).  See cmdgate.tools(5), editor.
 */

/* every_ms of the probe, 1000 by default, within 50 and 60000. */
int64_t		 edevent_every_ms(json_object *probe);
/* How long a poll may wait for its call, then take to answer: each at
 * least 5000 ms, and at least every_ms. */
int64_t		 edevent_call_ms(json_object *probe);
/*
 * The event of a poll that ended st: with the flags the answer out
 * (borrowed) holds at the probe's paths when UP_OK; "asked": false when
 * the editor was not asked at all (behind: another exchange held the
 * bridge all along), which keeps what it last said; else unreachable,
 * with err (any bytes; made UTF-8).  Caller puts.
 */
json_object	*edevent_of(json_object *probe, enum up_status st, int behind,
		    json_object *out, const char *err);

#endif
