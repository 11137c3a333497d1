/* SPDX-License-Identifier: ISC */
/*
 * The worker's forward tools: one request to an upstream in its dialect,
 * within the command's timeout, given up on SIGTERM or when the broker is
 * gone.  A refused connect is retried until connect_timeout_s; a request
 * once written is never sent again, unless the table says it is
 * idempotent (a read) and its answer was lost.  A reload tool whose bridge
 * went away
 * waits for it to answer again; an await polls until a status.  See
 * cmdgate.tools(5), forward.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "exchange.h"
#include "forward.h"
#include "fwdres.h"
#include "jtemplate.h"
#include "linkcall.h"
#include "notify.h"
#include "upseen.h"
#include "umcp.h"
#include "upstream.h"
#include "wire.h"
#include "wproc.h"

#define FWD_CONNECT_S	30	/* connect_timeout_s's default */
#define FWD_BACKOFF_MS	100	/* first wait before a new connect */
#define FWD_BACKOFF_MAX	2000
#define FWD_EVERY_MS	1000	/* await.every_ms's default */
#define FWD_CANCEL_MS	5000	/* the cancel call, at most */
#define FWD_NOLISTEN_MS	3000	/* refused this long: not running... */
#define FWD_SEEN_MS	120000	/* ...unless reached this recently */

#define RETRY_LOST	0x1	/* a read: safe to send again */
#define RETRY_ERROR	0x2	/* an error answer is "not yet" */
#define NOLISTEN_FAILS	0x4	/* a refusal can mean "not running" */

struct fwd {
	struct exchange	 x;
	const char	*tool, *method;
	json_object	*fw;		/* the object form, or NULL */
	json_object	*params;	/* what the upstream gets */
	json_object	*call;		/* the call's params, as submitted */
	json_object	*r;		/* the command's result */
	size_t		 index;		/* of the command in its job */
	int		 reload;
	int		 idempotent;	/* sent again when lost */
	int		 resent;
	int		 logged;	/* the retry line was written */
	int64_t		 t0, deadline, connect_ms;
};

static json_object *
member(json_object *o, const char *name)
{
	json_object	*v;

	return json_object_object_get_ex(o, name, &v) ? v : NULL;
}

static const char *
member_str(json_object *o, const char *name, const char *def)
{
	json_object	*v = member(o, name);

	return json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : def;
}

static void
fwd_set(struct fwd *f, const char *name, json_object *v)
{
	json_object_object_add(f->r, name, v);
}

/* Mark the result failed: error (f->x.err) and its type. */
static void
fwd_fail(struct fwd *f, enum up_status st)
{
	fwdres_fail(f->r, st, f->x.closed, f->x.err);
}

/* The same with a reason of our own. */
static void
fwd_fail_msg(struct fwd *f, enum up_status st, const char *msg)
{
	snprintf(f->x.err, sizeof(f->x.err), "%s: %s", f->x.to, msg);
	fwd_fail(f, st);
}

/*
 * Whether a connect refused since refused_at means that the upstream is
 * not running: refused for FWD_NOLISTEN_MS, or until until, and not
 * reached in the last FWD_SEEN_MS (an editor that was just there is
 * reloading, and comes back on its own).  Then x.err says so.
 */
static int
fwd_not_running(struct fwd *f, int64_t refused_at, int64_t until)
{
	int64_t	seen = linkcall_linked(&f->x) ? f->x.seen_ago :
		    upseen_ago(f->x.lock_dir, f->x.to);

	if (wproc_now_ms() < until &&
	    (wproc_now_ms() - refused_at < FWD_NOLISTEN_MS ||
	    (seen >= 0 && seen < FWD_SEEN_MS)))
		return 0;
	snprintf(f->x.err, sizeof(f->x.err), "the %s is not running "
	    "(connection refused on %s)", umcp_dialect(f->x.dialect) ||
	    strcmp(f->x.dialect, "jsonrpc-lsp") == 0 ? "editor" :
	    "upstream", f->x.to);
	return 1;
}

