/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_WSHEAD_H
#define CMDGATE_WSHEAD_H

#include <stddef.h>

#include "ws.h"

/*
 * The WebSocket opening handshake's HTTP/1.1 heads (RFC 6455, 4): a
 * request head read and judged on the server's side, the 101 written;
 * the client's request written and the server's answer checked.  Only
 * the head: what follows it is the caller's (frames, or bytes passed on
 * untouched).  libevent 2.1's evhttp cannot hand an upgraded connection
 * over, so the unity-hub listener reads the head itself (cmdgated(8),
 * The unity-hub face).
 */

#define WSHEAD_MAX	8192	/* a head, its blank line included */

struct wshead {
	char	method[16];
	char	target[1024];
	int	upgrade;		/* Upgrade: websocket, Connection:
					   upgrade */
	int	version;		/* Sec-WebSocket-Version; 0: none */
	char	key[WS_KEY_LEN + 1];	/* a valid Sec-WebSocket-Key, or "" */
	char	api_key[256];		/* X-API-Key, or "" */
};

/*
 * The length of the head at buf[0..len) with its blank line, 0 when it
 * is not whole yet, -1 when WSHEAD_MAX bytes hold no end of head.  The
 * bytes before *seen were looked at by an earlier call and held no end:
 * the search goes on from there (a head that comes a byte at a time is
 * read once, not once a byte), and *seen is moved on when it answers 0.
 * Start with *seen 0.
 */
long	 wshead_length(const char *buf, size_t len, size_t *seen);
/* A request head (n bytes): 0 and *h, or -1 when it is not an HTTP/1.1
 * request head. */
int	 wshead_request(const char *buf, size_t n, struct wshead *h);
/*
 * Whether h is a WebSocket upgrade (a GET with Upgrade: websocket,
 * Connection: upgrade and a valid key): 0, or the HTTP status to refuse
 * it with (400 a bad upgrade, 426 another version than 13).  Its target
 * is the caller's to judge.
 */
int	 wshead_upgrade_status(const struct wshead *h);
/* The 101 answering key (caller frees). */
char	*wshead_accept(const char *key);
/* A refusal: status, its reason, Connection: close (caller frees). */
char	*wshead_refuse(int status);
/*
 * The client's upgrade of GET path on host (HOST:PORT), with api_key
 * (NULL: none) as X-API-Key; its fresh key into key (caller frees).
 */
char	*wshead_connect(const char *host, const char *path,
	    const char *api_key, char key[WS_KEY_LEN + 1]);
/* A server's answer head (n bytes) to key: 0, or -1 with err. */
int	 wshead_answered(const char *buf, size_t n, const char *key,
	    char *err, size_t errlen);

#endif
