/* SPDX-License-Identifier: ISC */
/* One exchange with an upstream: over the broker's link, or a connection
 * of its own for a call. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "exchange.h"
#include "linkcall.h"
#include "upseen.h"
#include "upstream.h"
#include "wproc.h"

/*
 * The upstreams the broker does not link serve many clients at once, and
 * a long call (uLoopMCP's run-tests answers when the run ends) must not
 * hold every read behind it: each exchange connects by itself.
 */
static enum up_status
exchange_own(struct exchange *x, const char *method, json_object *params,
    int64_t deadline, json_object **out)
{
	struct upstream	*u;
	enum up_status	 st;
	int64_t		 open_by = wproc_now_ms() + x->open_ms;

	st = upstream_open(x->dialect, x->to, open_by < deadline ? open_by :
	    deadline, x->waitmask, &u, &x->nolisten, x->err, sizeof(x->err));
	if (st == UP_OK)
		upseen_stamp(x->lock_dir, x->to);
	/* No connection or WELCOME within open_ms: the bridge is away. */
	if (st == UP_TIMEOUT && wproc_now_ms() < deadline)
		st = UP_REFUSED;
	if (st != UP_OK)
		return st;
	if (method != NULL)
		st = upstream_call(u, method, params, deadline, out, x->err,
		    sizeof(x->err));
	else
		st = upstream_ping(u, deadline, x->err, sizeof(x->err));
	x->sent = upstream_sent(u);
	x->closed = st == UP_REFUSED;
	upstream_close(u);
	return st;
}

enum up_status
exchange_once(struct exchange *x, const char *method, json_object *params,
    int64_t deadline, json_object **out)
{
	*out = NULL;
	x->sent = x->closed = x->locked_out = x->nolisten = 0;
	x->seen_ago = -1;
	if (x->call_ms > 0)
		deadline = wproc_now_ms() + x->call_ms;
	if (linkcall_linked(x))
		return linkcall(x, method, params, deadline, out);
	return exchange_own(x, method, params, deadline, out);
}
