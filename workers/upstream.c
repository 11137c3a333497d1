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
#include "jrpcup.h"
#include "jsonl.h"
#include "jstrict.h"
#include "mcphttp.h"
#include "umcp.h"
#include "upstream.h"
#include "wproc.h"

#define UP_MAX		JRPCUP_MAX	/* longest message, any dialect */

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
	/* unity-hub: known, and reached only over the broker's link. */
	return dialect != NULL && (up_dialect(dialect) != -1 ||
	    strcmp(dialect, "unity-hub") == 0);
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
		umcp_frame_hdr(n, (unsigned char *)hdr);
		return up_send_framed(u, hdr, UMCP_HDR, s, n, NULL, err,
		    errlen);
	default:
		return up_send_framed(u, "", 0, s, n, "\n", err, errlen);
	}
}

/* One LSP header block's Content-Length: *n, or a status. */
static enum up_status
up_lsp_header(struct upstream *u, size_t *n, char *err, size_t errlen)
{
	enum jsonl_status	 st;
	char			*line;
	size_t			 len;
	int			 have = 0, rc;

	for (;;) {
		u->jl.max = JRPCUP_LINE_MAX;
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
		if ((rc = jrpcup_content_length(line, n)) != 0)
			have = rc == 1;
		free(line);
	}
	if (!have)
		return up_fail(u, UP_PROTOCOL, err, errlen, "%s",
		    "sent a message without a valid Content-Length");
	if (*n > JRPCUP_MAX)
		return up_fail(u, UP_TOO_LONG, err, errlen, "%s",
		    "answer longer than 64 MiB");
	return UP_OK;
}

/* One unity-mcp frame's length: *n, or a status. */
static enum up_status
up_unity_header(struct upstream *u, size_t *n, char *err, size_t errlen)
{
	enum jsonl_status	 st;
	enum up_status		 ust;
	char			*h, why[128];

	u->jl.max = UMCP_HDR;
	if ((st = jsonl_take(&u->jl, up_left(u), UMCP_HDR, &h)) != JSONL_MSG)
		return up_read_failed(u, st, err, errlen);
	ust = umcp_frame_len((unsigned char *)h, n, why, sizeof(why));
	free(h);
	return ust == UP_OK ? UP_OK : up_fail(u, ust, err, errlen, "%s", why);
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

/*
 * unity-mcp: the WELCOME line.  Closed or reset first is the bridge
 * going away (UP_REFUSED: nothing was written); anything else that is
 * not "WELCOME UNITY-MCP ... FRAMING=1" is not a bridge we can speak to.
 */
static enum up_status
up_welcome(struct upstream *u, char *err, size_t errlen)
{
	enum jsonl_status	 st;
	char			*line, why[320];
	size_t			 len;
	enum up_status		 ust = UP_OK;

	u->jl.max = UMCP_LINE_MAX;
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
	if (umcp_welcome(line, why, sizeof(why)) != 0)
		ust = up_fail(u, UP_PROTOCOL, err, errlen, "%s", why);
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

/* jsonrpc, jsonrpc-lsp: the answer to u->id, notifications skipped. */
static enum up_status
up_jsonrpc_answer(struct upstream *u, json_object **out, char *err,
    size_t errlen)
{
	json_object	*msg;
	enum up_status	 st;
	char		 why[512];

	for (;;) {
		if ((st = up_read_msg(u, &msg, err, errlen)) != UP_OK)
			return st;
		if (jrpcup_is_answer(msg) && jsonl_is_answer(msg, u->id))
			break;
		json_object_put(msg);	/* a notification or request */
	}
	st = jrpcup_answer(msg, out, why, sizeof(why));
	json_object_put(msg);
	if (st != UP_OK)
		snprintf(err, errlen, "%s: %s", u->to, why);
	return st;
}

/* unity-mcp: the next frame, an answer to a call or (ping) a ping. */
static enum up_status
up_unity_answer(struct upstream *u, int ping, json_object **out, char *err,
    size_t errlen)
{
	enum up_status	 st;
	char		*buf, why[512];
	size_t		 n;

	if ((st = up_read_raw(u, &buf, &n, err, errlen)) != UP_OK)
		return st;
	st = umcp_answer(buf, n, ping, out, why, sizeof(why));
	free(buf);
	if (st != UP_OK)
		up_fail(u, st, err, errlen, "%s", why);
	return st;
}

enum up_status
upstream_call(struct upstream *u, const char *method, json_object *params,
    int64_t deadline, json_object **out, char *err, size_t errlen)
{
	json_object	*req;
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
	if (u->dialect == D_UNITY)
		req = umcp_request(method, params);
	else
		req = jrpcup_request(u->id, method, params);
	st = up_send_msg(u, req, err, errlen);
	json_object_put(req);
	if (st != UP_OK)
		return st;
	if (u->dialect != D_UNITY)
		return up_jsonrpc_answer(u, out, err, errlen);
	return up_unity_answer(u, 0, out, err, errlen);
}

/* unity-mcp: the 4-byte frame "ping", answered by a success (pong). */
static enum up_status
up_unity_ping(struct upstream *u, char *err, size_t errlen)
{
	unsigned char	 frame[UMCP_HDR + 4];
	json_object	*out = NULL;
	enum up_status	 st;

	umcp_frame_hdr(4, frame);
	memcpy(frame + UMCP_HDR, UMCP_PING, 4);
	if ((st = up_send(u, (char *)frame, sizeof(frame), err, errlen)) !=
	    UP_OK)
		return st;
	st = up_unity_answer(u, 1, &out, err, errlen);
	json_object_put(out);
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
