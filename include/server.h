/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_SERVER_H
#define CMDGATE_SERVER_H

/*
 * The broker's listeners and its state (src/server/).
 */

#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "net.h"
#include "options.h"
#include "policy.h"

struct authlimit;
struct bufferevent;
struct conn;
struct evbuffer;
struct evconnlistener;
struct event;
struct event_base;
struct evhttp;
struct evhttp_bound_socket;
struct evhttp_request;
struct http;
struct http_conn;
struct http_sess;
struct jobs;
struct listener;
struct edprobe;
struct hub;
struct links;
struct passthru;
struct server;
struct tooltab;

/* authlimit.c */

/*
 * Wrong tokens counted per peer address, so that guessing the token costs
 * time whatever the number of connections.  After AUTHLIMIT_FREE wrong
 * tokens from one address, every authentication from it is refused for
 * 1 s, doubling with each further wrong token up to AUTHLIMIT_LOCK_MAX_S.
 * An address with no wrong token for AUTHLIMIT_FORGET_S is forgotten.
 * Loopback addresses (127/8, ::1) are one address, IPv6 ones count by
 * /64, so that a client cannot escape by changing its source address.
 * The table holds AUTHLIMIT_PEERS addresses; when it is full the one
 * least recently wrong is forgotten.  Each lockout is logged once.
 */

#define AUTHLIMIT_PEERS		256
#define AUTHLIMIT_FREE		3
#define AUTHLIMIT_LOCK_MAX_S	60
#define AUTHLIMIT_FORGET_S	600

/* An empty table.  Free with authlimit_free(). */
struct authlimit	*authlimit_new(void);
void			 authlimit_free(struct authlimit *);
/*
 * Seconds left of the lockout of peer ("ADDR:PORT" or "[V6ADDR]:PORT")
 * at now_ms (monotonic), or 0 when it may try; a refused try is counted
 * for the next log line.
 */
int64_t			 authlimit_locked(struct authlimit *, const char *peer,
			    int64_t now_ms);
/* A wrong token from peer: the seconds of the lockout it starts, or 0. */
int64_t			 authlimit_failed(struct authlimit *, const char *peer,
			    int64_t now_ms);

/* http.c */

/*
 * MCP over Streamable HTTP (cmdgated(8), MCP over HTTP): --http's
 * endpoint, http://ADDR:PORT/mcp, on the broker's loop.  Its sessions are
 * connections of the server's table (httpsess.c).
 */

/*
 * Answer req with status and a JSON-RPC error (id null, data.type type,
 * reason for a person): MCP over HTTP's refusals (cmdgated(8)).
 */
void	http_error_reply(struct evhttp_request *, int status, int code,
		    const char *type, const char *reason);
/* Answer req with status and the JSON msg (borrowed). */
void	http_json_reply(struct evhttp_request *, int status,
		    json_object *msg);

/* Bind --http, if given: 0, or -1 with err. */
int	http_open(struct server *, char *err, size_t errlen);
/* Stop accepting, end every stream and session. */
void	http_shutdown(struct server *);
/* The same, then free the endpoint (before the loop is freed). */
void	http_free(struct server *);

/* httpmodern.c */

/*
 * MCP 2026-07-28 over HTTP (cmdgate-protocol(7)): whether a POST's
 * message msg is of that revision (its MCP-Protocol-Version or its
 * params._meta say so); whether its headers agree with it (0), else -1
 * with req answered 400 (-32020, -32022 or -32602); and the HTTP status
 * of its one JSON answer (404 for -32601, 400 for -32020 to -32022).
 */
int	httpmodern_is(struct evhttp_request *, json_object *msg);
int	httpmodern_check(struct evhttp_request *, json_object *msg);
int	httpmodern_status(const char *answer);

/* httpconn.c */

/*
 * The connections of MCP over HTTP (cmdgated(8), MCP over HTTP): at most
 * 2 x --max-clients + 16 open; one more is closed before it is read.
 * One that no request of has passed the checks (Host, Origin, token)
 * --auth-timeout after its accept is closed.  The bytes of requests not
 * yet read whole count against --max-partial, in the server's total of
 * unfinished input; past it, the connection holding the most is closed.
 */

/* The bound and the refusing event of h. */
void			 httpconn_init(struct http *);
/* evhttp_set_bevcb's: a new connection's bufferevent, counted. */
struct bufferevent	*httpconn_new(struct event_base *, void *http);
/*
 * req was read whole: its connection's bytes held against --max-partial
 * are now only those of the next request.  The connection, or NULL (not
 * one of h's).
 */
struct http_conn	*httpconn_request(struct http *,
			    struct evhttp_request *);
/* A request of c passed the checks: no --auth-timeout for c (c: or NULL). */
void			 httpconn_let_in(struct http_conn *);
/* After evhttp_free: release what is held. */
void			 httpconn_free(struct http *);

/* httpsess.c */

/*
 * The sessions of MCP over Streamable HTTP (cmdgated(8), MCP over HTTP):
 * each holds one routed connection (conn.h, drain) in the server's table,
 * so that its jobs, waits and notifications work as on TCP, and the event
 * streams its messages go out on.  http.c reads the requests and checks
 * them; this file routes what the connection says to the stream of the
 * request it relates to.
 */

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
#define HTTP_S_VERSION		505	/* HTTP Version Not Supported */

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
	int			 oneshot;	/* one 2026-07-28 request's:
						   gone with its answer */
	struct event		*reap;		/* oneshot: free it, soon */
	int			 reap_force;	/* whatever holds it */
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
	int			 nodelay;	/* TCP_NODELAY set */
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

