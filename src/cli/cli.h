/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLI_H
#define CMDGATE_CLI_H

/*
 * The client's functions, private to src/cli/.
 */

#include <sys/queue.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "jsonl.h"

struct cli;

/* client.c */

/*
 * The client side of the protocol, for cmdgate(1): one connection, one
 * request at a time, answers matched by id, notifications skipped.
 */

/* Exit statuses of cmdgate(1), from sysexits(3) where they fit. */
#define CX_DONE		0
#define CX_FAILED	1
#define CX_CANCELLED	2
#define CX_RUNNING	3
#define CX_USAGE	64
#define CX_UNAVAILABLE	69
#define CX_NOPERM	77

/* How long a call waits for its answer unless told (--reply-timeout). */
#define CG_REPLY_TIMEOUT_S	30

/*
 * Getting back to a broker that went away (cmdgate mcp, wait, submit
 * --wait): the first try this soon, then twice as long each time, up to
 * the cap.
 */
#define CG_RETRY_FIRST_MS	100
#define CG_RETRY_MAX_MS		2000

struct client_client {
	int		 fd;
	struct jsonl	 jl;		/* reads fd */
	int64_t		 next_id;
	int64_t		 timeout_ms;	/* for each answer; from the target */
	char		 err[512];	/* why the last call failed */
	int		 lost;		/* ... by the connection's end */
};

struct client_target {
	const char	*host;
	const char	*port;
	const char	*socket;	/* wins over host and port */
	const char	*token_file;	/* NULL: look in the state dir */
	const char	*state_dir;	/* NULL: cmdgated's default */
	int64_t		 reply_timeout_ms;	/* 0: CG_REPLY_TIMEOUT_S */
};

/*
 * The token to present to the broker at t (see client.c); 0 with *tok
 * (caller frees; NULL for none) and, unless owner is NULL, the owner of
 * its file in *owner; or an exit status with c->err set.
 */
int		 client_find_token(struct client_client *, const struct client_target *,
		    char **tok, uid_t *owner);
/*
 * Whether the TCP listener at the other end of fd may have the token of
 * a file that owner owns: 0 when the kernel says owner holds its socket,
 * or when it is another machine's (not loopback, unknown to the kernel:
 * nothing can be checked there, cmdgate(1)); -1 with err naming who
 * holds it and who should, or why it cannot tell.  Ask only once the
 * listener has sent something: before it accepts, the kernel names no
 * owner.
 */
int		 client_peer_check(int fd, uid_t owner, char *err, size_t errlen);
/*
 * Connect, and authenticate with the token found (client_find_token) once the
 * listener is known to be the broker's (client_peer_check); 0, or an exit
 * status with c->err set.
 */
int		 client_connect(struct client_client *, const struct client_target *);
void		 client_close(struct client_client *);
/*
 * Call method with params (taken; NULL for none).  Returns the result
 * (caller puts), or NULL with *error the error object (caller puts) or,
 * when the connection failed, *error NULL and c->err set.  The answer is
 * the one with the request's id, or an error with a null id (the broker
 * could not read the request); it must come within c->timeout_ms, and
 * must be strict JSON.
 */
json_object	*client_call(struct client_client *, const char *method,
		    json_object *params, json_object **error);
/* The same for a request that asks the broker to wait up to wait_ms. */
json_object	*client_call_wait(struct client_client *, const char *method,
		    json_object *params, int64_t wait_ms, json_object **error);
/* The exit status that fits a JSON-RPC error object. */
int		 client_error_status(json_object *error);

/* cli.c */

/*
 * What the commands of cmdgate(1) share.  A command is
 * int cmd_NAME(struct cli *, int argc, char **argv), argv[0] its name,
 * and returns cmdgate's exit status; the table is in cmdgate.c.
 */

struct cli {
	struct client_target	 t;
	struct client_client	 c;
	int			 json;	/* --json */
	json_object		*inst;	/* --instance's file, held for t */
};

