/* SPDX-License-Identifier: ISC */
/*
 * MCP over Streamable HTTP: the endpoint (libevent's evhttp on the
 * broker's loop), what every request must show (Host, Origin, token,
 * protocol version), and POST, GET and DELETE on /mcp.  The sessions and
 * their streams are httpsess.c's.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/http_struct.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include <json-c/json.h>

#include "addr.h"
#include "jstrict.h"
#include "log.h"
#include "mcpver.h"
#include "net.h"
#include "options.h"
#include "server.h"
#include "util.h"

#define HTTP_PATH		"/mcp"
#define HTTP_BACKLOG		511
#define HTTP_MAX_HEADERS	(64 * 1024)	/* bytes of a request's */
#define HTTP_TIMEOUT_S		60	/* to send a request, or read */
#define HTTP_ACCEPT_RETRY_S	1	/* after EMFILE, try accepting again */
#define HTTP_METHODS		(EVHTTP_REQ_GET | EVHTTP_REQ_POST | \
				EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD | \
				EVHTTP_REQ_PUT | EVHTTP_REQ_OPTIONS | \
				EVHTTP_REQ_PATCH)

/*
 * The endpoint, for the listener's error callback, whose argument is the
 * evhttp's (evhttp_bind_listener sets it): there is one per process.
 */
static struct http	*http_self;

static void	http_request(struct evhttp_request *, void *);
static void	http_post(struct http *, struct evhttp_request *);
static void	http_get(struct http *, struct evhttp_request *);
static void	http_delete(struct http *, struct evhttp_request *);

static const char *
http_header(struct evhttp_request *req, const char *name)
{
	return evhttp_find_header(evhttp_request_get_input_headers(req),
	    name);
}

/*
 * The host of "HOST[:PORT][/...]" or "[V6][:PORT][/...]": its length in
 * s, or 0 when anything but a port of digits or a path follows it.
 */
static size_t
http_hostlen(const char *s)
{
	const char	*e;
	size_t		 n, d;

	if (*s == '[') {
		if ((e = strchr(s, ']')) == NULL)
			return 0;
		n = (size_t)(e - s) + 1;
	} else
		n = strcspn(s, ":/");
	e = s + n;
	if (*e == ':') {
		d = strspn(e + 1, "0123456789");
		if (d == 0 || d > 5)
			return 0;
		e += d + 1;
	}
	return *e == '\0' || *e == '/' ? n : 0;
}

/* How many times the request carries the header name. */
static int
http_header_count(struct evhttp_request *req, const char *name)
{
	struct evkeyval	*kv;
	int		 n = 0;

	TAILQ_FOREACH(kv, evhttp_request_get_input_headers(req), next)
		if (strcasecmp(kv->key, name) == 0)
			n++;
	return n;
}

/* Whether host[n] is this machine, the bound address or an --http-origin. */
static int
http_host_ok(const struct http *h, const char *host, size_t n)
{
	static const char	*local[] = { "localhost", "127.0.0.1", "[::1]",
				    NULL };
	const struct options	*opt = h->srv->opt;
	size_t			 i;

	for (i = 0; local[i] != NULL; i++)
		if (strlen(local[i]) == n && strncasecmp(host, local[i], n) == 0)
			return 1;
	if (strlen(h->host) == n && strncasecmp(host, h->host, n) == 0)
		return 1;
	for (i = 0; i < opt->nhttp_origin; i++)
		if (strlen(opt->http_origin[i]) == n &&
		    strncasecmp(host, opt->http_origin[i], n) == 0)
			return 1;
	return 0;
}

/*
 * DNS rebinding: a page on a foreign site that names this address under
 * its own host name shows that name in Host, and its site in Origin.
 */