/*
 * One exchange, again after a backoff while it is refused (or lost, or
 * answered with an error, as flags say) until until: its status.
 */
static enum up_status
fwd_retry(struct fwd *f, const char *method, json_object *params,
    int64_t until, int flags, json_object **out)
{
	enum up_status	st;
	int64_t		delay = FWD_BACKOFF_MS, next, refused_at = 0;

	for (;;) {
		st = exchange_once(&f->x, method, params, f->deadline, out);
		if (st == UP_REFUSED && f->x.nolisten && refused_at == 0)
			refused_at = wproc_now_ms();
		if (st == UP_REFUSED && f->x.nolisten &&
		    (flags & NOLISTEN_FAILS) &&
		    fwd_not_running(f, refused_at, until))
			return st;
		if (!(st == UP_REFUSED || (st == UP_LOST &&
		    (flags & RETRY_LOST)) || (st == UP_ERROR &&
		    (flags & RETRY_ERROR))) || wproc_now_ms() >= until)
			return st;
		json_object_put(*out);
		*out = NULL;
		if (!f->logged) {
			fprintf(stderr, "cmdgate-worker: %s: %s; trying again "
			    "for up to %lld ms\n", f->tool, f->x.err,
			    (long long)(until - wproc_now_ms()));
			f->logged = 1;
		}
		next = wproc_now_ms() + delay;
		if (wproc_wait(-1, 0, next < until ? next : until,
		    f->x.waitmask) < 0) {
			snprintf(f->x.err, sizeof(f->x.err), "%s: call "
			    "cancelled", f->x.to);
			return UP_CANCELLED;
		}
		delay = delay * 2 > FWD_BACKOFF_MAX ? FWD_BACKOFF_MAX :
		    delay * 2;
	}
}

/* ok with res (taken), or tool_failed with res kept. */
static void
fwd_answered(struct fwd *f, json_object *res)
{
	fwdres_answered(f->r, f->x.dialect, f->x.to, res);
}

/*
 * The context of the await, cancel and ready templates: the call's
 * params plus "result" (borrowed, may be NULL).  Caller puts.
 */
static json_object *
fwd_context(struct fwd *f, json_object *result)
{
	json_object	*ctx = json_object_new_object();

	if (json_object_is_type(f->call, json_type_object)) {
		json_object_object_foreach(f->call, k, v)
			json_object_object_add(ctx, k, json_object_get(v));
	}
	if (result != NULL)
		json_object_object_add(ctx, "result",
		    json_object_get(result));
	return ctx;
}

/* tmpl (may be NULL: {}) over ctx; NULL with the result failed. */
static json_object *
fwd_expand(struct fwd *f, json_object *tmpl, json_object *ctx,
    const char *what)
{
	json_object	*p;
	char		 err[512], msg[640];

	if (tmpl == NULL)
		return json_object_new_object();
	if ((p = jtemplate_expand(tmpl, ctx, err, sizeof(err))) == NULL) {
		snprintf(msg, sizeof(msg), "%s params: %s", what, err);
		fwd_fail_msg(f, UP_PROTOCOL, msg);
	}
	return p;
}

/* ---- reload tools ----------------------------------------------------- */

/*
 * The bridge went away after the request: the reload happened.  Wait
 * for it to answer the readiness call (default: the ping) again.
 */
static void
fwd_reloaded(struct fwd *f)
{
	json_object	*ready = member(f->fw, "ready"), *ctx, *p, *out;
	const char	*call = member_str(ready, "call", NULL);
	enum up_status	 st;

	ctx = fwd_context(f, NULL);
	p = fwd_expand(f, member(ready, "params"), ctx, "ready");
	json_object_put(ctx);
	if (p == NULL)
		return;
	st = fwd_retry(f, call, p, f->deadline, RETRY_LOST | RETRY_ERROR,
	    &out);
	json_object_put(p);
	json_object_put(out);
	if (st != UP_OK) {
		fwd_fail(f, st);
		return;
	}
	fwd_set(f, WIRE_RES_OK, json_object_new_boolean(1));
	fwd_set(f, WIRE_RES_RESULT, NULL);
	fwd_set(f, WIRE_RES_RELOADED, json_object_new_boolean(1));
}

