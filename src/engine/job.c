/* SPDX-License-Identifier: ISC */
/*
 * A job and the engine's state: its lists and counters, its records in
 * the store, each change committed before anyone hears of it.
 */
#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "jstrict.h"
#include "log.h"
#include "options.h"
#include "policy.h"
#include "store.h"
#include "ticket.h"
#include "tools.h"
#include "util.h"

static const char *status_names[JOB_NSTATUS] = {
	"queued", "running", "done", "failed", "cancelled",
};
static const char status_chars[JOB_NSTATUS] = { 'q', 'r', 'd', 'f', 'c' };

const char *
job_status_name(enum job_status s)
{
	return status_names[s];
}

char
job_status_char(enum job_status s)
{
	return status_chars[s];
}

/*
 * The status byte of a stored record.  A queued job's carries its class
 * too (STATUS_PACKED: tier, reload, busy bits), so that a restart queues
 * it without reading the record; records of earlier versions say 'q'.
 */
#define STATUS_PACKED	0x80
#define PACK_TIER	0x03
#define PACK_RELOAD	0x04
#define PACK_BUSY_SHIFT	2	/* BUSY_BIT(1), BUSY_BIT(2): 0x08, 0x10 */
#define PACK_BUSY	(BUSY_BIT(BUSY_TESTS_RUNNING) | BUSY_BIT(BUSY_COMPILING))

char
job_store_status(const struct job *j)
{
	if (j->status != JOB_QUEUED)
		return job_status_char(j->status);
	return (char)(STATUS_PACKED | ((unsigned)j->tier & PACK_TIER) |
	    (j->reload ? PACK_RELOAD : 0) |
	    ((j->busy & PACK_BUSY) << PACK_BUSY_SHIFT));
}

int
job_unpack_status(char c, enum tier *tier, int *reload, unsigned *busy)
{
	unsigned	u = (unsigned char)c;

	if (!(u & STATUS_PACKED) || (u & PACK_TIER) > TIER_HEAVY ||
	    (u & ~(STATUS_PACKED | PACK_TIER | PACK_RELOAD |
	    (PACK_BUSY << PACK_BUSY_SHIFT))) != 0)
		return -1;
	*tier = (enum tier)(u & PACK_TIER);
	*reload = (u & PACK_RELOAD) != 0;
	*busy = (u >> PACK_BUSY_SHIFT) & PACK_BUSY;
	return 0;
}

int
job_status_from_char(char c)
{
	enum tier	t;
	unsigned	b;
	int		i, r;

	if (job_unpack_status(c, &t, &r, &b) == 0)
		return JOB_QUEUED;
	for (i = 0; i < JOB_NSTATUS; i++)
		if (job_status_char(i) == c)
			return i;
	return -1;
}

json_object *
job_rec_get(json_object *rec, const char *key)
{
	json_object	*v = NULL;

	json_object_object_get_ex(rec, key, &v);
	return v;
}

void
job_rec_set(json_object *rec, const char *key, const char *val)
{
	json_object_object_add(rec, key, json_object_new_string(val));
}

/* Whether j may start while a heavy job runs (cmdgate-protocol(7)). */
static int
beside_heavy(const struct job *j)
{
	return j->tier == TIER_INSTANT && !j->reload;
}

/* A held reload whose submitter hears when its holder changes. */
int
job_watched(const struct job *j)
{
	return j->notify_conn != 0 && j->reload;
}

/* The scheduler's class of j (scheduler.h). */
static enum sched_class
job_class(const struct job *j)
{
	struct sched_job	sj = { j->tier, j->reload, j->busy };

	return sched_class(&sj);
}

/* Jobs join the queue in ticket order, so it stays sorted by ticket. */
void
job_enqueue(struct jobs *J, struct job *j)
{
	TAILQ_INSERT_TAIL(&J->queued, j, entry);
	j->qn.key = j->num;
	j->qn.cls = (uint8_t)job_class(j);
	qtree_insert(&J->qroot, &j->qn);
	J->nqueued++;
	J->nqueued_beside_heavy += beside_heavy(j);
	J->nqueued_watched += job_watched(j);
	/* Told of its holder by the next pass (jobsched.c). */
	if (job_watched(j))
		TAILQ_INSERT_TAIL(&J->watched_new, j, wentry);
}

