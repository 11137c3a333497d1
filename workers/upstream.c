/* SPDX-License-Identifier: ISC */
/*
 * One connection to an upstream in a dialect of cmdgate.tools(5):
 * jsonrpc (a JSON line each way), jsonrpc-lsp (Content-Length headers and
 * a body), unity-mcp (a WELCOME line, then 8-byte big-endian lengths and
 * a JSON envelope).  mcp-http lives in mcphttp.c.  Every wait is a ppoll
 * under the worker's signal mask, so SIGTERM and the broker's end end it.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <netdb.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "addr.h"
#include "jsonl.h"
#include "jstrict.h"
#include "mcphttp.h"
#include "upstream.h"
#include "wproc.h"

#define UP_MAX		(64 * 1024 * 1024)	/* longest message */
#define UP_LINE_MAX	4096		/* a WELCOME or header line */

enum up_dialect { D_JSONRPC, D_LSP, D_UNITY, D_MCPHTTP };

static const char *const dialects[] = { "jsonrpc", "jsonrpc-lsp",
    "unity-mcp", "mcp-http", NULL };

struct upstream {
	enum up_dialect	 dialect;
	int		 fd;
	struct jsonl	 jl;		/* what was read, not yet taken */
	int64_t		 deadline;	/* of the call under way */
	const sigset_t	*waitmask;
	int64_t		 id;		/* the last request's */
	int		 sent;		/* the last request went out whole */
	int		 nolisten;	/* the connect was refused */
	char		 to[256];
	struct mcphttp	*mh;		/* mcp-http only */
};

static int
up_dialect(const char *name)
{
	int	i;

	for (i = 0; dialects[i] != NULL; i++)
		if (strcmp(name, dialects[i]) == 0)
			return i;
	return -1;
}

int
upstream_dialect_known(const char *dialect)
{
	return dialect != NULL && up_dialect(dialect) != -1;
}

const char *
up_strstatus(enum up_status st)
{
	static const char *msgs[] = { "answered", "answered with an error",
	    "refused", "lost", "timed out", "cancelled", "protocol error",
	    "answer too long" };

	return st <= UP_TOO_LONG ? msgs[st] : "?";
}

/* err = "TO: what" (printf-like). */
static enum up_status
up_fail(struct upstream *u, enum up_status st, char *err, size_t errlen,
    const char *what, const char *detail)
{
	char	msg[512];

	snprintf(msg, sizeof(msg), what, detail);
	snprintf(err, errlen, "%s: %s", u->to, msg);
	return st;
}

/* jsonl's wait: wproc_wait for reading until the call's deadline. */
static int
up_read_wait(void *arg, int fd, int ms)
{
	struct upstream	*u = arg;
	int		 w;

	(void)ms;
	if ((w = wproc_wait(fd, POLLIN, u->deadline, u->waitmask)) < 0)
		return JSONL_WAIT_CANCEL;
	return w;
}

static int64_t
up_left(const struct upstream *u)
{
	int64_t	left = u->deadline - wproc_now_ms();

	return left < 0 ? 0 : left;
}

/* Why nothing (or no whole message) could be read. */
static enum up_status
up_read_failed(struct upstream *u, enum jsonl_status st, char *err,
    size_t errlen)
{
	switch (st) {
	case JSONL_TIMEOUT:
		return up_fail(u, UP_TIMEOUT, err, errlen, "%s",
		    "did not answer in time");
	case JSONL_CANCELLED:
		return up_fail(u, UP_CANCELLED, err, errlen, "%s",
		    "call cancelled");
	case JSONL_EOF:
		return up_fail(u, UP_LOST, err, errlen, "%s",
		    "closed the connection before answering");
	case JSONL_TOO_LONG:
		return up_fail(u, UP_TOO_LONG, err, errlen, "%s",
		    "answer longer than 64 MiB");
	case JSONL_BAD_JSON:
		return up_fail(u, UP_PROTOCOL, err, errlen,
		    "answer is not JSON (%s)", jstrict_strerror(u->jl.jerr));
	default:
		if (errno == ECONNRESET)
			return up_fail(u, UP_LOST, err, errlen, "%s",
			    "closed the connection (reset) before answering");
		return up_fail(u, UP_LOST, err, errlen, "read failed: %s",
		    strerror(errno));
	}
}

