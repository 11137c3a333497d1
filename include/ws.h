/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_WS_H
#define CMDGATE_WS_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * WebSocket (RFC 6455) over a libevent bufferevent: the frames are
 * wslay's, the handshake's digest and base64 nettle's.  The opening
 * handshake (an HTTP upgrade) is the caller's; from then on, whole
 * messages in and out, pings answered, a close answered and told once.
 */

struct bufferevent;
struct ws;

#define WS_KEY_LEN	24	/* Sec-WebSocket-Key: 16 bytes in base64 */
#define WS_ACCEPT_LEN	28	/* Sec-WebSocket-Accept: 20 in base64 */

/* Close codes cmdgate sends or tells. */
#define WS_NORMAL	1000
#define WS_GOING_AWAY	1001
#define WS_UNSUPPORTED	1003
#define WS_NO_STATUS	1005	/* told: the peer's close had no code */
#define WS_ABNORMAL	1006	/* told: the connection was lost */
#define WS_BAD_DATA	1007
#define WS_TOO_BIG	1009

struct ws_cbs {
	/* A whole text or binary message (borrowed until the return). */
	void	(*message)(void *arg, const char *buf, size_t len);
	/* The connection is over, with the peer's close code (or
	 * WS_ABNORMAL: lost); the last call about it.  Free it then. */
	void	(*closed)(void *arg, int code);
};

/* Sec-WebSocket-Accept for a Sec-WebSocket-Key. */
void		 ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1]);
/* A fresh Sec-WebSocket-Key. */
void		 ws_new_key(char out[WS_KEY_LEN + 1]);
/*
 * Frames over bev (taken: freed with the ws), its handshake done, as the
 * server or (client) the client; a message over max bytes closes with
 * WS_TOO_BIG.  What bev had read past the handshake is read first.
 */
struct ws	*ws_new(struct bufferevent *bev, int client, size_t max,
		    const struct ws_cbs *cbs, void *arg);
/* Send a text message: 0, or -1 once the connection closes. */
int		 ws_send(struct ws *, const char *buf, size_t len);
/* The same with msg as compact JSON. */
int		 ws_send_json(struct ws *, json_object *msg);
/* Close with code (and reason): closed() comes once the peer answered,
 * or the connection went. */
void		 ws_close(struct ws *, int code, const char *reason);
void		 ws_free(struct ws *);

#endif
