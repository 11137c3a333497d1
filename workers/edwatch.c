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

#include "exchange.h"
#include "jstrict.h"
#include "jtemplate.h"
#include "edwatch.h"
#include "notify.h"
#include "wire.h"
#include "wproc.h"

#define PROBE_EVERY_MS	1000	/* every_ms's default */
#define PROBE_CALL_MS	5000	/* a poll's wait for the lock, then its
				   call: each at least this long */

static json_object *
member(json_object *o, const char *name)
{
	json_object	*v;

	return json_object_object_get_ex(o, name, &v) ? v : NULL;
}

/* A flag's value: true only when its path holds the boolean true. */
static int
edwatch_flag(json_object *wrap, json_object *path)
{
	json_object	*v;

	if (!json_object_is_type(path, json_type_string) ||
	    (v = jpath_get(wrap, json_object_get_string(path))) == NULL ||
	    !json_object_is_type(v, json_type_boolean))
		return 0;
	return json_object_get_boolean(v);
}

/* The event for one poll's answer res (borrowed).  Caller puts. */
static json_object *
edwatch_reachable(json_object *probe, json_object *res)
{
	json_object	*ev = json_object_new_object();
	json_object	*flags = json_object_new_object();
	json_object	*wrap = json_object_new_object();
	json_object	*names = member(probe, "flags");

	json_object_object_add(wrap, "result", json_object_get(res));
	if (json_object_is_type(names, json_type_object)) {
		json_object_object_foreach(names, k, path)
			json_object_object_add(flags, k,
			    json_object_new_boolean(edwatch_flag(wrap, path)));
	}
	json_object_put(wrap);
	json_object_object_add(ev, WIRE_EVENT,
	    json_object_new_string(WIRE_EV_EDITOR));
	json_object_object_add(ev, WIRE_REACHABLE, json_object_new_boolean(1));
	json_object_object_add(ev, WIRE_FLAGS, flags);
	return ev;
}

static json_object *
edwatch_unreachable(const char *why)
{
	json_object	*ev = json_object_new_object();

	json_object_object_add(ev, WIRE_EVENT,
	    json_object_new_string(WIRE_EV_EDITOR));
	json_object_object_add(ev, WIRE_REACHABLE, json_object_new_boolean(0));
	/* It may quote the editor's bytes: the broker reads strict JSON. */
	json_object_object_add(ev, WIRE_ERROR, utf8_json(why, strlen(why)));
	return ev;
}

/*
 * Another exchange (a job's forward to the same bridge, which serves one
 * client at a time) held the lock all along: nothing was asked, so
 * nothing is known of the editor; what was last said stands.
 */
static json_object *
edwatch_unasked(const char *why)
{
	json_object	*ev = json_object_new_object();

	json_object_object_add(ev, WIRE_EVENT,
	    json_object_new_string(WIRE_EV_EDITOR));
	json_object_object_add(ev, WIRE_ASKED, json_object_new_boolean(0));
	json_object_object_add(ev, WIRE_ERROR, json_object_new_string(why));
	return ev;
}

/* One poll: its event.  Caller puts. */
static json_object *
edwatch_poll(struct exchange *x, json_object *probe)
{
	json_object	*out = NULL, *ev;
	enum up_status	 st;
	const char	*call = json_object_get_string(member(probe, "call"));

	st = exchange_once(x, call, member(probe, "params"), wproc_now_ms() +
	    x->call_ms, &out);
	/* An error answer says nothing of the flags: as if unreachable. */
	if (st == UP_OK)
		ev = edwatch_reachable(probe, out);
	else if (st == UP_TIMEOUT && x->locked_out)
		ev = edwatch_unasked(x->err);
	else
		ev = edwatch_unreachable(x->err);
	json_object_put(out);
	return ev;
}

void
edwatch_run(json_object *probe, const char *lock_dir,
    const sigset_t *waitmask)
{
	struct exchange	 x;
	json_object	*ev, *v = member(probe, "every_ms");
	int64_t		 every = v != NULL ? json_object_get_int64(v) :
			    PROBE_EVERY_MS;
	char		*last = NULL;
	const char	*s;

	every = every < 50 ? 50 : every > 60000 ? 60000 : every;
	memset(&x, 0, sizeof(x));
	x.dialect = json_object_get_string(member(probe, "dialect"));
	x.dialect = x.dialect != NULL ? x.dialect : "jsonrpc";
	x.to = json_object_get_string(member(probe, "to"));
	x.to = x.to != NULL ? x.to : "?";
	x.lock_dir = lock_dir;
	x.waitmask = waitmask;
	/* The lock waited for that long, then the call as long again. */
	x.open_ms = x.call_ms = every > PROBE_CALL_MS ? every : PROBE_CALL_MS;
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
