/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: the unity-hub face (faces/face_hub.c, common/
 * wshead.c, common/ws.c on wslay, server/passthru.c) as one client
 * connection reaches it: a real event base, the face's listener and a
 * fake MCP for Unity server (--unity-hub-server, silent, recording what
 * each connection brings) on 127.0.0.1, and the editor link of the
 * face's address with one call (a ping) waiting for the plugin.
 *
 * Input: byte 0 the size of the client's writes (0: all at once; past
 * 128 writes the rest goes in 128 more at most), byte 1 bit 0: the rest
 * is the connection's raw bytes (heads cut anywhere, over-long heads,
 * other routes, bad upgrades) instead of the plugin's upgrade made here
 * (bit 1 an X-API-Key, bit 2 a query) followed by records KIND LEN
 * PAYLOAD, each one masked client frame: KIND & 7 a text message of the
 * payload, a register with the payload as its project_hash,
 * register_tools with it as the tools, a pong naming it, a
 * command_result with it as the id, a binary message, a ping, a close;
 * KIND & 8 the message in two fragments, & 16 a header claiming 16 MiB
 * more than the payload, & 32 unmasked.
 *
 * What must hold:
 *   - the answer to a head is HTTP/1.1 101 with the Sec-WebSocket-Accept
 *     of its key (always, for the plugin's upgrade), then only unmasked
 *     frames from the server's side, each text message strict JSON:
 *     welcome first (the man page's), then registered (once per
 *     register, a UUID), ping, or the link's execute (cg-1, ping);
 *   - or 400, 403, 404 or 426 with Connection: close and its body, and
 *     then the connection closed; nothing passed on;
 *   - or nothing, and the bytes passed on to the fake server unchanged
 *     and in order, the head included, on one connection, when the head
 *     ends within 8 KiB; no head end in 8 KiB is 400;
 *   - for the plugin's frames, modelled here: the first text message
 *     not UTF-8 closes 1007, a message not strict JSON 1003, a register
 *     with an empty project_hash 4400, a second register 1001, a frame
 *     claiming over 16 MiB 1009 with its first payload bytes (the
 *     message is not buffered whole), an unmasked
 *     frame 1002; none of these, no close before the client goes;
 *   - once the connection ended: server_status's unity_hub holds no
 *     editor, no head being read and nothing passed on, the link has no
 *     plugin attached, and its call was told once, OK exactly when the
 *     plugin answered cg-1 (after its registration, before any close) with
 *     an envelope; ASan/UBSan quiet and nothing leaked.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <json-c/json.h>
#include <nettle/base64.h>
#include <nettle/sha1.h>

#include "faces.h"
#include "fuzzutil.h"
#include "jstrict.h"
#include "link.h"
#include "options.h"
#include "server.h"

#define HUB_KEY		"dGhlIHNhbXBsZSBub25jZQ=="	/* RFC 6455's */
#define HUB_GUID	"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define HUB_WELCOME	"{\"type\":\"welcome\",\"serverTimeout\":30," \
			"\"keepAliveInterval\":15}"
#define HUB_MAX		(16 * 1024 * 1024)
#define HEAD_MAX	8192
#define FAKE_MAX	16
#define PIECES		128	/* writes of the input's step, then 128 more */
#define ANY_CODE	(-1)

static struct event_base	*base;
static struct options		 opt;
static struct server		 srv;
static evutil_socket_t		 face_lfd = -1, fake_lfd = -1;
static char			 face_to[64];

/* The fake server's connections. */
static struct fake {
	evutil_socket_t	 fd;
	struct event	*ev;
	struct evbuffer	*got;
	int		 eof;
} fakes[FAKE_MAX];
static int			 nfakes;

/* The client's side. */
static struct client {
	evutil_socket_t	 fd;
	struct event	*ev;
	struct evbuffer	*got;
	int		 eof;
} cl;

/* The link's call: told how often, with what. */
static int			 call_told;
static enum up_status		 call_status;

/* What the plugin's frames must make of the connection. */
struct model {
	int	raw;		/* not modelled: any close */
	int	stop;		/* a close is due */
	int	code;		/* its code, or ANY_CODE */
	int	registered;	/* registrations that must be answered */
	int	answered;	/* the link's call answered (cg-1) */
};

static evutil_socket_t
listen_lo(int *port)
{
	struct sockaddr_in	sin;
	socklen_t		sl = sizeof(sin);
	evutil_socket_t		fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 64) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) == -1)
		fuzz_fail("listen on 127.0.0.1: %s", strerror(errno));
	evutil_make_socket_nonblocking(fd);
	*port = ntohs(sin.sin_port);
	return fd;
}