/*
 * Send all of s, waiting for room until the deadline.  A peer that closes
 * first has not taken the request: UP_REFUSED, safe to try again.
 */
static enum up_status
up_send(struct upstream *u, const char *s, size_t n, char *err,
    size_t errlen)
{
	size_t	off = 0;
	ssize_t	w;
	int	rc;

	u->sent = 0;
	while (off < n) {
		if ((w = send(u->fd, s + off, n - off, MSG_NOSIGNAL)) >= 0) {
			off += (size_t)w;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == ECONNRESET || errno == EPIPE)
			return up_fail(u, UP_REFUSED, err, errlen, "%s",
			    "closed the connection before it took the whole "
			    "request");
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return up_fail(u, UP_REFUSED, err, errlen,
			    "send failed: %s", strerror(errno));
		if ((rc = wproc_wait(u->fd, POLLOUT, u->deadline,
		    u->waitmask)) <= 0)
			return rc == 0 ? up_fail(u, UP_TIMEOUT, err, errlen,
			    "%s", "did not take the whole request in time") :
			    up_fail(u, UP_CANCELLED, err, errlen, "%s",
			    "call cancelled");
	}
	u->sent = 1;
	return UP_OK;
}

/* s, n bytes, after a prefix of plen bytes, in one buffer: one send. */
static enum up_status
up_send_framed(struct upstream *u, const char *prefix, size_t plen,
    const char *s, size_t n, const char *suffix, char *err, size_t errlen)
{
	size_t		 slen = suffix != NULL ? strlen(suffix) : 0;
	char		*buf;
	enum up_status	 st;

	if ((buf = malloc(plen + n + slen)) == NULL)
		return up_fail(u, UP_REFUSED, err, errlen, "%s",
		    strerror(ENOMEM));
	memcpy(buf, prefix, plen);
	memcpy(buf + plen, s, n);
	if (slen > 0)
		memcpy(buf + plen + n, suffix, slen);
	st = up_send(u, buf, plen + n + slen, err, errlen);
	free(buf);
	return st;
}

/* ---- the three framings ----------------------------------------------- */

/* Send msg in the dialect's framing. */
static enum up_status
up_send_msg(struct upstream *u, json_object *msg, char *err, size_t errlen)
{
	const char	*s;
	size_t		 n;
	char		 hdr[64];
	int		 i;

	s = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	switch (u->dialect) {
	case D_LSP:
		i = snprintf(hdr, sizeof(hdr), "Content-Length: %zu\r\n\r\n",
		    n);
		return up_send_framed(u, hdr, (size_t)i, s, n, NULL, err,
		    errlen);
	case D_UNITY:
		for (i = 0; i < 8; i++)
			hdr[i] = (char)(((uint64_t)n >> (56 - 8 * i)) & 0xff);
		return up_send_framed(u, hdr, 8, s, n, NULL, err, errlen);
	default:
		return up_send_framed(u, "", 0, s, n, "\n", err, errlen);
	}
}

/* One LSP header block's Content-Length: *n, or a status. */
static enum up_status
up_lsp_header(struct upstream *u, size_t *n, char *err, size_t errlen)
{
	enum jsonl_status	 st;
	char			*line, *end;
	size_t			 len;
	int			 have = 0;
	unsigned long long	 v;

	for (;;) {
		u->jl.max = UP_LINE_MAX;
		if ((st = jsonl_line(&u->jl, up_left(u), &line, &len)) !=
		    JSONL_MSG)
			return st == JSONL_TOO_LONG ? up_fail(u, UP_PROTOCOL,
			    err, errlen, "%s", "sent a header line over 4 KiB") :
			    up_read_failed(u, st, err, errlen);
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if (len == 0) {
			free(line);
			break;
		}
		if (strncasecmp(line, "Content-Length:", 15) == 0) {
			errno = 0;
			v = strtoull(line + 15, &end, 10);
			have = errno == 0 && end != line + 15 &&
			    strspn(end, " \t") == strlen(end);
			*n = (size_t)v;
		}
		free(line);
	}
	if (!have)
		return up_fail(u, UP_PROTOCOL, err, errlen, "%s",
		    "sent a message without a valid Content-Length");
	if (*n > UP_MAX)
		return up_fail(u, UP_TOO_LONG, err, errlen, "%s",
		    "answer longer than 64 MiB");
	return UP_OK;
}

