/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CONN_H
#define CMDGATE_CONN_H

#include <sys/queue.h>

#include <stdint.h>

#include <json-c/json.h>

#include "face.h"
#include "frame.h"
#include "holds.h"
#include "rpc.h"

/*
 * One client connection.  The listener owns the socket side; conn.c owns
 * what is said on it; the server owns the table of connections
 * (server_conn_new/free).  Unit tests make connections with no socket and
 * read what was sent from conn->out.
 */

struct server;
struct options;
struct bufferevent;
struct evbuffer;
struct event;
struct event_base;

#define CONN_NAME_MAX	64	/* characters of a client name */
#define CONN_OUT_HIGH	(1024 * 1024)	/* stop reading a client above */
#define CONN_OUT_LOW	(256 * 1024)	/* and read again below */
#define CONN_OUT_MAX	(64 * 1024 * 1024)	/* drop a client above */
#define CONN_FAIL_FLUSH_S	5	/* to read a last error, or dropped */
#define CONN_BATCH_STEP	8	/* batch requests answered per loop turn */
#define CONN_LOG_DEFAULT 3	/* "warning" in mcplog.c's order of levels */

/*
 * What a listener face does with its connections (cmdgated(8), Listener
 * faces), indexed by enum face.  conn.c keeps the socket side, limits,
 * timeouts and framing for every face; FACE_CMDGATE's entry is all NULL:
 * conn.c's own JSON-RPC.  The table is the faces' (src/faces/faces.c),
 * a table of pointers like rpc_methods[], so that the transport and the
 * methods below the faces include none of them.
 */
struct face_ops {
	/* Just accepted (a greeting, the peer check); NULL: nothing. */
	void	(*accept)(struct conn *);
	/* One framed message, buf[len] NUL; NULL: not served, closed. */
	void	(*message)(struct conn *, const char *buf, size_t len);
	/* A last error before closing; NULL: a JSON-RPC error. */
	void	(*fail)(struct conn *, int code, const char *type,
		    const char *reason);
	/* The connection goes: drop conn->face_state; NULL: none. */
	void	(*closed)(struct conn *);
	/* Who hears cmdgate's JSON-RPC notifications: FACE_NOTES_*. */
	int	  notes;
	/* What server_status says of the face (a new reference, or NULL
	 * for JSON null); NULL: nothing. */
	json_object	*(*status)(const struct server *);
};
#define FACE_NOTES_NONE		0
#define FACE_NOTES_ALL		1
/* Only clients that named themselves: a one-shot client (uLoopMCP's
 * CLI) takes the first frame it reads as its answer, whatever its id. */
#define FACE_NOTES_NAMED	2
extern const struct face_ops	face_ops[FACE_COUNT];

/*
 * A request whose answer waits (wait_job, a sync batch_execute,
 * tools/call).  It belongs to its connection; when the connection closes
 * first, cancel(arg) is called (unless NULL) and the owner forgets it.
 */
struct conn_pending {
	TAILQ_ENTRY(conn_pending)	 entry;
	struct conn			*conn;
	json_object			*id;
	char				*method;
	int				 notification;
	struct conn_batch		*batch;
	void				(*cancel)(void *);
	void				*arg;
};
TAILQ_HEAD(conn_pendings, conn_pending);
TAILQ_HEAD(connlist, conn);

/*
 * What every connection shares with the others.  The server holds one and
 * gives it to each connection it makes; conn.c knows no more of it.
 */
struct conn_shared {
	struct event_base	*base;		/* NULL in unit tests */
	const struct options	*opt;
	struct connlist		 flushq;	/* connections with output */
	struct event		*flusher;	/* writes what flushq holds */
	struct event		*reaper;	/* frees dead connections */
	int			 hold_output;	/* --sync group: sync due */
	size_t			 npending;	/* every conn's npending */
	size_t			 inbuf_total;	/* every conn's inbuf */
};