/* Print "cmdgate: " fmt (with arg) and a hint to stderr; CX_USAGE. */
int		 cli_usage_error(const char *fmt, const char *arg);
/*
 * Print a broker error object (NULL: the connection failed, cl->c.err
 * says why); the exit status that fits it.
 */
int		 cli_error(struct cli *, json_object *error);
/*
 * Call method with params (taken); the result (caller puts), or NULL,
 * the error printed and *rc set.  cli_call_wait allows the answer wait_s
 * more than --reply-timeout.
 */
json_object	*cli_call(struct cli *, const char *method,
		    json_object *params, int *rc);
json_object	*cli_call_wait(struct cli *, const char *method,
		    json_object *params, int64_t wait_s, int *rc);
/*
 * What may end cli_reconnect's wait early: input on fd[0] or fd[1] (-1:
 * none) calls quit(arg), which reads it and returns 1 to stop waiting.
 */
struct cli_wake {
	int		  fd[2];
	int		(*quit)(void *arg);
	void		 *arg;
};

/* cli_reconnect stopped by its wake. */
#define CLI_QUIT	(-1)

/*
 * The broker went away under a command that waits on it: connect again,
 * with the backoff of client.h, until deadline_ms (util_monotonic_ms()),
 * the pauses cut short by w (NULL: nothing).  One line on stderr for the
 * outage.  0, CX_UNAVAILABLE with the error printed, or CLI_QUIT.
 */
int		 cli_reconnect(struct cli *, int64_t deadline_ms,
		    const struct cli_wake *w);
/* The string member key of o, "" when absent (borrowed from o). */
const char	*cli_str(json_object *o, const char *key);
int64_t		 cli_int(json_object *o, const char *key);
/*
 * s as it may be shown on a terminal (controls and bytes that are not
 * UTF-8 escaped; the characters in keep stay).  Borrowed: valid until 16
 * more calls.
 */
const char	*cli_vis_keep(const char *s, const char *keep);
const char	*cli_vis(const char *s);
/* The member key of o, shown safely (cli_vis()); "" when absent. */
const char	*cli_hstr(json_object *o, const char *key);
/*
 * The tools of a job summary, comma-separated ("-" for none), shown
 * safely.  Borrowed: valid until the next call.
 */
const char	*cli_job_tools(json_object *job);
/* Seconds from the RFC 3339 UTC time ts to now, or -1. */
long long	 cli_elapsed(const char *ts);
/* s seconds as 12s, 3m05s or 2h07m.  Borrowed: until the next call. */
const char	*cli_duration(long long s);
/* o as one line of compact JSON on stdout. */
void		 cli_print_json(json_object *o);

/* cli_bridge.c */

/*
 * cmdgate mcp: bridge stdin/stdout to the broker's connection, and
 * outlive the broker (cmdgate(1)).
 */
int	 cmd_mcp(struct cli *, int, char **);

/* cli_bridgec.c */

/*
 * cmdgate mcp's connection to the broker, and its way back when it is
 * lost: tries with the backoff of client.h, each made by libevent
 * without blocking; over TCP with a token, a ping first (the probe), then
 * the listener's owner checked (client_peer_check), then the authentication,
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
	const struct client_target	*t;
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
	    const struct client_target *, const char *own,
	    const struct bridgec_cb *, void *arg);
/* Take the connection c made (authenticated), up: 0, or -1. */
int	 bridgec_attach(struct bridgec *, struct client_client *c);
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

/* cli_bridgeio.c */

/*
 * cmdgate mcp's standard input and output, as lines, through libevent
 * when they can be polled (pipes, sockets, terminals); a regular file or
 * /dev/null, which cannot, is read a piece per loop turn, and written
 * at once (it never blocks for long).
 */

/* The longest line read; a longer one is answered with an error. */
#define BRIDGEIO_LINE_MAX	(64 * 1024 * 1024)
/* Past this much unread by the client, nothing more is read for it. */
#define BRIDGEIO_OUT_MAX	(16 * 1024 * 1024)

struct bridgeio_cb {
	void	(*line)(void *arg, const char *line, size_t len);
	void	(*eof)(void *arg);		/* stdin ended */
	void	(*flushed)(void *arg);		/* stdout has all of it */
	int	(*room)(void *arg);		/* 0: read a file no further */
	void	(*full)(void *arg, int full);	/* stdout past OUT_MAX, or not */
};