/* One unity-mcp frame's length: *n, or a status. */
static enum up_status
up_unity_header(struct upstream *u, size_t *n, char *err, size_t errlen)
{
	enum jsonl_status	 st;
	char			*h;
	uint64_t		 v = 0;
	int			 i;

	u->jl.max = 8;
	if ((st = jsonl_take(&u->jl, up_left(u), 8, &h)) != JSONL_MSG)
		return up_read_failed(u, st, err, errlen);
	for (i = 0; i < 8; i++)
		v = v << 8 | (unsigned char)h[i];
	free(h);
	if (v == 0)
		return up_fail(u, UP_PROTOCOL, err, errlen, "%s",
		    "sent a frame of length 0");
	if (v > UP_MAX)
		return up_fail(u, UP_TOO_LONG, err, errlen, "%s",
		    "sent a frame longer than 64 MiB");
	*n = (size_t)v;
	return UP_OK;
}

/* The next message's bytes in the dialect's framing: *buf, *n. */
static enum up_status
up_read_raw(struct upstream *u, char **buf, size_t *n, char *err,
    size_t errlen)
{
	enum jsonl_status	 st;
	enum up_status		 ust;

	*buf = NULL;
	if (u->dialect == D_JSONRPC) {
		u->jl.max = UP_MAX;
		st = jsonl_line(&u->jl, up_left(u), buf, n);
	} else {
		ust = u->dialect == D_LSP ? up_lsp_header(u, n, err, errlen) :
		    up_unity_header(u, n, err, errlen);
		if (ust != UP_OK)
			return ust;
		u->jl.max = UP_MAX;
		st = jsonl_take(&u->jl, up_left(u), *n, buf);
	}
	return st == JSONL_MSG ? UP_OK : up_read_failed(u, st, err, errlen);
}

/* The next message, strictly parsed: *msg (caller puts). */
static enum up_status
up_read_msg(struct upstream *u, json_object **msg, char *err, size_t errlen)
{
	enum up_status	 st;
	char		*buf;
	size_t		 n;
	int		 rc;

	*msg = NULL;
	if ((st = up_read_raw(u, &buf, &n, err, errlen)) != UP_OK)
		return st;
	rc = jstrict_parse(buf, n, msg);
	free(buf);
	if (rc != 0)
		return up_fail(u, UP_PROTOCOL, err, errlen,
		    "sent something that is not JSON (%s)",
		    jstrict_strerror(rc));
	if (!json_object_is_type(*msg, json_type_object)) {
		json_object_put(*msg);
		*msg = NULL;
		return up_fail(u, UP_PROTOCOL, err, errlen, "%s",
		    "sent JSON that is not an object");
	}
	return UP_OK;
}

/* ---- connecting ------------------------------------------------------- */

/*
 * HOST:PORT or [IPV6]:PORT: host without brackets and port; 0, or -1.
 */
static int
up_split(const char *addr, char *host, size_t hostlen, char *port,
    size_t portlen)
{
	const char	*p;
	int		 bracketed;

	/* "[" opens an IPv6 address, which only "]:" closes. */
	if ((bracketed = addr_split(addr, host, hostlen, &p)) == -1 ||
	    (addr[0] == '[' && !bracketed) || *p == '\0' ||
	    strlen(p) >= portlen)
		return -1;
	snprintf(port, portlen, "%s", p);
	return 0;
}

