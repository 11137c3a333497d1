/* SPDX-License-Identifier: ISC */
/*
 * Face jobs (cmdgated(8), Face jobs): one table tool run as a one-command
 * job through the submit and wait path of batch_execute, with the news a
 * listener face needs: "held" after its hold time, an awaited tool's
 * first upstream answer, and a repeat of a command whose result no client
 * has had yet attached to its job instead of becoming a second one.
 *
 * A facejob is one client's request; an fjentry is one job of the repeat
 * table, which facejobs attach to.  The table hangs off the engine
 * (struct jobs), which frees it first: its entries hold the engine's
 * submits and waiters.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "engine.h"
#include "faces.h"
#include "log.h"
#include "methods.h"
#include "net.h"
#include "options.h"
#include "server.h"
#include "digest.h"
#include "ticket.h"
#include "util.h"

#define FJ_WHY_MAX	256

TAILQ_HEAD(facejoblist, facejob);

/* One job of the repeat table. */
struct fjentry {
	TAILQ_ENTRY(fjentry)	 entry;
	struct facejobs		*T;
	unsigned char		 key[DIGEST_SHA1_LEN];	/* fj_key() */
	uint64_t		 owner;		/* whose repeat window: a conn */
	struct submission	*s;		/* until stored */
	struct waiter		*w;		/* until it ends */
	uint64_t		 num;		/* once stored (s NULL) */
	char			 ticket[TICKET_LEN];
	json_object		*first;		/* its first upstream answer */
	int64_t			 ended_ms;	/* 0: not yet */
	struct facejoblist	 fjs;		/* attached, not yet told */
};
TAILQ_HEAD(fjentrylist, fjentry);

struct facejobs {
	struct server		*srv;
	struct jobs		*J;
	struct fjentrylist	 entries;
};

/* One client's request. */
struct facejob {
	TAILQ_ENTRY(facejob)	 entry;		/* of e->fjs */
	struct fjentry		*e;		/* NULL: refused, or detached */
	facejob_fn		 news;
	void			*arg;
	int			 want_first;
	int			 attached;
	int			 held;		/* hold_ms passed before the store */
	struct event		*hold_ev;	/* NULL: hold_ms 0 */
	struct event		*now_ev;	/* news due at once */
	struct rpc_error	 refused;	/* code 0: not refused */
};

static void	 facejobs_free(struct facejobs *);
static int	 fj_due(struct facejob *);
static void	 on_hold(evutil_socket_t, short, void *);
static void	 on_now(evutil_socket_t, short, void *);

