/* SPDX-License-Identifier: ISC */
/*
 * The editor probe: it polls the editor named by the tool table's
 * "editor" and holds, per change, whether it answers and which of its
 * flags are up.  Over an editor link (unity-mcp, unity-hub) the broker
 * polls by itself (edpoll.c); for the other dialects a cmdgate-worker in
 * probe mode polls and says each change as a JSON line, started like a
 * job's worker (launch.c) but no job: no store record, no place among
 * --max-workers.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "jstrict.h"
#include "link.h"
#include "log.h"
#include "policy.h"
#include "proc.h"
#include "umcp.h"
#include "util.h"
#include "wire.h"

struct edprobe {
	struct edprobe_config	 cfg;
	struct edprobe_hooks	 hooks;
	json_object		*editor;	/* as the table has it, or NULL */
	char			*canon;		/* editor's JSON, to compare */
	pid_t			 pid;		/* 0: no process */
	struct edpoll		*poll;		/* or the broker polls */
	struct child		 child;		/* its pipes, until reaped */
	struct event		*restart_ev;
	struct editor_flags	 flags;
	int			 reachable;	/* -1: not known */
	int			 unreachable;	/* it answered, then no more: its
					   flags are the last it said */
	int64_t			 lost_ms;	/* 1 to 0, monotonic; or 0 */
	void			(*watch)(void *);
	void			*watch_arg;
	char			*error;
	int64_t			 since_ms;	/* of reachable and error */
	int			 backoff_ms;	/* of the next restart */
	int			 outage;	/* logged; until it reports */
	int			 replacing;	/* killed for a new editor */
	int			 stopping;
};

static void	edprobe_start(struct edprobe *);

static const struct child_hooks	edprobe_child_hooks;

static void
edprobe_set_flags(struct edprobe *P, const struct editor_flags *f)
{
	if (memcmp(&P->flags, f, sizeof(*f)) == 0)
		return;
	P->flags = *f;
	P->hooks.flags(P->hooks.arg, f);
}

static void
edprobe_clear_flags(struct edprobe *P)
{
	struct editor_flags	none = { 0, 0, 0 };

	edprobe_set_flags(P, &none);
}

/* What status shows: reachable (-1: null) and the error, if any. */
static void
edprobe_state(struct edprobe *P, int reachable, const char *error)
{
	if (P->reachable == reachable && ((error == NULL && P->error == NULL) ||
	    (error != NULL && P->error != NULL &&
	    strcmp(error, P->error) == 0)))
		return;
	if (P->reachable == 1 && reachable == 0)
		P->lost_ms = util_monotonic_ms();
	else if (reachable != 0)
		P->lost_ms = 0;
	free(P->error);
	P->error = error != NULL ? xstrdup(error) : NULL;
	P->since_ms = util_now_ms();
	if (P->reachable != reachable && P->watch != NULL) {
		P->reachable = reachable;
		P->watch(P->watch_arg);
	}
	P->reachable = reachable;
}

static void
on_restart(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	edprobe_start(arg);
}

/* Its grace after SIGTERM passed. */
static void
edprobe_child_late(void *arg)
{
	struct edprobe	*P = arg;

	if (P->pid <= 0)
		return;
	log_info("editor probe: worker %d still alive after --kill-grace: "
	    "SIGKILL", (int)P->pid);
	kill(-P->pid, SIGKILL);
}

struct edprobe *
edprobe_new(const struct edprobe_config *cfg, const struct edprobe_hooks *hooks)
{
	struct edprobe	*P = xcalloc(1, sizeof(*P));

	P->cfg = *cfg;
	P->hooks = *hooks;
	P->reachable = -1;
	P->since_ms = util_now_ms();
	P->restart_ev = evtimer_new(cfg->base, on_restart, P);
	if (P->restart_ev == NULL)
		fatalx("evtimer_new");
	child_init(&P->child, cfg->base, &edprobe_child_hooks, P);
	return P;
}

void
edprobe_free(struct edprobe *P)
{
	if (P == NULL)
		return;
	/* The loop is over: nobody reaps it; it also ends with the broker. */
	if (P->pid > 0)
		kill(-P->pid, SIGKILL);
	edpoll_free(P->poll);
	child_free(&P->child);
	event_free(P->restart_ev);
	json_object_put(P->editor);
	free(P->canon);
	free(P->error);
	free(P);
}