/* A connected socket in u->fd, or a status (UP_REFUSED: try again). */
static enum up_status
up_connect(struct upstream *u, char *err, size_t errlen)
{
	struct addrinfo	 hints, *ai = NULL;
	char		 host[256], port[16];
	int		 rc, soerr = 0;
	socklen_t	 elen = sizeof(soerr);

	if (up_split(u->to, host, sizeof(host), port, sizeof(port)) == -1)
		return up_fail(u, UP_PROTOCOL, err, errlen, "%s",
		    "not HOST:PORT or [IPV6]:PORT");
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, port, &hints, &ai)) != 0)
		return up_fail(u, rc == EAI_AGAIN ? UP_REFUSED : UP_PROTOCOL,
		    err, errlen, "%s", gai_strerror(rc));
	u->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (u->fd == -1 || (connect(u->fd, ai->ai_addr, ai->ai_addrlen) ==
	    -1 && errno != EINPROGRESS)) {
		freeaddrinfo(ai);
		u->nolisten = errno == ECONNREFUSED;
		return up_fail(u, UP_REFUSED, err, errlen, "%s",
		    strerror(errno));
	}
	freeaddrinfo(ai);
	if ((rc = wproc_wait(u->fd, POLLOUT, u->deadline, u->waitmask)) <= 0)
		return rc == 0 ? up_fail(u, UP_TIMEOUT, err, errlen, "%s",
		    "connect timed out") : up_fail(u, UP_CANCELLED, err,
		    errlen, "%s", "call cancelled");
	getsockopt(u->fd, SOL_SOCKET, SO_ERROR, &soerr, &elen);
	u->nolisten = soerr == ECONNREFUSED;
	if (soerr != 0)
		return up_fail(u, UP_REFUSED, err, errlen, "%s",
		    strerror(soerr));
	return UP_OK;
}

/* Whether line holds the word tok, space-separated. */
static int
up_has_token(const char *line, const char *tok)
{
	size_t		 n = strlen(tok);
	const char	*p = line;

	while ((p = strstr(p, tok)) != NULL) {
		if ((p == line || p[-1] == ' ') && (p[n] == '\0' ||
		    p[n] == ' '))
			return 1;
		p += n;
	}
	return 0;
}

/*
 * unity-mcp: the WELCOME line.  Closed or reset first is the bridge
 * going away (UP_REFUSED: nothing was written); anything else that is
 * not "WELCOME UNITY-MCP ... FRAMING=1" is not a bridge we can speak to.
 */
static enum up_status
up_welcome(struct upstream *u, char *err, size_t errlen)
{
	enum jsonl_status	 st;
	char			*line;
	size_t			 len;
	enum up_status		 ust = UP_OK;

	u->jl.max = UP_LINE_MAX;
	if ((st = jsonl_line(&u->jl, up_left(u), &line, &len)) != JSONL_MSG) {
		if (st == JSONL_TOO_LONG)
			return up_fail(u, UP_PROTOCOL, err, errlen, "%s",
			    "sent no WELCOME line (4 KiB without a newline)");
		ust = up_read_failed(u, st, err, errlen);
		if (ust == UP_LOST)
			return up_fail(u, UP_REFUSED, err, errlen, "%s",
			    "closed the connection before its WELCOME line");
		return ust;
	}
	if (len > 0 && line[len - 1] == '\r')
		line[--len] = '\0';
	if (strncmp(line, "WELCOME UNITY-MCP", 17) != 0)
		ust = up_fail(u, UP_PROTOCOL, err, errlen, "expected "
		    "\"WELCOME UNITY-MCP ... FRAMING=1\", got \"%.200s\"", line);
	else if (!up_has_token(line, "FRAMING=1"))
		ust = up_fail(u, UP_PROTOCOL, err, errlen, "unknown framing "
		    "in \"%.200s\" (only FRAMING=1 is spoken)", line);
	free(line);
	return ust;
}

