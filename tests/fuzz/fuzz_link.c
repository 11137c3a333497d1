/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: the broker's editor link (src/link/link.c) as an
 * editor's bridge reaches it, in either dialect the link speaks.  unity-mcp
 * (MCP for Unity's bridge): the WELCOME line, then 8-byte big-endian frames
 * of status envelopes, each to the oldest call in flight.  jsonrpc-lsp
 * (uLoopMCP's editor): JSON-RPC 2.0 messages, each a "Content-Length: N"
 * header block and N bytes of body, answers matched to calls by id.  Each
 * input gets an event base, a links set and one link to a fake bridge on
 * 127.0.0.1, accepted from the loop; the calls are all made first
 * (pipelined), then the bridge says the input's bytes.
 *
 * Byte 0: bits 0-1 the number of calls less one (1-4); bits 2-3 how the
 * bridge ends: 0 closes (FIN) after its bytes, 1 keeps the connection open,
 * 2 resets it (RST), 3 the broker stops (links_free) once its bytes were
 * read; bit 4 the bridge is taken and says its first piece before the loop's
 * first turn; bit 5 the dialect is jsonrpc-lsp (else unity-mcp); bit 6 (not
 * with bit 4) the bridge says nothing for SLOW_MS after it took the
 * connection, the loop running, as a loaded machine or a busy editor may
 * (unity-mcp: calls of less time end unwritten, the others are written once
 * the WELCOME comes).  Then a byte per call: bits 0-4 its timeout, 20 ms
 * more than that; bit 6 a ping (else get_editor_state, get-logs in
 * jsonrpc-lsp); bit 7 open_ms 0 (unity-mcp: refused at the loop's first
 * turn, before any WELCOME, or timed out when that turn came after its
 * timeout on a loaded machine; not with byte 0's bit 4); jsonrpc-lsp only,
 * bit 5 open_ms 5 (else open_ms is its timeout).  Then the size of the
 * bridge's writes (0: all at once), the loop running between them; the rest
 * is what the bridge sends.
 *
 * What must hold (link.h, cmdgated(8) Editor link, cmdgate.tools(5)): every
 * call's callback runs once, from the loop; TIMEOUT (and "behind") never
 * before the call's timeout passed (but for 3 ms of libevent's coarse
 * clock), whatever its open_ms.  unity-mcp: its status is one the bridge's
 * bytes allow, read here on their own: an answer's (OK, ERROR, or PROTOCOL
 * for what is no envelope) only from the frame of that call in order after a
 * valid WELCOME (one earlier for each call before it whose time ran out
 * before the WELCOME, on a loaded machine: it may have gone unwritten), and
 * that one unless the call's time ran out first; PROTOCOL for a bad WELCOME
 * line or a frame of length 0, TOO_LONG for one over 64 MiB; REFUSED only
 * unsent, LOST only sent; TIMEOUT at any time (the clock is real), "behind"
 * only with it; CANCELLED exactly for the calls links_free tells.  OK's out
 * is the envelope's result, ERROR's the whole envelope, as strict JSON; err
 * is "TO: why" unless OK; sent only after a WELCOME.  The bridge receives
 * the frames of the calls written, in order, and nothing else; the link
 * connects once; server_status's editor_links agrees; nothing leaks.
 *
 * jsonrpc-lsp: no WELCOME, the link opens on connect.  The bridge receives
 * the calls' messages in order (those written: a call refused before the
 * link opened is not), nothing else, each a Content-Length header matching
 * its body, {"jsonrpc": "2.0", "id", "method": "get-logs" or "ping",
 * "params": {}} with the ids 1, 2, 3.. of the calls in the order made.  An
 * answer (a message with an "id" and no "method") goes to the call in flight
 * of its integer id, an error answer with "id": null to the oldest call in
 * flight; other messages (notifications, requests from the server) and
 * answers to no call in flight are skipped.  Its "result" is OK with out the
 * result; its "error" ERROR with out the error and err "TO: upstream error
 * CODE: MESSAGE" (OK for a ping); neither, PROTOCOL for that call only.  A
 * body that is not strict JSON or not an object, a header block whose last
 * Content-Length line is not a valid one or with none (other header lines
 * ignored), or a Content-Length over 64 MiB closes the link: the oldest call
 * in flight hears PROTOCOL (TOO_LONG), the others LOST; so may a header line
 * over 4 KiB (the link sees a part of it over 4 KiB), and one such at the
 * end of the bytes does.  A call unanswered when the bridge closes or resets
 * is LOST, when the broker stops CANCELLED; REFUSED only unsent (never
 * written, or "closed" before it went whole), LOST only sent.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "fuzzutil.h"
#include "jstrict.h"
#include "link.h"
#include "log.h"

#define MAXCALLS	4
#define GUARD_MS	2000	/* far past any call's time: a call never told */
#define WELCOME_MAX	4096	/* the WELCOME line's limit, cmdgated(8) */
#define BRIDGE_FRAME_MAX	(64ULL * 1024 * 1024)
#define METHOD		"get_editor_state"
#define METHOD_FRAME	"{\"type\":\"" METHOD "\",\"params\":{}}"
#define GOT_MAX		4096
#define LSP_METHOD	"get-logs"
#define LSP_LINE_MAX	4096	/* a header line's limit, cmdgated(8) */
#define LSP_BODY_MAX	(64ULL * 1024 * 1024)
#define LSP_SHORT_MS	5	/* a short open_ms: less than any timeout */
#define TIMER_SLACK_MS	3	/* how early a timer may fire */
#define SLOW_MS		25	/* a slow bridge's silence: between the
				   calls' 20 and 51 ms */

#define B(st)		(1u << (st))

/* The WELCOME line: none (no newline), good, bad, or good but over the
 * limit (taken when it came in one read, refused when it did not). */