/* SIGTERM now, SIGKILL after kill_grace; what it says is not heard. */
static void
edprobe_kill(struct edprobe *P)
{
	if (P->pid <= 0)
		return;
	child_mute(&P->child);
	kill(P->pid, SIGTERM);
	child_grace(&P->child, P->cfg.kill_grace);
	edprobe_clear_flags(P);
}

/* The probe is down (why): restart it later, said once per outage. */
static void
edprobe_outage(struct edprobe *P, const char *why)
{
	struct timeval	tv;
	int		wait = P->backoff_ms > 0 ? P->backoff_ms :
			    PROBE_BACKOFF_MS;

	/* Nothing is known of the editor meanwhile: what it said stands. */
	if (P->reachable == 1)
		P->unreachable = 1;
	edprobe_state(P, -1, why);
	if (!P->outage)
		log_warnx("editor probe: %s; restarting it in %d ms, then "
		    "less and less often (at most every %d ms), quietly "
		    "until it reports again", why, wait, PROBE_BACKOFF_MAX_MS);
	else
		log_debug("editor probe: %s; restarting it in %d ms", why,
		    wait);
	P->outage = 1;
	P->backoff_ms = wait * 2 > PROBE_BACKOFF_MAX_MS ?
	    PROBE_BACKOFF_MAX_MS : wait * 2;
	tv.tv_sec = wait / 1000;
	tv.tv_usec = (wait % 1000) * 1000;
	evtimer_add(P->restart_ev, &tv);
}

/* The worker said something that is no editor event: it is replaced. */
static void
edprobe_garbled(struct edprobe *P, const char *why)
{
	log_warnx("editor probe: worker %d: %s; killed", (int)P->pid, why);
	child_mute(&P->child);
	kill(-P->pid, SIGKILL);
}

/*
 * {"event":"editor","asked":false,"error":...}: a job's exchange with the
 * bridge held its lock for the whole poll, so the probe could not ask.
 * Nothing is known, and nothing changes: the flags and reachability it
 * last reported stand (a held compile must not run during a test run
 * because a read was slow).  The error shows in the status meanwhile.
 */
static void
edprobe_unasked(struct edprobe *P, json_object *ev)
{
	const char	*e = json_object_get_string(json_object_object_get(ev,
			    WIRE_ERROR));

	log_info("editor probe: could not ask the editor (%s); what it last "
	    "reported stands", e != NULL ? e : "no reason given");
	edprobe_state(P, P->reachable, e != NULL ? e : "could not ask");
}

/* {"event":"editor","reachable":true,"flags":{...}} or reachable false. */
static void
edprobe_event(struct edprobe *P, json_object *ev)
{
	static const char	*unknown = "the editor cannot be reached";
	struct editor_flags	 f = { 0, 0, 0 };
	json_object		*fl;
	const char		*e;

	if (P->outage)
		log_info("editor probe: worker %d reports again", (int)P->pid);
	P->outage = 0;
	P->backoff_ms = 0;
	if (json_object_object_get_ex(ev, WIRE_ASKED, NULL)) {
		edprobe_unasked(P, ev);
		return;
	}
	if (!json_object_get_boolean(json_object_object_get(ev,
	    WIRE_REACHABLE))) {
		e = json_object_get_string(json_object_object_get(ev,
		    WIRE_ERROR));
		if (P->reachable != 0)
			log_warnx("editor probe: unreachable: %s; what it last "
			    "said stands", e != NULL ? e : unknown);
		P->unreachable = 1;
		edprobe_state(P, 0, e != NULL ? e : unknown);
		return;
	}
	if (P->reachable != 1)
		log_info("editor probe: the editor answers");
	fl = json_object_object_get(ev, WIRE_FLAGS);
	f.compiling = json_object_get_boolean(json_object_object_get(fl,
	    WIRE_FLAG_COMPILING));
	f.tests_running = json_object_get_boolean(json_object_object_get(fl,
	    WIRE_FLAG_TESTS_RUNNING));
	f.busy = json_object_get_boolean(json_object_object_get(fl,
	    WIRE_FLAG_EDITOR_BUSY));
	P->unreachable = 0;
	edprobe_state(P, 1, NULL);
	edprobe_set_flags(P, &f);
}