/* listener.c */

/*
 * TCP and Unix-socket listeners and the socket side of each connection
 * (libevent bufferevents).  What is said on a connection is conn.c's.
 */

/* Bind every --listen address and --socket: 0, or -1 with err. */
int	listener_open(struct server *, char *err, size_t errlen);
/* Stop accepting and remove the Unix socket. */
void	listener_close(struct server *);
/*
 * Begin an orderly stop: tell every client, close each once its output is
 * flushed, and leave the loop when none is left.
 */
void	listener_shutdown(struct server *);
/* Free the listeners and every connection. */
void	listener_free(struct server *);

/* passthru.c */

/* A passed-on connection's end: its owner forgets it (it is freed). */
typedef void	(*passthru_fn)(void *arg);
/*
 * Pass client (taken, its unread bytes first) on to the server at to
 * (HOST:PORT) until either side closes, then done(arg).  A server that
 * cannot be reached gets the client a 502 Bad Gateway saying so.
 */
struct passthru	*passthru_new(struct event_base *, struct bufferevent *client,
		    const char *to, passthru_fn done, void *arg);
/* At the broker's stop: both sides closed, done() not called. */
void		 passthru_free(struct passthru *);

/* server.c */

/*
 * The broker's state, shared by the listener, the RPC methods and the
 * signal handlers.  There is one per process; tests make their own.
 */

LIST_HEAD(connhash, conn);

struct server {
	struct event_base	*base;
	struct options		*opt;
	struct tooltab		*tools;
	char			*token;		/* NULL: no auth for TCP */
	size_t			 tokenlen;
	int64_t			 started_ms;	/* monotonic */
	struct conn_shared	 cs;		/* what every conn shares */
	struct connlist		 conns;
	unsigned		 nconns;
	struct connhash		*byid;		/* by id & (nbuckets - 1) */
	size_t			 nbuckets;	/* a power of 2, >= nconns */
	uint64_t		 next_conn_id;
	json_object		*listen_addrs;	/* array of strings */
	struct listener		*listener;
	struct http		*http;		/* MCP over HTTP, or NULL */
	char			*worker_path;
	char			*store_path;
	int			 stopping;
	struct jobs		*jobs;		/* NULL until the store opens */
	struct authlimit	*authlimit;	/* wrong tokens per address */
	struct edflags		 holds;		/* every conn's editor flags */
	struct edprobe		*probe;		/* the editor probe (edprobe.c) */
	struct links		*links;		/* the editor links (src/link) */
	struct hub		*hub;		/* the unity-hub face's, or NULL */
	char			*lock_dir;	/* the state dir, absolute */
	size_t			 nstatus_subs;	/* conns with status_sub */
	struct event		*status_ev;	/* notifications/status due */
};

void		 server_init(struct server *, struct event_base *,
		    struct options *, struct tooltab *);
void		 server_free(struct server *);
/* Read and check the token file (token_read, strict): 0, or -1 with err. */
int		 server_load_token(struct server *, const char *path,
		    char *err, size_t errlen);
/* Constant-time check of a presented token. */
int		 server_token_ok(const struct server *, const char *, size_t);
/* c reports the editor flags f: count them, and reschedule if they changed. */
void		 server_set_editor(struct server *, struct conn *c,
		    const struct editor_flags *f);
/*
 * What list_clients, queue_status or list_jobs answer changed: the
 * subscribers (subscribe_status) hear notifications/status within
 * SERVER_STATUS_MS, one for many changes.
 */
#define SERVER_STATUS_MS	250
void		 server_status_changed(struct server *);
/* Before the loop is freed: no more notifications/status. */
void		 server_status_free(struct server *);
/* An editor flag or a connection holding one changed: reschedule. */
void		 server_busy_changed(struct server *);
/*
 * A new connection (conn_new), given the next id and entered in the
 * table.  out: NULL to use bev's output.  Free with server_conn_free.
 */
struct conn	*server_conn_new(struct server *, struct bufferevent *,
		    struct evbuffer *out, int is_unix, const char *peer);
/* Take c out of the table, drop its editor flags and free it. */
void		 server_conn_free(struct server *, struct conn *c);
/* The connection of id, closing or not, or NULL. */
struct conn	*server_conn_find(const struct server *, uint64_t id);
/* Open the engine (jobs_open) with the server's hooks, and the editor
 * probe the table names: 0, or an exit status. */
int		 server_jobs_open(struct server *);
/* Stopping: the editor probe stops too (SIGTERM, then SIGKILL). */
void		 server_probe_stop(struct server *);
/* Before the loop is freed: the editor probe goes (SIGKILL if alive). */
void		 server_probe_free(struct server *);
/* Stopping, and no client nor worker is left: leave the loop. */
void		 server_may_exit(struct server *);
/* The shutdown deadline: drop every client and leave the loop now. */
void		 server_stop_now(struct server *);
/*
 * Send msg (borrowed) to every connection past authentication whose face
 * hears cmdgate's notifications.
 */
void		 server_broadcast(struct server *, json_object *msg);
/* Replace the tool table, telling clients when it changed; tab taken. */
void		 server_set_tools(struct server *, struct tooltab *tab);
/* Reread the --tools file (SIGHUP): 0, or -1 with the old table kept. */
int		 server_reload_tools(struct server *);

#endif