void
job_dequeue(struct jobs *J, struct job *j)
{
	TAILQ_REMOVE(&J->queued, j, entry);
	qtree_remove(&J->qroot, &j->qn);
	J->nqueued--;
	J->nqueued_beside_heavy -= beside_heavy(j);
	J->nqueued_watched -= job_watched(j);
	if (job_watched(j))
		TAILQ_REMOVE(j->wsynced ? &J->watched : &J->watched_new, j,
		    wentry);
}

/*
 * Queued j's class changes (a tool table read again made it a reload):
 * out of the index and the counts with the old one, back with the new,
 * keeping its place in the queue.  reload only ever becomes 1 here.
 */
void
job_reclass(struct jobs *J, struct job *j, enum tier tier, int reload)
{
	int	watched = job_watched(j);

	qtree_remove(&J->qroot, &j->qn);
	J->nqueued_beside_heavy -= beside_heavy(j);
	j->tier = tier;
	j->reload = j->reload || reload;
	j->qn.cls = (uint8_t)job_class(j);
	qtree_insert(&J->qroot, &j->qn);
	J->nqueued_beside_heavy += beside_heavy(j);
	if (!watched && job_watched(j)) {
		J->nqueued_watched++;
		j->wsynced = 0;
		TAILQ_INSERT_TAIL(&J->watched_new, j, wentry);
	}
}

/*
 * A queued job's record lives in the store only, once its submitter was
 * answered: a queued job costs the heap its struct alone (cmdgated(8)).
 */
void
job_rec_drop(struct job *j)
{
	if (j->status != JOB_QUEUED)
		return;
	json_object_put(j->rec);
	j->rec = NULL;
}

/* Whether v is a string member of rec (one of names, if given). */
int
job_rec_string(json_object *rec, const char *key, const char **names)
{
	json_object	*v = job_rec_get(rec, key);

	if (!json_object_is_type(v, json_type_string))
		return 0;
	for (; names != NULL && *names != NULL; names++)
		if (strcmp(*names, json_object_get_string(v)) == 0)
			return 1;
	return names == NULL;
}

/*
 * Whether rec has the shape every reader of a job relies on; NULL, or
 * what is wrong.
 */
const char *
job_rec_malformed(json_object *rec)
{
	static const char *tiers[] = { "instant", "smooth", "heavy", NULL };
	static const char *statuses[] = { "queued", "running", "done",
	    "failed", "cancelled", NULL };
	json_object	*cmds = job_rec_get(rec, "commands"), *c;
	size_t		 i;

	if (!json_object_is_type(rec, json_type_object))
		return "not a JSON object";
	if (!job_rec_string(rec, "status", statuses) ||
	    !job_rec_string(rec, "tier", tiers) ||
	    !job_rec_string(rec, "agent", NULL) ||
	    !job_rec_string(rec, "created_at", NULL))
		return "a status, tier, agent or created_at is missing";
	if (!json_object_is_type(cmds, json_type_array) ||
	    json_object_array_length(cmds) == 0)
		return "no list of commands";
	for (i = 0; i < json_object_array_length(cmds); i++) {
		c = json_object_array_get_idx(cmds, i);
		if (!job_rec_string(c, "tool", NULL) ||
		    (job_rec_get(c, "busy") != NULL && !job_rec_string(c, "busy",
		    NULL)))
			return "a command without a tool name";
	}
	if (job_rec_get(rec, "results") != NULL &&
	    !json_object_is_type(job_rec_get(rec, "results"), json_type_array))
		return "its results are not a list";
	return NULL;
}