/* ---- the fake server ----------------------------------------------------- */

static void
fake_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct fake	*f = arg;
	char		 buf[65536];
	ssize_t		 n;

	(void)ev;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		evbuffer_add(f->got, buf, (size_t)n);
	if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		f->eof = 1;
		event_del(f->ev);
	}
}

static void
fake_accept_cb(evutil_socket_t lfd, short ev, void *arg)
{
	evutil_socket_t	fd;
	struct fake	*f;

	(void)ev;
	(void)arg;
	while ((fd = accept(lfd, NULL, NULL)) != -1) {
		if (nfakes == FAKE_MAX)
			fuzz_fail("over %d connections to the server", FAKE_MAX);
		f = &fakes[nfakes++];
		evutil_make_socket_nonblocking(fd);
		f->fd = fd;
		f->eof = 0;
		f->got = evbuffer_new();
		f->ev = event_new(base, fd, EV_READ | EV_PERSIST, fake_read_cb,
		    f);
		event_add(f->ev, NULL);
	}
}

static int
fakes_gone(void)
{
	int	i;

	for (i = 0; i < nfakes; i++)
		if (!fakes[i].eof)
			return 0;
	return 1;
}

static void
fakes_free(void)
{
	int	i;

	for (i = 0; i < nfakes; i++) {
		event_free(fakes[i].ev);
		evbuffer_free(fakes[i].got);
		close(fakes[i].fd);
	}
	nfakes = 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char	listen_arg[64], server_arg[64];
	char		*a[] = { "cmdgated", "--listen", listen_arg,
			    "--unity-hub-server", server_arg, NULL };
	int		 fport, kport;

	(void)argc;
	(void)argv;
	base = event_base_new();
	face_lfd = listen_lo(&fport);
	fake_lfd = listen_lo(&kport);
	snprintf(face_to, sizeof(face_to), "127.0.0.1:%d", fport);
	snprintf(listen_arg, sizeof(listen_arg), "unity-hub@%s", face_to);
	snprintf(server_arg, sizeof(server_arg), "http://127.0.0.1:%d", kport);
	fuzz_server(&srv, &opt, base, "unity-hub.json", 5, a);
	event_add(event_new(base, fake_lfd, EV_READ | EV_PERSIST,
	    fake_accept_cb, NULL), NULL);
	return 0;
}

/* ---- the client's frames -------------------------------------------------- */

static void
put_frame(struct evbuffer *w, int fin, int op, const uint8_t *p, size_t n,
    uint64_t claim, int masked)
{
	static const uint8_t	mask[4] = { 0x37, 0xfa, 0x21, 0x3d };
	uint8_t			h[14];
	size_t			hl = 2, i;

	h[0] = (uint8_t)((fin ? 0x80 : 0) | op);
	if (claim < 126)
		h[1] = (uint8_t)claim;
	else if (claim < 65536) {
		h[1] = 126;
		h[hl++] = (uint8_t)(claim >> 8);
		h[hl++] = (uint8_t)claim;
	} else {
		h[1] = 127;
		for (i = 0; i < 8; i++)
			h[hl++] = (uint8_t)(claim >> (56 - 8 * i));
	}
	if (masked) {
		h[1] |= 0x80;
		memcpy(h + hl, mask, 4);
		hl += 4;
	}
	evbuffer_add(w, h, hl);
	for (i = 0; i < n; i++) {
		uint8_t	b = masked ? p[i] ^ mask[i % 4] : p[i];

		evbuffer_add(w, &b, 1);
	}
}

/* A JSON string of p[n] (caller frees). */
static char *
jstr(const uint8_t *p, size_t n)
{
	json_object	*s = json_object_new_string_len((const char *)p,
			    (int)n);
	char		*r = strdup(json_object_to_json_string_ext(s,
			    JSON_C_TO_STRING_PLAIN));

	json_object_put(s);
	return r;
}

