/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLI_BRIDGEC_H
#define CMDGATE_CLI_BRIDGEC_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "client.h"

/*
 * cmdgate mcp's connection to the broker, and its way back when it is
 * lost: tries with the backoff of client.h, each made by libevent
 * without blocking; over TCP with a token, a ping first (the probe), then
 * the listener's owner checked (cg_peer_check), then the authentication,
 * each one request among the others.
 */

/* A connection up this long resets the backoff to its first delay. */
#define BRIDGEC_STABLE_MS	CG_RETRY_MAX_MS
/* Past this much unread by the broker, nothing more is taken for it. */
#define BRIDGEC_OUT_MAX		(16 * 1024 * 1024)

struct bridgec_cb {
	void	(*up)(void *arg);		/* connected, authenticated */
	void	(*line)(void *arg, const char *line, size_t len);
	/*
	 * The connection that was up is lost (what: libevent's flags);
	 * rest is what it sent last, not a line.  Return 1 to get back.
	 */
	int	(*lost)(void *arg, short what, struct evbuffer *rest);
	void	(*full)(void *arg, int full);	/* past OUT_MAX, or not */
};

enum bridgec_state { BRIDGEC_DOWN, BRIDGEC_DIAL, BRIDGEC_PROBE, BRIDGEC_AUTH,
	BRIDGEC_UP };

struct bridgec {
	struct event_base	*base;
	const struct cg_target	*t;
	const char		*own;		/* the prefix of its ids */
	const struct bridgec_cb	*cb;
	void			*arg;
	struct bufferevent	*sock;		/* NULL when down */
	struct event		*retry, *deadline;
	enum bridgec_state	 state;
	int			 finish;	/* half-close once flushed */
	int			 paused;	/* read nothing once up */
	int			 full;		/* past OUT_MAX unread */
	size_t			 scanned;	/* read with no newline in it */
	int64_t			 up_at;
	int64_t			 delay;		/* before the next try */
	unsigned		 attempt;
	char			*auth;		/* sent after the probe; wiped */
	uid_t			 owner;		/* of the token file */
	char			 said[512];	/* why tries fail, said once */
};

/* 0, or -1.  own (the prefix of the ids it sends) is borrowed. */
int	 bridgec_init(struct bridgec *, struct event_base *,
	    const struct cg_target *, const char *own,
	    const struct bridgec_cb *, void *arg);
/* Take the connection c made (authenticated), up: 0, or -1. */
int	 bridgec_attach(struct bridgec *, struct cg_client *c);
int	 bridgec_is_up(const struct bridgec *);
/* line (n bytes) and a newline to the broker; nothing unless up. */
void	 bridgec_send(struct bridgec *, const char *line, size_t n);
/*
 * The client is done: when up, half-close once all is sent (1); else
 * stop trying (0).
 */
int	 bridgec_finish(struct bridgec *);
/* Read nothing more from the broker (1), or read again (0). */
void	 bridgec_pause(struct bridgec *, int paused);
/* Whether a connection is open (up, or a try under way). */
int	 bridgec_open(const struct bridgec *);
void	 bridgec_free(struct bridgec *);

#endif
