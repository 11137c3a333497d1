/* SPDX-License-Identifier: ISC */
/*
 * WebSocket over a bufferevent (include/ws.h): wslay reads and writes
 * the frames through the bufferevent's buffers, which libevent fills and
 * drains; this file only moves them and tells the end once.  wslay
 * answers pings and a close by itself; a frame it cannot take (a
 * protocol error, a message over the limit) gets its close.
 */
#include "config.h"

#include <sys/socket.h>

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include <nettle/base64.h>
#include <nettle/sha1.h>
#include <wslay/wslay.h>

#include <json-c/json.h>

#include "log.h"
#include "util.h"
#include "ws.h"

#define WS_GUID		"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_CLOSE_WAIT_S	5	/* from our close to the end, at most */

struct ws {
	struct bufferevent	*bev;
	wslay_event_context_ptr	 ctx;
	const struct ws_cbs	*cbs;
	void			*arg;
	int			 peer_code;	/* its close's; 0: none yet */
	int			 ending;	/* both closes are out */
	int			 linger;	/* read and drop till EOF */
	int			 fin;		/* our side shut down */
	int			 told;
	struct event		*deadline;	/* of the end, once our close
						   is queued */
};

void
ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1])
{
	struct sha1_ctx	ctx;
	uint8_t		d[SHA1_DIGEST_SIZE];

	sha1_init(&ctx);
	sha1_update(&ctx, strlen(key), (const uint8_t *)key);
	sha1_update(&ctx, strlen(WS_GUID), (const uint8_t *)WS_GUID);
	sha1_digest(&ctx, sizeof(d), d);
	base64_encode_raw(out, sizeof(d), d);
	out[WS_ACCEPT_LEN] = '\0';
}

void
ws_new_key(char out[WS_KEY_LEN + 1])
{
	uint8_t	raw[16];

	evutil_secure_rng_get_bytes(raw, sizeof(raw));
	base64_encode_raw(out, sizeof(raw), raw);
	out[WS_KEY_LEN] = '\0';
}

/* ---- wslay's side ------------------------------------------------------ */

static ssize_t
ws_recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
    void *user)
{
	struct ws	*w = user;
	int		 n;

	(void)flags;
	n = evbuffer_remove(bufferevent_get_input(w->bev), buf, len);
	if (n <= 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	return n;
}

static ssize_t
ws_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *user)
{
	struct ws	*w = user;

	(void)ctx;
	(void)flags;
	if (evbuffer_add(bufferevent_get_output(w->bev), data, len) == -1)
		fatalx("evbuffer_add: out of memory");
	return (ssize_t)len;
}

static int
ws_genmask_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
    void *user)
{
	(void)ctx;
	(void)user;
	evutil_secure_rng_get_bytes(buf, len);
	return 0;
}

static void
ws_msg_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_msg_recv_arg *a, void *user)
{
	struct ws	*w = user;

	/* Once our close is queued the connection is ending: what the peer
	 * sent meanwhile is not acted on (a register after the hub closed
	 * a socket 1003 attached its link and went upstream). */
	if ((a->opcode == WSLAY_TEXT_FRAME || a->opcode == WSLAY_BINARY_FRAME) &&
	    !wslay_event_get_close_sent(ctx))
		w->cbs->message(w->arg, (const char *)a->msg, a->msg_length);
	else if (a->opcode == WSLAY_CONNECTION_CLOSE)
		w->peer_code = a->status_code != 0 ? a->status_code :
		    WS_NO_STATUS;
}

/* ---- the bufferevent's side -------------------------------------------- */

/* Tell the end once; the owner may free w in closed(). */
static void
ws_end(struct ws *w, int code)
{
	if (w->told)
		return;
	w->told = 1;
	bufferevent_disable(w->bev, EV_READ | EV_WRITE);
	w->cbs->closed(w->arg, code);
}

static void
ws_deadline_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ws	*w = arg;

	(void)fd;
	(void)ev;
	ws_end(w, w->peer_code != 0 ? w->peer_code : WS_ABNORMAL);
}

/* The end comes WS_CLOSE_WAIT_S after our close at the latest, whatever
 * the peer sends meanwhile (reads do not put it off). */
static void
ws_deadline(struct ws *w)
{
	struct timeval	tv = { WS_CLOSE_WAIT_S, 0 };

	if (w->deadline != NULL)
		return;
	if ((w->deadline = evtimer_new(bufferevent_get_base(w->bev),
	    ws_deadline_cb, w)) == NULL)
		fatalx("evtimer_new: out of memory");
	evtimer_add(w->deadline, &tv);
}

/*
 * Both closes are out (or ours, and reading stopped on an error): what
 * the peer still sends is read and dropped, our side is shut once our
 * last bytes are out (ws_fin), and the end comes at the peer's (or the
 * deadline).  A socket closed with bytes unread, or with bytes still
 * coming, would reset the connection, and the peer would lose our close
 * (and the answers before it) if it had not read them yet.
 */
static void
ws_linger(struct ws *w)
{
	if (w->linger)
		return;
	w->linger = 1;
	wslay_event_shutdown_read(w->ctx);
	bufferevent_enable(w->bev, EV_READ);
	ws_deadline(w);
}

