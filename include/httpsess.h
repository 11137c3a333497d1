/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_HTTPSESS_H
#define CMDGATE_HTTPSESS_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/*
 * The sessions of MCP over Streamable HTTP (cmdgated(8), MCP over HTTP):
 * each holds one routed connection (conn.h, drain) in the server's table,
 * so that its jobs, waits and notifications work as on TCP, and the event
 * streams its messages go out on.  http.c reads the requests and checks
 * them; this file routes what the connection says to the stream of the
 * request it relates to.
 */

struct evhttp;
struct evhttp_bound_socket;
struct evhttp_request;
struct evconnlistener;
struct evbuffer;
struct bufferevent;
struct event;
struct server;

#define HTTP_SID_BYTES	16		/* of a session id: 128 bits */
#define HTTP_RING_EVENTS 256		/* events a stream keeps to replay */
#define HTTP_RING_BYTES	(1024 * 1024)	/* and their bytes */
#define HTTP_LINGER_MS	60000		/* an ended stream kept to replay */
#define HTTP_RETRY_MS	500		/* the "retry:" of a priming event */
#define HTTP_SWEEP_MS	1000		/* idle sessions and old streams */
#define HTTP_WRITE_S	60		/* a stream's client must read */
#define HTTP_UNREAD_MAX	(2 * HTTP_RING_BYTES) /* unread: a replay, as much more */

/* Statuses event2/http.h does not name. */
#define HTTP_S_FORBIDDEN	403
#define HTTP_S_NOT_ACCEPTABLE	406
#define HTTP_S_CONFLICT		409
#define HTTP_S_UNSUPPORTED	415

/* One event of a stream, kept until the ring overflows or it goes. */
struct http_ev {
	TAILQ_ENTRY(http_ev)	 entry;
	uint64_t		 seq;
	size_t			 len;
	char			*data;		/* the message, JSON */
};
TAILQ_HEAD(http_evs, http_ev);

/*
 * A stream of events: a POST's (num > 0), which ends after its answer, or
 * the session's standalone one (num 0, a GET's), which never ends.  Event
 * ids are "NUM-SEQ".
 */
struct http_stream {
	TAILQ_ENTRY(http_stream) entry;
	struct http_sess	*s;
	uint64_t		 num;
	uint64_t		 seq;		/* the last event's */
	uint64_t		 sent;		/* the last one req was sent */
	struct http_evs		 evs;		/* the ring */
	size_t			 nevs, bytes;
	struct evhttp_request	*req;		/* attached, or NULL */
	int			 sse;		/* req answered as events */
	json_object		*keys;		/* its requests' ids, as text */
	char			*body;		/* to run; NULL once run */
	size_t			 bodylen;
	int			 due;		/* its answer is still due */
	int64_t			 ended_ms;	/* when it was; 0: not yet */
	struct event		*poll;		/* --http-poll closes it */
	int			 cut;		/* closed: its client did not read */
};
TAILQ_HEAD(http_streams, http_stream);

struct http_sess {
	TAILQ_ENTRY(http_sess)	 entry;
	struct http		*h;
	char			 id[2 * HTTP_SID_BYTES + 1];
	uint64_t		 conn_id;
	struct evbuffer		*out;		/* the connection's records */
	struct http_streams	 streams;	/* the POSTs' */
	struct http_stream	*get;		/* the standalone stream */
	struct http_stream	*cur;		/* whose body runs */
	uint64_t		 next_num;
	int64_t			 active_ms;
	int			 running;
	int			 fresh;		/* its initialize not answered */
};
TAILQ_HEAD(http_sesslist, http_sess);

/*
 * An accepted connection: its bufferevent, made by http.c and held (a
 * reference) until evhttp has freed it, so that open ones are counted.
 */
struct http_conn {
	struct http		*h;
	struct bufferevent	*bev;
	struct event		*deadline;	/* --auth-timeout from accept */
	size_t			 held;		/* of a request not read whole */
	int			 let_in;	/* a request passed the checks */
	int			 refuse;	/* over the bound: to close */
	int			 shed;		/* past --max-partial: to close */
};

/* The endpoint: one evhttp on the broker's loop. */
struct http {
	struct server		*srv;
	struct evhttp		*eh;
	struct evhttp_bound_socket *sock;
	struct evconnlistener	*lev;		/* sock's */
	struct event		*retry;		/* accepts again */
	struct event		*sweep;
	struct event		*refuse;	/* closes refused connections */
	struct event		*reaper;	/* forgets closed connections */
	struct http_conn	**conns;
	size_t			 nconns, connsize;
	size_t			 held;		/* theirs, in all */
	size_t			 maxconns;	/* 2 * --max-clients + 16 */
	int			 full;		/* maxconns reached, logged */
	struct http_sesslist	 sessions;
	size_t			 nsessions;
	char			 host[64];	/* the bound address */
};

/* A new session for a client at peer, or NULL (no randomness). */
struct http_sess	*httpsess_new(struct http *, const char *peer);
/* The live session of id, or NULL (unknown, or its connection went). */
struct http_sess	*httpsess_find(struct http *, const char *id);
/* End its streams, drop its connection (its waits are cancelled). */
void			 httpsess_free(struct http_sess *);
/*
 * A POST holding requests: keys are their ids as JSON text (taken),
 * body[len] the message (taken, NUL-terminated).  It runs when the
 * connection reads again; req is answered with JSON or events.
 */
void			 httpsess_post(struct http_sess *,
			    struct evhttp_request *, json_object *keys,
			    char *body, size_t len);
/* Run a message of notifications only, body[len] NUL-terminated. */
void			 httpsess_notify(struct http_sess *, const char *body,
			    size_t len);
/*
 * A GET: the standalone stream, or the stream last (a Last-Event-ID,
 * or NULL) names, replayed after it.  0, or 409 when the standalone
 * stream is taken.
 */
int			 httpsess_get(struct http_sess *,
			    struct evhttp_request *, const char *last);
/* The reply headers of the session (Mcp-Session-Id). */
void			 httpsess_headers(struct http_sess *,
			    struct evhttp_request *);
/* Arm the sweep of idle sessions and old streams. */
void			 httpsess_sweep_start(struct http *);

#endif
