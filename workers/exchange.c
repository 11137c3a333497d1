/* SPDX-License-Identifier: ISC */
/* One locked connect ... call ... close with an upstream. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "exchange.h"
#include "uplock.h"
#include "upstream.h"
#include "wproc.h"

/*
 * The lock, or the status that ends the exchange before it began.  Only
 * MCP for Unity's bridge serves one client at a time (a second
 * connection closes the first); the other dialects' upstreams serve many
 * at once, and a long call (uLoopMCP's run-tests answers when the run
 * ends) must not hold every read behind it.
 */
static enum up_status
exchange_lock(struct exchange *x, int64_t deadline, int *fd)
{
	*fd = -1;
	if (x->dialect == NULL || strcmp(x->dialect, "unity-mcp") != 0)
		return UP_OK;
	switch (uplock_take(x->lock_dir, x->to, deadline, x->waitmask, fd,
	    x->err, sizeof(x->err))) {
	case 0:
		return UP_OK;
	case 1:
		snprintf(x->err, sizeof(x->err), "%s: another exchange held "
		    "its lock until the deadline", x->to);
		x->locked_out = 1;
		return UP_TIMEOUT;
	case -1:
		snprintf(x->err, sizeof(x->err), "%s: call cancelled", x->to);
		return UP_CANCELLED;
	default:
		return UP_PROTOCOL;
	}
}

enum up_status
exchange_once(struct exchange *x, const char *method, json_object *params,
    int64_t deadline, json_object **out)
{
	struct upstream	*u;
	enum up_status	 st;
	int64_t		 open_by;
	int		 lfd;

	*out = NULL;
	x->sent = x->closed = x->locked_out = x->nolisten = 0;
	if ((st = exchange_lock(x, deadline, &lfd)) != UP_OK)
		return st;
	/* The windows start once the lock is ours: a wait for it that
	 * ended just in time leaves the call its whole time. */
	if (x->call_ms > 0)
		deadline = wproc_now_ms() + x->call_ms;
	open_by = wproc_now_ms() + x->open_ms;
	st = upstream_open(x->dialect, x->to, open_by < deadline ? open_by :
	    deadline, x->waitmask, &u, &x->nolisten, x->err, sizeof(x->err));
	if (st == UP_OK)
		uplock_seen(x->lock_dir, x->to);
	/* No connection or WELCOME within open_ms: the bridge is away. */
	if (st == UP_TIMEOUT && wproc_now_ms() < deadline)
		st = UP_REFUSED;
	if (st == UP_OK) {
		if (method != NULL)
			st = upstream_call(u, method, params, deadline, out,
			    x->err, sizeof(x->err));
		else
			st = upstream_ping(u, deadline, x->err,
			    sizeof(x->err));
		x->sent = upstream_sent(u);
		x->closed = st == UP_REFUSED;
		upstream_close(u);
	}
	uplock_release(lfd);
	return st;
}