/* The message of a data record's kind (caller frees). */
static char *
record_msg(int kind, const uint8_t *p, size_t n, size_t *len)
{
	char	*s = NULL, *q;
	int	 r = -1;

	switch (kind & 7) {
	case 1:
		q = jstr(p, n);
		r = asprintf(&s, "{\"type\":\"register\",\"project_name\":"
		    "\"P\",\"project_hash\":%s,\"unity_version\":\"6000.0\","
		    "\"project_path\":\"/p\"}", q);
		free(q);
		break;
	case 2:
		r = asprintf(&s, "{\"type\":\"register_tools\",\"tools\":%.*s}",
		    (int)n, (const char *)p);
		break;
	case 3:
	case 4:
		q = jstr(p, n);
		r = (kind & 7) == 3 ? asprintf(&s, "{\"type\":\"pong\","
		    "\"session_id\":%s}", q) : asprintf(&s, "{\"type\":"
		    "\"command_result\",\"id\":%s,\"result\":{\"status\":"
		    "\"success\",\"result\":{\"message\":\"pong\"}}}", q);
		free(q);
		break;
	default:
		s = malloc(n + 1);
		memcpy(s, p, n);
		r = (int)n;
		break;
	}
	if (r < 0)
		fuzz_fail("out of memory");
	*len = (kind & 7) == 2 ? strlen(s) : (size_t)r;
	return s;
}

/* Whether p[n] is UTF-8 (RFC 3629: no overlong forms, surrogates or
 * code points past U+10FFFF). */
static int
utf8_ok(const uint8_t *p, size_t n)
{
	size_t		i = 0, k, j;
	uint32_t	c;

	while (i < n) {
		c = p[i];
		k = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) ==
		    0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 4;
		if (k == 4 || n - i <= k)
			return k == 0;
		c &= k == 0 ? 0x7f : 0x3f >> k;
		for (j = 1; j <= k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (p[i + j] & 0x3f);
		}
		if ((k == 1 && c < 0x80) || (k == 2 && c < 0x800) ||
		    (k == 3 && c < 0x10000) || c > 0x10ffff ||
		    (c >= 0xd800 && c <= 0xdfff))
			return 0;
		i += k + 1;
	}
	return 1;
}

/* A whole message m[n] (text: op 1) as the face must take it. */
static void
model_message(struct model *m, int op, const char *s, size_t n)
{
	json_object	*o, *v, *type;

	if (m->stop)
		return;
	if (op == 1 && !utf8_ok((const uint8_t *)s, n)) {
		m->stop = 1;
		m->code = 1007;
		return;
	}
	if (jstrict_parse(s, n, &o) != 0) {
		m->stop = 1;
		m->code = 1003;
		return;
	}
	/* Types whole, as the server's dispatch: "register\u0000x" is
	 * none it knows, and ignored. */
	type = json_object_object_get(o, "type");
	if (jstrict_is(type, "register") && json_object_object_get_ex(o,
	    "project_hash", &v) && json_object_is_type(v, json_type_string)) {
		/* The hash is judged first, as the server does. */
		m->stop = m->registered > 0 || json_object_get_string_len(v) ==
		    0;
		m->code = json_object_get_string_len(v) == 0 ? 4400 : 1001;
		if (!m->stop)
			m->registered++;
	} else if (jstrict_is(type, "command_result") && m->registered > 0 &&
	    jstrict_is(json_object_object_get(o, "id"), "cg-1") &&
	    json_object_object_get_ex(o, "result", &v) &&
	    json_object_is_type(v, json_type_object))
		m->answered = 1;
	json_object_put(o);
}

/* A control record: a ping, or a close (any code then). */
static void
record_control(struct evbuffer *w, struct model *m, int kind,
    const uint8_t *p, size_t n)
{
	if (n > 125)
		n = 125;
	put_frame(w, 1, (kind & 7) == 6 ? 9 : 8, p, n, n, !(kind & 32));
	if (m->stop)
		return;
	if ((kind & 7) == 7 || (kind & 32)) {
		m->stop = 1;
		m->code = (kind & 7) == 6 ? 1002 : ANY_CODE;
	}
}

