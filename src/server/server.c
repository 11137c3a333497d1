/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "engine.h"
#include "link.h"
#include "log.h"
#include "net.h"
#include "policy.h"
#include "server.h"
#include "token.h"
#include "tools.h"
#include "util.h"

#define SERVER_BUCKETS_MIN	64	/* of the table of connections by id */

/* Make the table of connections by id n buckets (a power of 2). */
static void
server_conn_rehash(struct server *srv, size_t n)
{
	struct connhash	*old = srv->byid;
	struct conn	*c;
	size_t		 i, nold = srv->nbuckets;

	srv->byid = xcalloc(n, sizeof(*srv->byid));
	srv->nbuckets = n;
	for (i = 0; i < n; i++)
		LIST_INIT(&srv->byid[i]);
	for (i = 0; i < nold; i++)
		while ((c = LIST_FIRST(&old[i])) != NULL) {
			LIST_REMOVE(c, byid);
			LIST_INSERT_HEAD(&srv->byid[c->id & (n - 1)], c, byid);
		}
	free(old);
}

void
server_init(struct server *srv, struct event_base *base, struct options *opt,
    struct tooltab *tools)
{
	memset(srv, 0, sizeof(*srv));
	srv->base = base;
	srv->opt = opt;
	srv->tools = tools;
	srv->started_ms = util_monotonic_ms();
	TAILQ_INIT(&srv->conns);
	srv->cs.base = base;
	srv->cs.opt = opt;
	TAILQ_INIT(&srv->cs.flushq);
	srv->listen_addrs = json_object_new_array();
	srv->store_path = xasprintf("%s/store", opt->state_dir);
	server_conn_rehash(srv, SERVER_BUCKETS_MIN);
}

void
server_free(struct server *srv)
{
	struct conn	*c;

	while ((c = TAILQ_FIRST(&srv->conns)) != NULL)
		server_conn_free(srv, c);
	/* Their calls' answers go to the workers and the probe: first. */
	links_free(srv->links);
	srv->links = NULL;
	jobs_free(srv->jobs);
	srv->jobs = NULL;
	tooltab_free(srv->tools);
	authlimit_free(srv->authlimit);
	json_object_put(srv->listen_addrs);
	if (srv->token != NULL)
		explicit_bzero(srv->token, srv->tokenlen);
	free(srv->token);
	server_probe_free(srv);
	free(srv->worker_path);
	free(srv->store_path);
	free(srv->lock_dir);
	free(srv->byid);
	server_status_free(srv);
}

int
server_load_token(struct server *srv, const char *path, char *err,
    size_t errlen)
{
	char	*tok;
	int	 errnum;

	if ((tok = token_read(path, 1, NULL, &errnum, err, errlen)) == NULL)
		return -1;
	if (srv->token != NULL)
		explicit_bzero(srv->token, srv->tokenlen);
	free(srv->token);
	srv->token = tok;
	srv->tokenlen = strlen(tok);
	return 0;
}

/* Time depends only on the length of what the client sent. */
int
server_token_ok(const struct server *srv, const char *given, size_t n)
{
	volatile unsigned char	d;
	size_t			i;

	if (srv->token == NULL)
		return 1;
	d = srv->tokenlen != n;
	for (i = 0; i < n; i++)
		d |= (unsigned char)given[i] ^
		    (unsigned char)srv->token[i % srv->tokenlen];
	return d == 0;
}

void
server_set_editor(struct server *srv, struct conn *c,
    const struct editor_flags *f)
{
	if (!edflags_change(&srv->holds, &c->editor, f))
		return;
	c->editor = *f;
	server_busy_changed(srv);
}

/* Tell the subscribers that something changed (server_status_changed). */
static void
server_status_note(evutil_socket_t fd, short ev, void *arg)
{
	struct server	*srv = arg;
	struct conn	*c;
	json_object	*n, *p;
	char		 ts[UTIL_TIMESTAMP_LEN];

	(void)fd;
	(void)ev;
	util_timestamp(ts, util_now_ms());
	p = json_object_new_object();
	json_object_object_add(p, "timestamp", json_object_new_string(ts));
	n = json_object_new_object();
	json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(n, "method",
	    json_object_new_string("notifications/status"));
	json_object_object_add(n, "params", p);
	TAILQ_FOREACH(c, &srv->conns, entry)
		if (c->status_sub && !c->dead && !c->closing)
			conn_send(c, n);
	json_object_put(n);
}

