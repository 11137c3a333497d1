/* SPDX-License-Identifier: ISC */
/*
 * The editor probe: the worker started with a "probe" spec polls the
 * editor's own state call and tells the broker the flags it reads there,
 * so that a compile or a test run started in the editor by a person
 * holds reload jobs too.  See cmdgated(8) and cmdgate.tools(5), editor.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "edevent.h"
#include "edwatch.h"
#include "exchange.h"
#include "jstrict.h"
#include "wire.h"
#include "wproc.h"

/* One poll: its event.  Caller puts. */
static json_object *
edwatch_poll(struct exchange *x, json_object *probe)
{
	json_object	*out = NULL, *ev;
	enum up_status	 st;

	st = exchange_once(x, json_object_get_string(json_object_object_get(
	    probe, "call")), json_object_object_get(probe, "params"),
	    wproc_now_ms() + x->call_ms, &out);
	ev = edevent_of(probe, st, x->locked_out, out, x->err);
	json_object_put(out);
	return ev;
}

void
edwatch_run(json_object *probe, const char *lock_dir,
    const sigset_t *waitmask)
{
	struct exchange	 x;
	json_object	*ev;
	int64_t		 every = edevent_every_ms(probe);
	char		*last = NULL;
	const char	*s;

	memset(&x, 0, sizeof(x));
	x.dialect = json_object_get_string(json_object_object_get(probe,
	    "dialect"));
	x.dialect = x.dialect != NULL ? x.dialect : "jsonrpc";
	x.to = json_object_get_string(json_object_object_get(probe, "to"));
	x.to = x.to != NULL ? x.to : "?";
	x.lock_dir = lock_dir;
	x.waitmask = waitmask;
	/* Its wait to be sent that long, then the call as long again. */
	x.open_ms = x.call_ms = edevent_call_ms(probe);
	wproc_relay = 0;
	while (!got_term) {
		ev = edwatch_poll(&x, probe);
		s = jstrict_to_string(ev);
		if (got_term == 0 && (last == NULL || strcmp(s, last) != 0)) {
			free(last);
			last = strdup(s);
			wproc_emit(json_object_get(ev));
		}
		json_object_put(ev);
		if (wproc_wait(-1, 0, wproc_now_ms() + every, waitmask) < 0)
			break;
	}
	free(last);
}