enum welcome { WEL_NONE, WEL_OK, WEL_BAD, WEL_LONG };

/* What the bridge's bytes call for, read here on their own. */
struct bridge {
	enum welcome	 welcome;
	size_t		 nwhole;		/* whole frames after it */
	const uint8_t	*pay[MAXCALLS];
	size_t		 paylen[MAXCALLS];
	long		 bad_at;		/* the frame of a bad header */
	enum up_status	 bad_st;
};

struct fcall {
	int		 ping, open0;
	int64_t		 timeout_ms, open_ms;
	double		 t0, told_at;	/* ms: made, told */
	int		 told, during_free;
	enum up_status	 st;
	int		 sent, closed, nolisten, behind;
	int64_t		 seen_ago_ms;
	char		*out;		/* out as JSON, or NULL */
	char		*err;
};

static struct {
	int		 lfd;
	int		 lsp;		/* the dialect is jsonrpc-lsp */
	char		 to[64];
	struct event_base *base;
	int		 fd;		/* the bridge's end */
	int		 accepts;
	int		 in_call, freeing, guard;
	unsigned char	 got[GOT_MAX];	/* what the link wrote */
	size_t		 gotlen;
	struct fcall	 calls[MAXCALLS];
	size_t		 ncalls;
} fz;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in	sin;
	socklen_t		sl = sizeof(sin);

	(void)argc;
	(void)argv;
	log_init(LOG_LVL_ERROR, "fuzz");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fz.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fz.lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fz.lfd, 16) == -1 ||
	    getsockname(fz.lfd, (struct sockaddr *)&sin, &sl) == -1)
		fuzz_fail("fake bridge: %s", strerror(errno));
	snprintf(fz.to, sizeof(fz.to), "127.0.0.1:%d", ntohs(sin.sin_port));
	return 0;
}

/* ---- the bridge's bytes, read on their own ----------------------------- */

static uint64_t
be64(const uint8_t *p)
{
	uint64_t	v = 0;
	int		i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* Whether line (a C string) is "WELCOME UNITY-MCP ..." with the word
 * FRAMING=1. */
static int
welcome_ok(const char *line)
{
	const char	*p;

	if (strncmp(line, "WELCOME UNITY-MCP", 17) != 0)
		return 0;
	for (p = line; (p = strstr(p, "FRAMING=1")) != NULL; p++)
		if ((p == line || p[-1] == ' ') && (p[9] == '\0' ||
		    p[9] == ' '))
			return 1;
	return 0;
}

/* The WELCOME line of p[n]; *rest: the bytes after it. */
static enum welcome
bridge_welcome(const uint8_t *p, size_t n, size_t *rest)
{
	const uint8_t	*lf = memchr(p, '\n', n);
	size_t		 len;
	char		*line;
	int		 ok;

	if (lf == NULL)
		return n > WELCOME_MAX ? WEL_BAD : WEL_NONE;
	len = (size_t)(lf - p);
	*rest = len + 1;
	line = malloc(len + 1);
	memcpy(line, p, len);
	line[len] = '\0';
	if (len > 0 && line[len - 1] == '\r')
		line[len - 1] = '\0';
	ok = welcome_ok(line);
	free(line);
	if (!ok)
		return WEL_BAD;
	/* Over the limit, it is taken when it came in one read. */
	return len > WELCOME_MAX ? WEL_LONG : WEL_OK;
}

static void
bridge_read(struct bridge *br, const uint8_t *p, size_t n)
{
	size_t		rest = 0;
	uint64_t	len;

	memset(br, 0, sizeof(*br));
	br->bad_at = -1;
	br->welcome = bridge_welcome(p, n, &rest);
	if (br->welcome != WEL_OK && br->welcome != WEL_LONG)
		return;
	for (p += rest, n -= rest; n >= 8; p += 8 + len, n -= 8 + len) {
		len = be64(p);
		if (len == 0 || len > BRIDGE_FRAME_MAX) {
			br->bad_at = (long)br->nwhole;
			br->bad_st = len == 0 ? UP_PROTOCOL : UP_TOO_LONG;
			return;
		}
		if (n - 8 < len)
			return;
		if (br->nwhole < MAXCALLS) {
			br->pay[br->nwhole] = p + 8;
			br->paylen[br->nwhole] = (size_t)len;
		}
		br->nwhole++;
	}
}

/*
 * The answer frame p[n] to a call (ping or not): its status, and in
 * *want (caller frees) the out it gives as JSON, or NULL.
 */
static enum up_status
answer_of(const uint8_t *p, size_t n, int ping, char **want)
{
	json_object	*msg, *v;
	const char	*s;
	enum up_status	 st = UP_PROTOCOL;

	*want = NULL;
	if (ping && n == 4 && memcmp(p, "pong", 4) == 0)
		return UP_OK;
	if (jstrict_parse((const char *)p, n, &msg) != 0)
		return UP_PROTOCOL;
	if (json_object_is_type(msg, json_type_object) &&
	    json_object_object_get_ex(msg, "status", &v) &&
	    (s = json_object_get_string(v)) != NULL) {
		if (strcmp(s, "success") == 0) {
			st = UP_OK;
			v = json_object_object_get(msg, "result");
			*want = v == NULL ? NULL :
			    strdup(jstrict_to_string(v));
		} else if (strcmp(s, "error") == 0) {
			st = UP_ERROR;
			*want = strdup(jstrict_to_string(msg));
		}
	}
	json_object_put(msg);
	return st;
}

/* ---- the calls' ends --------------------------------------------------- */

/* Now in ms, on the clock the link's timers run on. */
static double
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000 + (double)ts.tv_nsec / 1e6;
}

