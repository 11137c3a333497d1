/* SPDX-License-Identifier: ISC */
/*
 * The mcp-http forward dialect: an MCP client over Streamable HTTP
 * (protocol 2025-06-18, or 2025-03-26 when the server offers that).  A
 * session is initialize and notifications/initialized, then tools/call
 * or ping, each one POST (workers/httpx.c) with the session's
 * Mcp-Session-Id and MCP-Protocol-Version, and DELETE at the end.  A
 * tools/call carries a progressToken; the server's notifications/progress
 * for it and its notifications/message become the worker's progress and
 * log events, as an exec tool's notify lines do.  See cmdgate.tools(5),
 * forward.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/http.h>
#include <json-c/json.h>

#include "httpx.h"
#include "jstrict.h"
#include "mcphttp.h"
#include "notify.h"
#include "wire.h"
#include "wproc.h"

#define MH_CLOSE_MS	1000		/* how long DELETE may take */
#define MH_VERSION	"2025-06-18"
#define MH_VERSION_OLD	"2025-03-26"	/* the first with this transport */

struct mcphttp {
	struct httpx_peer	 peer;
	int64_t			 next_id;
	int64_t			 token;		/* of the call, 0: none */
	struct notify		 nt;		/* its events, rate-bound */
};

static enum up_status	mh_initialize(struct mcphttp *, int64_t, char *,
			    size_t);
static void		mh_note(void *, json_object *);

/* {"jsonrpc":"2.0",...} with id (0: a notification).  Caller puts. */
static json_object *
mh_message_new(int64_t id, const char *method, json_object *params)
{
	json_object	*m = json_object_new_object();

	json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
	if (id != 0)
		json_object_object_add(m, "id", json_object_new_int64(id));
	json_object_object_add(m, "method", json_object_new_string(method));
	if (params != NULL)
		json_object_object_add(m, "params", params);
	return m;
}

/*
 * POST msg and await the response id.  A server that no longer knows the
 * session (it restarted, or let it expire) answers 404 having run
 * nothing: a new session, then msg once more (MCP, Session Management).
 */
static enum up_status
mh_post(struct mcphttp *mh, json_object *msg, int64_t id, int64_t deadline,
    json_object **ans, char *err, size_t errlen)
{
	enum up_status	st;

	st = httpx_request(&mh->peer, EVHTTP_REQ_POST, msg, id, deadline, 1,
	    ans, err, errlen);
	if (mh->peer.status != 404 || mh->peer.session[0] == '\0')
		return st;
	json_object_put(*ans);
	*ans = NULL;
	mh->peer.session[0] = '\0';
	mh->peer.version[0] = '\0';
	if (errlen > 0)
		err[0] = '\0';
	if ((st = mh_initialize(mh, deadline, err, errlen)) != UP_OK)
		return st;
	return httpx_request(&mh->peer, EVHTTP_REQ_POST, msg, id, deadline,
	    1, ans, err, errlen);
}

/*
 * Request method with params (taken) and wait for its response: UP_OK
 * with *out its result, UP_ERROR with *out its error object (err names
 * it).  Caller puts *out.
 */
static enum up_status
mh_rpc(struct mcphttp *mh, const char *method, json_object *params,
    int64_t deadline, json_object **out, char *err, size_t errlen)
{
	json_object	*msg, *ans, *v, *m;
	enum up_status	 st;
	int64_t		 id = mh->next_id++;

	*out = NULL;
	msg = mh_message_new(id, method, params);
	st = mh_post(mh, msg, id, deadline, &ans, err, errlen);
	json_object_put(msg);
	if (ans == NULL)
		return st;
	if (json_object_object_get_ex(ans, "result", &v)) {
		*out = json_object_get(v);
		st = UP_OK;
	} else if (json_object_object_get_ex(ans, "error", &v) &&
	    json_object_is_type(v, json_type_object)) {
		*out = json_object_get(v);
		if (st == UP_OK) {
			m = json_object_object_get(v, "message");
			snprintf(err, errlen, "%s: upstream error %lld: %s",
			    mh->peer.to, (long long)json_object_get_int64(
			    json_object_object_get(v, "code")), m != NULL ?
			    json_object_get_string(m) : "(no message)");
		}
		st = UP_ERROR;
	} else {
		snprintf(err, errlen, "%s: answered request %lld with "
		    "neither result nor error", mh->peer.to, (long long)id);
		st = UP_PROTOCOL;
	}
	json_object_put(ans);
	return st;
}