/* Lingering and our last bytes written: a FIN tells the peer the end. */
static void
ws_fin(struct ws *w)
{
	evutil_socket_t	fd = bufferevent_getfd(w->bev);

	if (w->fin || !w->linger ||
	    evbuffer_get_length(bufferevent_get_output(w->bev)) > 0)
		return;
	w->fin = 1;
	if (fd != -1)
		(void)shutdown(fd, SHUT_WR);
}

/* Write what wslay queued; 1 when the connection is over (told). */
static int
ws_flush(struct ws *w)
{
	if (wslay_event_send(w->ctx) != 0) {
		ws_end(w, WS_ABNORMAL);
		return 1;
	}
	if (wslay_event_want_read(w->ctx) || wslay_event_want_write(w->ctx))
		return 0;
	/* Both closes went (or reading stopped on an error): over once
	 * the peer closed too (ws_linger). */
	w->ending = 1;
	ws_linger(w);
	ws_fin(w);
	return 0;
}

/*
 * A frame wslay could not parse (a control frame in pieces or over 125
 * bytes): it queued a close.  What was queued before it (the hub's 101
 * and welcome, read with the bad frame) and the close still go out, then
 * the end; what the peer still sends is dropped (ws_linger), and a peer
 * that takes nothing has WS_CLOSE_WAIT_S.
 */
static void
ws_fail(struct ws *w)
{
	ws_linger(w);
}

static void
ws_read(struct bufferevent *bev, void *arg)
{
	struct ws	*w = arg;

	(void)bev;
	if (w->told)
		return;
	if (w->linger) {
		evbuffer_drain(bufferevent_get_input(w->bev), (size_t)-1);
		return;
	}
	if (wslay_event_recv(w->ctx) != 0)
		ws_fail(w);
	(void)ws_flush(w);
}

static void
ws_written(struct bufferevent *bev, void *arg)
{
	struct ws	*w = arg;

	(void)bev;
	if (!w->ending || w->told)
		return;
	if (!w->linger)		/* the peer's EOF came first */
		ws_end(w, w->peer_code != 0 ? w->peer_code : WS_ABNORMAL);
	else
		ws_fin(w);
}

static void
ws_event(struct bufferevent *bev, short what, void *arg)
{
	struct ws	*w = arg;

	/* The peer sent all it had (EOF): what we queued for it (a close,
	 * an answer) still goes, within WS_CLOSE_WAIT_S, then the end. */
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) &&
	    !w->told && evbuffer_get_length(bufferevent_get_output(bev)) > 0) {
		w->ending = 1;
		w->linger = 0;
		bufferevent_disable(bev, EV_READ);
		ws_deadline(w);
		return;
	}
	/* EOF (our last bytes out) or an error. */
	ws_end(w, w->peer_code != 0 ? w->peer_code : WS_ABNORMAL);
}

struct ws *
ws_new(struct bufferevent *bev, int client, size_t max,
    const struct ws_cbs *cbs, void *arg)
{
	static const struct wslay_event_callbacks wcbs = { ws_recv_cb,
	    ws_send_cb, ws_genmask_cb, NULL, NULL, NULL, ws_msg_cb };
	struct ws	*w = xcalloc(1, sizeof(*w));
	int		 rc;

	w->bev = bev;
	w->cbs = cbs;
	w->arg = arg;
	rc = client ? wslay_event_context_client_init(&w->ctx, &wcbs, w) :
	    wslay_event_context_server_init(&w->ctx, &wcbs, w);
	if (rc != 0)
		fatalx("wslay_event_context_init: out of memory");
	wslay_event_config_set_max_recv_msg_length(w->ctx, max);
	bufferevent_setcb(bev, ws_read, ws_written, ws_event, w);
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	/* Bytes read with the handshake: from the loop, not before the
	 * caller has its ws. */
	if (evbuffer_get_length(bufferevent_get_input(bev)) > 0)
		bufferevent_trigger(bev, EV_READ, BEV_TRIG_DEFER_CALLBACKS);
	return w;
}

int
ws_send(struct ws *w, const char *buf, size_t len)
{
	struct wslay_event_msg	m = { WSLAY_TEXT_FRAME,
				    (const uint8_t *)buf, len };

	if (w->told || wslay_event_queue_msg(w->ctx, &m) != 0)
		return -1;
	/* Written now; an end it finds is told from the loop. */
	if (wslay_event_send(w->ctx) != 0)
		return -1;
	return 0;
}

int
ws_send_json(struct ws *w, json_object *msg)
{
	size_t		 n;
	const char	*s = json_object_to_json_string_length(msg,
			    JSON_C_TO_STRING_PLAIN |
			    JSON_C_TO_STRING_NOSLASHESCAPE, &n);

	return ws_send(w, s, n);
}

void
ws_close(struct ws *w, int code, const char *reason)
{
	if (w->told)
		return;
	(void)wslay_event_queue_close(w->ctx, (uint16_t)code,
	    (const uint8_t *)reason, reason != NULL ? strlen(reason) : 0);
	(void)wslay_event_send(w->ctx);
	ws_deadline(w);
}

void
ws_free(struct ws *w)
{
	if (w == NULL)
		return;
	if (w->deadline != NULL)
		event_free(w->deadline);
	wslay_event_context_free(w->ctx);
	bufferevent_free(w->bev);
	free(w);
}
