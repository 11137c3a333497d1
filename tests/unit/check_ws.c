/* SPDX-License-Identifier: ISC */
/*
 * WebSocket over a bufferevent (common/ws.c): RFC 6455's handshake key,
 * and a server and a client over a socket pair on one loop: messages
 * both ways (the client's masked), a message over the limit, both
 * closing handshakes, nothing told after the server's close, a lost
 * connection; the handshake's heads
 * (common/wshead.c).
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "ckrun.h"
#include "ws.h"
#include "wshead.h"

/* One end: what it heard. */
struct end {
	struct ws	*ws;
	char		 got[8][256];
	int		 ngot;
	int		 closed;	/* its code; 0: not yet */
};

static struct event_base	*base;
static struct end		 srv, cli;

static void
end_message(void *arg, const char *buf, size_t len)
{
	struct end	*e = arg;

	ck_assert_int_lt(e->ngot, 8);
	ck_assert_uint_lt(len, sizeof(e->got[0]));
	memcpy(e->got[e->ngot], buf, len);
	e->got[e->ngot++][len] = '\0';
}

static void
end_closed(void *arg, int code)
{
	struct end	*e = arg;

	ck_assert_int_eq(e->closed, 0);
	e->closed = code;
	ws_free(e->ws);
	e->ws = NULL;
}

static const struct ws_cbs	cbs = { end_message, end_closed };

static void
pair_setup(void)
{
	int	sv[2];

	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	evutil_make_socket_nonblocking(sv[0]);
	evutil_make_socket_nonblocking(sv[1]);
	srv.ws = ws_new(bufferevent_socket_new(base, sv[0],
	    BEV_OPT_CLOSE_ON_FREE), 0, 64, &cbs, &srv);
	cli.ws = ws_new(bufferevent_socket_new(base, sv[1],
	    BEV_OPT_CLOSE_ON_FREE), 1, 1024, &cbs, &cli);
}

static void
pair_teardown(void)
{
	ws_free(srv.ws);
	ws_free(cli.ws);
	event_base_free(base);
}

/* Run the loop until *flag is set (bounded by a 5 s timer). */
static void
loop_until(const int *flag)
{
	struct timeval	tv = { 5, 0 };

	event_base_loopexit(base, &tv);
	while (*flag == 0 && !event_base_got_exit(base))
		event_base_loop(base, EVLOOP_ONCE);
	ck_assert_msg(*flag != 0, "the loop ran out of time");
}