/* ---- await and cancel ------------------------------------------------- */

/*
 * How long the cancel call may take: FWD_CANCEL_MS, but well inside the
 * kill grace the broker gives this process after its SIGTERM.
 */
static int64_t
fwd_cancel_ms(void)
{
	int64_t	ms = kill_grace_ms - kill_grace_ms / 4;

	return ms < FWD_CANCEL_MS ? ms : FWD_CANCEL_MS;
}

/*
 * SIGTERM during an await: the table's cancel call, one exchange of at
 * most FWD_CANCEL_MS, even though SIGTERM came; then "cancelled".
 */
static void
fwd_cancel(struct fwd *f, json_object *ctx)
{
	json_object		*cancel = member(f->fw, "cancel"), *p, *out;
	const char		*call = member_str(cancel, "call", NULL);
	enum up_status		 st = UP_CANCELLED;
	sig_atomic_t		 term = got_term;

	p = member(cancel, "params") == NULL ? json_object_new_object() :
	    jtemplate_expand(member(cancel, "params"), ctx, f->x.err,
	    sizeof(f->x.err));
	if (call != NULL && p != NULL) {
		got_term = 0;
		st = exchange_once(&f->x, call, p, wproc_now_ms() +
		    fwd_cancel_ms(), &out);
		got_term = got_term > term ? got_term : term;
		json_object_put(out);
	}
	json_object_put(p);
	if (call != NULL)
		snprintf(f->x.err, sizeof(f->x.err), "%.300s: cancelled; %.300s "
		    "%s", f->x.to, call, st == UP_OK ? "answered" :
		    st == UP_ERROR ? "answered with an error" :
		    up_strstatus(st));
	else
		snprintf(f->x.err, sizeof(f->x.err), "%.300s: cancelled",
		    f->x.to);
	fwd_fail(f, UP_CANCELLED);
}

/*
 * Whether the poll's answer res meets until: 1 (and *failed when its
 * value is one of until.failed), or 0.
 */
static int
fwd_until(json_object *until, json_object *res, int *failed)
{
	json_object	*wrap = json_object_new_object(), *v, *in, *bad;
	size_t		 i;
	int		 done = 0;

	json_object_object_add(wrap, "result", json_object_get(res));
	v = jpath_get(wrap, member_str(until, "field", "result"));
	in = member(until, "in");
	bad = member(until, "failed");
	*failed = 0;
	for (i = 0; v != NULL && i < json_object_array_length(in); i++)
		done |= json_object_equal(v, json_object_array_get_idx(in, i));
	/* until.failed is optional; json-c asserts on a NULL array. */
	for (i = 0; v != NULL && bad != NULL &&
	    i < json_object_array_length(bad); i++)
		*failed |= json_object_equal(v,
		    json_object_array_get_idx(bad, i));
	json_object_put(wrap);
	return done;
}

/* The poll interval: every_ms within 50..60000, default 1000. */
static int64_t
fwd_every(json_object *aw)
{
	json_object	*v = member(aw, "every_ms");
	int64_t		 ms = v != NULL ? json_object_get_int64(v) :
			    FWD_EVERY_MS;

	return ms < 50 ? 50 : ms > 60000 ? 60000 : ms;
}

