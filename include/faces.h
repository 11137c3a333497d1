/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FACES_H
#define CMDGATE_FACES_H

/*
 * The listener faces (src/faces/): each editor bridge's own protocol
 * in front of the methods.
 */

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

struct bufferevent;
struct conn;
struct edsub;
struct event_base;
struct facejob;
struct facejob_news;
struct hubup;
struct options;
struct server;
struct unitystatus;

/* edstate.c */

/*
 * The state of the editor behind cmdgate as the listener faces show it
 * (cmdgated(8), Editor state): whether it is reloading, and whether the
 * editor probe reaches it.  reloading is true while a reload job runs
 * (cmdgate asked for the reload), or while the probe finds the editor
 * unreachable after it had answered, for at most EDSTATE_LOST_MAX_S
 * (then the editor is taken as gone, not reloading).
 */

#define EDSTATE_LOST_MAX_S	120

struct edstate {
	int	reloading;
	int	reachable;	/* -1: no probe, or not known yet */
};

void		 edstate_get(struct server *, struct edstate *);
/*
 * fn(arg) after any change, from the loop (never from here): a handle
 * for edstate_unsubscribe, which must come before the engine is freed.
 */
struct edsub	*edstate_subscribe(struct server *, void (*fn)(void *),
		    void *arg);
/* No more calls of its fn; sub may be NULL. */
void		 edstate_unsubscribe(struct edsub *sub);

/* face_hub.c */

/*
 * The unity-hub face (cmdgated(8), The unity-hub face): MCP for Unity's
 * server as its plugin sees it (the hub at /hub/plugin), every other
 * request passed on to the real server.  Its entries in face_ops[]:
 * it takes accepted connections whole.
 */
void		 hub_adopt(struct server *, struct bufferevent *,
		    const char *peer);
void		 hub_free(struct server *);
/* {server, editors: [...], passing_on, registrations, evictions,
 * reading_heads} (caller puts). */
json_object	*hub_status(const struct server *);

/* hubup.c */

/*
 * The unity-hub face towards the real server (cmdgated(8), The
 * unity-hub face): cmdgate as the plugin, standing for the editor
 * registered on the face.
 */
struct hubup	*hubup_new(struct server *);
void		 hubup_free(struct hubup *);
/* The editor registered (reg: its register message, borrowed; api_key:
 * its X-API-Key or NULL): register it upstream, unless it is the same
 * editor back from a reload. */
void		 hubup_editor(struct hubup *, json_object *reg,
		    const char *api_key);
/* Its register_tools (borrowed): sent on once registered upstream. */
void		 hubup_tools(struct hubup *, json_object *msg);
/* Its socket went: held for a while, then the registration ends. */
void		 hubup_editor_away(struct hubup *);
/* {state, session_id, editor_away, connects, executes} (caller puts). */
json_object	*hubup_json(const struct hubup *);

/* face_uloop.c */

/*
 * The uloop face (cmdgated(8), Listener faces): uLoopMCP's editor side of
 * JSON-RPC 2.0, for its TypeScript MCP server and its uloop CLI.  Each
 * table tool is a method of its own, run as a face job; the rest
 * (set-client-name, ping, get-tool-details...) is answered here.  Its
 * entries in face_ops[] (conn.h).
 */

/* Just accepted and let in: its state and editor-state subscription. */
void		 uloop_accept(struct conn *);
/* One framed message from c; buf[len] is NUL. */
void		 uloop_message(struct conn *, const char *buf, size_t len);
/* A last error before closing, as a JSON-RPC error with data.message. */
void		 uloop_fail(struct conn *, int code, const char *type,
		    const char *reason);
/* c goes: its calls are forgotten (their jobs go on). */
void		 uloop_closed(struct conn *);

/* face_unity.c */

/*
 * The unity-mcp face (cmdgated(8), The unity-mcp face): MCP for Unity's
 * editor bridge on the wire (the WELCOME line, 8-byte frames, the compact
 * pong, {"type", "params"} requests answered in order), each command a
 * face job (facejob.h), for as many clients at once as connect.
 */

#define UNITY_WELCOME	"WELCOME UNITY-MCP 1 FRAMING=1"
#define UNITY_PONG	"{\"status\":\"success\",\"result\":{\"message\":\"pong\"}}"
#define UNITY_AGENT	"unity-mcp"	/* the agent of every command */
#define UNITY_RETRY_MS	5000		/* the retry hint of "held" */

/* A new connection: the WELCOME line; unity frames from now on. */
void		 unity_accept(struct conn *);
/* One frame from c; buf[len] is NUL.  Answered through c, in order. */
void		 unity_message(struct conn *, const char *buf, size_t len);
/* A last error before closing, as the bridge's outer error. */
void		 unity_fail(struct conn *, int code, const char *type,
		    const char *reason);
/*
 * The face's own state once the listeners are bound and the engine is
 * open: the status file (--unity-status-dir) naming the first unity-mcp
 * listener's port, and the editor state it mirrors.  0, or -1 with err.
 */
int		 unity_face_start(struct server *, char *err, size_t errlen);
/* The directory of the face's status file, absolute, or NULL when it
 * writes none (server_status).  Caller puts. */
json_object	*unity_status_dir(const struct server *);
/* Stopping, before the engine is freed: the status file goes. */
void		 unity_face_stop(struct server *);
/*
 * The answer to a face job's news as the bridge would give it.  Caller
 * puts.
 */
