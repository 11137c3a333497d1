/* SPDX-License-Identifier: ISC */
/*
 * The editor probe's events (include/edevent.h): what one poll of the
 * editor's own state call says, whoever made the call.
 */
#include "config.h"

#include <string.h>

#include <json-c/json.h>

#include "edevent.h"
#include "jstrict.h"
#include "jtemplate.h"
#include "wire.h"

#define EDEVENT_EVERY_MS	1000	/* every_ms's default */
#define EDEVENT_CALL_MS		5000	/* a poll's wait to be sent, then
					   its call: each at least this */

static json_object *
member(json_object *o, const char *name)
{
	json_object	*v;

	return json_object_object_get_ex(o, name, &v) ? v : NULL;
}

int64_t
edevent_every_ms(json_object *probe)
{
	json_object	*v = member(probe, "every_ms");
	int64_t		 every = v != NULL ? json_object_get_int64(v) :
			    EDEVENT_EVERY_MS;

	return every < 50 ? 50 : every > 60000 ? 60000 : every;
}

int64_t
edevent_call_ms(json_object *probe)
{
	int64_t	every = edevent_every_ms(probe);

	return every > EDEVENT_CALL_MS ? every : EDEVENT_CALL_MS;
}

/* A flag's value: true only when its path holds the boolean true. */
static int
edevent_flag(json_object *wrap, json_object *path)
{
	json_object	*v;

	if (!json_object_is_type(path, json_type_string) ||
	    (v = jpath_get(wrap, json_object_get_string(path))) == NULL ||
	    !json_object_is_type(v, json_type_boolean))
		return 0;
	return json_object_get_boolean(v);
}

static json_object *
edevent_new(void)
{
	json_object	*ev = json_object_new_object();

	json_object_object_add(ev, WIRE_EVENT,
	    json_object_new_string(WIRE_EV_EDITOR));
	return ev;
}

/* It answered res (borrowed): the flags its paths name there. */
static json_object *
edevent_reachable(json_object *probe, json_object *res)
{
	json_object	*ev = edevent_new();
	json_object	*flags = json_object_new_object();
	json_object	*wrap = json_object_new_object();
	json_object	*names = member(probe, "flags");

	json_object_object_add(wrap, "result", json_object_get(res));
	if (json_object_is_type(names, json_type_object)) {
		json_object_object_foreach(names, k, path)
			json_object_object_add(flags, k,
			    json_object_new_boolean(edevent_flag(wrap, path)));
	}
	json_object_put(wrap);
	json_object_object_add(ev, WIRE_REACHABLE, json_object_new_boolean(1));
	json_object_object_add(ev, WIRE_FLAGS, flags);
	return ev;
}

json_object *
edevent_of(json_object *probe, enum up_status st, int behind,
    json_object *out, const char *err)
{
	json_object	*ev;

	/* An error answer says nothing of the flags: as if unreachable. */
	if (st == UP_OK)
		return edevent_reachable(probe, out);
	ev = edevent_new();
	err = err != NULL ? err : "";
	if (st == UP_TIMEOUT && behind) {
		json_object_object_add(ev, WIRE_ASKED,
		    json_object_new_boolean(0));
		json_object_object_add(ev, WIRE_ERROR,
		    utf8_json(err, strlen(err)));
		return ev;
	}
	json_object_object_add(ev, WIRE_REACHABLE, json_object_new_boolean(0));
	/* It may quote the editor's bytes: the broker reads strict JSON. */
	json_object_object_add(ev, WIRE_ERROR, utf8_json(err, strlen(err)));
	return ev;
}