struct bridgeio {
	const struct bridgeio_cb *cb;
	void			*arg;
	struct bufferevent	*in, *out;	/* NULL: not pollable */
	struct evbuffer		*inbuf;		/* a file's, read not taken */
	struct event		*pump;		/* reads a file on */
	int			 paused;	/* no room: the file waits */
	int			 skipping;	/* a line too long, to its end */
	size_t			 scanned;	/* of stdin: no newline in it */
	int			 eof;
	int			 full;		/* stdout past OUT_MAX */
	int			 held;		/* bridgeio_hold() */
};

/*
 * The next line of buf, without its newline (caller frees), or NULL.
 * *scanned (0 at first) is how much of buf has no newline: a long line
 * that comes a piece at a time is searched once.
 */
char	*bridgeio_readln(struct evbuffer *buf, size_t *scanned, size_t *n);
/* Set io up on fds 0 and 1 of base; 0, or -1. */
int	 bridgeio_open(struct bridgeio *, struct event_base *,
	    const struct bridgeio_cb *, void *arg);
void	 bridgeio_start(struct bridgeio *);
/* line (n bytes) and a newline to stdout. */
void	 bridgeio_write(struct bridgeio *, const char *line, size_t n);
/* All of buf to stdout. */
void	 bridgeio_write_buffer(struct bridgeio *, struct evbuffer *buf);
/* Whether stdout holds nothing unwritten. */
int	 bridgeio_flushed(const struct bridgeio *);
/* There may be room again: a file waiting for it is read on. */
void	 bridgeio_room(struct bridgeio *);
/* Read stdin no further (the broker reads too little), or read again. */
void	 bridgeio_hold(struct bridgeio *, int held);
void	 bridgeio_free(struct bridgeio *);

/* cli_bridgeq.c */

/*
 * The requests of cmdgate mcp's client that the broker has not answered
 * yet (cli_bridge.c), bounded, so that they can be sent again on a new
 * connection.
 */

/* The most requests held unanswered, and their bytes in all. */
#define CALLQ_MAX	1024
#define CALLQ_BYTES	(64 * 1024 * 1024)

#define CALLQ_JSON	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

enum call_kind { CALL_OTHER, CALL_INIT, CALL_LEVEL, CALL_TOOLS, CALL_BATCH };

struct call {
	TAILQ_ENTRY(call)	 entry;
	char			*id;	/* its id, as JSON; NULL for a batch */
	json_object		*ids;	/* a batch's ids, as JSON strings */
	char			*line;	/* the request as sent, key and all */
	size_t			 len;
	enum call_kind		 kind;
	int			 sent;	/* written on the connection now up */
	int			 ever_sent; /* written on some connection */
	int64_t			 sent_at;
	uint64_t		 mark;	/* the read mark sent after it */
	int			 read;	/* ...answered: the broker read it */
	int			 kills;	/* connections lost just after it,
					   not known read */
	int			 keyed;	/* it has tools/calls, with keys */
	char			*cancel; /* notifications/cancelled lines */
	uint64_t		 cancel_mark; /* the read mark sent after them
					   on the connection now up; 0 */
	json_object		*progress; /* its progressTokens (JSON text) to
					      the last progress the client saw
					      of each; NULL: none */
};
TAILQ_HEAD(calls, call);

struct callq {
	struct calls	 calls;		/* oldest first */
	size_t		 n, bytes;
};

void		 callq_init(struct callq *);
/* The request (or batch) whose id is id (JSON text), or NULL. */
struct call	*callq_find(struct callq *, const char *id);
/* An id a request can be followed by: a string or an integer (the
 * broker answers any other with id null, which names no request). */
int		 callq_id_ok(json_object *id);
/* The held batch an answer array (msg) is for, by any id in it. */
struct call	*callq_find_batch(struct callq *, json_object *msg);
/*
 * Hold line (len bytes, copied; msg, what it holds) of kind under id (JSON
 * text, copied; NULL for a batch, whose ids are taken).  NULL when the
 * bounds forbid it.
 */