json_object	*unity_answer(const char *tool, const struct facejob_news *);

/* facejob.c */

/*
 * A listener face's command (cmdgated(8), Listener faces): one table
 * tool called by its name, run as a one-command job through the same
 * submit and wait path as batch_execute, with what the faces need on
 * top: an answer before the client gives up ("held"), the upstream's
 * first answer of an awaited tool, and a repeat of a command that was not
 * yet answered attached to its job instead of becoming a second one.  A
 * repeat is the same agent's, tool's and params' on the same connection,
 * or on another once the first one's client is gone (closed, or
 * half-closed: it sends nothing more there); the connection that joins
 * it then has its window.
 */

enum facejob_event {
	FJ_DONE,	/* the job ended: result is the command result */
	FJ_FIRST,	/* an awaited tool's first upstream answer: result */
	FJ_HELD,	/* hold_ms passed: why says what holds it */
	FJ_REFUSED,	/* not submitted: code, type and why as for JSON-RPC */
};

/*
 * What a face is told.  result is borrowed for the call; ticket and why
 * too.  After FJ_DONE, FJ_HELD or FJ_REFUSED the facejob is freed and
 * nothing more comes; FJ_FIRST is followed by nothing either (the job
 * goes on, holding its busy labels, and its result is kept for a repeat).
 */
struct facejob_news {
	enum facejob_event	 event;
	const char		*ticket;	/* NULL for FJ_REFUSED */
	json_object		*result;
	int			 ok;		/* FJ_DONE: the command's ok */
	int			 attached;	/* a repeat, joined to ticket */
	int			 code;		/* FJ_REFUSED: JSON-RPC code */
	const char		*type;		/* FJ_REFUSED: data.type */
	const char		*why;		/* FJ_HELD, FJ_REFUSED */
};

typedef void	(*facejob_fn)(void *arg, const struct facejob_news *);

struct facejob_req {
	uint64_t	 conn;		/* the client's connection (0: none) */
	const char	*agent;		/* the client's name ("" allowed) */
	const char	*tool;
	json_object	*params;	/* borrowed */
	uint64_t	 hold_ms;	/* FJ_HELD after this; 0: never */
	int		 want_first;	/* FJ_FIRST for an awaited tool */
};

/*
 * Start req: news(arg) is called later, never from here.  NULL only
 * when out of memory.
 */
struct facejob	*facejob_start(struct server *, const struct facejob_req *,
		    facejob_fn news, void *arg);
/* The face's client is gone: no news; the job goes on. */
void		 facejob_cancel(struct facejob *);
/*
 * A client has the first answer of the job of (conn, agent, tool,
 * params), an awaited tool's (run_tests' job id): the same command again
 * once that job ended must be a new one, so a repeat that waits for its
 * end takes its result, which ends the repeat window (cmdgated(8), Face
 * jobs).
 */
void		 facejob_end_window(struct server *, uint64_t conn,
		    const char *agent, const char *tool, json_object *params);

/* unitystatus.c */

/*
 * The unity-mcp face's status file (cmdgated(8), --unity-status-dir):
 * DIR/unity-mcp-status-<hash>.json with the fields of the status
 * ("heartbeat") file MCP for Unity's editor bridge writes, rewritten every
 * UNITYSTATUS_EVERY_MS, so that an unmodified mcp-for-unity server started
 * with UNITY_MCP_STATUS_DIR=DIR finds the face as it finds an editor.
 *
 * Which project it names, first found wins, looked at again at each
 * write until one is found: the bridge's own status file
 * (--unity-bridge-status FILE; else the file in ~/.unity-mcp whose
 * unity_port is the bridge's port in the tool table), whose name and
 * project fields are kept; else --unity-project DIR (the hash is the first
 * 8 hex digits of the SHA-1 of DIR/Assets, as the bridge computes it).
 */

#define UNITYSTATUS_EVERY_MS	500
#define UNITYSTATUS_EDITOR_DIR	".unity-mcp"	/* under $HOME */

/*
 * What the file says of the project: name is its file name; fields are
 * project_path, project_name, unity_version and project_scoped_tools.
 */
struct unitystatus_id {
	char		 name[128];
	json_object	*fields;
};

/*
 * Open --unity-status-dir, made (mode 0700) if it is missing, and check
 * it: a directory, not a symlink, owned by the broker's user and closed
 * to group and others' writes (the state dir's rules), not the editor's
 * own.  Its descriptor, or -1 with err.
 */
int		 unitystatus_open_dir(const struct options *, char *err,
		    size_t errlen);
/*
 * Write the file for the face on port in the directory dirfd (from
 * unitystatus_open_dir(), taken) every UNITYSTATUS_EVERY_MS; the bridge's
 * port (0: unknown) finds its status file.  Caller frees.
 */
struct unitystatus *unitystatus_new(struct event_base *,
		    const struct options *, int dirfd, int port,
		    int bridge_port);
/* Stop writing and remove the file. */
void		 unitystatus_free(struct unitystatus *);
/* The editor behind reloads (1) or not: written at once. */
void		 unitystatus_set_reloading(struct unitystatus *, int);
/* Write the file now: 0, 1 when no project is known yet, or -1. */
int		 unitystatus_write(struct unitystatus *);
/* The project, as found now: 0, or -1 when none.  id->fields: caller puts. */
int		 unitystatus_identify(const struct options *, int bridge_port,
		    struct unitystatus_id *id);

#endif