enum up_status
upstream_open(const char *dialect, const char *to, int64_t deadline,
    const sigset_t *waitmask, struct upstream **up, int *nolisten, char *err,
    size_t errlen)
{
	struct upstream	*u;
	enum up_status	 st;
	int		 d;

	*up = NULL;
	*nolisten = 0;
	if ((u = calloc(1, sizeof(*u))) == NULL) {
		snprintf(err, errlen, "%s: %s", to, strerror(ENOMEM));
		return UP_REFUSED;
	}
	u->fd = -1;
	u->deadline = deadline;
	u->waitmask = waitmask;
	snprintf(u->to, sizeof(u->to), "%s", to);
	if ((d = up_dialect(dialect)) == -1)
		st = up_fail(u, UP_PROTOCOL, err, errlen, "unknown dialect "
		    "\"%s\"", dialect);
	else if ((u->dialect = (enum up_dialect)d) == D_MCPHTTP)
		st = mcphttp_open(to, deadline, waitmask, &u->mh, err, errlen);
	else if ((st = up_connect(u, err, errlen)) == UP_OK) {
		jsonl_init(&u->jl, u->fd, UP_MAX);
		u->jl.wait = up_read_wait;
		u->jl.arg = u;
		if (u->dialect == D_UNITY)
			st = up_welcome(u, err, errlen);
	}
	if (st != UP_OK) {
		*nolisten = u->nolisten;
		upstream_close(u);
		return st;
	}
	*up = u;
	return UP_OK;
}

/* ---- calls ------------------------------------------------------------ */

/* A JSON-RPC 2.0 request (caller puts). */
static json_object *
up_jsonrpc_request(int64_t id, const char *method, json_object *params)
{
	json_object	*req = json_object_new_object();

	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(req, "id", json_object_new_int64(id));
	json_object_object_add(req, "method", json_object_new_string(method));
	json_object_object_add(req, "params", params != NULL ?
	    json_object_get(params) : json_object_new_object());
	return req;
}

/* jsonrpc, jsonrpc-lsp: the answer to u->id, notifications skipped. */
static enum up_status
up_jsonrpc_answer(struct upstream *u, json_object **out, char *err,
    size_t errlen)
{
	json_object	*msg, *v;
	enum up_status	 st;

	for (;;) {
		if ((st = up_read_msg(u, &msg, err, errlen)) != UP_OK)
			return st;
		/* A request from the server has an id too: not ours. */
		if (!json_object_object_get_ex(msg, "method", NULL) &&
		    jsonl_is_answer(msg, u->id))
			break;
		json_object_put(msg);	/* a notification or request */
	}
	if (json_object_object_get_ex(msg, "result", &v))
		st = UP_OK;
	else if (json_object_object_get_ex(msg, "error", &v))
		st = UP_ERROR;
	else {
		json_object_put(msg);
		return up_fail(u, UP_PROTOCOL, err, errlen, "%s",
		    "sent an answer with neither result nor error");
	}
	*out = json_object_get(v);
	json_object_put(msg);
	if (st == UP_ERROR)
		snprintf(err, errlen, "%s: upstream error %d: %s", u->to,
		    json_object_get_int(json_object_object_get(v, "code")),
		    json_object_object_get(v, "message") != NULL ?
		    json_object_get_string(json_object_object_get(v,
		    "message")) : "(no message)");
	return st;
}

/* unity-mcp: the status/result envelope. */
static enum up_status
up_unity_answer(struct upstream *u, json_object *msg, json_object **out,
    char *err, size_t errlen)
{
	json_object	*v, *e;
	const char	*status;

	if (!json_object_object_get_ex(msg, "status", &v) ||
	    (status = json_object_get_string(v)) == NULL)
		return up_fail(u, UP_PROTOCOL, err, errlen, "%s",
		    "sent an answer without \"status\"");
	if (strcmp(status, "success") == 0) {
		*out = json_object_get(json_object_object_get(msg, "result"));
		return UP_OK;
	}
	if (strcmp(status, "error") != 0)
		return up_fail(u, UP_PROTOCOL, err, errlen, "sent an answer "
		    "with status \"%.100s\"", status);
	if (!json_object_object_get_ex(msg, "error", &e) &&
	    !json_object_object_get_ex(msg, "message", &e))
		e = NULL;
	snprintf(err, errlen, "%s: upstream error: %.400s", u->to,
	    e == NULL ? "(no message)" : json_object_is_type(e,
	    json_type_string) ? json_object_get_string(e) :
	    jstrict_to_string(e));
	*out = json_object_get(msg);
	return UP_ERROR;
}