/* One poll after the interval: its status, *res the answer. */
static enum up_status
fwd_poll(struct fwd *f, json_object *aw, json_object *p, json_object **res)
{
	int64_t	next = wproc_now_ms() + fwd_every(aw);
	int	w;

	*res = NULL;
	w = wproc_wait(-1, 0, next < f->deadline ? next : f->deadline,
	    f->x.waitmask);
	if (w < 0)
		return UP_CANCELLED;
	if (wproc_now_ms() >= f->deadline) {
		snprintf(f->x.err, sizeof(f->x.err), "%s: %s did not reach "
		    "a final status in time", f->x.to, member_str(aw, "call",
		    "?"));
		return UP_TIMEOUT;
	}
	return fwd_retry(f, member_str(aw, "call", "?"), p, f->deadline,
	    RETRY_LOST, res);
}

/* Poll until the status of until; the last answer is the result. */
static void
fwd_await(struct fwd *f, json_object *first)
{
	json_object	*aw = member(f->fw, "await"), *ctx, *p, *res;
	json_object	*last = json_object_get(first);
	enum up_status	 st = UP_OK;
	int		 polls = 0, failed = 0;

	ctx = fwd_context(f, first);
	if ((p = fwd_expand(f, member(aw, "params"), ctx, "await")) == NULL)
		goto out;
	for (;;) {
		f->x.sent = 0;
		st = fwd_poll(f, aw, p, &res);
		polls += f->x.sent;
		if (st == UP_CANCELLED) {
			json_object_put(res);
			fwd_cancel(f, ctx);
			break;
		}
		if (st != UP_OK) {
			fwd_fail(f, st);
			if (st == UP_ERROR)
				fwd_set(f, WIRE_RES_UPSTREAM_ERROR, res);
			else
				json_object_put(res);
			break;
		}
		json_object_put(last);
		last = res;
		if (fwd_until(member(aw, "until"), res, &failed))
			break;
	}
	json_object_put(p);
	fwd_set(f, WIRE_RES_POLLS, json_object_new_int(polls));
	if (st == UP_OK && failed) {
		fwd_fail_msg(f, UP_PROTOCOL, "the awaited job ended in a "
		    "failed status");
		fwd_set(f, WIRE_RES_ERROR_TYPE, json_object_new_string(
		    WIRE_ERR_TOOL_FAILED));
	}
	if (st == UP_OK && !failed)
		fwd_answered(f, json_object_get(last));
	else
		fwd_set(f, WIRE_RES_RESULT, json_object_get(last));
out:
	json_object_put(last);
	json_object_put(ctx);
}

/* ---- the command ------------------------------------------------------ */

/* What the spec says about cmd; 0, or -1 with the result failed. */
static int
fwd_init(struct fwd *f, json_object *cmd, const char *lock_dir,
    const sigset_t *waitmask)
{
	json_object	*fw = member(cmd, WIRE_CMD_FORWARD), *v;

	f->tool = member_str(cmd, WIRE_CMD_TOOL, "?");
	f->call = member(cmd, WIRE_CMD_PARAMS);
	f->reload = json_object_get_boolean(member(cmd, WIRE_CMD_RELOAD));
	f->deadline = f->t0 + json_object_get_int64(member(cmd,
	    WIRE_CMD_TIMEOUT)) * 1000;
	f->x.lock_dir = lock_dir;
	f->x.waitmask = waitmask;
	f->method = f->tool;
	f->params = f->call;
	f->x.dialect = "jsonrpc";
	if (json_object_is_type(fw, json_type_string)) {
		/* The shorthand: as before, no connect retry. */
		f->x.to = json_object_get_string(fw);
	} else {
		f->fw = fw;
		f->x.to = member_str(fw, "to", "?");
		f->x.dialect = member_str(fw, "dialect", "jsonrpc");
		f->method = member_str(fw, "method", f->tool);
		f->idempotent = json_object_get_boolean(member(fw,
		    "idempotent"));
		if ((v = member(fw, "params")) != NULL)
			f->params = v;
		v = member(fw, "connect_timeout_s");
		f->connect_ms = (v != NULL ? json_object_get_int64(v) :
		    FWD_CONNECT_S) * 1000;
	}
	f->x.open_ms = f->connect_ms > 0 ? f->connect_ms : f->deadline - f->t0;
	if (!upstream_dialect_known(f->x.dialect)) {
		fwd_fail_msg(f, UP_PROTOCOL, "unknown dialect");
		return -1;
	}
	return 0;
}