static int
http_check_origin(struct http *h, struct evhttp_request *req)
{
	const char	*host = http_header(req, "Host");
	const char	*origin = http_header(req, "Origin"), *p;
	char		 why[384];

	if (http_header_count(req, "Host") > 1 ||
	    http_header_count(req, "Origin") > 1) {
		http_error_reply(req, HTTP_S_FORBIDDEN, RPC_SECURITY_BLOCKED,
		    "forbidden_host", "more than one Host or Origin header");
		return -1;
	}
	if (host != NULL && !http_host_ok(h, host, http_hostlen(host))) {
		snprintf(why, sizeof(why), "Host '%.100s' is not this broker "
		    "(localhost, 127.0.0.1, [::1], %s, or an --http-origin)",
		    host, h->host);
		http_error_reply(req, HTTP_S_FORBIDDEN, RPC_SECURITY_BLOCKED,
		    "forbidden_host", why);
		return -1;
	}
	if (origin == NULL)
		return 0;
	p = strstr(origin, "://");
	p = p != NULL ? p + 3 : origin;
	if (strcmp(origin, "null") == 0 ||
	    !http_host_ok(h, p, http_hostlen(p))) {
		snprintf(why, sizeof(why), "Origin '%.100s' is not this "
		    "machine (localhost, 127.0.0.1, [::1], %s, or an "
		    "--http-origin): refused against DNS rebinding", origin,
		    h->host);
		http_error_reply(req, HTTP_S_FORBIDDEN, RPC_SECURITY_BLOCKED,
		    "forbidden_origin", why);
		return -1;
	}
	return 0;
}

/* The client's address as "ADDR:PORT" or "[V6ADDR]:PORT". */
static void
http_peer(struct evhttp_request *req, char *buf, size_t len)
{
	char		*addr = NULL;
	ev_uint16_t	 port = 0;

	evhttp_connection_get_peer(evhttp_request_get_connection(req), &addr,
	    &port);
	if (addr == NULL)
		addr = "?";
	snprintf(buf, len, strchr(addr, ':') != NULL ? "[%s]:%u" : "%s:%u",
	    addr, (unsigned)port);
}

/*
 * The token of TCP clients, as "Authorization: Bearer TOKEN"; wrong ones
 * count against the client's address as the authenticate method's do.
 */
static int
http_check_auth(struct http *h, struct evhttp_request *req)
{
	struct server	*srv = h->srv;
	const char	*a = http_header(req, "Authorization");
	char		 peer[80], why[160];
	int64_t		 now = util_monotonic_ms(), wait = 0;

	if (srv->token == NULL)
		return 0;
	snprintf(why, sizeof(why), "missing token: this broker requires "
	    "\"Authorization: Bearer TOKEN\" with its token (its token file, "
	    "cmdgated(8))");
	if (a != NULL) {
		http_peer(req, peer, sizeof(peer));
		if (srv->authlimit == NULL)
			srv->authlimit = authlimit_new();
		/* Locked out: the token is not even looked at. */
		if ((wait = authlimit_locked(srv->authlimit, peer, now)) > 0)
			snprintf(why, sizeof(why), "too many wrong tokens from "
			    "this address: try again in %lld s",
			    (long long)wait);
		else if (strncasecmp(a, "Bearer ", 7) == 0 &&
		    server_token_ok(srv, a + 7, strlen(a + 7)))
			return 0;
		else {
			authlimit_failed(srv->authlimit, peer, now);
			snprintf(why, sizeof(why), "wrong token: the bearer "
			    "token sent is not this broker's (its token file, "
			    "cmdgated(8))");
		}
	}
	/* Not 401: to an MCP client 401 means "start OAuth", which the
	 * broker does not speak, and the user never sees why. */
	http_error_reply(req, HTTP_S_FORBIDDEN, RPC_UNAUTHORIZED,
	    "unauthorized", why);
	return -1;
}

/*
 * The id of a POST's message, when its body is one request with a valid
 * id, so that a refusal before it runs still names it; else NULL.
 * Caller puts.
 */
static json_object *
http_body_id(struct evhttp_request *req)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	json_object	*msg, *id = NULL;
	size_t		 len = evbuffer_get_length(in);

	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST ||
	    jstrict_parse((const char *)evbuffer_pullup(in, -1), len,
	    &msg) != 0)
		return NULL;
	if (json_object_is_type(msg, json_type_object) &&
	    json_object_object_get_ex(msg, "id", &id) &&
	    (json_object_is_type(id, json_type_string) ||
	    json_object_is_type(id, json_type_int)))
		json_object_get(id);
	else
		id = NULL;
	json_object_put(msg);
	return id;
}