/* The parts of to that a request needs: 0, or -1 with err. */
static int
mh_url(struct mcphttp *mh, const char *to, char *err, size_t errlen)
{
	struct evhttp_uri	*u;
	const char		*host, *path, *query;
	size_t			 hl;
	int			 rc = -1;

	if ((u = evhttp_uri_parse_with_flags(to, 0)) == NULL ||
	    evhttp_uri_get_scheme(u) == NULL ||
	    strcasecmp(evhttp_uri_get_scheme(u), "http") != 0 ||
	    (host = evhttp_uri_get_host(u)) == NULL || host[0] == '\0' ||
	    evhttp_uri_get_port(u) == 0) {
		snprintf(err, errlen, "%s: not a URL http://HOST:PORT/PATH "
		    "(PORT from 1 to 65535; https is not supported)", to);
		goto out;
	}
	hl = strlen(host);
	if (host[0] == '[')	/* an IPv6 address, bracketed */
		mh->peer.host = strndup(host + 1, hl - 2);
	else
		mh->peer.host = strdup(host);
	mh->peer.port = evhttp_uri_get_port(u) > 0 ? evhttp_uri_get_port(u) :
	    80;
	path = evhttp_uri_get_path(u);
	query = evhttp_uri_get_query(u);
	if (asprintf(&mh->peer.hosthdr, "%s:%d", host, mh->peer.port) == -1)
		mh->peer.hosthdr = NULL;
	if (asprintf(&mh->peer.target, "%s%s%s", path[0] != '\0' ? path : "/",
	    query != NULL ? "?" : "", query != NULL ? query : "") == -1)
		mh->peer.target = NULL;
	if (mh->peer.host == NULL || mh->peer.hosthdr == NULL ||
	    mh->peer.target == NULL)
		snprintf(err, errlen, "%s: out of memory", to);
	else
		rc = 0;
out:
	if (u != NULL)
		evhttp_uri_free(u);
	return rc;
}

static void
mh_free(struct mcphttp *mh)
{
	free(mh->peer.to);
	free(mh->peer.host);
	free(mh->peer.hosthdr);
	free(mh->peer.target);
	free(mh);
}