void
server_status_changed(struct server *srv)
{
	struct timeval	tv = { 0, SERVER_STATUS_MS * 1000 };

	if (srv->nstatus_subs == 0 || srv->base == NULL)
		return;
	if (srv->status_ev == NULL)
		srv->status_ev = evtimer_new(srv->base, server_status_note,
		    srv);
	if (srv->status_ev == NULL)
		fatalx("evtimer_new");
	if (!evtimer_pending(srv->status_ev, NULL))
		evtimer_add(srv->status_ev, &tv);
}

void
server_status_free(struct server *srv)
{
	struct conn	*c;

	TAILQ_FOREACH(c, &srv->conns, entry)
		c->status_sub = 0;
	srv->nstatus_subs = 0;
	if (srv->status_ev != NULL)
		event_free(srv->status_ev);
	srv->status_ev = NULL;
}

static void
server_jobs_changed(void *arg)
{
	server_status_changed(arg);
}

void
server_busy_changed(struct server *srv)
{
	server_status_changed(srv);
	if (srv->jobs != NULL)
		jobs_editor_changed(srv->jobs);
}

struct conn *
server_conn_new(struct server *srv, struct bufferevent *bev,
    struct evbuffer *out, int is_unix, const char *peer)
{
	struct conn	*c;

	c = conn_new(&srv->cs, bev, out, is_unix, peer);
	c->srv = srv;
	c->id = ++srv->next_conn_id;
	c->needs_token = srv->token != NULL && !is_unix;
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	srv->nconns++;
	if (srv->nconns > srv->nbuckets)
		server_conn_rehash(srv, srv->nbuckets * 2);
	LIST_INSERT_HEAD(&srv->byid[c->id & (srv->nbuckets - 1)], c, byid);
	server_status_changed(srv);
	return c;
}

void
server_conn_free(struct server *srv, struct conn *c)
{
	struct editor_flags	none = { 0, 0, 0 };
	int			had_flags;

	had_flags = edflags_change(&srv->holds, &c->editor, &none);
	TAILQ_REMOVE(&srv->conns, c, entry);
	LIST_REMOVE(c, byid);
	srv->nconns--;
	if (c->status_sub)
		srv->nstatus_subs--;
	conn_free(c);
	if (had_flags)
		server_busy_changed(srv);
	else
		server_status_changed(srv);
}

struct conn *
server_conn_find(const struct server *srv, uint64_t id)
{
	struct conn	*c;

	LIST_FOREACH(c, &srv->byid[id & (srv->nbuckets - 1)], byid)
		if (c->id == id)
			return c;
	return NULL;
}

void
server_may_exit(struct server *srv)
{
	if (srv->stopping && srv->nconns == 0 && jobs_idle(srv->jobs) &&
	    !edprobe_alive(srv->probe))
		event_base_loopexit(srv->base, NULL);
}

void
server_stop_now(struct server *srv)
{
	struct conn	*c;

	if (srv->nconns > 0)
		log_info("%u clients did not read the shutdown notice in time",
		    srv->nconns);
	if (!jobs_idle(srv->jobs))
		log_warnx("%zu workers still alive at exit; the next start "
		    "stops them", jobs_nworkers(srv->jobs));
	TAILQ_FOREACH(c, &srv->conns, entry)
		conn_kill(c);
	event_base_loopexit(srv->base, NULL);
}

/* Hook: the engine stopped its last worker. */
static void
server_may_exit_hook(void *arg)
{
	server_may_exit(arg);
}

/* Hook: job news for connection id, if it is still there. */
static void
server_job_changed(void *arg, uint64_t id, json_object *note)
{
	struct server	*srv = arg;
	struct conn	*c;
	json_object	*n;

	if ((c = server_conn_find(srv, id)) == NULL || c->closing)
		return;
	n = rpc_notification("notifications/job", json_object_get(note));
	conn_send(c, n);
	json_object_put(n);
}

/* Hook: --sync group holds every answer, or the sync is done. */
static void
server_job_synced(void *arg, int held)
{
	struct server	*srv = arg;
	struct conn	*c;

	srv->cs.hold_output = held;
	if (!held)
		TAILQ_FOREACH(c, &srv->conns, entry)
			conn_release(c);
}

/* Hook: the editor probe's flags changed; they hold like a client's. */
static void
server_probe_flags(void *arg, const struct editor_flags *f)
{
	struct server	*srv = arg;

	if (edflags_set_probe(&srv->holds, f))
		server_busy_changed(srv);
}