struct call	*callq_add(struct callq *, const char *id, json_object *ids,
		    json_object *msg, const char *line, size_t len,
		    enum call_kind);
/*
 * Whether msg (NULL: not JSON) is a notifications/progress of a held
 * request's progressToken whose progress is not above the last the
 * client saw of it (1: not to be passed on); else 0, the progress kept
 * as the last.  The broker sends a call's progress in increasing order
 * on one connection; a call sent again on a new one is watched anew, from
 * 0, and the MCP client must see it increase all the same.
 */
int		 callq_progress_old(struct callq *, json_object *msg);
/* Whether one more request of len bytes stays within the bounds. */
int		 callq_room(const struct callq *, size_t len);
void		 callq_free(struct callq *, struct call *);
void		 callq_clear(struct callq *);
/* The largest request written on the connection now up, or NULL. */
struct call	*callq_largest(struct callq *);
enum call_kind	 callq_kind(const char *method);
/*
 * Keep a cancellation of c's request id (JSON text) to send after c, once
 * for each id (a batch has several).  A request (not a batch) loses its
 * progressToken: sent again only for its job to be cancelled, and
 * forgotten then, it must not have the new broker send progress its
 * client can no longer place (or see go back).
 */
void		 callq_cancel(struct callq *, struct call *c, const char *id);
/*
 * Give a tools/call (msg) a random idempotency key in params._meta,
 * unless the client gave one.
 */
void		 callq_key(json_object *msg);
/*
 * A JSON-RPC error line answering id (JSON text; NULL: null) with code,
 * message, data.type and reason.  Caller frees.
 */
char		*callq_error(const char *id, int code, const char *message,
		    const char *type, const char *reason);

/* cli_instance.c */

/*
 * Aim cl->t at the broker instance name published (its socket, else its
 * first TCP address, and its token file): 0, or CX_USAGE printed.
 */
int	 cli_instance_use(struct cli *cl, const char *name);
/* With exactly one instance whose broker is alive, aim cl->t at it. */
void	 cli_instance_default(struct cli *cl);
/* cmdgate instances [--prune]: the published brokers, live or stale. */
int	 cmd_instances(struct cli *cl, int argc, char **argv);

/* cli_jobs.c */

/* The job commands of cmdgate(1): submit, poll, wait, cancel, jobs. */
int	 cmd_submit(struct cli *, int, char **);
int	 cmd_poll(struct cli *, int, char **);
int	 cmd_wait(struct cli *, int, char **);
int	 cmd_cancel(struct cli *, int, char **);
int	 cmd_jobs(struct cli *, int, char **);

/* cli_mcp.c */

/* cmdgate mcp-config: the MCP client configuration that runs cmdgate mcp. */
int	 cmd_mcp_config(struct cli *, int, char **);

/* cli_top.c */

/* What cmdgate top shows, as the broker answered (all owned). */
struct top_view {
	json_object	*server;	/* server_status */
	json_object	*queue;		/* queue_status */
	json_object	*clients;	/* list_clients */
	json_object	*queued;	/* list_jobs of the queued */
	json_object	*running;	/* [poll_job of each running] */
	json_object	*finished;	/* [the last finished summaries] */
};

/* Ask the broker for v; 0, or an exit status with the error printed. */
int		 top_fetch(struct cli *, struct top_view *v);
void		 top_view_free(struct top_view *);
/*
 * Draw v to f, each line cut to width characters, at most rows lines
 * (-1: no bound); live: each line clears to its end and ends in CR LF.
 */
void		 top_draw(FILE *f, struct top_view *v, int width, int rows,
		    int live);
/* The terminal's width of fd (live: the terminal's, else COLUMNS first),
 * and its rows in *rows (-1: not a terminal). */
int		 top_width(int fd, int live, int *rows);

/* cli_toplive.c */

/* cmdgate top [--once]: an exit status (cmdgate(1)). */
int		 cmd_top(struct cli *, int argc, char **argv);

#endif
