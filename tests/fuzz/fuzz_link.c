/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: the broker's editor link (src/link/link.c) as an
 * MCP for Unity bridge reaches it: the WELCOME line, then 8-byte
 * big-endian frames of status envelopes, each to the oldest call in
 * flight.  Each input gets an event base, a links set and one link to a
 * fake bridge on 127.0.0.1, accepted from the loop; the calls are all
 * made first (pipelined), then the bridge says the input's bytes.
 *
 * Byte 0: bits 0-1 the number of calls less one (1-4); bits 2-3 how the
 * bridge ends: 0 closes (FIN) after its bytes, 1 keeps the connection
 * open, 2 resets it (RST), 3 the broker stops (links_free) once its
 * bytes were read; bit 4 the bridge is taken and says its first piece
 * before the loop's first turn.  Then a byte per call: bits 0-4 its
 * timeout, 20 ms more than that; bit 6 a ping (else get_editor_state);
 * bit 7 open_ms 0 (refused at the loop's first turn, before any WELCOME;
 * not with byte 0's bit 4), else its timeout.  Then the size of the bridge's writes (0: all at once), the
 * loop running between them; the rest is what the bridge sends.
 *
 * What must hold (link.h, cmdgated(8) Editor link, cmdgate.tools(5)):
 * every call's callback runs once, from the loop, and its status is one
 * the bridge's bytes allow, read here on their own: an answer's (OK,
 * ERROR, or PROTOCOL for what is no envelope) only from the frame of
 * that call in order after a valid WELCOME, and that one unless the
 * call's time ran out first; PROTOCOL for a bad WELCOME line or a frame
 * of length 0, TOO_LONG for one over 64 MiB; REFUSED only unsent, LOST
 * only sent; TIMEOUT at any time (the clock is real), "behind" only with
 * it; CANCELLED exactly for the calls links_free tells.  OK's out is the
 * envelope's result, ERROR's the whole envelope, as strict JSON; err is
 * "TO: why" unless OK; sent only after a WELCOME.  The bridge receives
 * the frames of the calls written, in order, and nothing else; the link
 * connects once; server_status's editor_links agrees; nothing leaks.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	int64_t		 timeout_ms;
	int		 told, during_free;
	enum up_status	 st;
	int		 sent, closed, nolisten, behind;
	int64_t		 seen_ago_ms;
	char		*out;		/* out as JSON, or NULL */
	char		*err;
};

static struct {
	int		 lfd;
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
	} else if (a->status == UP_ERROR)
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