static void
link_cb(void *arg, const struct link_answer *a)
{
	struct fcall	*c = arg;
	const char	*s;

	if (c->told++)
		fuzz_fail("call %td told twice", c - fz.calls);
	if (fz.in_call)
		fuzz_fail("call %td told from link_call, not the loop",
		    c - fz.calls);
	c->during_free = fz.freeing;
	c->told_at = now_ms();
	c->st = a->status;
	c->sent = a->sent;
	c->closed = a->closed;
	c->nolisten = a->nolisten;
	c->behind = a->behind;
	c->seen_ago_ms = a->seen_ago_ms;
	if (a->status > UP_TOO_LONG)
		fuzz_fail("call %td: status %d", c - fz.calls, a->status);
	if (a->out != NULL) {
		s = jstrict_to_string(a->out);
		if (jstrict_check(s, strlen(s)) != 0)
			fuzz_fail("call %td: out is not strict JSON: %s",
			    c - fz.calls, s);
		c->out = strdup(s);
	} else if (a->status == UP_ERROR && !fz.lsp)	/* lsp: "error": null */
		fuzz_fail("call %td: an error without its envelope",
		    c - fz.calls);
	c->err = a->err != NULL ? strdup(a->err) : NULL;
}

static int
all_told(void)
{
	size_t	k;

	for (k = 0; k < fz.ncalls; k++)
		if (!fz.calls[k].told)
			return 0;
	return 1;
}

/* ---- the fake bridge ---------------------------------------------------- */

static void
accept_cb(evutil_socket_t lfd, short ev, void *arg)
{
	int	fd, one = 1;

	(void)ev;
	(void)arg;
	if ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) ==
	    -1)
		return;
	if (fz.accepts++ > 0)
		fuzz_fail("the link connected twice");
	/* Each piece goes out as it is written, not held for an ACK. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fz.fd = fd;
}

static void
guard_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	fz.guard = 1;
	event_base_loopbreak(fz.base);
}

/* What the link wrote, so far. */
static void
bridge_recv(void)
{
	ssize_t	r;

	while (fz.fd != -1 && (r = recv(fz.fd, fz.got + fz.gotlen,
	    GOT_MAX - fz.gotlen, 0)) > 0)
		if ((fz.gotlen += (size_t)r) == GOT_MAX)
			fuzz_fail("the link wrote over %d bytes", GOT_MAX);
}

/* p[n] to the link: -1 once it is gone. */
static int
bridge_send(const uint8_t *p, size_t n)
{
	ssize_t	w;
	int	turns;

	for (turns = 0; n > 0 && turns < 1000; turns++) {
		if ((w = send(fz.fd, p, n, MSG_NOSIGNAL)) > 0) {
			p += w;
			n -= (size_t)w;
		} else if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		else
			fuzz_loop_settle(fz.base, 64);
	}
	return n == 0 ? 0 : -1;
}

/* The bridge's bytes in pieces of step, the link reading each. */
static void
bridge_say(const uint8_t *p, size_t n, size_t step)
{
	size_t	k;

	while (n > 0) {
		k = n < step ? n : step;
		if (bridge_send(p, k) == -1)
			break;
		fuzz_loop_settle(fz.base, 64);
		bridge_recv();
		p += k;
		n -= k;
	}
}

static void
bridge_reset(void)
{
	struct linger	l = { 1, 0 };

	bridge_recv();
	setsockopt(fz.fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fz.fd);
	fz.fd = -1;
}

/* ---- the checks --------------------------------------------------------- */

/* What each call was told, and what the bridge received, for a failure
 * that the load of a long run made (stderr). */
static void
calls_dump(void)
{
	size_t	k;

	for (k = 0; k < fz.ncalls; k++) {
		const struct fcall *c = &fz.calls[k];

		fprintf(stderr, "call %zu: ping %d open0 %d timeout %lld open "
		    "%lld told %d after %.1f ms: status %d sent %d closed %d "
		    "behind %d err %s\n", k, c->ping, c->open0,
		    (long long)c->timeout_ms, (long long)c->open_ms, c->told,
		    c->told_at - c->t0, c->st, c->sent, c->closed, c->behind,
		    c->err != NULL ? c->err : "-");
	}
	fprintf(stderr, "the bridge got %zu bytes:", fz.gotlen);
	for (k = 0; k < fz.gotlen && k < 256; k++)
		fprintf(stderr, "%s%02x", k % 32 ? "" : "\n  ", fz.got[k]);
	fprintf(stderr, "\n");
}

/* The statuses call c may end in, its frame being frame m. */
static unsigned
allowed(const struct bridge *br, const struct fcall *c, size_t m)
{
	unsigned	ok = B(UP_TIMEOUT);

	/* Refused at the loop's first turn; on a loaded machine whose first
	 * turn came after its deadline too, timed out (check_flags: never
	 * before its time). */
	if (c->open0)
		return B(UP_REFUSED) | B(UP_TIMEOUT);
	if (c->during_free)
		return B(UP_CANCELLED);
	switch (br->welcome) {
	case WEL_NONE:
		return ok | B(UP_REFUSED);
	case WEL_BAD:
		return ok | B(UP_PROTOCOL);
	case WEL_LONG:
		ok |= B(UP_PROTOCOL);
		break;
	case WEL_OK:
		break;
	}
	if (br->bad_at >= 0 && (long)m > br->bad_at)
		return ok | B(UP_REFUSED) | B(UP_LOST);
	/* Refused: the bad frame came before the link wrote the request
	 * whole, and it closed. */
	if ((long)m == br->bad_at)
		return ok | B(br->bad_st) | B(UP_REFUSED);
	if (m < br->nwhole) {
		char	*want;

		ok |= B(answer_of(br->pay[m], br->paylen[m], c->ping, &want));
		free(want);
		return ok;
	}
	return ok | B(UP_REFUSED) | B(UP_LOST);
}