/* MCP-Protocol-Version, when sent, is one it speaks (-32022 else). */
static int
http_check_version(struct evhttp_request *req)
{
	const char	*v = http_header(req, "MCP-Protocol-Version");
	json_object	*resp, *d, *id;
	char		 why[256];

	if (v == NULL)
		return 0;	/* 2025-03-26 assumed */
	if (mcp_version_rev(v) != 0)
		return 0;
	snprintf(why, sizeof(why), "MCP-Protocol-Version '%.40s' is not one "
	    "this broker speaks (data.supported lists them)", v);
	id = http_body_id(req);
	resp = rpc_error_response(id, RPC_UNSUPPORTED_VERSION,
	    "unsupported_protocol_version", NULL, why);
	json_object_put(id);
	d = json_object_object_get(json_object_object_get(resp, "error"),
	    "data");
	json_object_object_add(d, "supported", mcp_versions_json());
	json_object_object_add(d, "requested", jstrict_string(v));
	http_json_reply(req, HTTP_BADREQUEST, resp);
	json_object_put(resp);
	return -1;
}

/* Whether a header of media ranges lists type (or its wildcards). */
static int
http_accepts(const char *accept, const char *type)
{
	char		 sub[64];
	const char	*slash = strchr(type, '/');

	if (accept == NULL)
		return 0;
	snprintf(sub, sizeof(sub), "%.*s/*", (int)(slash - type), type);
	return strcasestr(accept, type) != NULL ||
	    strcasestr(accept, "*/*") != NULL || strcasestr(accept, sub) != NULL;
}

/*
 * HTTP/1.0 and HTTP/1.1 only.  evhttp answers in the request's own
 * version, and frames a body (Content-Length) only when its major is 1,
 * while it keeps the connection for the next request: a reply to
 * "HTTP/2.0", or to "HTTP/33333333331.1" (its major cut to a char, 83),
 * had a body no client could delimit from the next reply (fuzz_http, at
 * 9.9 million executions).  Any other version is refused with 505, in
 * HTTP/1.1 (http_struct.h is libevent 2.1's only way to read and set the
 * version), and the connection closed after it.
 */
static int
http_version_refused(struct evhttp_request *req)
{
	if (req->major == 1 && (req->minor == 0 || req->minor == 1))
		return 0;
	req->major = 1;
	req->minor = 1;
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Connection", "close");
	http_error_reply(req, HTTP_S_VERSION, RPC_INVALID_REQUEST,
	    "http_version", "only HTTP/1.0 and HTTP/1.1 are served");
	return 1;
}

static void
http_request(struct evhttp_request *req, void *arg)
{
	struct http		*h = arg;
	struct http_conn	*c = httpconn_request(h, req);
	const char		*path;

	if (http_version_refused(req))
		return;
	path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	if (path == NULL || strcmp(path, HTTP_PATH) != 0) {
		http_error_reply(req, HTTP_NOTFOUND, RPC_INVALID_REQUEST,
		    "not_found", "the MCP endpoint is " HTTP_PATH);
		return;
	}
	if (http_check_origin(h, req) == -1 || http_check_auth(h, req) == -1)
		return;
	httpconn_let_in(c);
	if (http_check_version(req) == -1)
		return;
	if (h->srv->stopping) {
		http_error_reply(req, HTTP_SERVUNAVAIL,
		    RPC_INVALID_REQUEST, "stopping", "the broker is stopping");
		return;
	}
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_POST:
		http_post(h, req);
		break;
	case EVHTTP_REQ_GET:
		http_get(h, req);
		break;
	case EVHTTP_REQ_DELETE:
		http_delete(h, req);
		break;
	default:
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, POST, DELETE");
		http_error_reply(req, HTTP_BADMETHOD, RPC_INVALID_REQUEST,
		    "method_not_allowed", HTTP_PATH " takes POST, GET and "
		    "DELETE");
	}
}

/* The session Mcp-Session-Id names, or NULL with the error answered. */
static struct http_sess *
http_session(struct http *h, struct evhttp_request *req)
{
	const char		*id = http_header(req, "Mcp-Session-Id");
	struct http_sess	*s;

	if (id == NULL) {
		http_error_reply(req, HTTP_BADREQUEST, RPC_INVALID_REQUEST,
		    "session_required", "no Mcp-Session-Id header: send the "
		    "one the initialize answer carried, or initialize first");
		return NULL;
	}
	if ((s = httpsess_find(h, id)) == NULL)
		http_error_reply(req, HTTP_NOTFOUND, RPC_INVALID_REQUEST,
		    "unknown_session", "no such session (ended, expired or "
		    "never begun): initialize a new one");
	return s;
}

