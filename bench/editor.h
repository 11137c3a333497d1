/* SPDX-License-Identifier: ISC */
/* cmdgate-bench: the editor path (rows 6 and 7; see bench/README). */
#ifndef CMDGATE_BENCH_EDITOR_H
#define CMDGATE_BENCH_EDITOR_H

#include <sys/types.h>

#include <stddef.h>

/* The ways an agent reaches the editor. */
enum ed_path {
	ED_UNITY,	/* MCP for Unity's bridge: the bridge or the face */
	ED_ULOOP,	/* uLoopMCP's JSON-RPC, Content-Length framed */
	ED_HTTP,	/* MCP over Streamable HTTP: cmdgated --http */
	ED_STDIO	/* MCP over stdio: cmdgate mcp */
};

struct event_base;
struct evhttp_connection;

/* One agent, connected: see edclient.c. */
struct ed_agent {
	enum ed_path		  path;
	int			  fd;		/* requests are written there */
	int			  rfd;		/* what answers are read from */
	pid_t			  pid;		/* cmdgate mcp, or 0 */
	long			  id;		/* the last request's */
	char			 *buf;		/* read, not yet taken */
	size_t			  len, cap;
	struct event_base	 *base;		/* ED_HTTP */
	struct evhttp_connection *http;
	int			  nodelay_fd;	/* http's socket, TCP_NODELAY */
	char			  session[160];
	int			  status;	/* the last reply's, -1: none */
	char			 *body;		/* the last reply's body */
};

/* bench/edclient.c */
/*
 * Connect a (and, for ED_STDIO, start cmdgate mcp on the broker's port,
 * with state as its CMDGATE_STATE_DIR); for the MCP paths also initialize.
 * Dies on failure.
 */
void	 ed_open(struct ed_agent *a, enum ed_path path, int port,
	    const char *state);
/* One call of the bench's editor read, answered; dies on a failed one. */
void	 ed_call(struct ed_agent *a);
/* Close a, and stop its cmdgate mcp. */
void	 ed_close(struct ed_agent *a);

/* bench/editor.c */
/* The rows of the editor path, bridge answering after delay_ms. */
void	 bench_editor(int delay_ms);

#endif
