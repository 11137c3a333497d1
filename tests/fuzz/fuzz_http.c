/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: MCP over Streamable HTTP (http.c, httpsess.c, the
 * event ids of sse.c) as a client reaches it.  The input is the bytes a
 * client sends on one connection to a real endpoint (evhttp on the
 * broker's loop, bound to 127.0.0.1, a token "tok", no store): one or
 * more requests, whose headers go through the checks (Host, Origin, the
 * bearer token, MCP-Protocol-Version, Accept, Content-Type,
 * Mcp-Session-Id, Last-Event-ID) and whose bodies go into the JSON-RPC
 * layer.  "@SID@" in the input becomes the id of a live session made for
 * it, so that requests can reach one.  The loop runs until nothing more
 * comes out; then the client resets the connection.
 *
 * What must hold: the bytes out are HTTP responses; a body of ours
 * (application/json) is strict JSON, an error a JSON-RPC error with
 * data.type; an event stream's events carry strict JSON (or nothing, the
 * priming event) with ids "NUM-SEQ"; a session id out is 32 hex digits;
 * and no request is accepted (2xx) unless the input holds the token.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include <json-c/json.h>

#include "fuzzutil.h"
#include "jstrict.h"
#include "options.h"
#include "server.h"
#include "sse.h"

#define SID_MARK	"@SID@"
#define OUT_MAX		(4 * 1024 * 1024)

static struct event_base	*base;
static struct options		 opt;
static struct server		 srv;
static struct sockaddr_in	 addr;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char		*a[] = { "cmdgated", "--http", "127.0.0.1:0",
			    "--max-message", "65536", NULL };
	char		 err[256];
	const char	*s;

	(void)argc;
	(void)argv;
	base = event_base_new();
	fuzz_server(&srv, &opt, base, NULL, 5, a);
	opt.nlisten = 0;		/* the endpoint alone */
	srv.token = strdup("tok");
	srv.tokenlen = 3;
	if (listener_open(&srv, err, sizeof(err)) == -1 ||
	    http_open(&srv, err, sizeof(err)) == -1)
		fuzz_fail("%s", err);
	/* "http@127.0.0.1:PORT": where the client connects. */
	s = json_object_get_string(json_object_array_get_idx(
	    srv.listen_addrs, 0));
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons((uint16_t)atoi(strrchr(s, ':') + 1));
	return 0;
}

/* The input, "@SID@" replaced by sid.  Caller frees. */
static char *
with_sid(const uint8_t *data, size_t size, const char *sid, size_t *len)
{
	struct evbuffer	*b = evbuffer_new();
	const uint8_t	*p = data, *end = data + size, *m;
	char		*out;

	while ((m = memmem(p, (size_t)(end - p), SID_MARK,
	    strlen(SID_MARK))) != NULL) {
		evbuffer_add(b, p, (size_t)(m - p));
		evbuffer_add(b, sid, strlen(sid));
		p = m + strlen(SID_MARK);
	}
	evbuffer_add(b, p, (size_t)(end - p));
	*len = evbuffer_get_length(b);
	out = malloc(*len + 1);
	evbuffer_remove(b, out, *len);
	evbuffer_free(b);
	return out;
}

/* Read what fd has into out: 1 when something came, 0 if not. */
static int
drain(int fd, struct evbuffer *out)
{
	char	buf[65536];
	ssize_t	n;
	int	got = 0;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (evbuffer_get_length(out) < OUT_MAX)
			evbuffer_add(out, buf, (size_t)n);
		got = 1;
	}
	return got;
}

/* Send req[len] on a new connection; what came back, once nothing more
 * does.  The connection is then reset. */
