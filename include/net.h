/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_NET_H
#define CMDGATE_NET_H

/*
 * One connection and what is on its wire (src/net/).
 */

#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "face.h"
#include "policy.h"

struct bufferevent;
struct conn;
struct conn_batch;
struct evbuffer;
struct event;
struct event_base;
struct options;
struct server;

/* frame.c */

/*
 * Message framing of cmdgate-protocol(7), Framing.  A framer is fed the input
 * buffer of one connection and cuts whole messages out of it: JSON lines,
 * or LSP-style Content-Length frames when the connection's first bytes say
 * so, or the 8-byte frames of MCP for Unity's bridge when its face says so.
 * It never reads the socket itself, so it can be tested on buffers.
 */

enum frame_mode {
	FRAME_UNKNOWN,		/* nothing decided yet */
	FRAME_LINE,		/* one JSON message per line */
	FRAME_LSP,		/* Content-Length headers, then the body */
	FRAME_UNITY,		/* 8-byte big-endian length, then the body */
};

enum frame_status {
	FRAME_MSG,		/* *msg holds one message */
	FRAME_MORE,		/* need more input */
	FRAME_TOO_LARGE,	/* a message passes the limit: close */
	FRAME_BAD_HEADER,	/* bad Content-Length header, or a unity
				   frame of length 0: close */
};

#define FRAME_LSP_HEADER_MAX	8192	/* bytes of headers per message */
#define FRAME_UNITY_HEADER	8	/* bytes of a unity frame's length */
#define FRAME_UNITY_MAX		(64 * 1024 * 1024)	/* the bridge's limit */

struct framer {
	enum frame_mode	 mode;
	size_t		 max;		/* largest message, bytes */
	size_t		 scanned;	/* input bytes known to hold no '\n' */
	size_t		 header_bytes;	/* LSP: header bytes of this frame */
	long long	 body_len;	/* LSP: -1 until Content-Length seen */
	int		 in_body;	/* LSP: headers done, reading body */
};

void			 frame_init(struct framer *, size_t max);
/* Speak MCP for Unity's frames from now on, up to max bytes a message. */
void			 frame_init_unity(struct framer *, size_t max);
/*
 * Take the next message out of in.  On FRAME_MSG *msg is a NUL-terminated
 * copy of the message without its framing (caller frees) and *len its
 * length.  Blank lines are skipped.
 */
enum frame_status	 frame_next(struct framer *, struct evbuffer *in,
			    char **msg, size_t *len);
/* Append one framed message to out in the connection's framing. */
int			 frame_write(const struct framer *, struct evbuffer *out,
			    const char *msg, size_t len);

/* rpc.c */

/*
 * JSON-RPC 2.0 of cmdgate-protocol(7), Framing and Errors: the envelope
 * of requests, answers, errors and notifications.  conn.c runs requests
 * through rpc_methods[], the table of handlers, defined in methods.c (a
 * table of pointers, so that the transport includes no handler).
 */

enum rpc_code {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL_ERROR = -32603,
	RPC_SECURITY_BLOCKED = -32001,
	RPC_UNKNOWN_TICKET = -32002,
	RPC_QUEUE_FULL = -32003,
	RPC_STORAGE_ERROR = -32004,
	RPC_UNAUTHORIZED = -32005,
	RPC_HELD = -32006,	/* a face's call: its job still waits */
	/* MCP 2026-07-28 */
	RPC_HEADER_MISMATCH = -32020,
	RPC_MISSING_CAPABILITY = -32021,
	RPC_UNSUPPORTED_VERSION = -32022,
};

#define RPC_REASON_MAX	512

struct rpc_error {
	int		 code;
	const char	*type;		/* data.type */
	char		*command;	/* data.command; NULL = the method */
	char		 reason[RPC_REASON_MAX];
	json_object	*data;		/* more members of data, or NULL;
					   the answer takes it */
};

/* What a method returns. */
enum rpc_status {
	RPC_OK,		/* *result set (may be NULL: answered with {}) */
	RPC_ERROR,	/* err filled in */
	RPC_DEFERRED,	/* conn_defer() was called: answered later */
};

/* One request while it is being answered. */
struct rpc_req {
	struct conn		*conn;
	json_object		*id;		/* borrowed; NULL with id null */
	int			 notification;	/* no id member: no answer */
	const char		*method;	/* borrowed from the message */
	struct conn_batch	*batch;		/* the batch it came in or NULL */
	int			 modern;	/* MCP 2026-07-28: its _meta
						   said so; its result is
						   stamped (rpc_answer) */
};

typedef enum rpc_status (*rpc_handler)(struct rpc_req *, json_object *params,
    json_object **result, struct rpc_error *);

#define RPC_NOAUTH	0x01	/* may be called before authenticating */
#define RPC_WAITS	0x02	/* may answer later (counts to --max-waits) */
#define RPC_SESSION	0x04	/* once answered, the connection is a session
				   that is never idle */
#define RPC_LEGACY	0x08	/* MCP before 2026-07-28 only: not found to a
				   request of that revision */