START_TEST(accept_key)
{
	char	out[WS_ACCEPT_LEN + 1], key[WS_KEY_LEN + 1], k2[WS_KEY_LEN + 1];

	/* RFC 6455, 1.3. */
	ws_accept_key("dGhlIHNhbXBsZSBub25jZQ==", out);
	ck_assert_str_eq(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
	ws_new_key(key);
	ws_new_key(k2);
	ck_assert_uint_eq(strlen(key), WS_KEY_LEN);
	ck_assert_str_eq(key + 22, "==");
	ck_assert_str_ne(key, k2);
}
END_TEST

START_TEST(messages_both_ways)
{
	ck_assert_int_eq(ws_send(cli.ws, "{\"type\":\"register\"}", 19), 0);
	ck_assert_int_eq(ws_send(cli.ws, "second", 6), 0);
	ck_assert_int_eq(ws_send(srv.ws, "{\"type\":\"welcome\"}", 18), 0);
	loop_until(&cli.ngot);
	while (srv.ngot < 2)
		loop_until(&srv.ngot);
	ck_assert_str_eq(srv.got[0], "{\"type\":\"register\"}");
	ck_assert_str_eq(srv.got[1], "second");
	ck_assert_str_eq(cli.got[0], "{\"type\":\"welcome\"}");
}
END_TEST

/* The server closes: the client answers, both hear the code once. */
START_TEST(close_handshake)
{
	ws_close(srv.ws, WS_GOING_AWAY, "superseded");
	loop_until(&cli.closed);
	loop_until(&srv.closed);
	ck_assert_int_eq(cli.closed, WS_GOING_AWAY);
	ck_assert_int_eq(srv.closed, WS_GOING_AWAY);
}
END_TEST

/* A message over the server's 64 bytes: it closes with 1009. */
START_TEST(too_big)
{
	char	big[100];

	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(ws_send(cli.ws, big, sizeof(big)), 0);
	loop_until(&cli.closed);
	loop_until(&srv.closed);
	ck_assert_int_eq(cli.closed, WS_TOO_BIG);
	ck_assert_int_eq(srv.ngot, 0);
}
END_TEST

/*
 * The server closed (the hub: a message not JSON, 1003): what the client
 * sent before it read the close is not told, so that a register after
 * it attaches no link and goes nowhere (fuzz_hub, corpus/hub/
 * crash-register-after-close).
 */
START_TEST(nothing_after_close)
{
	ws_close(srv.ws, WS_UNSUPPORTED, "malformed JSON");
	ck_assert_int_eq(ws_send(cli.ws, "{\"type\":\"register\"}", 19), 0);
	loop_until(&cli.closed);
	loop_until(&srv.closed);
	ck_assert_int_eq(srv.closed, WS_UNSUPPORTED);
	ck_assert_int_eq(srv.ngot, 0);
}
END_TEST

/*
 * The peer's first frame is no frame (a ping in pieces, read with the
 * handshake as the hub reads it): the 101 and the message queued before
 * it still reach the peer, then a close, then the end (fuzz_hub, corpus/
 * hub/crash-bad-first-frame).
 */
/* The hub's head reader: it read the bytes that came. */
static void
raw_read(struct bufferevent *bev, void *arg)
{
	(void)bev;
	(*(int *)arg)++;
}

START_TEST(bad_frame_keeps_answer)
{
	static const char	bad[] = { 0x09, (char)0x80, 0, 0, 0, 0 };
	struct bufferevent	*bev;
	char			 got[256];
	ssize_t			 n, have = 0;
	int			 sv[2], in = 0;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	evutil_make_socket_nonblocking(sv[0]);
	bev = bufferevent_socket_new(base, sv[0], BEV_OPT_CLOSE_ON_FREE);
	ck_assert_int_eq(write(sv[1], bad, sizeof(bad)), (ssize_t)sizeof(bad));
	bufferevent_setcb(bev, raw_read, NULL, NULL, &in);
	bufferevent_enable(bev, EV_READ);
	loop_until(&in);
	bufferevent_write(bev, "HTTP/1.1 101 x\r\n\r\n", 18);
	ws_free(srv.ws);
	srv.ws = ws_new(bev, 0, 64, &cbs, &srv);
	ck_assert_int_eq(ws_send(srv.ws, "welcome", 7), 0);
	loop_until(&srv.closed);
	while ((n = read(sv[1], got + have, sizeof(got) - (size_t)have)) > 0)
		have += n;
	close(sv[1]);
	ck_assert_int_eq(have, 18 + 9 + 2);
	ck_assert_int_eq(memcmp(got, "HTTP/1.1 101 x\r\n\r\n\x81\x07welcome", 27),
	    0);
	ck_assert_int_eq((unsigned char)got[27], 0x88);
	ck_assert_int_eq(srv.closed, WS_ABNORMAL);
}
END_TEST

/* A server ws on one end of a loopback TCP connection (a socket pair
 * does not reset); the other end's descriptor, blocking. */
static int
tcp_server(void)
{
	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof(sin);
	int			 lfd, cfd, afd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(lfd = socket(AF_INET, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sin, &sl), 0);
	ck_assert_int_ge(cfd = socket(AF_INET, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(connect(cfd, (struct sockaddr *)&sin, sizeof(sin)),
	    0);
	ck_assert_int_ge(afd = accept(lfd, NULL, NULL), 0);
	close(lfd);
	evutil_make_socket_nonblocking(afd);
	ws_free(srv.ws);
	srv.ws = ws_new(bufferevent_socket_new(base, afd,
	    BEV_OPT_CLOSE_ON_FREE), 0, 64, &cbs, &srv);
	return cfd;
}

/* The client's close (1000, masked). */
static const char	cls[] = { (char)0x88, (char)0x82, 1, 2, 3, 4, 0x03 ^ 1,
			    (char)(0xe8 ^ 2) };

/* What fd reads to its end: the server's close (1000), then EOF, not a
 * reset. */
static void
assert_close_then_eof(int fd)
{
	char	got[64];
	ssize_t	n, have = 0;

	ck_assert_int_eq(fcntl(fd, F_SETFL, 0), 0);
	while ((n = read(fd, got + have, sizeof(got) - (size_t)have)) > 0)
		have += n;
	close(fd);
	ck_assert_msg(n == 0, "the connection was reset");
	ck_assert_int_eq(have, 4);
	ck_assert_int_eq(memcmp(got, "\x88\x02\x03\xe8", 4), 0);
}

/*
 * The peer sent its close and more behind it (frames after a close,
 * which RFC 6455 forbids): the server's close still reaches it, then an
 * orderly end.  Closing the socket with those bytes unread made the
 * kernel reset the connection, and the peer lost the close it had not
 * read yet (fuzz_hub, corpus/hub/close-with-bytes-behind).
 */
START_TEST(close_with_bytes_behind)
{
	static char	junk[256 * 1024];
	ssize_t		n, sent = 0;
	int		cfd = tcp_server();

	ck_assert_int_eq(write(cfd, cls, sizeof(cls)), (ssize_t)sizeof(cls));
	evutil_make_socket_nonblocking(cfd);
	memset(junk, 0x81, sizeof(junk));
	while (sent < (ssize_t)sizeof(junk) && (n = write(cfd, junk + sent,
	    sizeof(junk) - (size_t)sent)) > 0)
		sent += n;
	shutdown(cfd, SHUT_WR);
	loop_until(&srv.closed);
	ck_assert_int_eq(srv.closed, WS_NORMAL);
	assert_close_then_eof(cfd);
}
END_TEST

/*
 * Bytes that come after the server read the peer's close, before its own
 * close is out: the server still takes them, and its end is orderly
 * (review of 1108d4c: only the bytes there when the close was read
 * counted, and these reset the connection).
 */
START_TEST(late_bytes_behind)
{
	static char	 junk[1024];
	int		 cfd = tcp_server();

	ck_assert_int_eq(write(cfd, cls, sizeof(cls)), (ssize_t)sizeof(cls));
	/* One turn: the server reads the close and queues its own, which
	 * its socket writes at the next turn. */
	event_base_loop(base, EVLOOP_ONCE);
	ck_assert_int_eq(srv.closed, 0);
	memset(junk, 0x81, sizeof(junk));
	ck_assert_int_eq(write(cfd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	shutdown(cfd, SHUT_WR);
	loop_until(&srv.closed);
	ck_assert_int_eq(srv.closed, WS_NORMAL);
	assert_close_then_eof(cfd);
}
END_TEST

static void
trickle_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	ck_assert_int_eq(write(*(int *)arg, "\x81", 1), 1);
}

/*
 * A peer that sends bytes behind its close, then a byte every 200 ms,
 * and never closes: the end comes WS_CLOSE_WAIT_S (5 s) after the close
 * all the same; its bytes do not put it off (they did, for ever).
 */
START_TEST(trickle_ends)
{
	struct timeval	 every = { 0, 200 * 1000 }, cap = { 8, 0 };
	struct event	*t;
	static char	 more[sizeof(cls) + 65536];
	int		 cfd = tcp_server();

	memset(more, 0x81, sizeof(more));
	memcpy(more, cls, sizeof(cls));
	ck_assert_int_eq(write(cfd, more, sizeof(more)), (ssize_t)sizeof(more));
	t = event_new(base, -1, EV_PERSIST, trickle_cb, &cfd);
	event_add(t, &every);
	event_base_loopexit(base, &cap);
	while (srv.closed == 0 && !event_base_got_exit(base))
		event_base_loop(base, EVLOOP_ONCE);
	event_free(t);
	close(cfd);
	ck_assert_msg(srv.closed != 0, "not ended in 8 s");
	ck_assert_int_eq(srv.closed, WS_NORMAL);
}
END_TEST

/* The client's connection goes without a close: the server hears 1006. */
START_TEST(lost)
{
	ws_free(cli.ws);
	cli.ws = NULL;
	loop_until(&srv.closed);
	ck_assert_int_eq(srv.closed, WS_ABNORMAL);
}
END_TEST

/* What .NET's ClientWebSocket sends, in pieces. */
#define PLUGIN_HEAD "GET /hub/plugin HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n" \
	"Connection: Upgrade\r\nUpgrade: websocket\r\n" \
	"Sec-WebSocket-Version: 13\r\n" \
	"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"

/* wshead_request on a whole string. */
static int
req_of(const char *s, struct wshead *h)
{
	return wshead_request(s, strlen(s), h);
}

/* wshead_length from the start. */
static long
length_of(const char *buf, size_t len)
{
	size_t	seen = 0;

	return wshead_length(buf, len, &seen);
}

START_TEST(head_length)
{
	char	big[WSHEAD_MAX + 10];
	size_t	n = strlen(PLUGIN_HEAD);

	ck_assert_int_eq(length_of(PLUGIN_HEAD, n), (long)n);
	ck_assert_int_eq(length_of(PLUGIN_HEAD, n - 1), 0);
	ck_assert_int_eq(length_of("GET / HTTP/1.1\n\nBODY", 20), 16);
	memset(big, 'a', sizeof(big));
	ck_assert_int_eq(length_of(big, sizeof(big)), -1);
	ck_assert_int_eq(length_of(big, 100), 0);
}
END_TEST

/*
 * A head that comes a byte at a time is found where it ends, its \r\n
 * or \n\n split across reads, and what was looked at is not looked at
 * again: a head trickled to 8 KiB cost a scan of all it had at every
 * byte (fuzz_hub spent half its time there).
 */
START_TEST(head_length_resumes)
{
	const char	*heads[] = { PLUGIN_HEAD, "GET / HTTP/1.1\n\nBODY" };
	char		 big[WSHEAD_MAX + 10];
	size_t		 i, k, end, seen;
	long		 n;

	for (k = 0; k < 2; k++) {
		end = (size_t)length_of(heads[k], strlen(heads[k]));
		for (seen = 0, i = 1; i <= strlen(heads[k]); i++) {
			n = wshead_length(heads[k], i, &seen);
			ck_assert_int_eq(n, i < end ? 0 : (long)end);
			if (n > 0)
				break;
			ck_assert_uint_eq(seen, i);
		}
		ck_assert_uint_eq(i, end);
	}
	/* An end before seen is not looked at again. */
	seen = 10;
	ck_assert_int_eq(wshead_length("\n\n        ab", 12, &seen), 0);
	ck_assert_uint_eq(seen, 12);
	memset(big, 'a', sizeof(big));
	for (seen = 0, i = 1; i < sizeof(big); i++)
		if ((n = wshead_length(big, i, &seen)) != 0)
			break;
	ck_assert_int_eq(n, -1);
	ck_assert_uint_eq(i, WSHEAD_MAX);
}
END_TEST

/*
 * A NUL or a bare CR in a line, or more after the request line's three
 * words, is no HTTP/1.1 head: the key "K\0\0\0\x16" was read as K and
 * answered 101 (fuzz_hub, corpus/hub/crash-key-nul).
 */
START_TEST(head_not_http)
{
	static const char	nul[] = "GET /hub/plugin HTTP/1.1\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
	    "dGhlIHNhbXBsZSBub25jZQ==\0\0\0\x16\r\n\r\n";
	struct wshead		h;

	ck_assert_int_eq(wshead_request(nul, sizeof(nul) - 1, &h), -1);
	ck_assert_int_eq(req_of("GET /hub/plugin HTTP/1.1\rJHost: x\r\n\r\n",
	    &h), -1);
	ck_assert_int_eq(req_of("GET /hub/plugin HTTP/1.1 x\r\n\r\n", &h),
	    -1);
	ck_assert_int_eq(req_of("GET /hub/plugin HTTP/1.1\r\nX: a\rb\r\n\r\n",
	    &h), -1);
	ck_assert_int_eq(req_of("GET /hub/plugin HTTP/1.1\r\n\r\n", &h), 0);
}
END_TEST

START_TEST(head_upgrade)
{
	struct wshead	h;
	char		*s;

	ck_assert_int_eq(wshead_request(PLUGIN_HEAD, strlen(PLUGIN_HEAD), &h),
	    0);
	ck_assert_str_eq(h.method, "GET");
	ck_assert_str_eq(h.target, "/hub/plugin");
	ck_assert_int_eq(wshead_upgrade_status(&h), 0);
	ck_assert_str_eq(h.key, "dGhlIHNhbXBsZSBub25jZQ==");
	s = wshead_accept(h.key);
	ck_assert_ptr_nonnull(strstr(s, "HTTP/1.1 101 Switching Protocols\r\n"));
	ck_assert_ptr_nonnull(strstr(s, "Sec-WebSocket-Accept: "
	    "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"));
	free(s);
	/* Token lists, blanks, any case; a key of another length. */
	ck_assert_int_eq(req_of("GET /x HTTP/1.1\r\nconnection: "
	    "keep-alive, UPGRADE\r\nupgrade:  WebSocket \r\n"
	    "Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: "
	    "dGhlIHNhbXBsZSBub25jZQ==\r\nX-API-Key: k1\r\n\r\n", &h), 0);
	ck_assert_int_eq(wshead_upgrade_status(&h), 426);
	ck_assert_str_eq(h.api_key, "k1");
	ck_assert_int_eq(req_of("GET /x HTTP/1.1\r\nUpgrade: "
	    "websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
	    "Sec-WebSocket-Key: c2hvcnQ=\r\n\r\n", &h), 0);
	ck_assert_int_eq(wshead_upgrade_status(&h), 400);
	ck_assert_int_eq(req_of("POST /mcp HTTP/1.1\r\nHost: h\r\n\r\n", &h), 0);
	ck_assert_int_eq(wshead_upgrade_status(&h), 400);
	/* Not heads: HTTP/1.0, a folded line, no colon. */
	ck_assert_int_eq(req_of("GET / HTTP/1.0\r\n\r\n", &h), -1);
	ck_assert_int_eq(req_of("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", &h), -1);
	ck_assert_int_eq(req_of("GET / HTTP/1.1\r\nnocolon\r\n\r\n", &h), -1);
}
END_TEST

/* The client's head, judged by the server's side; the answer checked. */
START_TEST(head_client)
{
	struct wshead	h;
	char		key[WS_KEY_LEN + 1], err[256], *req, *ans;

	req = wshead_connect("127.0.0.1:8081", "/hub/plugin", "secret", key);
	ck_assert_int_eq(length_of(req, strlen(req)), (long)strlen(req));
	ck_assert_int_eq(wshead_request(req, strlen(req), &h), 0);
	ck_assert_int_eq(wshead_upgrade_status(&h), 0);
	ck_assert_str_eq(h.key, key);
	ck_assert_str_eq(h.api_key, "secret");
	ans = wshead_accept(key);
	ck_assert_int_eq(wshead_answered(ans, strlen(ans), key, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(wshead_answered(ans, strlen(ans),
	    "dGhlIHNhbXBsZSBub25jZQ==", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "Sec-WebSocket-Accept"));
	free(ans);
	ans = wshead_refuse(403);
	ck_assert_int_eq(wshead_answered(ans, strlen(ans), key, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "HTTP/1.1 403 Forbidden"));
	free(ans);
	free(req);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("ws");
	TCase	*tc = tcase_create("ws");

	signal(SIGPIPE, SIG_IGN);	/* as the broker does */
	tcase_add_checked_fixture(tc, pair_setup, pair_teardown);
	tcase_add_test(tc, accept_key);
	tcase_add_test(tc, messages_both_ways);
	tcase_add_test(tc, close_handshake);
	tcase_add_test(tc, too_big);
	tcase_add_test(tc, lost);
	tcase_add_test(tc, nothing_after_close);
	tcase_add_test(tc, bad_frame_keeps_answer);
	tcase_add_test(tc, close_with_bytes_behind);
	tcase_add_test(tc, late_bytes_behind);
	tcase_add_test(tc, trickle_ends);
	suite_add_tcase(s, tc);
	tc = tcase_create("heads");
	tcase_add_test(tc, head_length);
	tcase_add_test(tc, head_length_resumes);
	tcase_add_test(tc, head_upgrade);
	tcase_add_test(tc, head_not_http);
	tcase_add_test(tc, head_client);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