struct conn {
	TAILQ_ENTRY(conn)	 entry;
	TAILQ_ENTRY(conn)	 flush_entry;	/* on sh->flushq */
	LIST_ENTRY(conn)	 byid;		/* srv->byid, by id */
	struct server		*srv;		/* the owner, for the methods */
	struct conn_shared	*sh;
	struct bufferevent	*bev;		/* NULL in unit tests */
	struct evbuffer		*out;		/* answers are framed here */
	struct evbuffer		*sock;		/* bev's output; NULL in tests */
	int			 flush_queued;
	struct framer		 fr;
	uint64_t		 id;
	enum face		 face;		/* what its listener speaks */
	void			*face_state;	/* the face's own, or NULL */
	size_t			 face_waits;	/* the face's calls due */
	int			 is_unix;
	int			 needs_token;	/* TCP with a token set */
	int			 authenticated;
	int			 strikes;	/* wrong tokens so far */
	int			 closing;	/* close once out is flushed */
	int			 eof;		/* half-closed by the client */
	int			 dead;		/* to be freed by the reaper */
	int			 throttled;	/* reading paused: out is full */
	int			 holds;		/* answers due before reading */
	void			(*resume)(struct conn *); /* read again */
	char			*name;		/* client name or NULL */
	struct editor_flags	 editor;
	char			 peer[80];
	struct conn_pendings	 pending;	/* answers that wait */
	size_t			 npending;	/* entries of pending */
	struct conn_batch	*batch;		/* a batch being answered */
	struct event		*timer;		/* auth and idle deadlines */
	int64_t			 since_ms;	/* connected (monotonic) */
	int64_t			 active_ms;	/* last request or answer */
	int			 session;	/* an MCP session: never idle */
	int			 status_sub;	/* subscribe_status asked */
	int			 log_level;	/* MCP logging/setLevel (mcplog.h) */
	size_t			 inbuf;		/* unread input, as counted in
						   sh->inbuf_total */
	struct evbuffer		*held;		/* answers held for a sync */
	/*
	 * A connection with no socket whose messages a transport routes
	 * (the HTTP endpoint, http.c): conn_send_rel writes each message to
	 * out (or held) as one record "REL\tMSG\n", REL the related
	 * request's id serialized or "-", and drain(c) takes them at the end
	 * of the loop turn; an empty MSG says that request was dropped with
	 * no answer (conn_drop).  NULL: framed for the socket.
	 */
	void			(*drain)(struct conn *);
	void			*drain_arg;
};

/*
 * A new connection sharing sh; out: NULL to use bev's output.  The server
 * gives it its id and owner (server_conn_new).  Caller frees.
 */
struct conn	*conn_new(struct conn_shared *, struct bufferevent *,
		    struct evbuffer *out, int is_unix, const char *peer);
/* Cancel what c waits for and free it (server_conn_free unlinks it). */
void		 conn_free(struct conn *);
/* Cut messages out of in and answer them. */
void		 conn_input(struct conn *, struct evbuffer *in);
/*
 * Handle one framed message from c (JSON-RPC 2.0: a request or a batch;
 * on a face's listener, the face's); buf[len] must be NUL.  Answers go out
 * through conn_send.
 */
void		 conn_message(struct conn *c, const char *buf, size_t len);
/*
 * Keep req for a later answer: the handler returns RPC_DEFERRED and the
 * owner later calls conn_complete() exactly once, or is told by cancel().
 */
struct conn_pending *conn_defer(struct rpc_req *, void (*cancel)(void *),
		    void *arg);
/* Read no further request until as many conn_unhold(): an answer is due
 * first (a submit's, once stored).  The last one reads what came meanwhile. */
void		 conn_hold(struct conn *);
void		 conn_unhold(struct conn *);
/* c's deferred request of id (borrowed) and method, or NULL. */
struct conn_pending *conn_pending_find(struct conn *c, json_object *id,
		    const char *method);
/* Forget a deferred request unanswered (MCP notifications/cancelled: the
 * client wants no answer); its owner has let go of it. */
void		 conn_drop(struct conn_pending *);
/* Answer a deferred request (result taken, or err) and free it. */
void		 conn_complete(struct conn_pending *, json_object *result,
		    struct rpc_error *err);
/*
 * Frame (in the connection's framing) and queue one message; msg
 * borrowed.  What is queued in a loop
 * turn goes out at the end of the turn (listener_flush), in one write.
 */
void		 conn_send(struct conn *, json_object *msg);
/*
 * The same, for a message related to the request of id rel (borrowed;
 * NULL: none): a progress or log notification of a tools/call.  Only a
 * routing transport (drain) uses rel; others frame msg as conn_send.
 */
void		 conn_send_rel(struct conn *, json_object *msg,
		    json_object *rel);
/* The same for a message already serialized: buf[len], borrowed. */
void		 conn_send_raw(struct conn *, const char *buf, size_t len);
/* Bytes answered but not yet taken by the socket. */
size_t		 conn_unsent(const struct conn *);
/* Send what conn_send held back while a sync was due. */
void		 conn_release(struct conn *);
/* Take c off sh->flushq and hand its output to the socket. */
void		 conn_flush(struct conn *);
/*
 * Answer with one last error (framing, limits, timeouts) and close after
 * it is flushed, or after CONN_FAIL_FLUSH_S if the client does not read.
 */
void		 conn_fail(struct conn *, int code, const char *type,
		    const char *reason);
/* Drop the connection without flushing (the reaper frees it). */
void		 conn_kill(struct conn *);
/* Whether the client must authenticate before other methods. */
int		 conn_needs_auth(const struct conn *);
/* Whether c hears notifications it did not ask for (face_ops notes). */
int		 conn_hears(const struct conn *);
/*
 * Whether c is not idle however long it says nothing: it waits for an
 * answer (a face's too), holds editor flags, or is an MCP session.
 */
int		 conn_busy(const struct conn *);

#endif
