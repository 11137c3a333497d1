/* SPDX-License-Identifier: ISC */
/*
 * A worker's or the editor probe's exchange over an editor link
 * (WIRE_EV_CALL): the link its call names, and the answer back as one
 * line, to the process that asked if it is still there.  See
 * include/wire.h and cmdgated(8), Editor link.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine.h"
#include "link.h"
#include "util.h"
#include "wire.h"

struct edlink_call {
	edlink_reply_fn	 reply;
	void		*arg;
	pid_t		 pid;
	int64_t		 id;
};

static json_object *
edlink_answer_json(int64_t id, const struct link_answer *a)
{
	static const char *const names[] = WIRE_UP_STATUS;
	const struct { const char *k; int v; } flags[] = {
		{ WIRE_CALL_SENT, a->sent }, { WIRE_CALL_CLOSED, a->closed },
		{ WIRE_CALL_NOLISTEN, a->nolisten },
		{ WIRE_CALL_BEHIND, a->behind } };
	json_object	*m = json_object_new_object();
	size_t		 i;

	json_object_object_add(m, WIRE_CALL_ID, json_object_new_int64(id));
	json_object_object_add(m, WIRE_CALL_STATUS,
	    json_object_new_string(names[a->status]));
	if (a->out != NULL)
		json_object_object_add(m, WIRE_CALL_OUT,
		    json_object_get(a->out));
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		json_object_object_add(m, flags[i].k,
		    json_object_new_boolean(flags[i].v));
	json_object_object_add(m, WIRE_CALL_SEEN_AGO,
	    json_object_new_int64(a->seen_ago_ms));
	if (a->err != NULL)
		json_object_object_add(m, WIRE_ERROR,
		    json_object_new_string(a->err));
	return m;
}

static void
edlink_answered(void *arg, const struct link_answer *a)
{
	struct edlink_call	*c = arg;
	json_object		*m = edlink_answer_json(c->id, a);

	c->reply(c->arg, c->pid, m);
	json_object_put(m);
	free(c);
}

/* No link for to: the call fails as a bridge that speaks no more would. */
static void
edlink_refuse(int64_t id, const char *to, edlink_reply_fn reply, void *arg,
    pid_t pid)
{
	struct link_answer	 a;
	json_object		*m;
	char			 err[512];

	memset(&a, 0, sizeof(a));
	a.status = UP_PROTOCOL;
	a.seen_ago_ms = -1;
	snprintf(err, sizeof(err), "%s: no editor link for it (too many "
	    "bridges linked, or a dialect no link carries for workers)", to);
	a.err = err;
	m = edlink_answer_json(id, &a);
	reply(arg, pid, m);
	json_object_put(m);
}

/* Member name of ev as a string, or NULL. */
static const char *
edlink_str(json_object *ev, const char *name)
{
	json_object	*v;

	if (!json_object_object_get_ex(ev, name, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int
edlink_call(struct links *LS, json_object *ev, edlink_reply_fn reply,
    void *arg, pid_t pid)
{
	struct edlink_call	*c;
	struct link		*L;
	json_object		*id, *v;
	const char		*to, *dialect, *method;
	int64_t			 open_ms, timeout_ms;

	if (!json_object_object_get_ex(ev, WIRE_CALL_ID, &id) ||
	    !json_object_is_type(id, json_type_int) ||
	    (to = edlink_str(ev, WIRE_CALL_TO)) == NULL ||
	    (dialect = edlink_str(ev, WIRE_CALL_DIALECT)) == NULL)
		return -1;
	method = edlink_str(ev, WIRE_CALL_METHOD);
	if (json_object_object_get_ex(ev, WIRE_CALL_METHOD, &v) &&
	    method == NULL)
		return -1;
	if ((L = links_get(LS, dialect, to)) == NULL ||
	    !link_carries_workers(L)) {
		edlink_refuse(json_object_get_int64(id), to, reply, arg, pid);
		return 0;
	}
	open_ms = json_object_get_int64(json_object_object_get(ev,
	    WIRE_CALL_OPEN_MS));
	timeout_ms = json_object_get_int64(json_object_object_get(ev,
	    WIRE_CALL_TIMEOUT_MS));
	c = xcalloc(1, sizeof(*c));
	c->reply = reply;
	c->arg = arg;
	c->pid = pid;
	c->id = json_object_get_int64(id);
	link_call(L, method, json_object_object_get(ev, WIRE_CALL_PARAMS),
	    open_ms, timeout_ms, edlink_answered, c);
	return 0;
}