/* Whether call k's status and out are what its frame m allows. */
static int
out_fits(const struct bridge *br, size_t k, size_t m)
{
	const struct fcall	*c = &fz.calls[k];
	char			*want;
	int			 fits;

	if (!(allowed(br, c, m) & B(c->st)))
		return 0;
	if (c->st != UP_OK && c->st != UP_ERROR) {
		if (c->out != NULL)
			fuzz_fail("call %zu: %d with an out", k, c->st);
		return 1;
	}
	if (c->seen_ago_ms < 0)
		fuzz_fail("call %zu answered, never welcomed", k);
	answer_of(br->pay[m], br->paylen[m], c->ping, &want);
	fits = (want == NULL) == (c->out == NULL) && (want == NULL ||
	    strcmp(want, c->out) == 0);
	free(want);
	return fits;
}

/* Whether call c, not open0, may have gone unwritten: its time ran out
 * before a WELCOME (on a loaded machine), or the broker stopped first. */
static int
unwritten_may(const struct fcall *c)
{
	return !c->sent && !c->behind && (c->st == UP_TIMEOUT ||
	    c->st == UP_CANCELLED);
}

static void
check_flags(const struct bridge *br, size_t k)
{
	const struct fcall	*c = &fz.calls[k];
	int			 could = br == NULL || br->welcome == WEL_OK ||
				    br->welcome == WEL_LONG;
	size_t			 n = strlen(fz.to);

	if ((c->sent || c->seen_ago_ms >= 0) && !could)
		fuzz_fail("call %zu sent or welcomed without a WELCOME", k);
	if ((c->st == UP_LOST && !c->sent) || (c->st == UP_REFUSED &&
	    c->sent))
		fuzz_fail("call %zu: %d, sent %d", k, c->st, c->sent);
	if (c->behind && (c->st != UP_TIMEOUT || !c->sent))
		fuzz_fail("call %zu: behind with %d, sent %d", k, c->st,
		    c->sent);
	/* Closed: the bridge closed before it took a request written to it
	 * (cmdgate.tools(5), upstream_closed); not a call never written. */
	if ((c->closed && (c->st != UP_REFUSED || (c->open0 && !fz.lsp) ||
	    !could)) || c->nolisten)
		fuzz_fail("call %zu: closed %d nolisten %d with %d", k,
		    c->closed, c->nolisten, c->st);
	if (c->st == UP_OK ? c->err != NULL : (c->err == NULL ||
	    strncmp(c->err, fz.to, n) != 0 || strncmp(c->err + n, ": ", 2) !=
	    0))
		fuzz_fail("call %zu: %d with err \"%s\"", k, c->st,
		    c->err != NULL ? c->err : "(none)");
	/* Its timer's ms, counted from before link_call; libevent's clock
	 * (CLOCK_MONOTONIC_COARSE where it ticks each ms) may fire it a
	 * little early. */
	if (c->st == UP_TIMEOUT && c->told_at - c->t0 < (double)c->timeout_ms -
	    TIMER_SLACK_MS)
		fuzz_fail("call %zu: timed out after %.1f ms of its %lld", k,
		    c->told_at - c->t0, (long long)c->timeout_ms);
}

static void
check_calls(const struct bridge *br)
{
	size_t	k, m = 0, maybe = 0, j;

	/* Its frame is m, or one more for each earlier call that may have
	 * gone unwritten. */
	for (k = 0; k < fz.ncalls; k++) {
		const struct fcall *c = &fz.calls[k];

		if (!c->told)
			fuzz_fail("call %zu never told", k);
		check_flags(br, k);
		for (j = m; j <= m + maybe && !out_fits(br, k, j); j++)
			;
		if (j > m + maybe) {
			calls_dump();
			fuzz_fail("call %zu (frame %zu (+%zu), welcome %d, %zu "
			    "whole, bad at %ld) told %d, out %s: %s", k, m,
			    maybe, br->welcome, br->nwhole, br->bad_at, c->st,
			    c->out != NULL ? c->out : "NULL",
			    c->err != NULL ? c->err : "");
		}
		if (!c->open0 && unwritten_may(c))
			maybe++;
		else if (!c->open0)
			m++;
	}
}