/*
 * An awaited command's first answer goes to the broker at once, for a
 * client that asked for it (a face job): {"event":"answer","index":I,
 * "result":R}.  It is not the command's result.
 */
static void
fwd_first_answer(struct fwd *f, json_object *res)
{
	json_object	*ev = json_object_new_object();

	json_object_object_add(ev, WIRE_EVENT,
	    json_object_new_string(WIRE_EV_ANSWER));
	json_object_object_add(ev, WIRE_INDEX,
	    json_object_new_int64((int64_t)f->index));
	json_object_object_add(ev, WIRE_RESULT, json_object_get(res));
	wproc_emit(ev);
}

/*
 * The first call: a refused connect again until connect_timeout_s.  An
 * idempotent call whose connection was lost after the request went out
 * is sent again, each time in an exchange of its own (over the editor
 * link where the broker links the bridge) with a new connect window,
 * until the deadline; never a reload tool's, whose loss is its reload.
 */
static enum up_status
fwd_first(struct fwd *f, json_object **out)
{
	int64_t		until = f->t0 + f->connect_ms, next;
	enum up_status	st;

	for (;;) {
		st = fwd_retry(f, f->method, f->params, until < f->deadline ?
		    until : f->deadline, NOLISTEN_FAILS, out);
		if (st != UP_LOST || !f->idempotent || f->reload ||
		    wproc_now_ms() >= f->deadline)
			return st;
		json_object_put(*out);
		*out = NULL;
		fprintf(stderr, "cmdgate-worker: %s: %s; idempotent: sending "
		    "it again\n", f->tool, f->x.err);
		f->resent++;
		next = wproc_now_ms() + FWD_BACKOFF_MS;
		if (wproc_wait(-1, 0, next < f->deadline ? next : f->deadline,
		    f->x.waitmask) < 0) {
			snprintf(f->x.err, sizeof(f->x.err), "%s: call "
			    "cancelled", f->x.to);
			return UP_CANCELLED;
		}
		until = wproc_now_ms() + f->connect_ms;
	}
}

/* The first call and what its status leads to. */
static void
fwd_call(struct fwd *f)
{
	json_object	*out = NULL;
	enum up_status	 st;

	st = fwd_first(f, &out);
	fwd_set(f, WIRE_RES_SENT, json_object_new_boolean(f->x.sent));
	if (f->resent > 0)
		fwd_set(f, WIRE_RES_RESENT, json_object_new_int(f->resent));
	if (st == UP_OK && member(f->fw, "await") != NULL &&
	    !fwdres_tool_failed(f->x.dialect, out)) {
		fwd_first_answer(f, out);
		fwd_await(f, out);
	} else if (st == UP_OK)
		fwd_answered(f, json_object_get(out));
	else if (st == UP_LOST && f->reload)
		fwd_reloaded(f);
	else {
		fwd_fail(f, st);
		if (st == UP_ERROR)
			fwd_set(f, WIRE_RES_UPSTREAM_ERROR,
			    json_object_get(out));
	}
	json_object_put(out);
}

json_object *
forward_run(json_object *cmd, size_t index, const char *lock_dir,
    const sigset_t *waitmask)
{
	struct fwd	f;

	memset(&f, 0, sizeof(f));
	f.index = index;
	f.t0 = wproc_now_ms();
	f.r = json_object_new_object();
	fwd_set(&f, WIRE_RES_TOOL, json_object_new_string(member_str(cmd,
	    WIRE_CMD_TOOL, "?")));
	wproc_emit_start(index, 0);
	if (fwd_init(&f, cmd, lock_dir, waitmask) == 0)
		fwd_call(&f);
	fwd_set(&f, WIRE_RES_DURATION, json_object_new_int64(wproc_now_ms() -
	    f.t0));
	return f.r;
}