/* A new session for an initialize, or NULL with the error answered. */
static struct http_sess *
http_session_new(struct http *h, struct evhttp_request *req)
{
	struct http_sess	*s;
	struct server		*srv = h->srv;
	char			 peer[80];

	if (srv->nconns >= srv->opt->max_clients) {
		log_warnx("--max-clients %llu reached; MCP session refused",
		    (unsigned long long)srv->opt->max_clients);
		http_error_reply(req, HTTP_SERVUNAVAIL, RPC_QUEUE_FULL,
		    "too_many_clients", "the broker serves as many clients "
		    "as --max-clients lets it: try again later");
		return NULL;
	}
	http_peer(req, peer, sizeof(peer));
	if ((s = httpsess_new(h, peer)) == NULL)
		http_error_reply(req, HTTP_INTERNAL, RPC_INTERNAL_ERROR,
		    "internal_error", "no random session id to be had");
	return s;
}

/*
 * Sort the messages of a POST: the ids of its requests as JSON text
 * into keys (an invalid message counts as a request of id null, which
 * gets an error; so does an id neither a string nor an integer, as
 * rpc_check answers it), and whether one is an initialize.
 */
static void
http_sort(json_object *m, json_object *keys, int *init)
{
	json_object	*method, *id = NULL;

	if (json_object_object_get_ex(m, "method", &method) &&
	    json_object_is_type(method, json_type_string)) {
		if (!json_object_object_get_ex(m, "id", &id))
			return;		/* a notification */
		if (strcmp(json_object_get_string(method), "initialize") == 0)
			*init = 1;
	} else if (json_object_is_type(m, json_type_object) &&
	    (json_object_object_get_ex(m, "result", NULL) ||
	    json_object_object_get_ex(m, "error", NULL)))
		return;			/* a response: it asked nothing */
	else
		json_object_object_get_ex(m, "id", &id);
	if (!json_object_is_type(id, json_type_string) &&
	    !json_object_is_type(id, json_type_int))
		id = NULL;
	json_object_array_add(keys, json_object_new_string(id == NULL ?
	    "null" : json_object_to_json_string_ext(id,
	    JSON_C_TO_STRING_PLAIN)));
}

/* Content-Type application/json, and an Accept taking JSON and events. */
static int
http_post_headers(struct evhttp_request *req)
{
	const char	*ct = http_header(req, "Content-Type");
	const char	*accept = http_header(req, "Accept");

	if (ct == NULL || strncasecmp(ct, "application/json", 16) != 0 ||
	    (ct[16] != '\0' && ct[16] != ';' && ct[16] != ' ')) {
		http_error_reply(req, HTTP_S_UNSUPPORTED,
		    RPC_INVALID_REQUEST, "unsupported_media_type", "a POST's "
		    "Content-Type must be application/json");
		return -1;
	}
	if (!http_accepts(accept, "application/json") ||
	    !http_accepts(accept, "text/event-stream")) {
		http_error_reply(req, HTTP_S_NOT_ACCEPTABLE, RPC_INVALID_REQUEST,
		    "not_acceptable", "a POST's Accept must list both "
		    "application/json and text/event-stream");
		return -1;
	}
	return 0;
}

/* Only notifications (and responses): run the notifications, 202. */
static void
http_notify(struct http_sess *s, struct evhttp_request *req,
    json_object *msg)
{
	json_object	*m;
	const char	*t;
	size_t		 i, n, len;

	n = json_object_is_type(msg, json_type_array) ?
	    json_object_array_length(msg) : 1;
	for (i = 0; i < n; i++) {
		m = json_object_is_type(msg, json_type_array) ?
		    json_object_array_get_idx(msg, i) : msg;
		if (!json_object_object_get_ex(m, "method", NULL))
			continue;
		t = json_object_to_json_string_length(m,
		    JSON_C_TO_STRING_PLAIN, &len);
		httpsess_notify(s, t, len);
	}
	httpsess_headers(s, req);
	evhttp_send_reply(req, 202, "Accepted", NULL);
}

/*
 * A POST of MCP 2026-07-28 (msg and body taken): its headers checked, it
 * runs on a session of its own (a notification: 202 at once).
 */