/* Whether ev is an editor event: reachable true or false, or asked false. */
static int
edprobe_is_event(json_object *ev)
{
	json_object	*v;
	const char	*kind;

	if (!json_object_is_type(ev, json_type_object) ||
	    (kind = json_object_get_string(json_object_object_get(ev,
	    WIRE_EVENT))) == NULL || strcmp(kind, WIRE_EV_EDITOR) != 0)
		return 0;
	if (json_object_object_get_ex(ev, WIRE_ASKED, &v))
		return json_object_is_type(v, json_type_boolean) &&
		    !json_object_get_boolean(v);
	return json_object_object_get_ex(ev, WIRE_REACHABLE, &v) &&
	    json_object_is_type(v, json_type_boolean);
}

/* The answer of its call over the editor link, if it is still there. */
static void
edprobe_link_reply(void *arg, pid_t pid, json_object *answer)
{
	struct edprobe	*P = arg;

	if (P->pid == pid && pid > 0)
		child_reply(&P->child, answer);
}

/* Whether ev is its exchange over the editor link: 1 when taken. */
static int
edprobe_call(struct edprobe *P, json_object *ev)
{
	const char	*kind = json_object_get_string(json_object_object_get(ev,
			    WIRE_EVENT));

	if (kind == NULL || strcmp(kind, WIRE_EV_CALL) != 0 ||
	    P->cfg.links == NULL)
		return 0;
	return edlink_call(P->cfg.links, ev, edprobe_link_reply, P, P->pid) ==
	    0;
}

static int
edprobe_line(void *arg, const char *line, size_t len)
{
	struct edprobe	*P = arg;
	json_object	*ev = NULL;

	if (jstrict_parse(line, len, &ev) == 0 && edprobe_call(P, ev)) {
		json_object_put(ev);
		return 0;
	}
	if (ev == NULL || !edprobe_is_event(ev)) {
		json_object_put(ev);
		edprobe_garbled(P, "a line that is not an editor event");
		return -1;
	}
	edprobe_event(P, ev);
	json_object_put(ev);
	return 0;
}

/* What it wrote; at the end of its pipe it is exiting: SIGCHLD tells. */
static void
edprobe_child_read(void *arg, struct evbuffer *in, int eof)
{
	if (!eof && child_lines(in, PROBE_LINE_MAX, edprobe_line, arg) == 1)
		edprobe_garbled(arg, "a line longer than 64 KiB");
}

static const struct child_hooks edprobe_child_hooks = {
	edprobe_child_read, NULL, edprobe_child_late,
};

/* {"broker": PID, "lock_dir": DIR, "link": B, "probe": EDITOR}; caller
 * puts. */
static json_object *
edprobe_spec(struct edprobe *P)
{
	json_object	*spec = json_object_new_object();

	json_object_object_add(spec, WIRE_SPEC_BROKER,
	    json_object_new_int64(getpid()));
	json_object_object_add(spec, WIRE_SPEC_LOCK_DIR,
	    json_object_new_string(P->cfg.lock_dir));
	json_object_object_add(spec, WIRE_SPEC_LINK,
	    json_object_new_boolean(P->cfg.links != NULL));
	json_object_object_add(spec, WIRE_SPEC_PROBE,
	    json_object_get(P->editor));
	return spec;
}

/* The editor link its polls go over, or NULL: a worker polls. */
static struct link *
edprobe_link(struct edprobe *P)
{
	const char	*dialect = json_object_get_string(json_object_object_get(
			    P->editor, "dialect"));
	const char	*to = json_object_get_string(json_object_object_get(
			    P->editor, "to"));
	struct link	*L;

	if (P->cfg.links == NULL || !umcp_dialect(dialect) || to == NULL ||
	    (L = links_get(P->cfg.links, dialect, to)) == NULL ||
	    !link_carries_workers(L))
		return NULL;
	return L;
}

static void
edprobe_polled(void *arg, json_object *ev)
{
	edprobe_event(arg, ev);
}

/* The broker stops polling: what it learnt is no more. */
static void
edprobe_unpoll(struct edprobe *P)
{
	edpoll_free(P->poll);
	P->poll = NULL;
	edprobe_clear_flags(P);
	P->unreachable = 0;
	edprobe_state(P, -1, NULL);
}