json_object *
job_rec_ref(struct jobs *J, struct job *j, int *rcp)
{
	json_object	*rec;
	const char	*bad = NULL;
	char		*json, status;
	int		 rc;

	if (j->rec != NULL)
		return json_object_get(j->rec);
	if ((rc = store_job_get(J->st, j->num, &status, &json)) != 0) {
		*rcp = rc;
		return NULL;
	}
	rc = jstrict_parse_str(json, &rec);
	free(json);
	/* A restart queued it from its status byte: checked here, once read. */
	if (rc != 0 || (bad = job_rec_malformed(rec)) != NULL) {
		if (!j->damaged)
			log_warnx("%s: its stored record cannot be read: %s; "
			    "the job fails when it comes to start", j->ticket,
			    rc != 0 ? jstrict_strerror(rc) : bad);
		j->damaged = 1;
		json_object_put(rc != 0 ? NULL : rec);
		*rcp = STORE_EBADRECORD;
		return NULL;
	}
	return rec;
}

int
job_rec_load(struct jobs *J, struct job *j)
{
	int	rc = 0;

	if (j->rec == NULL && (j->rec = job_rec_ref(J, j, &rc)) != NULL)
		job_rec_counts(j);
	return rc;
}

struct job *
job_of_node(struct qnode *n)
{
	return (struct job *)(void *)((char *)n - offsetof(struct job, qn));
}

/* How many jobs are queued ahead of j. */
size_t
job_position(struct jobs *J, struct job *j)
{
	return qtree_rank(J->qroot, j->num);
}

void
job_fatal_store(const char *what, int rc)
{
	/*
	 * A change the broker cannot record must not be reported either:
	 * stop, and let the restart recover from what the store holds.
	 */
	fatalx("store: cannot record %s: %s; stopping so that nothing is "
	    "reported that is not stored", what, store_strerror(rc));
}

/* Write j's record in the open transaction. */
int
job_put(struct jobs *J, struct job *j)
{
	const char	*json = jstrict_to_string(j->rec);
	int64_t		 expire = 0;
	int		 rc;

	/* Never store what jstrict_parse could not read back (too deep). */
	if ((rc = jstrict_check(json, strlen(json))) != 0) {
		log_warnx("%s: its record would not read back (%s)", j->ticket,
		    jstrict_strerror(rc));
		return STORE_EUNREADABLE;
	}
	if (j->status >= JOB_DONE)
		expire = util_now_ms() +
		    (int64_t)J->cfg.opt->result_ttl * 1000;
	return store_job_put(J->st, j->num, job_store_status(j), expire, json);
}

/* A change was stored after the store refused some: the backoff ends. */
void
job_store_recovered(struct jobs *J)
{
	if (J->retry_logged)
		log_info("the store takes changes again");
	J->retry_logged = 0;
	J->retry_s = 0;
}

/*
 * Whether j is a read of the editor's, whose records need not reach the
 * disk at once (cmdgated(8), The store): every command a forward, the
 * job instant, no reload, no busy label.  Its commits are held
 * (store_commit_held); any other job's are synced as they always were.
 */
int
job_instant_read(const struct job *j)
{
	return j->forwards && j->tier == TIER_INSTANT && !j->reload &&
	    j->busy == 0;
}

/*
 * The held records were lost with a commit the store refused (rc), as in
 * a crash: polls no longer find the reads that ended, a running one is
 * stored whole again with its next change, and a queued one fails when
 * it comes to start (its record is gone).
 */
static void
job_held_lost(struct jobs *J, int rc)
{
	log_warnx("store: the records of the instant reads held since its "
	    "last durable commit are lost: %s; those reads are gone from "
	    "the store, as after a crash", store_strerror(rc));
	if (J->held_ev != NULL)
		evtimer_del(J->held_ev);
}

/* What is held waited its time (J->held_ms): it goes to the disk. */
static void
job_flush_callback(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	job_flush(arg);
}

void
job_flush(struct jobs *J)
{
	int	rc;

	if (J->held_ev != NULL)
		evtimer_del(J->held_ev);
	if (store_held(J->st) && (rc = store_flush(J->st)) != 0)
		job_held_lost(J, rc);
}

/* Something is held: to the disk J->held_ms later at most. */
static void
job_held_arm(struct jobs *J)
{
	struct timeval	tv = { J->held_ms / 1000, (J->held_ms % 1000) * 1000 };

	if (!store_held(J->st))
		return;		/* --sync none: committed */
	if (J->held_ev == NULL &&
	    (J->held_ev = evtimer_new(J->cfg.base, job_flush_callback,
	    J)) == NULL)
		fatalx("event_new");
	if (!evtimer_pending(J->held_ev, NULL))
		evtimer_add(J->held_ev, &tv);
}