/* Hook: a child that is no worker was reaped: the probe, if anyone. */
static int
server_child_reaped(void *arg, pid_t pid, int status)
{
	struct server	*srv = arg;

	if (!edprobe_reaped(srv->probe, pid, status))
		return 0;
	server_may_exit(srv);
	return 1;
}

/* The probe, started when the table names an editor. */
static void
server_probe_open(struct server *srv)
{
	struct edprobe_config	pc;
	struct edprobe_hooks	ph = { srv, server_probe_flags };
	char			dir[PATH_MAX];

	srv->lock_dir = xstrdup(realpath(srv->opt->state_dir, dir) != NULL ?
	    dir : srv->opt->state_dir);
	pc.base = srv->base;
	pc.worker_path = srv->worker_path;
	pc.env = jobs_worker_env(srv->jobs);
	pc.kill_grace = srv->opt->kill_grace;
	pc.lock_dir = srv->lock_dir;
	pc.links = srv->links;
	srv->probe = edprobe_new(&pc, &ph);
	edprobe_configure(srv->probe, srv->tools->editor);
}

int
server_jobs_open(struct server *srv)
{
	struct jobs_config	cfg = { srv->base, srv->opt, srv->worker_path,
				    &srv->holds, &srv->tools, NULL };
	struct jobs_hooks	hooks = { srv, server_job_changed,
				    server_job_synced, server_may_exit_hook,
				    server_child_reaped, server_jobs_changed };
	int			rc;

	srv->links = links_new(srv->base);
	cfg.links = srv->links;
	if ((rc = jobs_open(&srv->jobs, &cfg, &hooks)) != 0)
		return rc;
	server_probe_open(srv);
	return 0;
}

void
server_probe_stop(struct server *srv)
{
	edprobe_stop(srv->probe);
}

void
server_probe_free(struct server *srv)
{
	edprobe_free(srv->probe);
	srv->probe = NULL;
}

void
server_broadcast(struct server *srv, json_object *msg)
{
	struct conn	*c;

	/* A client that has not authenticated hears nothing unasked. */
	TAILQ_FOREACH(c, &srv->conns, entry)
		if (!c->closing && !conn_needs_auth(c) && conn_hears(c))
			conn_send(c, msg);
}

/* The MCP listens that hear tool changes: each its own notification. */
static void
server_tell_listens(struct server *srv)
{
	struct conn	*c;
	json_object	*id, *p, *meta, *n;
	size_t		 i;

	TAILQ_FOREACH(c, &srv->conns, entry) {
		for (i = 0; c->listen_tools != NULL && !c->closing &&
		    i < json_object_array_length(c->listen_tools); i++) {
			id = json_object_array_get_idx(c->listen_tools, i);
			meta = json_object_new_object();
			json_object_object_add(meta,
			    "io.modelcontextprotocol/subscriptionId",
			    json_object_get(id));
			p = json_object_new_object();
			json_object_object_add(p, "_meta", meta);
			n = rpc_notification("notifications/tools/list_changed",
			    p);
			conn_send_rel(c, n, id);
			json_object_put(n);
		}
	}
}

void
server_set_tools(struct server *srv, struct tooltab *tab)
{
	char		 ts[UTIL_TIMESTAMP_LEN];
	json_object	*p, *n;
	int		 changed;

	changed = srv->tools == NULL || !tooltab_same(srv->tools, tab);
	tooltab_free(srv->tools);
	srv->tools = tab;
	if (srv->probe != NULL && !srv->stopping)
		edprobe_configure(srv->probe, tab->editor);
	if (!changed) {
		log_info("tool table %s unchanged (%zu tools)", tab->source,
		    tab->ntools);
		return;
	}
	log_info("tool table %s loaded (%zu tools)", tab->source,
	    tab->ntools);
	util_timestamp(ts, util_now_ms());
	p = json_object_new_object();
	json_object_object_add(p, "timestamp", json_object_new_string(ts));
	n = rpc_notification("notifications/tools/list_changed", p);
	server_broadcast(srv, n);
	json_object_put(n);
	server_tell_listens(srv);
}

int
server_reload_tools(struct server *srv)
{
	struct tooltab	*tab;
	char		 err[1024];

	if (srv->opt->tools_file == NULL)
		tab = tooltab_default();
	else if (tooltab_load_file(srv->opt->tools_file, &tab, err,
	    sizeof(err)) == -1) {
		log_warnx("tool table refused, keeping the old one: %s", err);
		return -1;
	}
	server_set_tools(srv, tab);
	return 0;
}