/* ---- canonical params ------------------------------------------------ */

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* v with the members of every object in name order.  Caller puts. */
static json_object *
fj_sorted(json_object *v)
{
	json_object	*o;
	const char	**names;
	size_t		 i, n = 0;

	if (json_object_is_type(v, json_type_array)) {
		o = json_object_new_array();
		for (i = 0; i < json_object_array_length(v); i++)
			json_object_array_add(o, fj_sorted(
			    json_object_array_get_idx(v, i)));
		return o;
	}
	if (!json_object_is_type(v, json_type_object))
		return json_object_get(v);
	names = xcalloc(json_object_object_length(v) + 1, sizeof(*names));
	json_object_object_foreach(v, k, val) {
		(void)val;
		names[n++] = k;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	o = json_object_new_object();
	for (i = 0; i < n; i++)
		json_object_object_add(o, names[i],
		    fj_sorted(json_object_object_get(v, names[i])));
	free(names);
	return o;
}

/*
 * What makes two requests the same command: the digest of the agent,
 * the tool and the params in canonical form (no name holds a newline),
 * so that an entry costs the same whatever its command's size.  A
 * collision would take two commands made for it, both the maker's own.
 */
static void
fj_key(const struct facejob_req *req, unsigned char key[DIGEST_SHA1_LEN])
{
	json_object	*p = req->params != NULL ? fj_sorted(req->params) :
			    json_object_new_object();
	char		*text;

	text = xasprintf("%s\n%s\n%s", req->agent != NULL ? req->agent : "",
	    req->tool, json_object_to_json_string_ext(p,
	    JSON_C_TO_STRING_PLAIN));
	json_object_put(p);
	digest_sha1(text, strlen(text), key);
	free(text);
}

/* ---- telling a face -------------------------------------------------- */

static void
fj_detach(struct facejob *fj)
{
	if (fj->e != NULL)
		TAILQ_REMOVE(&fj->e->fjs, fj, entry);
	fj->e = NULL;
}

static void
fj_free(struct facejob *fj)
{
	fj_detach(fj);
	if (fj->hold_ev != NULL)
		event_free(fj->hold_ev);
	event_free(fj->now_ev);
	free(fj->refused.command);
	free(fj);
}

/* Give fj its last news n (ticket and attached filled here), free it. */
static void
fj_tell(struct facejob *fj, struct facejob_news *n)
{
	n->attached = fj->attached;
	if (n->event != FJ_REFUSED && fj->e != NULL)
		n->ticket = fj->e->ticket;
	fj_detach(fj);
	fj->news(fj->arg, n);
	fj_free(fj);
}

static void
fj_tell_refused(struct facejob *fj)
{
	struct facejob_news	n;

	memset(&n, 0, sizeof(n));
	n.event = FJ_REFUSED;
	n.code = fj->refused.code;
	n.type = fj->refused.type;
	n.why = fj->refused.reason;
	fj_tell(fj, &n);
}

/*
 * What holds the job of e, for FJ_HELD: "t-000005 is queued behind
 * t-000004", "... is running", the reload guard's holder, or a worker.
 */
static void
fj_tell_held(struct facejob *fj)
{
	struct facejob_news	n;
	char			why[FJ_WHY_MAX];

	jobview_why_held(fj->e->T->J, fj->e->num, fj->e->ticket, why,
	    sizeof(why));
	memset(&n, 0, sizeof(n));
	n.event = FJ_HELD;
	n.why = why;
	fj_tell(fj, &n);
}

/* ---- the entries of the repeat table --------------------------------- */

static void
fje_free(struct fjentry *e)
{
	struct facejob	*fj;

	TAILQ_REMOVE(&e->T->entries, e, entry);
	if (e->s != NULL)
		submit_forget(e->s);
	if (e->w != NULL)
		waiter_cancel(e->w);
	/* Only at shutdown are facejobs left: their faces cancel them. */
	while ((fj = TAILQ_FIRST(&e->fjs)) != NULL) {
		if (fj->hold_ev != NULL)
			evtimer_del(fj->hold_ev);
		event_del(fj->now_ev);
		fj_detach(fj);
	}
	json_object_put(e->first);
	free(e);
}

/* Every facejob of e is refused with the engine's err; e goes. */
static void
fje_refuse(struct fjentry *e, const struct jobs_error *err)
{
	struct facejob	*fj;

	while ((fj = TAILQ_FIRST(&e->fjs)) != NULL) {
		free(fj->refused.command);
		memset(&fj->refused, 0, sizeof(fj->refused));
		jobmethods_error(&fj->refused, err);
		fj_tell_refused(fj);
	}
	fje_free(e);
}

/*
 * The command result of the ended job object job: its results[0], or,
 * when it ended before its command did, one made of the job's error.
 * Caller puts.
 */
static json_object *
fj_result(json_object *job)
{
	json_object	*res, *r, *cmd;
	const char	*st, *error;

	res = json_object_object_get(job, "results");
	if (json_object_is_type(res, json_type_array) &&
	    json_object_array_length(res) > 0)
		return json_object_get(json_object_array_get_idx(res, 0));
	st = json_object_get_string(json_object_object_get(job, "status"));
	error = json_object_get_string(json_object_object_get(job, "error"));
	cmd = json_object_array_get_idx(json_object_object_get(job,
	    "commands"), 0);
	r = json_object_new_object();
	job_copy(r, cmd, "tool");
	json_object_object_add(r, "ok", json_object_new_boolean(0));
	json_object_object_add(r, "error", json_object_new_string(
	    error != NULL ? error : "the job ended before its command ran"));
	json_object_object_add(r, "error_type", json_object_new_string(
	    st != NULL && strcmp(st, "cancelled") == 0 ? "cancelled" :
	    "job_failed"));
	return r;
}

/*
 * e's job ended as job (taken), or could not be read (err): every
 * attached facejob hears it.  Told once, the window of e ends.
 */
static void
fje_done(struct fjentry *e, json_object *job, struct jobs_error *err)
{
	struct facejob_news	 n;
	struct facejob		*fj;
	json_object		*res;
	int			 told = 0;

	e->ended_ms = util_monotonic_ms();
	if (job == NULL) {
		fje_refuse(e, err);
		return;
	}
	res = fj_result(job);
	json_object_put(job);
	while ((fj = TAILQ_FIRST(&e->fjs)) != NULL) {
		memset(&n, 0, sizeof(n));
		n.event = FJ_DONE;
		n.result = res;
		n.ok = json_object_get_boolean(json_object_object_get(res,
		    "ok"));
		fj_tell(fj, &n);
		told = 1;
	}
	json_object_put(res);
	if (told)
		fje_free(e);
}

/* Waiter: e's job ended. */
static void
fje_ended(void *arg, json_object *job, struct jobs_error *err)
{
	struct fjentry	*e = arg;

	e->w = NULL;	/* freed by its caller */
	fje_done(e, job, err);
}

/* Waiter: e's awaited command answered first: to who asked for it. */
static void
fje_answer(void *arg, size_t index, json_object *result)
{
	struct fjentry	*e = arg;
	struct facejob	*fj;

	if (index != 0 || e->first != NULL)
		return;
	e->first = json_object_get(result);
	do {
		TAILQ_FOREACH(fj, &e->fjs, entry)
			if (fj->want_first)
				break;
	} while (fj != NULL && fj_due(fj));
}

/* submit_add: e is stored as num, or refused (err). */
static void
fje_stored(void *arg, uint64_t num, int dedup, struct jobs_error *err)
{
	struct fjentry		*e = arg;
	struct jobs		*J = e->T->J;
	struct facejob		*fj;
	struct jobs_error	 verr;
	json_object		*v;

	(void)dedup;
	e->s = NULL;
	if (err != NULL) {
		fje_refuse(e, err);
		return;
	}
	e->num = num;
	ticket_format(e->ticket, sizeof(e->ticket), num);
	if (job_pending(J, num)) {
		e->w = waiter_watch(J, num, fje_ended, fje_answer, e);
		/* Those whose hold time passed while it was being stored. */
		do {
			TAILQ_FOREACH(fj, &e->fjs, entry)
				if (fj->held)
					break;
			if (fj != NULL)
				fj_tell_held(fj);
		} while (fj != NULL);
		return;
	}
	memset(&verr, 0, sizeof(verr));
	v = waiter_view(J, num, &verr);
	fje_done(e, v, &verr);
}

/* A new job for req, of key: its entry, or NULL with err. */
static struct fjentry *
fje_submit(struct facejobs *T, const struct facejob_req *req,
    const unsigned char key[DIGEST_SHA1_LEN], struct rpc_error *err)
{
	struct fjentry	*e;
	json_object	*cmds, *cmd, *rec;
	const char	*agent = req->agent != NULL && *req->agent != '\0' ?
			    req->agent : "anonymous";

	cmd = json_object_new_object();
	json_object_object_add(cmd, "tool", json_object_new_string(req->tool));
	json_object_object_add(cmd, "params", req->params != NULL ?
	    json_object_get(req->params) : json_object_new_object());
	cmds = json_object_new_array();
	json_object_array_add(cmds, cmd);
	rec = jobmethods_record(T->srv, cmds, agent, err);
	json_object_put(cmds);
	if (rec == NULL)
		return NULL;
	e = xcalloc(1, sizeof(*e));
	e->T = T;
	memcpy(e->key, key, DIGEST_SHA1_LEN);
	e->owner = req->conn;
	TAILQ_INIT(&e->fjs);
	TAILQ_INSERT_TAIL(&T->entries, e, entry);
	e->s = submit_add(T->J, rec, NULL, 0, fje_stored, e);
	return e;
}

/* Ended jobs whose result nobody asked for within --result-ttl. */
static void
fje_prune(struct facejobs *T)
{
	struct fjentry	*e, *next;
	int64_t		 now = util_monotonic_ms();
	int64_t		 ttl = (int64_t)jobs_options(T->J)->result_ttl * 1000;

	for (e = TAILQ_FIRST(&T->entries); e != NULL; e = next) {
		next = TAILQ_NEXT(e, entry);
		if (e->ended_ms != 0 && TAILQ_EMPTY(&e->fjs) &&
		    now - e->ended_ms >= ttl)
			fje_free(e);
	}
}

/*
 * Whether the client of connection id is gone: closed, or half-closed (it
 * sends nothing more there).  Its commands' windows are then anyone's who
 * sends the same: MCP for Unity's server sends a command again on a new
 * connection after its own timeout, a uloop CLI call is a connection.
 */
static int
fje_gone(struct facejobs *T, uint64_t id)
{
	struct conn	*c = server_conn_find(T->srv, id);

	return c == NULL || c->eof || c->closing || c->dead;
}

/*
 * The entry a command of key sent on connection conn repeats: that
 * connection's, else one whose client is gone; or NULL.  Another live
 * client's is never joined: whoever sends the same command is not the
 * one who asked, and must not take its result nor end its window.
 */
static struct fjentry *
fje_find(struct facejobs *T, const unsigned char key[DIGEST_SHA1_LEN], uint64_t conn)
{
	struct fjentry	*e, *gone = NULL;

	TAILQ_FOREACH(e, &T->entries, entry) {
		if (memcmp(e->key, key, DIGEST_SHA1_LEN) != 0)
			continue;
		if (e->owner == conn)
			return e;
		if (gone == NULL && fje_gone(T, e->owner))
			gone = e;
	}
	return gone;
}

/* The repeat table of srv's engine, made on first use. */
static struct facejobs *
facejobs_of(struct server *srv)
{
	struct jobs	*J = srv->jobs;

	struct facejobs	*T;

	if ((T = jobs_facejobs(J)) == NULL) {
		T = xcalloc(1, sizeof(*T));
		T->srv = srv;
		T->J = J;
		TAILQ_INIT(&T->entries);
		jobs_set_facejobs(J, T, facejobs_free);
	}
	return T;
}

static void
facejobs_free(struct facejobs *T)
{
	struct fjentry	*e;

	if (T == NULL)
		return;
	while ((e = TAILQ_FIRST(&T->entries)) != NULL)
		fje_free(e);
	jobs_set_facejobs(T->J, NULL, NULL);
	free(T);
}

/* ---- facejobs -------------------------------------------------------- */

/* The news fj can have now: 1 when it was told (and freed). */
static int
fj_due(struct facejob *fj)
{
	struct fjentry		*e = fj->e;
	struct facejob_news	 n;
	struct jobs_error	 err;
	json_object		*v;

	if (fj->refused.code != 0) {
		fj_tell_refused(fj);
		return 1;
	}
	if (e == NULL)
		return 0;
	if (e->ended_ms != 0) {
		/* A repeat after the end: the stored job has the result. */
		memset(&err, 0, sizeof(err));
		v = waiter_view(e->T->J, e->num, &err);
		fje_done(e, v, &err);
		return 1;
	}
	if (fj->want_first && e->first != NULL) {
		memset(&n, 0, sizeof(n));
		n.event = FJ_FIRST;
		n.result = e->first;
		fj_tell(fj, &n);
		return 1;
	}
	return 0;
}

static void
on_now(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	fj_due(arg);
}

static void
on_hold(evutil_socket_t fd, short ev, void *arg)
{
	struct facejob	*fj = arg;

	(void)fd;
	(void)ev;
	if (fj_due(fj) || fj->e == NULL)
		return;
	if (fj->e->s != NULL)
		fj->held = 1;	/* told once its job is stored */
	else
		fj_tell_held(fj);
}

static struct facejob *
fj_new(struct server *srv, const struct facejob_req *req, facejob_fn news,
    void *arg)
{
	struct facejob	*fj = xcalloc(1, sizeof(*fj));
	struct timeval	 tv;

	fj->news = news;
	fj->arg = arg;
	fj->want_first = req->want_first;
	if ((fj->now_ev = event_new(srv->base, -1, 0, on_now, fj)) == NULL)
		fatalx("event_new");
	if (req->hold_ms > 0) {
		if ((fj->hold_ev = evtimer_new(srv->base, on_hold,
		    fj)) == NULL)
			fatalx("evtimer_new");
		tv.tv_sec = (time_t)(req->hold_ms / 1000);
		tv.tv_usec = (suseconds_t)(req->hold_ms % 1000) * 1000;
		evtimer_add(fj->hold_ev, &tv);
	}
	return fj;
}

static void
fj_attach(struct facejob *fj, struct fjentry *e)
{
	fj->e = e;
	TAILQ_INSERT_TAIL(&e->fjs, fj, entry);
}

struct facejob *
facejob_start(struct server *srv, const struct facejob_req *req,
    facejob_fn news, void *arg)
{
	struct facejob	*fj = fj_new(srv, req, news, arg);
	struct facejobs	*T;
	struct fjentry	*e;
	unsigned char	 key[DIGEST_SHA1_LEN];

	if (srv->jobs == NULL) {
		rpc_fail(&fj->refused, RPC_INTERNAL_ERROR, "internal_error",
		    "this broker has no job store open");
		event_active(fj->now_ev, EV_TIMEOUT, 0);
		return fj;
	}
	T = facejobs_of(srv);
	fje_prune(T);
	fj_key(req, key);
	if ((e = fje_find(T, key, req->conn)) != NULL) {
		e->owner = req->conn;
		fj->attached = 1;
		fj_attach(fj, e);
		log_debug("%s: a repeat of %s attached", e->s == NULL ?
		    e->ticket : "a job being stored", req->tool);
		if (e->ended_ms != 0 || (fj->want_first && e->first != NULL))
			event_active(fj->now_ev, EV_TIMEOUT, 0);
		return fj;
	}
	if ((e = fje_submit(T, req, key, &fj->refused)) == NULL)
		event_active(fj->now_ev, EV_TIMEOUT, 0);
	else
		fj_attach(fj, e);
	return fj;
}

/* The end of a job whose first answer a client had: nothing to do. */
static void
fj_window_news(void *arg, const struct facejob_news *n)
{
	(void)arg;
	(void)n;
}

void
facejob_end_window(struct server *srv, uint64_t conn, const char *agent,
    const char *tool, json_object *params)
{
	struct facejob_req	fr;

	memset(&fr, 0, sizeof(fr));
	fr.conn = conn;
	fr.agent = agent;
	fr.tool = tool;
	fr.params = params;
	if (facejob_start(srv, &fr, fj_window_news, NULL) == NULL)
		fatalx("facejob_start: out of memory");
}

void
facejob_cancel(struct facejob *fj)
{
	if (fj != NULL)
		fj_free(fj);
}