static void
record(struct evbuffer *w, struct model *m, int kind, const uint8_t *p,
    size_t n)
{
	size_t		 len, half;
	char		*s;
	int		 op = (kind & 7) == 5 ? 2 : 1;

	if ((kind & 7) >= 6) {
		record_control(w, m, kind, p, n);
		return;
	}
	s = record_msg(kind, p, n, &len);
	if (kind & 16) {
		put_frame(w, 1, op, (uint8_t *)s, len, HUB_MAX + len + 1, 1);
		/* wslay judges the length with the first payload bytes: with
		 * none (and none after), the frame just waits. */
		if (!m->stop) {
			m->stop = 1;
			m->code = len > 0 ? 1009 : ANY_CODE;
		}
	} else if (kind & 32) {
		put_frame(w, 1, op, (uint8_t *)s, len, len, 0);
		if (!m->stop) {
			m->stop = 1;
			m->code = 1002;
		}
	} else if ((kind & 8) && len >= 2) {
		half = len / 2;
		put_frame(w, 0, op, (uint8_t *)s, half, half, 1);
		put_frame(w, 1, 0, (uint8_t *)s + half, len - half, len - half,
		    1);
		model_message(m, op, s, len);
	} else {
		put_frame(w, 1, op, (uint8_t *)s, len, len, 1);
		model_message(m, op, s, len);
	}
	free(s);
}

/* The plugin's upgrade, then its records. */
static void
plugin_bytes(struct evbuffer *w, struct model *m, int flags,
    const uint8_t *p, size_t n)
{
	size_t	len;

	evbuffer_add_printf(w, "GET /hub/plugin%s HTTP/1.1\r\nHost: %s\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
	    HUB_KEY "\r\nSec-WebSocket-Version: 13\r\n%s\r\n", flags & 4 ?
	    "?x=1" : "", face_to, flags & 2 ? "X-API-Key: k-1\r\n" : "");
	while (n >= 2) {
		len = p[1] < n - 2 ? p[1] : n - 2;
		record(w, m, p[0], p + 2, len);
		p += 2 + len;
		n -= 2 + len;
	}
}

/* ---- the connection -------------------------------------------------------- */

static void
client_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	char	buf[65536];
	ssize_t	n;

	(void)ev;
	(void)arg;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		evbuffer_add(cl.got, buf, (size_t)n);
	if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		cl.eof = 1;
		event_del(cl.ev);
	}
}

static void
guard_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	fuzz_fail("%s", (const char *)arg);
}

static void
loop_until(int (*done)(void), const char *why)
{
	struct event	*g = evtimer_new(base, guard_cb, (void *)why);
	struct timeval	 tv = { 10, 0 };
	int		 turns;

	evtimer_add(g, &tv);
	for (turns = 0; !done(); turns++) {
		if (turns > 100000)
			fuzz_fail("%s (a busy loop)", why);
		event_base_loop(base, EVLOOP_ONCE);
	}
	event_free(g);
}

