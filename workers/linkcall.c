/* SPDX-License-Identifier: ISC */
/*
 * An exchange through the broker's editor link: the call goes up the
 * event socket as a line, the answer comes down it.  The broker's link
 * owns the connection, the WELCOME and the order; the worker keeps its
 * command's logic (retries, awaits, cancel) as with a connection of its
 * own.  See cmdgated(8), Editor link.
 */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jsonl.h"
#include "linkcall.h"
#include "umcp.h"
#include "wire.h"
#include "wproc.h"

/* The broker's answer comes after the call's own deadline, at worst. */
#define LINKCALL_SLACK_MS	2000
/* An answer line: the bridge's longest frame, escaped. */
#define LINKCALL_LINE_MAX	((size_t)UMCP_MAX * 6 + 65536)

int			 linkcall_on;

static struct jsonl	 lc_jl;
static int		 lc_ready;
static int64_t		 lc_id;
static int64_t		 lc_until;
static const sigset_t	*lc_mask;

int
linkcall_linked(const struct exchange *x)
{
	return linkcall_on && umcp_dialect(x->dialect);
}

static int
linkcall_wait(void *arg, int fd, int ms)
{
	int	w;

	(void)arg;
	(void)ms;
	if ((w = wproc_wait(fd, POLLIN, lc_until, lc_mask)) < 0)
		return JSONL_WAIT_CANCEL;
	return w;
}

static void
linkcall_send(struct exchange *x, const char *method, json_object *params,
    int64_t deadline)
{
	json_object	*ev = json_object_new_object();
	int64_t		 left = deadline - wproc_now_ms();

	json_object_object_add(ev, WIRE_EVENT,
	    json_object_new_string(WIRE_EV_CALL));
	json_object_object_add(ev, WIRE_CALL_ID, json_object_new_int64(++lc_id));
	json_object_object_add(ev, WIRE_CALL_TO, json_object_new_string(x->to));
	json_object_object_add(ev, WIRE_CALL_DIALECT,
	    json_object_new_string(x->dialect));
	if (method != NULL)
		json_object_object_add(ev, WIRE_CALL_METHOD,
		    json_object_new_string(method));
	if (params != NULL)
		json_object_object_add(ev, WIRE_CALL_PARAMS,
		    json_object_get(params));
	json_object_object_add(ev, WIRE_CALL_OPEN_MS,
	    json_object_new_int64(x->open_ms));
	json_object_object_add(ev, WIRE_CALL_TIMEOUT_MS,
	    json_object_new_int64(left > 0 ? left : 0));
	wproc_emit(ev);
}

/* The broker's answer msg into x and *out: its status. */
static enum up_status
linkcall_take(struct exchange *x, json_object *msg, json_object **out)
{
	static const char *const names[] = WIRE_UP_STATUS;
	const char	*s;
	json_object	*v;
	size_t		 i;

	s = json_object_get_string(json_object_object_get(msg,
	    WIRE_CALL_STATUS));
	for (i = 0; s != NULL && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0)
			break;
	if (s == NULL || i == sizeof(names) / sizeof(names[0])) {
		snprintf(x->err, sizeof(x->err), "%s: the broker's link "
		    "answered garbled", x->to);
		return UP_PROTOCOL;
	}
	x->sent = json_object_get_boolean(json_object_object_get(msg,
	    WIRE_CALL_SENT));
	x->closed = json_object_get_boolean(json_object_object_get(msg,
	    WIRE_CALL_CLOSED));
	x->nolisten = json_object_get_boolean(json_object_object_get(msg,
	    WIRE_CALL_NOLISTEN));
	x->locked_out = json_object_get_boolean(json_object_object_get(msg,
	    WIRE_CALL_BEHIND));
	x->seen_ago = json_object_object_get_ex(msg, WIRE_CALL_SEEN_AGO, &v) ?
	    json_object_get_int64(v) : -1;
	snprintf(x->err, sizeof(x->err), "%s", (s = json_object_get_string(
	    json_object_object_get(msg, WIRE_ERROR))) != NULL ? s : "");
	if (json_object_object_get_ex(msg, WIRE_CALL_OUT, &v))
		*out = json_object_get(v);
	return (enum up_status)i;
}

/* The answer to call lc_id: its status. */
static enum up_status
linkcall_await(struct exchange *x, json_object **out)
{
	json_object		*msg;
	enum jsonl_status	 st;
	enum up_status		 ust;
	int64_t			 left;

	for (;;) {
		left = lc_until - wproc_now_ms();
		st = jsonl_json(&lc_jl, left > 0 ? left : 0, &msg);
		if (st == JSONL_MSG) {
			if (json_object_get_int64(json_object_object_get(msg,
			    WIRE_CALL_ID)) == lc_id) {
				ust = linkcall_take(x, msg, out);
				json_object_put(msg);
				return ust;
			}
			json_object_put(msg);	/* a call given up before */
			continue;
		}
		if (st == JSONL_TIMEOUT) {
			snprintf(x->err, sizeof(x->err), "%s: did not answer "
			    "in time", x->to);
			return UP_TIMEOUT;
		}
		if (st != JSONL_CANCELLED && got_term == 0)
			got_term = 1;	/* the broker is gone */
		snprintf(x->err, sizeof(x->err), "%s: call cancelled", x->to);
		return UP_CANCELLED;
	}
}

enum up_status
linkcall(struct exchange *x, const char *method, json_object *params,
    int64_t deadline, json_object **out)
{
	if (!lc_ready) {
		jsonl_init(&lc_jl, WIRE_EVENTS_FD, LINKCALL_LINE_MAX);
		lc_jl.wait = linkcall_wait;
		lc_ready = 1;
	}
	lc_mask = x->waitmask;
	lc_until = deadline + LINKCALL_SLACK_MS;
	linkcall_send(x, method, params, deadline);
	if (got_term) {
		snprintf(x->err, sizeof(x->err), "%s: call cancelled", x->to);
		return UP_CANCELLED;
	}
	return linkcall_await(x, out);
}