enum up_status
upstream_call(struct upstream *u, const char *method, json_object *params,
    int64_t deadline, json_object **out, char *err, size_t errlen)
{
	json_object	*req, *msg;
	enum up_status	 st;

	*out = NULL;
	u->deadline = deadline;
	u->id++;
	if (u->dialect == D_MCPHTTP) {
		st = mcphttp_call(u->mh, method, params, deadline, out, err,
		    errlen);
		/* What it can tell: an answer, or a loss after the request. */
		u->sent = st == UP_OK || st == UP_ERROR || st == UP_LOST;
		return st;
	}
	if (u->dialect == D_UNITY) {
		req = json_object_new_object();
		json_object_object_add(req, "type",
		    json_object_new_string(method));
		json_object_object_add(req, "params", params != NULL ?
		    json_object_get(params) : json_object_new_object());
	} else
		req = up_jsonrpc_request(u->id, method, params);
	st = up_send_msg(u, req, err, errlen);
	json_object_put(req);
	if (st != UP_OK)
		return st;
	if (u->dialect != D_UNITY)
		return up_jsonrpc_answer(u, out, err, errlen);
	if ((st = up_read_msg(u, &msg, err, errlen)) != UP_OK)
		return st;
	st = up_unity_answer(u, msg, out, err, errlen);
	json_object_put(msg);
	return st;
}

/* unity-mcp: the 4-byte frame "ping", answered by a success (pong). */
static enum up_status
up_unity_ping(struct upstream *u, char *err, size_t errlen)
{
	static const char	 ping[] = { 0, 0, 0, 0, 0, 0, 0, 4,
	    'p', 'i', 'n', 'g' };
	json_object		*msg, *out = NULL;
	enum up_status		 st;
	char			*buf;
	size_t			 n;

	if ((st = up_send(u, ping, sizeof(ping), err, errlen)) != UP_OK)
		return st;
	if ((st = up_read_raw(u, &buf, &n, err, errlen)) != UP_OK)
		return st;
	if (n == 4 && memcmp(buf, "pong", 4) == 0) {
		free(buf);
		return UP_OK;
	}
	if (jstrict_parse(buf, n, &msg) != 0 ||
	    !json_object_is_type(msg, json_type_object)) {
		json_object_put(msg);
		free(buf);
		return up_fail(u, UP_PROTOCOL, err, errlen, "%s",
		    "answered ping with something that is not pong");
	}
	free(buf);
	st = up_unity_answer(u, msg, &out, err, errlen);
	json_object_put(out);
	json_object_put(msg);
	return st;
}

enum up_status
upstream_ping(struct upstream *u, int64_t deadline, char *err, size_t errlen)
{
	json_object	*out = NULL;
	enum up_status	 st;

	u->deadline = deadline;
	if (u->dialect == D_MCPHTTP)
		return mcphttp_ping(u->mh, deadline, err, errlen);
	if (u->dialect == D_UNITY)
		return up_unity_ping(u, err, errlen);
	/* Any answer, even "method not found", is the upstream alive. */
	st = upstream_call(u, "ping", NULL, deadline, &out, err, errlen);
	json_object_put(out);
	return st == UP_ERROR ? UP_OK : st;
}

int
upstream_sent(const struct upstream *u)
{
	return u->sent;
}

void
upstream_close(struct upstream *u)
{
	if (u == NULL)
		return;
	if (u->mh != NULL)
		mcphttp_close(u->mh);
	if (u->fd != -1) {
		jsonl_free(&u->jl);
		close(u->fd);
	}
	free(u);
}