static void
edprobe_start(struct edprobe *P)
{
	json_object	*spec;
	struct link	*L;
	char		 why[256];
	int		 sfd, efd, rc;

	if (P->editor == NULL || P->stopping || P->pid > 0 || P->poll != NULL)
		return;
	if ((L = edprobe_link(P)) != NULL) {
		log_info("editor probe: polls %s over its editor link",
		    json_object_get_string(json_object_object_get(P->editor,
		    "to")));
		edprobe_state(P, -1, NULL);
		P->poll = edpoll_new(P->cfg.base, L, P->editor, edprobe_polled,
		    P);
		return;
	}
	if ((rc = launch_worker(P->cfg.worker_path, P->cfg.env, &P->pid, &sfd,
	    &efd)) != 0) {
		P->pid = 0;
		snprintf(why, sizeof(why), "cannot start %s: %s",
		    P->cfg.worker_path, strerror(rc));
		edprobe_outage(P, why);
		return;
	}
	spec = edprobe_spec(P);
	child_start(&P->child, sfd, efd, spec);
	json_object_put(spec);
	if (!P->outage)
		log_info("editor probe: worker %d polls %s", (int)P->pid,
		    json_object_get_string(json_object_object_get(P->editor,
		    "to")));
	edprobe_state(P, -1, NULL);
}

void
edprobe_configure(struct edprobe *P, json_object *editor)
{
	const char	*canon = editor != NULL ? json_object_to_json_string_ext(
			    editor, JSON_C_TO_STRING_PLAIN) : NULL;

	if ((canon == NULL && P->canon == NULL) || (canon != NULL &&
	    P->canon != NULL && strcmp(canon, P->canon) == 0))
		return;
	free(P->canon);
	P->canon = canon != NULL ? xstrdup(canon) : NULL;
	json_object_put(P->editor);
	P->editor = json_object_get(editor);
	evtimer_del(P->restart_ev);
	P->backoff_ms = 0;
	P->outage = 0;
	if (P->poll != NULL)
		edprobe_unpoll(P);
	if (P->pid > 0) {
		log_info("editor probe: the tool table's editor changed: "
		    "stopping worker %d", (int)P->pid);
		P->replacing = 1;
		edprobe_kill(P);	/* the new one starts once it is reaped */
	} else if (editor != NULL)
		edprobe_start(P);
	if (editor == NULL)
		edprobe_state(P, -1, NULL);
}

void
edprobe_stop(struct edprobe *P)
{
	if (P == NULL)
		return;
	P->stopping = 1;
	evtimer_del(P->restart_ev);
	edprobe_kill(P);
	if (P->poll != NULL)
		edprobe_unpoll(P);
}

void
edprobe_watch(struct edprobe *P, void (*fn)(void *), void *arg)
{
	if (P == NULL)
		return;
	P->watch = fn;
	P->watch_arg = arg;
}

int
edprobe_reachable(const struct edprobe *P, int64_t *lost_ms)
{
	*lost_ms = P != NULL ? P->lost_ms : 0;
	return P != NULL && P->editor != NULL ? P->reachable : -1;
}

int
edprobe_alive(const struct edprobe *P)
{
	return P != NULL && P->pid > 0;
}

int
edprobe_reaped(struct edprobe *P, pid_t pid, int status)
{
	char	why[128];

	if (P == NULL || P->pid <= 0 || pid != P->pid)
		return 0;
	child_close(&P->child);
	child_grace_stop(&P->child);
	P->pid = 0;
	if (P->replacing || P->stopping || P->editor == NULL) {
		/* Another editor, or none: this one's flags are no more. */
		edprobe_clear_flags(P);
		P->unreachable = 0;
		P->replacing = 0;
		edprobe_state(P, -1, NULL);
		edprobe_start(P);
		return 1;
	}
	if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "worker %d was killed by signal %d",
		    (int)pid, WTERMSIG(status));
	else
		snprintf(why, sizeof(why), "worker %d exited with status %d",
		    (int)pid, WEXITSTATUS(status));
	edprobe_outage(P, why);
	return 1;
}

json_object *
edprobe_json(const struct edprobe *P)
{
	json_object	*o = json_object_new_object();
	char		 ts[UTIL_TIMESTAMP_LEN];

	json_object_object_add(o, "probe",
	    json_object_new_boolean(P != NULL && P->editor != NULL));
	json_object_object_add(o, "reachable", P == NULL ||
	    P->reachable < 0 ? NULL : json_object_new_boolean(P->reachable));
	if (P != NULL && P->error != NULL)
		json_object_object_add(o, "error",
		    json_object_new_string(P->error));
	if (P != NULL)
		util_timestamp(ts, P->since_ms);
	json_object_object_add(o, "since", P != NULL ?
	    json_object_new_string(ts) : NULL);
	return o;
}

int
edprobe_unreachable(const struct edprobe *P)
{
	return P != NULL && P->editor != NULL && P->unreachable;
}