/* The face adopts the client's connection, as its listener would. */
static void
client_open(void)
{
	struct sockaddr_in	sin;
	socklen_t		sl = sizeof(sin);
	evutil_socket_t		afd = -1;
	struct bufferevent	*bev;
	int			i;

	if ((cl.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    getsockname(face_lfd, (struct sockaddr *)&sin, &sl) == -1 ||
	    connect(cl.fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		fuzz_fail("connect to the face: %s", strerror(errno));
	for (i = 0; i < 1000 && afd == -1; i++)
		afd = accept(face_lfd, NULL, NULL);
	if (afd == -1)
		fuzz_fail("accept: %s", strerror(errno));
	evutil_make_socket_nonblocking(afd);
	evutil_make_socket_nonblocking(cl.fd);
	cl.got = evbuffer_new();
	cl.eof = 0;
	cl.ev = event_new(base, cl.fd, EV_READ | EV_PERSIST, client_read_cb,
	    NULL);
	event_add(cl.ev, NULL);
	if ((bev = bufferevent_socket_new(base, afd, BEV_OPT_CLOSE_ON_FREE)) ==
	    NULL)
		fuzz_fail("bufferevent_socket_new");
	hub_adopt(&srv, bev, "127.0.0.1:fuzz");
}

/*
 * The bytes in pieces of step, the loop run after each: how many went.
 * Past PIECES pieces the rest goes in PIECES more at most, each of step
 * or larger: an input's first PIECES cuts are where step puts them, and
 * a long input at a small step does not cost thousands of sends (they
 * were most of the harness's time, in the kernel's TCP).
 */
static size_t
client_write(const uint8_t *p, size_t n, size_t step)
{
	size_t	off = 0, k, pieces = 0;
	ssize_t	w;
	int	tries = 0;

	while (off < n) {
		if (pieces == PIECES && (n - off + PIECES - 1) / PIECES > step)
			step = (n - off + PIECES - 1) / PIECES;
		k = n - off < step ? n - off : step;
		if ((w = send(cl.fd, p + off, k, MSG_NOSIGNAL)) > 0) {
			off += (size_t)w;
			pieces++;
			tries = 0;
		} else if (errno != EAGAIN && errno != EINTR)
			break;		/* the face closed: the rest is lost */
		else if (++tries > 1000)
			fuzz_fail("the face reads nothing more");
		fuzz_loop_settle(base, 32);
	}
	return off;
}

static int
face_empty(void)
{
	json_object	*st = hub_status(&srv), *v;
	int		 empty;

	empty = json_object_array_length(json_object_object_get(st,
	    "editors")) == 0 &&
	    json_object_object_get_ex(st, "passing_on", &v) &&
	    json_object_get_int64(v) == 0 &&
	    json_object_object_get_ex(st, "reading_heads", &v) &&
	    json_object_get_int64(v) == 0;
	json_object_put(st);
	return empty;
}

static int
conn_over(void)
{
	return cl.eof && face_empty();
}

static void
call_cb(void *arg, const struct link_answer *a)
{
	(void)arg;
	call_told++;
	call_status = a->status;
}

/* ---- the checks ------------------------------------------------------------ */

/* Where the head in p[n] ends (past its blank line), or 0. */
static size_t
head_end(const uint8_t *p, size_t n)
{
	size_t	i;

	for (i = 1; i < n && i < HEAD_MAX; i++)
		if (p[i] == '\n' && (p[i - 1] == '\n' || (i >= 2 &&
		    p[i - 1] == '\r' && p[i - 2] == '\n')))
			return i + 1;
	return 0;
}

static void
accept_of(const char *key, size_t n, char out[29])
{
	struct sha1_ctx	ctx;
	uint8_t		d[SHA1_DIGEST_SIZE];

	sha1_init(&ctx);
	sha1_update(&ctx, n, (const uint8_t *)key);
	sha1_update(&ctx, strlen(HUB_GUID), (const uint8_t *)HUB_GUID);
	sha1_digest(&ctx, sizeof(d), d);
	base64_encode_raw((char *)out, sizeof(d), d);
	out[28] = '\0';
}

/* Whether the 101's accept is that of a Sec-WebSocket-Key line of the
 * request head req[rn]. */
static int
accept_ok(const char *req, size_t rn, const char *ans)
{
	const char	*a = strstr(ans, "\r\nSec-WebSocket-Accept: ");
	const char	*p = req, *end = req + rn, *nl, *v, *e;
	char		 want[29];

	if (a == NULL)
		return 0;
	a += strlen("\r\nSec-WebSocket-Accept: ");
	for (; p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL;
	    p = nl + 1) {
		if ((size_t)(nl - p) < 18 || strncasecmp(p,
		    "Sec-WebSocket-Key:", 18) != 0)
			continue;
		for (v = p + 18; v < nl && (*v == ' ' || *v == '\t'); v++)
			;
		for (e = nl; e > v && (e[-1] == '\r' || e[-1] == ' ' ||
		    e[-1] == '\t'); e--)
			;
		accept_of(v, (size_t)(e - v), want);
		if (strncmp(a, want, 28) == 0 && a[28] == '\r')
			return 1;
	}
	return 0;
}

/* One text message of the server's, the idx'th. */
static void
check_text(const uint8_t *p, size_t n, int idx, int *registered)
{
	json_object	*o = fuzz_json("a hub message", (const char *)p, n), *v;
	json_object	*type = json_object_object_get(o, "type");

	if (idx == 0 && (n != strlen(HUB_WELCOME) || memcmp(p, HUB_WELCOME,
	    n) != 0))
		fuzz_fail("not the welcome first: %.*s", (int)n, p);
	if (idx == 0)
		;
	else if (jstrict_is(type, "registered")) {
		v = json_object_object_get(o, "session_id");
		if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string_len(v) != 36)
			fuzz_fail("registered without a UUID: %.*s", (int)n, p);
		(*registered)++;
	} else if (jstrict_is(type, "execute")) {
		if (!jstrict_is(json_object_object_get(o, "id"), "cg-1") ||
		    !jstrict_is(json_object_object_get(o, "name"), "ping") ||
		    !json_object_is_type(json_object_object_get(o, "params"),
		    json_type_object))
			fuzz_fail("not the link's execute: %.*s", (int)n, p);
	} else if (!jstrict_is(type, "ping") || n != 15)
		fuzz_fail("not a hub message: %.*s", (int)n, p);
	json_object_put(o);
}

/* The frames after the 101: their close code (0: none). */
static int
check_frames(const uint8_t *p, size_t n, int *registered)
{
	uint64_t	len;
	size_t		hl, i;
	int		op, code = 0, idx = 0;

	while (n > 0) {
		if (n < 2 || (p[1] & 0x80) || code != 0)
			fuzz_fail("a frame cut short, masked, or after a close");
		op = p[0] & 0x0f;
		len = p[1] & 0x7f;
		hl = len == 126 ? 4 : len == 127 ? 10 : 2;
		if (n < hl)
			fuzz_fail("a frame header cut short");
		if (hl > 2)
			for (len = 0, i = 2; i < hl; i++)
				len = len << 8 | p[i];
		if (n - hl < len || !(p[0] & 0x80))
			fuzz_fail("a frame cut short or in fragments");
		if (op == 1)
			check_text(p + hl, (size_t)len, idx++, registered);
		else if (op == 8)
			code = len >= 2 ? p[hl] << 8 | p[hl + 1] : 1005;
		else if (op != 10)
			fuzz_fail("a frame of opcode %d", op);
		p += hl + len;
		n -= hl + (size_t)len;
	}
	if (idx == 0)
		fuzz_fail("no welcome");
	return code;
}

static void
check_upgrade(const char *req, size_t rn, const uint8_t *ans, size_t an,
    const struct model *m)
{
	const char	*e = memmem(ans, an, "\r\n\r\n", 4);
	char		*head;
	int		 code, registered = 0;

	if (e == NULL)
		fuzz_fail("a 101 head cut short");
	head = strndup((const char *)ans, (size_t)(e - (const char *)ans) + 2);
	if (!accept_ok(req, rn, head))
		fuzz_fail("a 101 with another accept: %s", head);
	free(head);
	e += 4;
	code = check_frames((const uint8_t *)e, an - (size_t)(e -
	    (const char *)ans), &registered);
	if (m->raw)
		return;
	if (m->stop ? m->code != ANY_CODE && code != m->code : code != 0)
		fuzz_fail("closed %d, %d wanted", code, m->stop ? m->code : 0);
	if (registered != m->registered)
		fuzz_fail("%d registered, %d wanted", registered,
		    m->registered);
}

static void
check_refusal(const uint8_t *ans, size_t an)
{
	const char	*e = memmem(ans, an, "\r\n\r\n", 4), *cl;
	char		*head;
	size_t		 hl;

	if (an < 13 || e == NULL || (memcmp(ans, "HTTP/1.1 400 ", 13) != 0 &&
	    memcmp(ans, "HTTP/1.1 403 ", 13) != 0 && memcmp(ans,
	    "HTTP/1.1 404 ", 13) != 0 && memcmp(ans, "HTTP/1.1 426 ", 13) != 0))
		fuzz_fail("neither a 101 nor a refusal: %.*s", (int)(an < 200 ?
		    an : 200), ans);
	hl = (size_t)(e - (const char *)ans) + 4;
	head = strndup((const char *)ans, hl);
	if (strcasestr(head, "\r\nConnection: close\r\n") == NULL ||
	    (cl = strcasestr(head, "\r\nContent-Length: ")) == NULL ||
	    strtoull(cl + 18, NULL, 10) != an - hl)
		fuzz_fail("a refusal not closing, or its body cut: %s", head);
	free(head);
}

/* The fake's connections: the one passed on holds exactly wire[wn]; the
 * others are cmdgate's own upgrades (only once an editor registered). */
static void
check_passed(const uint8_t *wire, size_t wn, int want_pass,
    int m_registered)
{
	int		 i, passes = 0;
	size_t		 n;
	const uint8_t	*b;
	static const char up[] = "GET /hub/plugin HTTP/1.1\r\n";

	for (i = 0; i < nfakes; i++) {
		n = evbuffer_get_length(fakes[i].got);
		b = evbuffer_pullup(fakes[i].got, -1);
		if (want_pass && n == wn && memcmp(b, wire, wn) == 0)
			passes++;
		else if (n > 0 && (n < sizeof(up) - 1 ||
		    memcmp(b, up, sizeof(up) - 1)))
			fuzz_fail("the server got %zu bytes, not what was sent "
			    "(%zu): %.*s", n, wn, (int)(n < 200 ? n : 200), b);
	}
	if (!want_pass && m_registered == 0 && nfakes > 0)
		fuzz_fail("the server reached with no editor registered");
	if (passes != want_pass)
		fuzz_fail("passed on %d times, %d wanted", passes, want_pass);
}

static void
check_answer(const uint8_t *wire, size_t wn, const struct model *m)
{
	size_t		 an = evbuffer_get_length(cl.got);
	const uint8_t	*ans = evbuffer_pullup(cl.got, -1);
	size_t		 he = head_end(wire, wn);

	if (an >= 13 && memcmp(ans, "HTTP/1.1 101 ", 13) == 0) {
		check_upgrade((const char *)wire, he, ans, an, m);
		check_passed(wire, wn, 0, m->raw ? -1 : m->registered);
		return;
	}
	if (!m->raw)
		fuzz_fail("the plugin's upgrade answered %.*s", (int)(an < 200 ?
		    an : 200), ans);
	if (an > 0) {
		check_refusal(ans, an);
		check_passed(wire, wn, 0, 0);
	} else if (he == 0 && wn >= HEAD_MAX)
		fuzz_fail("no head end in 8 KiB, and no 400");
	else
		check_passed(wire, wn, he != 0, 0);
}

/* After the connection: no editor, no link attached, the call told. */
static void
check_state(const struct model *m)
{
	struct link	*L = links_get(srv.links, "unity-hub", face_to);

	if (!face_empty())
		fuzz_fail("the face holds a connection after it ended");
	if (link_attached(L) != NULL)
		fuzz_fail("the link keeps the plugin after it went");
	links_free(srv.links);
	srv.links = NULL;
	if (call_told != 1 || (!m->raw && (m->answered ? call_status !=
	    UP_OK : call_status == UP_OK)))
		fuzz_fail("the call told %d times (status %d)", call_told,
		    call_status);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evbuffer	*w;
	struct model	 m;
	size_t		 wn, sent;
	const uint8_t	*wire;

	if (size < 2)
		return 0;
	memset(&m, 0, sizeof(m));
	w = evbuffer_new();
	if (data[1] & 1) {
		m.raw = 1;
		evbuffer_add(w, data + 2, size - 2);
	} else
		plugin_bytes(w, &m, data[1], data + 2, size - 2);
	wn = evbuffer_get_length(w);
	wire = evbuffer_pullup(w, -1);
	srv.links = links_new(base);
	call_told = 0;
	link_call(links_get(srv.links, "unity-hub", face_to), NULL, NULL,
	    60000, 60000, call_cb, NULL);
	client_open();
	sent = client_write(wire, wn, data[0] == 0 ? wn + 1 : data[0]);
	fuzz_loop_settle(base, 64);
	shutdown(cl.fd, SHUT_WR);
	loop_until(conn_over, "the connection did not end");
	check_answer(wire, sent, &m);
	check_state(&m);
	hub_free(&srv);
	loop_until(fakes_gone, "a connection to the server stays");
	fakes_free();
	event_free(cl.ev);
	evbuffer_free(cl.got);
	close(cl.fd);
	evbuffer_free(w);
	return 0;
}