/* The frame call c writes. */
static size_t
frame_of(const struct fcall *c, unsigned char *buf)
{
	const char	*s = c->ping ? "ping" : METHOD_FRAME;
	size_t		 n = strlen(s);
	int		 i;

	for (i = 0; i < 8; i++)
		buf[i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
	memcpy(buf + 8, s, n);
	return 8 + n;
}

/*
 * Whether got[off..) is what calls k.. wrote: each call's frame in order
 * (the last maybe cut), but for the open0 ones and those that may have
 * gone unwritten.  Not each sent call's whole: the kernel may still hold
 * what the link gave it, Nagle's algorithm waiting for an ACK, and drop
 * it when the link resets.  Both ways are tried for a call that may have
 * gone unwritten: calls of the same frame cannot be told apart by their
 * bytes (call 0 timed out before the WELCOME and call 1 written: the
 * bridge got call 1's frame, then call 2's).
 */
static int
got_fits(size_t k, size_t off)
{
	unsigned char	 want[64];
	size_t		 n;

	if (off == fz.gotlen)
		return 1;
	if (k == fz.ncalls)
		return 0;
	if (fz.calls[k].open0)
		return got_fits(k + 1, off);
	n = frame_of(&fz.calls[k], want);
	if (fz.gotlen - off < n)
		n = fz.gotlen - off;
	if (memcmp(fz.got + off, want, n) == 0 && got_fits(k + 1, off + n))
		return 1;
	/* Told after the WELCOME, it was written (link_opened writes every
	 * call waiting): its bytes are here, or the last ones cut. */
	return unwritten_may(&fz.calls[k]) && fz.calls[k].seen_ago_ms < 0 &&
	    got_fits(k + 1, off);
}

/* What the bridge received: the frames of the calls written. */
static void
check_got(void)
{
	if (!got_fits(0, 0)) {
		calls_dump();
		fuzz_fail("the link wrote %zu bytes that are not the frames of "
		    "the calls written, in order", fz.gotlen);
	}
}

/* ---- jsonrpc-lsp: the bridge's bytes, read on their own ---------------- */

/* What the bridge's bytes say, in order: a message, a header line over
 * the limit (the link may close there, as its reads cut it), or what
 * closes the link. */
enum lev_kind { LEV_MSG, LEV_MAYBE, LEV_CLOSE };

struct lev {
	enum lev_kind	 kind;
	json_object	*msg;		/* LEV_MSG: an object */
	enum up_status	 st;		/* what closing tells the oldest */
};

struct lsp {
	struct lev	*ev;
	size_t		 nev;
	long		 nmaybe;
};

static void
lsp_add(struct lsp *ls, enum lev_kind kind, json_object *msg,
    enum up_status st)
{
	if ((ls->ev = realloc(ls->ev, (ls->nev + 1) * sizeof(*ls->ev))) ==
	    NULL)
		fuzz_fail("out of memory");
	ls->ev[ls->nev].kind = kind;
	ls->ev[ls->nev].msg = msg;
	ls->ev[ls->nev].st = st;
	ls->nev++;
	ls->nmaybe += kind == LEV_MAYBE;
}

static void
lsp_free(struct lsp *ls)
{
	size_t	i;

	for (i = 0; i < ls->nev; i++)
		json_object_put(ls->ev[i].msg);
	free(ls->ev);
}

/*
 * A header line (no line end), read as a C string as the link does: 1
 * and *v for a valid Content-Length (white space, an optional +, decimal
 * digits, blanks; no '-'), -1 for one not valid, 0 for another header.
 */
static int
lsp_content_length(const uint8_t *line, size_t len, uint64_t *v)
{
	static const char	 name[] = "content-length:";
	const uint8_t		*nul = memchr(line, '\0', len);
	uint64_t		 n = 0, d;
	size_t			 i;
	int			 digits = 0;

	if (nul != NULL)
		len = (size_t)(nul - line);
	if (len < 15)
		return 0;
	for (i = 0; i < 15; i++)
		if (tolower(line[i]) != name[i])
			return 0;
	if (memchr(line + 15, '-', len - 15) != NULL)
		return -1;
	while (i < len && (line[i] == ' ' || (line[i] >= '\t' &&
	    line[i] <= '\r')))
		i++;
	if (i < len && line[i] == '+')
		i++;
	for (; i < len && isdigit(line[i]); i++, digits = 1) {
		d = (uint64_t)(line[i] - '0');
		if (n > (UINT64_MAX - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (!digits || i != len)
		return -1;
	*v = n;
	return 1;
}

/* p[n], header lines (LF or CRLF) and bodies, as the link must read it. */
static void
lsp_read(struct lsp *ls, const uint8_t *p, size_t n)
{
	const uint8_t	*lf;
	json_object	*msg;
	uint64_t	 clen = 0;
	size_t		 raw, len;
	int		 have = 0, rc;

	memset(ls, 0, sizeof(*ls));
	while ((lf = memchr(p, '\n', n)) != NULL) {
		raw = (size_t)(lf - p);
		if (raw > LSP_LINE_MAX)
			lsp_add(ls, LEV_MAYBE, NULL, UP_PROTOCOL);
		len = raw > 0 && p[raw - 1] == '\r' ? raw - 1 : raw;
		/* The last Content-Length line says. */
		if (len > 0 && (rc = lsp_content_length(p, len, &clen)) != 0)
			have = rc == 1;
		p += raw + 1;
		n -= raw + 1;
		if (len > 0)
			continue;
		if (!have || clen > LSP_BODY_MAX) {
			lsp_add(ls, LEV_CLOSE, NULL, have ? UP_TOO_LONG :
			    UP_PROTOCOL);
			return;
		}
		if (n < clen)
			return;
		if (jstrict_parse((const char *)p, (size_t)clen, &msg) != 0 ||
		    !json_object_is_type(msg, json_type_object)) {
			json_object_put(msg);
			lsp_add(ls, LEV_CLOSE, NULL, UP_PROTOCOL);
			return;
		}
		lsp_add(ls, LEV_MSG, msg, UP_OK);
		p += clen;
		n -= clen;
		have = 0;
	}
	/* A header line cut off, over the limit: the link read it all. */
	if (n > LSP_LINE_MAX)
		lsp_add(ls, LEV_CLOSE, NULL, UP_PROTOCOL);
}

/* How a scenario ends call k: the statuses allowed, and the message
 * that answers it (-1: none). */
struct lwant {
	unsigned	ok;
	long		msg;
};

/* The call message msg answers, of those in flight infl[n]: its place
 * in infl, or -1. */
static long
lsp_target(json_object *msg, const size_t *infl, size_t n)
{
	json_object	*id;
	int64_t		 v;
	size_t		 j;

	if (json_object_object_get_ex(msg, "method", NULL) ||
	    !json_object_object_get_ex(msg, "id", &id))
		return -1;
	if (id == NULL)
		return n > 0 && json_object_object_get_ex(msg, "error",
		    NULL) ? 0 : -1;
	if (!json_object_is_type(id, json_type_int))
		return -1;
	v = json_object_get_int64(id);
	for (j = 0; j < n; j++)
		if ((int64_t)infl[j] + 1 == v)
			return (long)j;
	return -1;
}

/* An answer's status for a call, and in *out (borrowed) its out. */
static enum up_status
lsp_answer(json_object *msg, int ping, json_object **out)
{
	if (json_object_object_get_ex(msg, "result", out))
		return UP_OK;
	if (json_object_object_get_ex(msg, "error", out))
		return ping ? UP_OK : UP_ERROR;
	*out = NULL;
	return UP_PROTOCOL;
}

/* The link closes: the oldest in flight hears st, the rest LOST; each
 * REFUSED if it did not go whole. */
static void
lsp_close(struct lwant *w, const size_t *infl, size_t n, enum up_status st)
{
	size_t	j;

	for (j = 0; j < n; j++)
		w[infl[j]].ok |= B(j == 0 ? st : UP_LOST) | B(UP_REFUSED);
}

/*
 * A scenario: the calls written (the bits of written), the link closing
 * at the LEV_MAYBE close_at (-1: none), the bridge ending in mode.
 */
static void
lsp_sim(const struct lsp *ls, unsigned written, long close_at, int mode,
    struct lwant *w)
{
	size_t		infl[MAXCALLS], n = 0, k, i;
	long		maybe = 0, t;
	json_object	*out;

	for (k = 0; k < fz.ncalls; k++) {
		w[k].msg = -1;
		w[k].ok = B(UP_TIMEOUT);
		if (written & (1u << k))
			infl[n++] = k;
		else
			w[k].ok |= B(UP_REFUSED) | B(UP_CANCELLED);
	}
	for (i = 0; i < ls->nev; i++) {
		const struct lev	*e = &ls->ev[i];

		if (e->kind == LEV_CLOSE || (e->kind == LEV_MAYBE &&
		    maybe++ == close_at)) {
			lsp_close(w, infl, n, e->st);
			return;
		}
		if (e->kind != LEV_MSG || (t = lsp_target(e->msg, infl, n)) < 0)
			continue;
		k = infl[t];
		w[k].msg = (long)i;
		w[k].ok |= B(lsp_answer(e->msg, fz.calls[k].ping, &out));
		memmove(infl + t, infl + t + 1, (n - (size_t)t - 1) *
		    sizeof(*infl));
		n--;
	}
	if (mode == 0 || mode == 2)
		lsp_close(w, infl, n, UP_LOST);
	else if (mode == 3)
		for (k = 0; k < n; k++)
			w[infl[k]].ok |= B(UP_CANCELLED);
}

/* err of an ERROR: "TO: upstream error CODE: MESSAGE" of error e. */
static int
lsp_err_ok(const char *err, json_object *e)
{
	json_object	*code = json_object_object_get(e, "code"), *m;
	const char	*p = err + strlen(fz.to);
	char		 num[40];
	int64_t		 v = json_object_get_int64(code);

	if (strncmp(p, ": upstream error ", 17) != 0)
		return 0;
	p += 17;
	if (json_object_is_type(code, json_type_int) && v >= INT32_MIN &&
	    v <= INT32_MAX) {
		snprintf(num, sizeof(num), "%lld: ", (long long)v);
		if (strncmp(p, num, strlen(num)) != 0)
			return 0;
		p += strlen(num);
	} else if ((p = strstr(p, ": ")) == NULL)
		return 0;
	else
		p += 2;
	if (!json_object_object_get_ex(e, "message", &m) || m == NULL)
		return strcmp(p, "(no message)") == 0;
	if (!json_object_is_type(m, json_type_string))
		return 1;
	/* Maybe cut short to the link's buffer. */
	return strncmp(p, json_object_get_string(m), strlen(p)) == 0;
}

/* What call k was told against scenario w: NULL if it fits, or why
 * not. */
static const char *
lsp_mismatch(const struct lsp *ls, const struct lwant *w, unsigned written,
    size_t k)
{
	const struct fcall	*c = &fz.calls[k];
	json_object		*out;
	const char		*want;

	if (!(w[k].ok & B(c->st)))
		return "a status the bytes do not allow";
	if ((c->st == UP_CANCELLED) != c->during_free)
		return "cancelled other than by links_free";
	if (c->st == UP_REFUSED && c->closed != (int)((written >> k) & 1))
		return "refused, closed or not, against written or not";
	if (c->st != UP_OK && c->st != UP_ERROR)
		return c->out != NULL ? "an out with no answer" : NULL;
	if (w[k].msg < 0)
		return "answered, no answer of its in the bytes";
	lsp_answer(ls->ev[w[k].msg].msg, c->ping, &out);
	want = out == NULL ? NULL : jstrict_to_string(out);
	if ((want == NULL) != (c->out == NULL) || (want != NULL &&
	    strcmp(want, c->out) != 0))
		return "an out that is not its answer's";
	if (c->st == UP_ERROR && !lsp_err_ok(c->err, out))
		return "an err that is not its answer's error";
	return NULL;
}

/* Whether some scenario of the calls written gives every call's end. */
static int
lsp_fits(const struct lsp *ls, unsigned written, int mode, size_t *bad,
    const char **why)
{
	struct lwant	w[MAXCALLS];
	long		close_at;
	size_t		k;

	for (close_at = -1; close_at < ls->nmaybe; close_at++) {
		lsp_sim(ls, written, close_at, mode, w);
		for (k = 0; k < fz.ncalls; k++)
			if ((*why = lsp_mismatch(ls, w, written, k)) != NULL)
				break;
		if (k == fz.ncalls)
			return 1;
		*bad = k;
	}
	return 0;
}

/* ---- jsonrpc-lsp: what the bridge got, and the calls' ends ------------- */

/* The message call k writes, as json-c writes it (for a last one cut
 * short). */
static size_t
lsp_frame_of(size_t k, char *buf, size_t size)
{
	char	body[128];
	int	n;

	n = snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
	    "\"method\":\"%s\",\"params\":{}}", k + 1, fz.calls[k].ping ?
	    "ping" : LSP_METHOD);
	return (size_t)snprintf(buf, size, "Content-Length: %d\r\n\r\n%s", n,
	    body);
}

/* Whether msg is call k's request: the method, id k + 1, params {}. */
static int
lsp_request_ok(json_object *msg, size_t k)
{
	json_object	*v;

	return json_object_is_type(msg, json_type_object) &&
	    json_object_object_length(msg) == 4 &&
	    json_object_object_get_ex(msg, "jsonrpc", &v) &&
	    json_object_is_type(v, json_type_string) &&
	    strcmp(json_object_get_string(v), "2.0") == 0 &&
	    json_object_object_get_ex(msg, "method", &v) &&
	    json_object_is_type(v, json_type_string) &&
	    strcmp(json_object_get_string(v), fz.calls[k].ping ? "ping" :
	    LSP_METHOD) == 0 &&
	    json_object_object_get_ex(msg, "params", &v) &&
	    json_object_is_type(v, json_type_object) &&
	    json_object_object_length(v) == 0;
}

/* The message the link wrote at got[off]: its call, *len its bytes;
 * -1 when it is cut short. */
static long
lsp_got_one(size_t off, size_t *len)
{
	const char	*p = (const char *)fz.got + off, *end;
	size_t		 n = fz.gotlen - off, hl, blen = 0, i;
	json_object	*msg, *id;
	int64_t		 k;

	if ((end = memmem(p, n, "\r\n\r\n", 4)) == NULL)
		return -1;
	hl = (size_t)(end - p);
	if (hl < 17 || memcmp(p, "Content-Length: ", 16) != 0)
		fuzz_fail("the link wrote a header block that is not one "
		    "Content-Length at %zu", off);
	for (i = 16; i < hl && isdigit((unsigned char)p[i]) && blen < 4096; i++)
		blen = blen * 10 + (size_t)(p[i] - '0');
	if (i != hl)
		fuzz_fail("the link wrote a bad Content-Length at %zu", off);
	if (n - hl - 4 < blen)
		return -1;
	msg = fuzz_json("a message the link wrote", p + hl + 4, blen);
	k = json_object_object_get_ex(msg, "id", &id) &&
	    json_object_is_type(id, json_type_int) ?
	    json_object_get_int64(id) - 1 : -1;
	if (k < 0 || k >= (int64_t)fz.ncalls || !lsp_request_ok(msg,
	    (size_t)k))
		fuzz_fail("the link wrote %.*s", (int)blen, p + hl + 4);
	json_object_put(msg);
	*len = hl + 4 + blen;
	return (long)k;
}

/* Calls from to upto (not included) were skipped: none went whole. */
static void
lsp_skipped(size_t from, size_t upto)
{
	for (; from < upto; from++)
		if (fz.calls[from].sent)
			fuzz_fail("call %zu went whole, its message did not "
			    "come before the next", from);
}

/*
 * What the bridge received: the messages of calls written, in the calls'
 * order, the last maybe cut; the bits of the calls whose came.
 */
static unsigned
lsp_check_got(void)
{
	char		 want[256];
	size_t		 off = 0, len, next = 0, n;
	unsigned	 got = 0;
	long		 k;

	while (off < fz.gotlen && (k = lsp_got_one(off, &len)) >= 0) {
		if ((size_t)k < next)
			fuzz_fail("call %ld's message again or out of order", k);
		lsp_skipped(next, (size_t)k);
		got |= 1u << k;
		next = (size_t)k + 1;
		off += len;
	}
	if (off < fz.gotlen) {
		for (k = (long)next; k < (long)fz.ncalls; k++)
			if ((n = lsp_frame_of((size_t)k, want, sizeof(want))) >
			    fz.gotlen - off && memcmp(fz.got + off, want,
			    fz.gotlen - off) == 0)
				break;
		if (k == (long)fz.ncalls)
			fuzz_fail("the link wrote something else than its "
			    "calls' messages at %zu", off);
		lsp_skipped(next, (size_t)k);
		got |= 1u << k;
		next = (size_t)k + 1;
	}
	lsp_skipped(next, fz.ncalls);
	return got;
}

/* Every call's end against the bridge's bytes ls, the bridge ending in
 * mode: some calls written (those the bridge got, answered or lost,
 * refused once written) and maybe others (timed out or cancelled
 * unsent), and a scenario of them that gives each call's end. */
static void
lsp_check_calls(const struct lsp *ls, int mode)
{
	unsigned	 got = lsp_check_got(), known = 0, maybe = 0, sub;
	size_t		 k, bad = 0;
	const char	*why = "";
	const struct fcall *c;

	for (k = 0; k < fz.ncalls; k++) {
		c = &fz.calls[k];
		if (!c->told)
			fuzz_fail("call %zu never told", k);
		check_flags(NULL, k);
		if ((got >> k) & 1)
			known |= 1u << k;
		else if (c->st == UP_REFUSED)
			known |= c->closed ? 1u << k : 0;
		else if ((c->st == UP_TIMEOUT || c->st == UP_CANCELLED) &&
		    !c->sent)
			maybe |= 1u << k;
		else
			known |= 1u << k;
	}
	for (sub = maybe;; sub = (sub - 1) & maybe) {
		if (lsp_fits(ls, known | sub, mode, &bad, &why))
			return;
		if (sub == 0)
			break;
	}
	c = &fz.calls[bad];
	fuzz_fail("call %zu (of %zu; %zu messages, written %#x or more of "
	    "%#x) told %d: %s; %s", bad, fz.ncalls, ls->nev, known, maybe,
	    c->st, why, c->err != NULL ? c->err : "");
}

/* ---- both dialects ------------------------------------------------------ */

/* server_status's view of the link, once every call was told (br: the
 * unity-mcp bridge's bytes; NULL for jsonrpc-lsp, which needs none). */
static void
check_json(const struct links *LS, const struct bridge *br)
{
	json_object	*a = links_json(LS), *o = json_object_array_get_idx(a, 0);
	const char	*s = jstrict_to_string(a);
	int64_t		 connects;

	connects = json_object_get_int64(json_object_object_get(o,
	    "connects"));
	if (jstrict_check(s, strlen(s)) != 0 ||
	    json_object_array_length(a) != 1 ||
	    strcmp(json_object_get_string(json_object_object_get(o, "to")),
	    fz.to) != 0 ||
	    json_object_get_int64(json_object_object_get(o, "calls")) !=
	    (int64_t)fz.ncalls || connects < 0 || connects > 1 ||
	    (connects == 1 && br != NULL && br->welcome != WEL_OK &&
	    br->welcome != WEL_LONG) || strcmp(json_object_get_string(
	    json_object_object_get(o, "dialect")), fz.lsp ? "jsonrpc-lsp" :
	    "unity-mcp") != 0 || json_object_get_int64(
	    json_object_object_get(o, "lost")) > connects ||
	    (json_object_get_boolean(json_object_object_get(o, "connected")) &&
	    connects != 1))
		fuzz_fail("editor_links says %s", s);
	json_object_put(a);
}

/* ---- one input ---------------------------------------------------------- */

static void
calls_make(struct link *L, const uint8_t *p, int early)
{
	struct fcall	*c;
	size_t		 k;

	for (k = 0; k < fz.ncalls; k++) {
		c = &fz.calls[k];
		memset(c, 0, sizeof(*c));
		c->ping = (p[k] & 0x40) != 0;
		/* Early, the WELCOME may be read before the first timer. */
		c->open0 = (p[k] & 0x80) != 0 && (fz.lsp || !early);
		c->timeout_ms = 20 + (p[k] & 31);
		c->open_ms = c->open0 ? 0 : fz.lsp && (p[k] & 0x20) ?
		    LSP_SHORT_MS : c->timeout_ms;
		c->t0 = now_ms();
		fz.in_call = 1;
		link_call(L, c->ping ? NULL : fz.lsp ? LSP_METHOD : METHOD,
		    NULL, c->open_ms, c->timeout_ms, link_cb, c);
		fz.in_call = 0;
	}
}

/* Run the loop until cond() holds; fail if the guard ends it first. */
static void
loop_until(int (*cond)(void), const char *what)
{
	while (!cond() && !fz.guard)
		event_base_loop(fz.base, EVLOOP_ONCE);
	if (!cond())
		fuzz_fail("%s", what);
}

static int
accepted(void)
{
	return fz.fd != -1;
}

/* The bridge's silence: the loop runs SLOW_MS. */
static void
bridge_slow(void)
{
	struct timeval	tv = { 0, SLOW_MS * 1000 };

	event_base_loopexit(fz.base, &tv);
	event_base_dispatch(fz.base);
}

/* How the bridge ends (mode), then every call told. */
static void
run_end(struct links **LS, const struct bridge *br, int mode)
{
	if (mode == 0)
		shutdown(fz.fd, SHUT_WR);
	else if (mode == 2)
		bridge_reset();
	else if (mode == 3) {
		fuzz_loop_settle(fz.base, 64);
		fz.freeing = 1;
		links_free(*LS);
		*LS = NULL;
	}
	loop_until(all_told, "a call never told");
	bridge_recv();
	if (*LS != NULL)
		check_json(*LS, br);
}

static void
run_free(void)
{
	size_t	k;
	int	fd;

	while ((fd = accept4(fz.lfd, NULL, NULL, SOCK_CLOEXEC)) != -1) {
		close(fd);
		fuzz_fail("the link connected again");
	}
	if (fz.fd != -1)
		close(fz.fd);
	fz.fd = -1;
	for (k = 0; k < fz.ncalls; k++) {
		free(fz.calls[k].out);
		free(fz.calls[k].err);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bridge	 br;
	struct lsp	 ls;
	struct links	*LS;
	struct event	*acc, *guard;
	struct timeval	 tv = { GUARD_MS / 1000, GUARD_MS % 1000 * 1000 };
	size_t		 hdr;

	if (size < 1 || size < (hdr = 2 + 1 + (data[0] & 3)))
		return 0;
	fz.ncalls = 1 + (data[0] & 3);
	fz.lsp = (data[0] & 32) != 0;
	fz.fd = -1;
	fz.accepts = fz.freeing = fz.guard = 0;
	fz.gotlen = 0;
	if (fz.lsp)
		lsp_read(&ls, data + hdr, size - hdr);
	else
		bridge_read(&br, data + hdr, size - hdr);
	fz.base = event_base_new();
	acc = event_new(fz.base, fz.lfd, EV_READ | EV_PERSIST, accept_cb,
	    NULL);
	guard = evtimer_new(fz.base, guard_cb, NULL);
	event_add(acc, NULL);
	evtimer_add(guard, &tv);
	LS = links_new(fz.base);
	calls_make(links_get(LS, fz.lsp ? "jsonrpc-lsp" : "unity-mcp", fz.to),
	    data + 1, data[0] & 16);
	/* Early: taken and spoken to before the loop's first turn, so that
	 * the WELCOME may come with the connect's end. */
	if (data[0] & 16)
		accept_cb(fz.lfd, EV_READ, NULL);
	loop_until(accepted, "the link did not connect");
	if ((data[0] & 0x50) == 0x40)	/* bit 6, not bit 4 */
		bridge_slow();
	bridge_say(data + hdr, size - hdr, data[hdr - 1] == 0 ? SIZE_MAX :
	    data[hdr - 1]);
	run_end(&LS, fz.lsp ? NULL : &br, (data[0] >> 2) & 3);
	fz.freeing = 1;
	links_free(LS);
	if (fz.lsp) {
		lsp_check_calls(&ls, (data[0] >> 2) & 3);
		lsp_free(&ls);
	} else {
		check_calls(&br);
		check_got();
	}
	run_free();
	event_free(acc);
	event_free(guard);
	event_base_free(fz.base);
	return 0;
}