/* initialize's params.  Caller puts. */
static json_object *
mh_init_params(void)
{
	json_object	*p = json_object_new_object(), *ci;

	json_object_object_add(p, "protocolVersion",
	    json_object_new_string(MH_VERSION));
	json_object_object_add(p, "capabilities", json_object_new_object());
	ci = json_object_new_object();
	json_object_object_add(ci, "name",
	    json_object_new_string("cmdgate-worker"));
	json_object_object_add(ci, "version",
	    json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(p, "clientInfo", ci);
	return p;
}

/* initialize, then notifications/initialized: UP_OK, or a status. */
static enum up_status
mh_initialize(struct mcphttp *mh, int64_t deadline, char *err,
    size_t errlen)
{
	json_object	*res, *msg, *ans;
	enum up_status	 st;
	const char	*v;

	st = mh_rpc(mh, "initialize", mh_init_params(), deadline, &res, err,
	    errlen);
	if (st == UP_ERROR)
		st = UP_PROTOCOL;	/* a refused handshake */
	if (st != UP_OK) {
		json_object_put(res);
		return st;
	}
	v = json_object_get_string(json_object_object_get(res,
	    "protocolVersion"));
	if (v == NULL || (strcmp(v, MH_VERSION) != 0 &&
	    strcmp(v, MH_VERSION_OLD) != 0)) {
		snprintf(err, errlen, "%s: speaks MCP %s; cmdgate speaks "
		    MH_VERSION " and " MH_VERSION_OLD, mh->peer.to,
		    v != NULL ? v : "(no protocolVersion)");
		json_object_put(res);
		return UP_PROTOCOL;
	}
	snprintf(mh->peer.version, sizeof(mh->peer.version), "%s", v);
	json_object_put(res);
	msg = mh_message_new(0, "notifications/initialized", NULL);
	st = httpx_request(&mh->peer, EVHTTP_REQ_POST, msg, 0, deadline, 1, &ans, err,
	    errlen);
	json_object_put(msg);
	json_object_put(ans);
	return st == UP_ERROR ? UP_PROTOCOL : st;
}

enum up_status
mcphttp_open(const char *to, int64_t deadline, const sigset_t *waitmask,
    struct mcphttp **mhp, char *err, size_t errlen)
{
	struct mcphttp	*mh;
	enum up_status	 st;

	*mhp = NULL;
	if ((mh = calloc(1, sizeof(*mh))) == NULL ||
	    (mh->peer.to = strdup(to)) == NULL) {
		free(mh);
		snprintf(err, errlen, "%s: out of memory", to);
		return UP_PROTOCOL;
	}
	mh->peer.waitmask = waitmask;
	mh->peer.note = mh_note;
	mh->peer.note_arg = mh;
	mh->next_id = 1;
	if (mh_url(mh, to, err, errlen) == -1) {
		mh_free(mh);
		return UP_PROTOCOL;
	}
	if ((st = mh_initialize(mh, deadline, err, errlen)) != UP_OK) {
		mcphttp_close(mh);
		return st;
	}
	*mhp = mh;
	return UP_OK;
}

/* A number of a notification's params: 0, or -1 when it is not one. */
static int
mh_number(json_object *params, const char *key, double *v)
{
	json_object	*o;

	if (!json_object_object_get_ex(params, key, &o) ||
	    (!json_object_is_type(o, json_type_int) &&
	    !json_object_is_type(o, json_type_double)))
		return -1;
	*v = json_object_get_double(o);
	return 0;
}

/* notifications/progress for our call: a progress event. */
static void
mh_progress(struct mcphttp *mh, json_object *params)
{
	json_object	*ev, *t, *m;
	double		 p, total = 1;

	if (!json_object_object_get_ex(params, "progressToken", &t) ||
	    !json_object_is_type(t, json_type_int) ||
	    json_object_get_int64(t) != mh->token ||
	    mh_number(params, "progress", &p) == -1 || p < 0 ||
	    (json_object_object_get_ex(params, "total", NULL) &&
	    (mh_number(params, "total", &total) == -1 || total <= 0)))
		return;
	ev = json_object_new_object();
	json_object_object_add(ev, WIRE_EVENT,
	    json_object_new_string(WIRE_EV_PROGRESS));
	json_object_object_add(ev, WIRE_INDEX,
	    json_object_new_int64((int64_t)command_index));
	json_object_object_add(ev, WIRE_PROGRESS, json_object_get(
	    json_object_object_get(params, "progress")));
	if (json_object_object_get_ex(params, "total", &t))
		json_object_object_add(ev, WIRE_TOTAL, json_object_get(t));
	if (json_object_object_get_ex(params, "message", &m) &&
	    json_object_is_type(m, json_type_string))
		json_object_object_add(ev, WIRE_MESSAGE, json_object_get(m));
	notify_send(&mh->nt, ev, 1, wproc_now_ms());
}

/* notifications/message: a log event, its data as text (bounded). */
static void
mh_log(struct mcphttp *mh, json_object *params)
{
	json_object	*ev, *d = json_object_object_get(params, "data");
	const char	*level, *text;
	size_t		 len;

	level = json_object_get_string(json_object_object_get(params,
	    "level"));
	if (level == NULL || (level = notify_level(level,
	    strlen(level))) == NULL)
		return;
	text = json_object_is_type(d, json_type_string) ?
	    json_object_get_string(d) : jstrict_to_string(d);
	if ((len = strlen(text)) > NOTIFY_LINE_MAX)
		len = NOTIFY_LINE_MAX;
	ev = json_object_new_object();
	json_object_object_add(ev, WIRE_EVENT,
	    json_object_new_string(WIRE_EV_LOG));
	json_object_object_add(ev, WIRE_INDEX,
	    json_object_new_int64((int64_t)command_index));
	json_object_object_add(ev, WIRE_LEVEL, json_object_new_string(level));
	json_object_object_add(ev, WIRE_MESSAGE, utf8_json(text, len));
	notify_send(&mh->nt, ev, 0, wproc_now_ms());
}

/* httpx's note: a notification the server sent while we called. */
static void
mh_note(void *arg, json_object *msg)
{
	struct mcphttp	*mh = arg;
	json_object	*params = json_object_object_get(msg, "params");
	const char	*method = json_object_get_string(
			    json_object_object_get(msg, "method"));

	if (mh->token == 0 || method == NULL ||
	    !json_object_is_type(params, json_type_object))
		return;
	if (strcmp(method, "notifications/progress") == 0)
		mh_progress(mh, params);
	else if (strcmp(method, "notifications/message") == 0)
		mh_log(mh, params);
}

/* A notification nobody is told of (the editor probe's call). */
static void
mh_drop(json_object *ev)
{
	json_object_put(ev);
}

enum up_status
mcphttp_call(struct mcphttp *mh, const char *method, json_object *params,
    int64_t deadline, json_object **out, char *err, size_t errlen)
{
	json_object	*p = json_object_new_object(), *meta;
	enum up_status	 st;

	json_object_object_add(p, "name", json_object_new_string(method));
	json_object_object_add(p, "arguments", params != NULL ?
	    json_object_get(params) : json_object_new_object());
	/* The token is the request's id: mh_rpc takes next_id. */
	mh->token = mh->next_id;
	meta = json_object_new_object();
	json_object_object_add(meta, "progressToken",
	    json_object_new_int64(mh->token));
	json_object_object_add(p, "_meta", meta);
	notify_init(&mh->nt, -1, command_index, wproc_relay ? wproc_emit :
	    mh_drop);
	st = mh_rpc(mh, "tools/call", p, deadline, out, err, errlen);
	notify_end(&mh->nt, wproc_now_ms());
	mh->token = 0;
	return st;
}

enum up_status
mcphttp_ping(struct mcphttp *mh, int64_t deadline, char *err, size_t errlen)
{
	json_object	*res;
	enum up_status	 st;

	st = mh_rpc(mh, "ping", json_object_new_object(), deadline, &res, err,
	    errlen);
	json_object_put(res);
	return st;
}

void
mcphttp_close(struct mcphttp *mh)
{
	json_object	*ans = NULL;
	char		 err[256];

	if (mh == NULL)
		return;
	/* SIGTERM stays blocked (and pending) while DELETE runs. */
	if (mh->peer.session[0] != '\0')
		httpx_request(&mh->peer, EVHTTP_REQ_DELETE, NULL, 0,
		    wproc_now_ms() + MH_CLOSE_MS, 0, &ans, err, sizeof(err));
	json_object_put(ans);
	mh_free(mh);
}