static void
http_post_modern(struct http *h, struct evhttp_request *req,
    json_object *msg, char *body, size_t len)
{
	struct http_sess	*s;
	json_object		*keys, *id;

	if (httpmodern_check(req, msg) == -1 ||
	    (s = http_session_new(h, req)) == NULL) {
		json_object_put(msg);
		free(body);
		return;
	}
	s->oneshot = 1;
	s->fresh = 0;
	if (!json_object_object_get_ex(msg, "id", &id)) {
		http_notify(s, req, msg);
		httpsess_free(s);
		json_object_put(msg);
		free(body);
		return;
	}
	keys = json_object_new_array();
	json_object_array_add(keys, json_object_new_string(id == NULL ? "null" :
	    json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN)));
	json_object_put(msg);
	httpsess_post(s, req, keys, body, len);
}

static void
http_post(struct http *h, struct evhttp_request *req)
{
	struct evbuffer		*in = evhttp_request_get_input_buffer(req);
	struct http_sess	*s;
	json_object		*msg, *keys;
	size_t			 i, len = evbuffer_get_length(in);
	char			*body, why[160];
	int			 rc, init = 0;

	if (http_post_headers(req) == -1)
		return;
	body = xcalloc(1, len + 1);
	evbuffer_remove(in, body, len);
	if ((rc = jstrict_parse(body, len, &msg)) != 0) {
		snprintf(why, sizeof(why), "not valid JSON (RFC 8259, UTF-8): "
		    "%s", jstrict_strerror(rc));
		http_error_reply(req, HTTP_BADREQUEST, RPC_PARSE_ERROR,
		    "parse_error", why);
		free(body);
		return;
	}
	if (httpmodern_is(req, msg)) {
		http_post_modern(h, req, msg, body, len);
		return;
	}
	keys = json_object_new_array();
	if (!json_object_is_type(msg, json_type_array))
		http_sort(msg, keys, &init);
	else if (json_object_array_length(msg) == 0)
		json_object_array_add(keys, json_object_new_string("null"));
	for (i = 0; json_object_is_type(msg, json_type_array) &&
	    i < json_object_array_length(msg); i++)
		http_sort(json_object_array_get_idx(msg, i), keys, &init);
	if (init && http_header(req, "Mcp-Session-Id") == NULL)
		s = http_session_new(h, req);
	else
		s = http_session(h, req);
	if (s != NULL && json_object_array_length(keys) == 0)
		http_notify(s, req, msg);
	else if (s != NULL) {
		httpsess_post(s, req, keys, body, len);
		keys = NULL;
		body = NULL;
	}
	json_object_put(keys);
	json_object_put(msg);
	free(body);
}

static void
http_get(struct http *h, struct evhttp_request *req)
{
	struct http_sess	*s;

	if (!http_accepts(http_header(req, "Accept"), "text/event-stream")) {
		http_error_reply(req, HTTP_S_NOT_ACCEPTABLE, RPC_INVALID_REQUEST,
		    "not_acceptable", "a GET's Accept must list "
		    "text/event-stream");
		return;
	}
	if ((s = http_session(h, req)) == NULL)
		return;
	if (httpsess_get(s, req, http_header(req, "Last-Event-ID")) != 0)
		http_error_reply(req, HTTP_S_CONFLICT, RPC_INVALID_REQUEST,
		    "stream_taken", "this session's stream is already open "
		    "on another GET: one at a time");
}

static void
http_delete(struct http *h, struct evhttp_request *req)
{
	struct http_sess	*s;

	if ((s = http_session(h, req)) == NULL)
		return;
	log_debug("MCP session %.8s...: ended by the client", s->id);
	httpsess_free(s);
	evhttp_send_reply(req, HTTP_NOCONTENT, "No Content", NULL);
}

static void
http_retry(evutil_socket_t fd, short ev, void *arg)
{
	struct http	*h = arg;

	(void)fd;
	(void)ev;
	if (h->lev != NULL && !h->srv->stopping)
		evconnlistener_enable(h->lev);
}

/* Out of descriptors: stop accepting for a while instead of spinning. */
static void
http_accept_error(struct evconnlistener *lev, void *arg)
{
	struct http	*h = http_self;
	struct timeval	 tv = { HTTP_ACCEPT_RETRY_S, 0 };
	int		 err = EVUTIL_SOCKET_ERROR();

	(void)arg;
	errno = err;
	if (err != EMFILE && err != ENFILE && err != ENOBUFS &&
	    err != ENOMEM) {
		log_warn("HTTP: accept");
		return;
	}
	log_warn("HTTP: accept; pausing new connections for %ds",
	    HTTP_ACCEPT_RETRY_S);
	evconnlistener_disable(lev);
	evtimer_add(h->retry, &tv);
}