struct rpc_method {
	const char	*name;
	rpc_handler	 handler;
	int		 flags;
};

extern const struct rpc_method	rpc_methods[];

/* Fill err; returns RPC_ERROR so handlers can "return rpc_fail(...)". */
enum rpc_status	 rpc_fail(struct rpc_error *err, int code, const char *type,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Error response {"jsonrpc","id","error"}; id borrowed; caller puts. */
json_object	*rpc_error_response(json_object *id, int code,
		    const char *type, const char *command, const char *reason);
/* The same with message and data as given (taken): a face that speaks
 * JSON-RPC with its own data members (uloop). */
json_object	*rpc_error_envelope(json_object *id, int code,
		    json_object *message, json_object *data);
/* A notification {"jsonrpc","method","params"}; params taken; caller puts. */
json_object	*rpc_notification(const char *method, json_object *params);
const char	*rpc_code_message(int code);

/* The method called name, or NULL. */
const struct rpc_method *rpc_lookup(const char *name);
/*
 * Check the envelope of one request.  0 with *id, *method, *notif set
 * (id borrowed, NULL for id null), or -1 with err (-32600); *id is kept
 * when it is a valid one, so that the client can match the error.
 */
int		 rpc_check(json_object *msg, json_object **id,
		    const char **method, int *notif, struct rpc_error *err);
/* Check the params of msg: 0 with *params (borrowed, NULL when absent),
 * or -1 with err. */
int		 rpc_check_params(json_object *msg, json_object **params,
		    struct rpc_error *err);
/*
 * MCP 2026-07-28's per-request envelope (cmdgate-protocol(7), Model
 * Context Protocol): params._meta naming a protocolVersion.  0 when it
 * names none (an older revision, or cmdgate's own protocol), 1 when it
 * is a valid one (2026-07-28, with clientCapabilities), -1 with err:
 * -32022 for another version, -32602 for a malformed envelope.
 */
int		 rpc_mcp_envelope(json_object *params, struct rpc_error *err);
/* The response to req: result (taken) or err (its data taken); NULL for
 * a notification.  A modern request's result gets resultType "complete"
 * when it has none, and the server's name in its _meta.  Caller puts. */
json_object	*rpc_answer(struct rpc_req *req, enum rpc_status,
		    json_object *result, struct rpc_error *err);

/* conn.c */

/*
 * One client connection.  The listener owns the socket side; conn.c owns
 * what is said on it; the server owns the table of connections
 * (server_conn_new/free).  Unit tests make connections with no socket and
 * read what was sent from conn->out.
 */

#define CONN_NAME_MAX	64	/* characters of a client name */
#define CONN_OUT_HIGH	(1024 * 1024)	/* stop reading a client above */
#define CONN_OUT_LOW	(256 * 1024)	/* and read again below */
#define CONN_OUT_MAX	(64 * 1024 * 1024)	/* drop a client above */
#define CONN_FAIL_FLUSH_S	5	/* to read a last error, or dropped */
#define CONN_BATCH_STEP	8	/* batch requests answered per loop turn */
#define CONN_LOG_DEFAULT 3	/* "warning" in mcpwatch.c's order of levels */

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
	/* A face that is no framed struct conn takes each accepted
	 * connection (bev, its peer's address) whole; NULL: conn.c's. */
	void	(*adopt)(struct server *, struct bufferevent *,
		    const char *peer);
	/* At the broker's end: free what the face holds; NULL: nothing. */
	void	(*free)(struct server *);
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
	int				 modern;	/* rpc_req's */
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
	int			 log_level;	/* MCP logging/setLevel (mcpwatch.c) */
	int			 mcp_rev;	/* what initialize agreed
						   (mcpver.h); 0: none */
	json_object		*listen_tools;	/* ids of its MCP listens
						   that hear tools change */
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
/* c's request id (an MCP subscriptions/listen) hears of tool changes
 * (on 1), or no longer (0). */
void		 conn_listen_tools(struct conn *, json_object *id, int on);
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

/* connface.c */

/* The peer check of a connection (peercred.h), for the listener. */

/*
 * c came in on a listener of face f: no token is asked (where one is
 * needed, the peer check lets the client in or it is refused in the
 * face's shape and closed), and its messages go to face_ops[f].
 */
void		 conn_set_face(struct conn *, enum face f);
/*
 * --peer-auth: a client that must authenticate and whose peer on fd the
 * peer check allows (peercred.h) is authenticated at once.
 */
void		 conn_peer_auth(struct conn *, int fd);

/* peercred.c */

/*
 * Who is at the other end of a local connection, as the kernel says
 * (cmdgated(8), Peer credentials): SO_PEERCRED on a Unix socket; on a
 * loopback TCP connection the owner of the peer's socket (peeruid.h).
 * Library-like: nothing here exits or logs.
 */

/*
 * 1: fd's peer is allowed (the broker's own uid, or --allow-user /
 * --allow-group), why says who; 0: not, why says who and why (a TCP peer
 * that is not loopback is never allowed); -1: could not tell, why.
 */
int	peercred_check(const struct options *, int fd, char *why,
	    size_t whylen);

#endif