/* The statuses call c may end in, its frame being frame m. */
static unsigned
allowed(const struct bridge *br, const struct fcall *c, size_t m)
{
	unsigned	ok = B(UP_TIMEOUT);

	if (c->open0)
		return B(UP_REFUSED);
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

/* Call k's out against its frame m. */
static void
check_out(const struct bridge *br, size_t k, size_t m)
{
	const struct fcall	*c = &fz.calls[k];
	char			*want;

	if (c->st != UP_OK && c->st != UP_ERROR) {
		if (c->out != NULL)
			fuzz_fail("call %zu: %d with an out", k, c->st);
		return;
	}
	if (c->seen_ago_ms < 0)
		fuzz_fail("call %zu answered, never welcomed", k);
	answer_of(br->pay[m], br->paylen[m], c->ping, &want);
	if ((want == NULL) != (c->out == NULL) || (want != NULL &&
	    strcmp(want, c->out) != 0))
		fuzz_fail("call %zu: out %s, frame %zu gives %s", k,
		    c->out != NULL ? c->out : "NULL", m,
		    want != NULL ? want : "NULL");
	free(want);
}

static void
check_flags(const struct bridge *br, size_t k)
{
	const struct fcall	*c = &fz.calls[k];
	int			 could = br->welcome == WEL_OK ||
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
	if ((c->closed && (c->st != UP_REFUSED || c->open0 || !could)) ||
	    c->nolisten)
		fuzz_fail("call %zu: closed %d nolisten %d with %d", k,
		    c->closed, c->nolisten, c->st);
	if (c->st == UP_OK ? c->err != NULL : (c->err == NULL ||
	    strncmp(c->err, fz.to, n) != 0 || strncmp(c->err + n, ": ", 2) !=
	    0))
		fuzz_fail("call %zu: %d with err \"%s\"", k, c->st,
		    c->err != NULL ? c->err : "(none)");
}

static void
check_calls(const struct bridge *br)
{
	size_t	k, m = 0;

	for (k = 0; k < fz.ncalls; m += !fz.calls[k].open0, k++) {
		const struct fcall *c = &fz.calls[k];

		if (!c->told)
			fuzz_fail("call %zu never told", k);
		check_flags(br, k);
		if (!(allowed(br, c, m) & B(c->st)))
			fuzz_fail("call %zu (frame %zu, welcome %d, %zu whole, "
			    "bad at %ld) told %d: %s", k, m, br->welcome,
			    br->nwhole, br->bad_at, c->st,
			    c->err != NULL ? c->err : "");
		check_out(br, k, m);
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
 * What the bridge received: the frames of the calls written (all but
 * the open0 ones), in order, the last maybe cut.  (Not each sent call's
 * whole: the kernel may still hold what the link gave it, Nagle's
 * algorithm waiting for an ACK, and drop it when the link resets.)
 */
static void
check_got(void)
{
	unsigned char	 want[64];
	size_t		 k, off = 0, n;

	for (k = 0; k < fz.ncalls && off < fz.gotlen; k++) {
		if (fz.calls[k].open0)
			continue;
		n = frame_of(&fz.calls[k], want);
		if (fz.gotlen - off < n)
			n = fz.gotlen - off;
		if (memcmp(fz.got + off, want, n) != 0)
			fuzz_fail("the link wrote something else than call "
			    "%zu's frame at %zu", k, off);
		off += n;
	}
	if (off != fz.gotlen)
		fuzz_fail("the link wrote %zu bytes more than its calls",
		    fz.gotlen - off);
}

/* server_status's view of the link, once every call was told. */
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
	    (connects == 1 && br->welcome != WEL_OK &&
	    br->welcome != WEL_LONG) || json_object_get_int64(
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
		c->open0 = (p[k] & 0x80) != 0 && !early;
		c->timeout_ms = 20 + (p[k] & 31);
		fz.in_call = 1;
		link_call(L, c->ping ? NULL : METHOD, NULL, c->open0 ? 0 :
		    c->timeout_ms, c->timeout_ms, link_cb, c);
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
	struct links	*LS;
	struct event	*acc, *guard;
	struct timeval	 tv = { GUARD_MS / 1000, GUARD_MS % 1000 * 1000 };
	size_t		 hdr;

	if (size < 1 || size < (hdr = 2 + 1 + (data[0] & 3)))
		return 0;
	fz.ncalls = 1 + (data[0] & 3);
	fz.fd = -1;
	fz.accepts = fz.freeing = fz.guard = 0;
	fz.gotlen = 0;
	bridge_read(&br, data + hdr, size - hdr);
	fz.base = event_base_new();
	acc = event_new(fz.base, fz.lfd, EV_READ | EV_PERSIST, accept_cb,
	    NULL);
	guard = evtimer_new(fz.base, guard_cb, NULL);
	event_add(acc, NULL);
	evtimer_add(guard, &tv);
	LS = links_new(fz.base);
	calls_make(links_get(LS, "unity-mcp", fz.to), data + 1, data[0] & 16);
	/* Early: taken and spoken to before the loop's first turn, so that
	 * the WELCOME may come with the connect's end. */
	if (data[0] & 16)
		accept_cb(fz.lfd, EV_READ, NULL);
	loop_until(accepted, "the link did not connect");
	bridge_say(data + hdr, size - hdr, data[hdr - 1] == 0 ? SIZE_MAX :
	    data[hdr - 1]);
	run_end(&LS, &br, (data[0] >> 2) & 3);
	fz.freeing = 1;
	links_free(LS);
	check_calls(&br);
	check_got();
	run_free();
	event_free(acc);
	event_free(guard);
	event_base_free(fz.base);
	return 0;
}
