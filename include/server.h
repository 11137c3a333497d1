/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_SERVER_H
#define CMDGATE_SERVER_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "conn.h"
#include "holds.h"
#include "options.h"

/*
 * The broker's state, shared by the listener, the RPC methods and the
 * signal handlers.  There is one per process; tests make their own.
 */

struct event_base;
struct tooltab;
struct listener;
struct http;
struct jobs;
struct event;
struct authlimit;
struct bufferevent;
struct evbuffer;
struct probe;

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
	struct holds		 holds;		/* every conn's editor flags */
	struct probe		*probe;		/* the editor probe (probe.c) */
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