/*
 * Commit: held when reads (only instant reads' records, which nobody
 * waits for a sync for); else durable, with what was held, and under
 * --sync group every answer waits for the sync at the turn's end.
 */
int
job_commit(struct jobs *J, int reads)
{
	int	had = store_held(J->st), rc;

	rc = reads ? store_commit_held(J->st) : store_commit(J->st);
	if (rc != 0) {
		if (had && !store_held(J->st))
			job_held_lost(J, rc);
		return rc;
	}
	if (!J->store_blocked)
		job_store_recovered(J);
	if (reads)
		job_held_arm(J);
	else if (J->held_ev != NULL)
		evtimer_del(J->held_ev);	/* nothing is held now */
	if (!reads && J->cfg.opt->sync == SYNC_GROUP && !J->sync_held) {
		J->sync_held = 1;
		J->hooks.job_synced(J->hooks.arg, 1);
		jobs_turn_wake(J);	/* the sync, at the turn's end */
	}
	return 0;
}

/*
 * Record j in one transaction, with its worker's record put (put_worker)
 * or deleted (del_pid > 0).  0, or the error with nothing applied.
 */
int
job_save(struct jobs *J, struct job *j, int put_worker, pid_t del_pid)
{
	int	rc;

	if ((rc = store_begin(J->st)) != 0)
		return rc;
	if ((rc = job_put(J, j)) != 0 ||
	    (put_worker && (rc = job_put_worker(J, j->worker)) != 0) ||
	    (del_pid > 0 && (rc = store_worker_del(J->st, del_pid)) != 0)) {
		store_abort(J->st);
		return rc;
	}
	return job_commit(J, 0);
}

/*
 * The store cannot take j's state (it is full, say): j becomes failed,
 * its results and parameters dropped, so that what is stored is small and
 * still true.
 */
void
job_shrink(struct jobs *J, struct job *j, int rc)
{
	json_object	*cmds = job_rec_get(j->rec, "commands"), *c;
	char		 why[512];
	size_t		 i;

	log_warnx("%s: the store cannot record this job (%s): it fails, its "
	    "results dropped", j->ticket, store_strerror(rc));
	j->shrunk = 1;
	if (j->status != JOB_FAILED)
		job_set_status(J, j, JOB_FAILED);
	snprintf(why, sizeof(why), "storage_error: the store could not "
	    "record this job (%s); its results were dropped",
	    store_strerror(rc));
	job_rec_set(j->rec, "error", why);
	json_object_object_add(j->rec, "results", json_object_new_array());
	json_object_object_del(j->rec, "failed_at_command");
	for (i = 0; i < json_object_array_length(cmds); i++) {
		c = json_object_array_get_idx(cmds, i);
		json_object_object_del(c, "params");
		json_object_object_del(c, "exec");
	}
}

void
job_busy(struct jobs *J, struct sched_busy *b)
{
	edflags_busy(J->cfg.holds, workers_busy_bits(&J->W), b);
	b->tests_running |= J->editor_restored.tests_running;
	b->compiling |= J->editor_restored.compiling;
	b->editor_busy |= J->editor_restored.editor_busy;
}

struct job *
job_find(struct jobs *J, uint64_t num)
{
	struct job	*j;
	struct qnode	*n;

	TAILQ_FOREACH(j, &J->running, entry)
		if (j->num == num)
			return j;
	return (n = qtree_find(J->qroot, num)) != NULL ? job_of_node(n) :
	    NULL;
}

int
job_pending(struct jobs *J, uint64_t num)
{
	struct job	*j;

	if (job_find(J, num) != NULL)
		return 1;
	TAILQ_FOREACH(j, &J->unstored, entry)
		if (j->num == num)
			return 1;
	TAILQ_FOREACH(j, &J->ending, entry)
		if (j->num == num)
			return 1;
	return 0;
}

void
job_copy(json_object *to, json_object *rec, const char *key)
{
	json_object	*v;

	if (json_object_object_get_ex(rec, key, &v))
		json_object_object_add(to, key, json_object_get(v));
}