static void
exchange(const char *req, size_t len, struct evbuffer *out)
{
	struct linger	 lg = { 1, 0 };
	size_t		 off = 0;
	ssize_t		 w;
	int		 fd, quiet = 0, turns;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == -1)
		fuzz_fail("connect: %s", strerror(errno));
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (turns = 0; turns < 20000 && quiet < 3; turns++) {
		if (off < len && (w = write(fd, req + off, len - off)) > 0)
			off += (size_t)w;
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (drain(fd, out) || off < len)
			quiet = 0;
		else
			quiet++;
	}
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
	for (turns = 0; turns < 8; turns++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

/* ---- reading the responses --------------------------------------------- */

struct resp {
	int	 status;
	char	*ctype;		/* or NULL */
	char	*sid;		/* Mcp-Session-Id, or NULL */
	int	 chunked;
	long	 clen;		/* -1: none */
};

static void
resp_free(struct resp *r)
{
	free(r->ctype);
	free(r->sid);
}

/* The status line and headers of the next response: 1, or 0 when they
 * are not all there (an open stream cut by the reset). */
static int
read_head(struct evbuffer *in, struct resp *r)
{
	char	*line, *v;
	size_t	 n;

	memset(r, 0, sizeof(*r));
	r->clen = -1;
	if (evbuffer_search(in, "\r\n\r\n", 4, NULL).pos == -1)
		return 0;
	line = evbuffer_readln(in, &n, EVBUFFER_EOL_CRLF_STRICT);
	if (line == NULL || sscanf(line, "HTTP/%*d.%*d %3d ", &r->status) !=
	    1 || r->status < 100 || r->status > 599)
		fuzz_fail("not a status line: %s", line != NULL ? line : "");
	free(line);
	while ((line = evbuffer_readln(in, &n, EVBUFFER_EOL_CRLF_STRICT)) !=
	    NULL && n > 0) {
		if ((v = strchr(line, ':')) == NULL)
			fuzz_fail("not a header: %s", line);
		*v++ = '\0';
		v += strspn(v, " ");
		if (strcasecmp(line, "Content-Type") == 0)
			r->ctype = strdup(v);
		else if (strcasecmp(line, "Mcp-Session-Id") == 0)
			r->sid = strdup(v);
		else if (strcasecmp(line, "Transfer-Encoding") == 0)
			r->chunked = strcasecmp(v, "chunked") == 0;
		else if (strcasecmp(line, "Content-Length") == 0)
			r->clen = atol(v);
		free(line);
	}
	free(line);
	return 1;
}

/* The body as far as it came (a chunked one may be cut short). */
static struct evbuffer *
read_body(struct evbuffer *in, struct resp *r, int *whole)
{
	struct evbuffer	*b = evbuffer_new();
	char		*line;
	size_t		 n;
	long		 k;

	*whole = 1;
	if (r->chunked) {
		while ((line = evbuffer_readln(in, &n,
		    EVBUFFER_EOL_CRLF_STRICT)) != NULL) {
			k = strtol(line, NULL, 16);
			free(line);
			if (k == 0) {
				free(evbuffer_readln(in, &n,
				    EVBUFFER_EOL_CRLF_STRICT));
				return b;
			}
			if ((long)evbuffer_get_length(in) < k + 2)
				break;
			evbuffer_remove_buffer(in, b, (size_t)k);
			evbuffer_drain(in, 2);
		}
		evbuffer_add_buffer(b, in);
		*whole = 0;
	} else if (r->clen >= 0) {
		if ((long)evbuffer_get_length(in) < r->clen)
			fuzz_fail("a body shorter than its Content-Length");
		evbuffer_remove_buffer(in, b, (size_t)r->clen);
	} else if (r->status >= 200 && r->status != 204 && r->status != 304)
		evbuffer_add_buffer(b, in);	/* to the end */
	return b;
}

/* An error of ours: {"jsonrpc", "id": null, "error": {code, message,
 * data: {type}}}. */
static void
check_json(const char *body, size_t len, int status)
{
	json_object	*o = fuzz_json("an HTTP answer", body, len), *e;

	if (status >= 400 && (!json_object_object_get_ex(o, "error", &e) ||
	    !json_object_is_type(json_object_object_get(e, "code"),
	    json_type_int) || !json_object_is_type(json_object_object_get(
	    json_object_object_get(e, "data"), "type"), json_type_string)))
		fuzz_fail("HTTP %d without a JSON-RPC error: %.*s", status,
		    (int)len, body);
	json_object_put(o);
}

static int
on_event(void *arg, const char *event, const char *id, const char *data,
    size_t len)
{
	uint64_t	num, seq;
	json_object	*o;

	(void)arg;
	if (strcmp(event, "message") != 0)
		fuzz_fail("an event of type %s", event);
	if (sse_id_parse(id, &num, &seq) != 0)
		fuzz_fail("an event id %s of none of ours", id);
	if (len > 0) {
		o = fuzz_json("an event's data", data, len);
		json_object_put(o);
	}
	return 0;
}

static void
check_sse(struct evbuffer *b, int whole)
{
	struct sse	rd;
	size_t		n = evbuffer_get_length(b);
	int		rc;

	sse_init(&rd, OUT_MAX, on_event, NULL);
	rc = sse_feed(&rd, (const char *)evbuffer_pullup(b, -1), n);
	if (rc != SSE_OK)
		fuzz_fail("the event stream: %s", sse_strerror(rc));
	/* A stream cut by the reset may end inside an event. */
	(void)whole;
	sse_free(&rd);
}

static int
is_sid(const char *s)
{
	return strlen(s) == 2 * HTTP_SID_BYTES &&
	    strspn(s, "0123456789abcdef") == 2 * HTTP_SID_BYTES;
}

/* Every response out; 1 when one accepted a request (2xx). */
static int
check_out(struct evbuffer *out)
{
	struct resp	 r;
	struct evbuffer	*b;
	int		 whole, accepted = 0;

	while (evbuffer_get_length(out) > 0 && read_head(out, &r)) {
		b = read_body(out, &r, &whole);
		if (r.sid != NULL && !is_sid(r.sid))
			fuzz_fail("a session id %s", r.sid);
		if (r.status >= 200 && r.status < 300)
			accepted = 1;
		if (r.ctype != NULL && strcmp(r.ctype, "application/json") == 0)
			check_json((const char *)evbuffer_pullup(b, -1),
			    evbuffer_get_length(b), r.status);
		else if (r.ctype != NULL &&
		    strcmp(r.ctype, "text/event-stream") == 0)
			check_sse(b, whole);
		else if (r.status < 400 && evbuffer_get_length(b) > 0)
			fuzz_fail("HTTP %d with a body of type %s", r.status,
			    r.ctype != NULL ? r.ctype : "(none)");
		evbuffer_free(b);
		resp_free(&r);
	}
	return accepted;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http		*h = srv.http;
	struct http_sess	*s;
	struct evbuffer		*out = evbuffer_new();
	char			*req;
	size_t			 len;

	if ((s = httpsess_new(h, "127.0.0.1:1")) == NULL)
		fuzz_fail("no session");
	req = with_sid(data, size, s->id, &len);
	exchange(req, len, out);
	if (check_out(out) && memmem(req, len, "tok", 3) == NULL)
		fuzz_fail("a request accepted without the token");
	/* The next input finds no session, no lockout of this one. */
	while ((s = TAILQ_FIRST(&h->sessions)) != NULL)
		httpsess_free(s);
	authlimit_free(srv.authlimit);
	srv.authlimit = NULL;
	fuzz_loop_settle(base, 16);
	free(req);
	evbuffer_free(out);
	return 0;
}