/* The bound address as "HOST:PORT" (host in brackets for IPv6). */
static void
http_bound(struct http *h, evutil_socket_t fd, char *buf, size_t len)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof(ss);
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	char			 a[INET6_ADDRSTRLEN];

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == -1)
		fatal("getsockname");
	if (ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
		snprintf(h->host, sizeof(h->host), "[%s]", a);
		snprintf(buf, len, "%s:%u", h->host, ntohs(sin6->sin6_port));
	} else {
		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		snprintf(h->host, sizeof(h->host), "%s", a);
		snprintf(buf, len, "%s:%u", h->host, ntohs(sin->sin_port));
	}
}

int
http_open(struct server *srv, char *err, size_t errlen)
{
	const struct options	*opt = srv->opt;
	struct sockaddr_storage	 ss;
	struct evconnlistener	*lev;
	struct http		*h;
	char			 addr[96], *name;
	int			 sslen;

	if (opt->http == NULL)
		return 0;
	if (addr_parse(opt->http, &ss, &sslen) == -1 ||
	    (lev = evconnlistener_new_bind(srv->base, NULL, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    HTTP_BACKLOG, (struct sockaddr *)&ss, sslen)) == NULL) {
		snprintf(err, errlen, "--http %s: cannot bind: %s", opt->http,
		    strerror(errno));
		return -1;
	}
	h = xcalloc(1, sizeof(*h));
	h->srv = srv;
	h->lev = lev;
	TAILQ_INIT(&h->sessions);
	if ((h->retry = evtimer_new(srv->base, http_retry, h)) == NULL)
		fatalx("evtimer_new");
	httpconn_init(h);
	evconnlistener_set_error_cb(lev, http_accept_error);
	if ((h->eh = evhttp_new(srv->base)) == NULL ||
	    (h->sock = evhttp_bind_listener(h->eh, lev)) == NULL)
		fatalx("evhttp_new");
	evhttp_set_gencb(h->eh, http_request, h);
	evhttp_set_bevcb(h->eh, httpconn_new, h);
	evhttp_set_allowed_methods(h->eh, HTTP_METHODS);
	evhttp_set_max_body_size(h->eh, (ev_ssize_t)opt->max_message);
	evhttp_set_max_headers_size(h->eh, HTTP_MAX_HEADERS);
	evhttp_set_timeout(h->eh, HTTP_TIMEOUT_S);
	evhttp_set_default_content_type(h->eh, NULL);
	http_bound(h, evconnlistener_get_fd(lev), addr, sizeof(addr));
	name = xasprintf("http@%s", addr);
	json_object_array_add(srv->listen_addrs, json_object_new_string(name));
	free(name);
	log_info("MCP over HTTP on http://%s%s", addr, HTTP_PATH);
	srv->http = http_self = h;
	return 0;
}

void
http_shutdown(struct server *srv)
{
	struct http		*h = srv->http;
	struct http_sess	*s;

	if (h == NULL)
		return;
	if (h->sock != NULL)
		evhttp_del_accept_socket(h->eh, h->sock);
	h->sock = NULL;
	h->lev = NULL;		/* freed with its socket */
	evtimer_del(h->retry);
	evtimer_del(h->refuse);
	while ((s = TAILQ_FIRST(&h->sessions)) != NULL)
		httpsess_free(s);
}

void
http_free(struct server *srv)
{
	struct http	*h = srv->http;

	if (h == NULL)
		return;
	http_shutdown(srv);
	if (h->sweep != NULL)
		event_free(h->sweep);
	event_free(h->retry);
	evhttp_free(h->eh);
	httpconn_free(h);
	free(h);
	srv->http = http_self = NULL;
}

void
http_json_reply(struct evhttp_request *req, int status, json_object *msg)
{
	struct evbuffer	*b;
	const char	*s;
	size_t		 len;

	s = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if ((b = evbuffer_new()) == NULL || evbuffer_add(b, s, len) == -1)
		fatalx("evbuffer_add: out of memory");
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, status, NULL, b);
	evbuffer_free(b);
}

/* MCP over HTTP: a request refused, with a JSON-RPC error. */
void
http_error_reply(struct evhttp_request *req, int status, int code,
    const char *type, const char *reason)
{
	json_object	*resp;

	resp = rpc_error_response(NULL, code, type, NULL, reason);
	http_json_reply(req, status, resp);
	json_object_put(resp);
}