struct job *
job_new_packed(uint64_t num, enum tier tier, int reload, unsigned busy)
{
	struct job	*j = xcalloc(1, sizeof(*j));

	j->num = num;
	ticket_format(j->ticket, sizeof(j->ticket), num);
	j->status = JOB_QUEUED;
	j->tier = tier;
	j->reload = reload;
	j->busy = busy;
	return j;
}

/*
 * What j's record says of its commands: how many, how many ran, whether
 * all forward.
 */
void
job_rec_counts(struct job *j)
{
	json_object	*cmds = job_rec_get(j->rec, "commands");
	json_object	*res = job_rec_get(j->rec, "results");
	size_t		 i;

	/* Not yet checked, maybe (recover_check_start()): no assumption. */
	j->ncmds = json_object_is_type(cmds, json_type_array) ?
	    json_object_array_length(cmds) : 0;
	j->completed = json_object_is_type(res, json_type_array) ?
	    json_object_array_length(res) : 0;
	j->forwards = j->ncmds > 0;
	for (i = 0; i < j->ncmds; i++)
		if (job_rec_get(json_object_array_get_idx(cmds, i),
		    "forward") == NULL)
			j->forwards = 0;
}

struct job *
job_new(json_object *rec, uint64_t num)
{
	struct job	*j = xcalloc(1, sizeof(*j));
	json_object	*cmds = job_rec_get(rec, "commands"), *c, *b;
	size_t		 i;

	j->num = num;
	ticket_format(j->ticket, sizeof(j->ticket), num);
	j->rec = rec;
	j->status = JOB_QUEUED;
	if (tier_parse(json_object_get_string(job_rec_get(rec, "tier")),
	    &j->tier) == -1)
		j->tier = TIER_INSTANT;
	j->reload = json_object_get_boolean(job_rec_get(rec, "causes_reload"));
	job_rec_counts(j);
	for (i = 0; i < j->ncmds; i++) {
		c = json_object_array_get_idx(cmds, i);
		if ((b = job_rec_get(c, "busy")) == NULL)
			continue;
		if (strcmp(json_object_get_string(b), "tests_running") == 0)
			j->busy |= BUSY_BIT(BUSY_TESTS_RUNNING);
		else
			j->busy |= BUSY_BIT(BUSY_COMPILING);
	}
	return j;
}

void
job_free(struct job *j)
{
	json_object_put(j->rec);
	free(j);
}

void
job_set_status(struct jobs *J, struct job *j, enum job_status s)
{
	/* An end is told to the editor state once stored (jobend_forget). */
	if (j->reload && !j->uncounted && (s == JOB_RUNNING) !=
	    (j->status == JOB_RUNNING) && J->reloads_changed != NULL)
		J->reloads_changed(J->edsubs);
	if (!j->uncounted) {
		J->count[j->status]--;
		J->count[s]++;
	}
	j->status = s;
	job_rec_set(j->rec, "status", job_status_name(s));
	if (J->hooks.changed != NULL)
		J->hooks.changed(J->hooks.arg);
}

/* Take j off the queued or running list. */
void
job_unlist(struct jobs *J, struct job *j)
{
	if (j->status == JOB_RUNNING) {
		TAILQ_REMOVE(&J->running, j, entry);
		J->nrunning--;
	} else
		job_dequeue(J, j);
}

void
job_foreach_stored(struct jobs *J, enum job_status s,
    void (*fn)(struct job *, void *), void *arg)
{
	struct joblist	*lists[] = { &J->running, &J->ending, &J->unstored };
	struct job	*j;
	size_t		 i;

	for (i = s == JOB_RUNNING ? 0 : 1; i < 3; i++)
		TAILQ_FOREACH(j, lists[i], entry)
			if (i == 0 || (j->uncounted && j->counted == s))
				fn(j, arg);
}

/* The first heavy job, into *arg (job_foreach_stored). */
static void
heavy_first(struct job *k, void *arg)
{
	struct job	**first = arg;

	if (*first == NULL && k->tier == TIER_HEAVY)
		*first = k;
}

struct job *
job_heavy_stored(struct jobs *J)
{
	struct job	*k = NULL;

	job_foreach_stored(J, JOB_RUNNING, heavy_first, &k);
	return k;
}

/* Mark rec finished with status s at the current time. */
void
job_rec_finish(json_object *rec, enum job_status s, const char *error)
{
	char	ts[UTIL_TIMESTAMP_LEN];

	job_rec_set(rec, "status", job_status_name(s));
	util_timestamp(ts, util_now_ms());
	job_rec_set(rec, "finished_at", ts);
	if (error != NULL)
		job_rec_set(rec, "error", error);
}

int
job_put_worker(struct jobs *J, struct worker *w)
{
	json_object	*rec = worker_record(w, w->job ? w->job->ticket : NULL);
	int		 rc;

	rc = store_worker_put(J->st, w->pid, json_object_to_json_string_ext(
	    rec, JSON_C_TO_STRING_PLAIN));
	json_object_put(rec);
	w->recorded = 1;
	return rc;
}

int
job_store_growing(struct jobs *J, const char *what,
    int (*fn)(struct jobs *, void *), void *arg)
{
	int	rc;

	while ((rc = fn(J, arg)) != 0 && store_map_full(rc) &&
	    job_store_grow(J, what) == 0)
		;
	return rc;
}

/* One job's last record, alone (job_store_final). */
struct final {
	uint64_t	 num;
	enum job_status	 s;
	const char	*rec;
};

static int
final_once(struct jobs *J, void *arg)
{
	struct final	*f = arg;
	int		 rc;

	if ((rc = store_begin(J->st)) != 0 ||
	    (rc = store_job_put(J->st, f->num, job_status_char(f->s),
	    util_now_ms() + (int64_t)J->cfg.opt->result_ttl * 1000,
	    f->rec)) != 0 || (rc = job_commit(J, 0)) != 0)
		store_abort(J->st);
	return rc;
}

int
job_store_final(struct jobs *J, const char *what, uint64_t num,
    enum job_status s, json_object *rec)
{
	struct final	f = { num, s, json_object_to_json_string_ext(rec,
			    JSON_C_TO_STRING_PLAIN) };

	return job_store_growing(J, what, final_once, &f);
}

/* The map is full: grow it if --map-size-max allows; 0 when it grew. */
int
job_store_grow(struct jobs *J, const char *what)
{
	struct store_info	si;
	int			rc;

	if ((rc = store_grow(J->st)) != 0)
		return rc;
	if (store_info(J->st, &si) == 0)
		log_info("%s: the store's map was full: grown to %llu bytes",
		    what, (unsigned long long)si.map_size);
	return 0;
}

/* struct jobs, as the folders above the engine see it (job.h). */

const struct options *
jobs_options(const struct jobs *J)
{
	return J->cfg.opt;
}

struct store *
jobs_store(const struct jobs *J)
{
	return J->st;
}

uint64_t
jobs_count(const struct jobs *J, enum job_status s)
{
	return J->count[s];
}

const struct forksrv *
jobs_forksrv(const struct jobs *J)
{
	return &J->W.fs;
}

char **
jobs_worker_env(const struct jobs *J)
{
	return J->W.env;
}

struct facejobs *
jobs_facejobs(const struct jobs *J)
{
	return J->facejobs;
}

void
jobs_set_facejobs(struct jobs *J, struct facejobs *T,
    void (*free_fn)(struct facejobs *))
{
	J->facejobs = T;
	J->facejobs_free = free_fn;
}

struct edsubs *
jobs_edsubs(const struct jobs *J)
{
	return J->edsubs;
}

void
jobs_set_edsubs(struct jobs *J, struct edsubs *S,
    void (*changed)(struct edsubs *))
{
	J->edsubs = S;
	J->reloads_changed = changed;
}

void
job_foreach_queued(struct jobs *J, void (*fn)(struct job *, void *),
    void *arg)
{
	struct job	*j;

	TAILQ_FOREACH(j, &J->queued, entry)
		fn(j, arg);
}

uint64_t
job_owner_conn(const struct job *j)
{
	return j->owner_conn;
}

int
job_reload(const struct job *j)
{
	return j->reload;
}
