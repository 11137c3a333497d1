/* SPDX-License-Identifier: ISC */
/*
 * A read the broker forwards itself, with no worker: a job whose one
 * command is a forward to a bridge an editor link carries (unity-mcp,
 * jsonrpc-lsp), instant or smooth, with no await, no reload and no busy
 * label, while that link is open (a jsonrpc-lsp link, which no worker
 * opens, is opened by the read).  The command goes over the link once the job is stored as
 * running; the answer becomes the command's result as the worker's
 * forward.c makes it (common/fwdres.c), and the job ends.  What needs a
 * worker's patience is handed to one, which begins the command afresh:
 * a refusal (nothing was sent), or an idempotent read lost after it was
 * written (the worker sends it again).  See cmdgated(8), Editor link.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine.h"
#include "fwdres.h"
#include "internal.h"
#include "link.h"
#include "log.h"
#include "util.h"
#include "wire.h"

#define LINKJOB_CONNECT_S	30	/* connect_timeout_s's default */

struct linkjob {
	struct jobs	*J;
	uint64_t	 num;
	int64_t		 t0;
	char		*tool, *dialect, *to;
	int		 idempotent;
};

static json_object *
linkjob_member(json_object *o, const char *name)
{
	json_object	*v;

	return json_object_object_get_ex(o, name, &v) ? v : NULL;
}

static const char *
linkjob_str(json_object *o, const char *name)
{
	json_object	*v = linkjob_member(o, name);

	return json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : NULL;
}

/* spec's one command, if j has one; NULL when not. */
static json_object *
linkjob_command(struct job *j, json_object *spec)
{
	json_object	*cmds = linkjob_member(spec, WIRE_SPEC_COMMANDS);

	if (j->ncmds != 1 || !json_object_is_type(cmds, json_type_array) ||
	    json_object_array_length(cmds) != 1)
		return NULL;
	return json_object_array_get_idx(cmds, 0);
}

/* The link cmd's forward goes over; NULL when none. */
static struct link *
linkjob_link(struct jobs *J, json_object *cmd)
{
	json_object	*fw = linkjob_member(cmd, WIRE_CMD_FORWARD);
	struct link	*L;
	const char	*to = linkjob_str(fw, "to");

	if (J->cfg.links == NULL || !json_object_is_type(fw,
	    json_type_object) || to == NULL || linkjob_member(fw, "await") !=
	    NULL || json_object_get_boolean(linkjob_member(cmd,
	    WIRE_CMD_RELOAD)))
		return NULL;
	L = links_get(J->cfg.links, linkjob_str(fw, "dialect"), to);
	/* A link no worker opens is opened by the read itself. */
	return L != NULL && (link_connected(L) || !link_carries_workers(L)) ?
	    L : NULL;
}

int
linkjob_fits(struct jobs *J, struct job *j, json_object *spec)
{
	json_object	*cmd = linkjob_command(j, spec);

	/* A busy label is held by a worker while it runs (job_busy). */
	if (cmd == NULL || j->reload || j->busy != 0 || (j->tier !=
	    TIER_INSTANT && j->tier != TIER_SMOOTH))
		return 0;
	return linkjob_link(J, cmd) != NULL;
}

static void
linkjob_free(struct linkjob *lj)
{
	free(lj->tool);
	free(lj->dialect);
	free(lj->to);
	free(lj);
}

/* The result of lj's command from its call's end a. */
static json_object *
linkjob_result(struct linkjob *lj, const struct link_answer *a)
{
	json_object	*r = json_object_new_object();

	json_object_object_add(r, WIRE_RES_TOOL,
	    json_object_new_string(lj->tool));
	json_object_object_add(r, WIRE_RES_SENT,
	    json_object_new_boolean(a->sent));
	if (a->status == UP_OK)
		fwdres_answered(r, lj->dialect, lj->to,
		    json_object_get(a->out));
	else {
		fwdres_fail(r, a->status, a->closed, a->err != NULL ? a->err :
		    lj->to);
		if (a->status == UP_ERROR)
			json_object_object_add(r, WIRE_RES_UPSTREAM_ERROR,
			    json_object_get(a->out));
	}
	json_object_object_add(r, WIRE_RES_DURATION, json_object_new_int64(
	    util_monotonic_ms() - lj->t0));
	return r;
}

/* j's command ended with r (taken): j ends. */
static void
linkjob_end(struct jobs *J, struct job *j, json_object *r)
{
	jobs_result(J, j, r);
	json_object_put(r);
	jobs_linked_end(J, j);
}

static void
linkjob_answered(void *arg, const struct link_answer *a)
{
	struct linkjob	*lj = arg;
	struct job	*j = job_find(lj->J, lj->num);

	if (j == NULL || j->linked != lj) {
		linkjob_free(lj);	/* cancelled, or the broker stops */
		return;
	}
	j->linked = NULL;
	if (a->status == UP_REFUSED || (a->status == UP_LOST &&
	    lj->idempotent)) {
		log_info("%s: %s; a worker takes it on", j->ticket,
		    a->err != NULL ? a->err : "not answered");
		jobs_handover(lj->J, j);
	} else
		linkjob_end(lj->J, j, linkjob_result(lj, a));
	linkjob_free(lj);
}

void
linkjob_run(struct jobs *J, struct job *j, json_object *spec)
{
	json_object	*cmd = linkjob_command(j, spec), *fw, *params, *v;
	struct linkjob	*lj = xcalloc(1, sizeof(*lj));
	struct link	*L = linkjob_link(J, cmd);
	const char	*method;
	int64_t		 timeout_ms, connect_s;

	fw = linkjob_member(cmd, WIRE_CMD_FORWARD);
	lj->J = J;
	lj->num = j->num;
	lj->t0 = util_monotonic_ms();
	lj->tool = xstrdup(linkjob_str(cmd, WIRE_CMD_TOOL) != NULL ?
	    linkjob_str(cmd, WIRE_CMD_TOOL) : "?");
	lj->dialect = xstrdup(linkjob_str(fw, "dialect"));
	lj->to = xstrdup(linkjob_str(fw, "to"));
	lj->idempotent = json_object_get_boolean(linkjob_member(fw,
	    "idempotent"));
	method = linkjob_str(fw, "method") != NULL ? linkjob_str(fw,
	    "method") : lj->tool;
	params = (v = linkjob_member(fw, "params")) != NULL ? v :
	    linkjob_member(cmd, WIRE_CMD_PARAMS);
	timeout_ms = json_object_get_int64(linkjob_member(cmd,
	    WIRE_CMD_TIMEOUT)) * 1000;
	connect_s = (v = linkjob_member(fw, "connect_timeout_s")) != NULL ?
	    json_object_get_int64(v) : LINKJOB_CONNECT_S;
	j->linked = lj;
	log_debug("%s running: over the editor link to %s", j->ticket,
	    lj->to);
	link_call(L, method, params, connect_s > 0 ? connect_s * 1000 :
	    timeout_ms, timeout_ms, linkjob_answered, lj);
}

void
linkjob_cancel(struct jobs *J, struct job *j)
{
	struct link_answer	 a;
	struct linkjob		*lj = j->linked;
	char			 err[512];

	if (lj == NULL)
		return;
	j->linked = NULL;	/* its answer, when it comes, is no one's */
	memset(&a, 0, sizeof(a));
	a.status = UP_CANCELLED;
	a.sent = 1;
	snprintf(err, sizeof(err), "%s: call cancelled", lj->to);
	a.err = err;
	/* lj stays the link's until its callback frees it. */
	linkjob_end(J, j, linkjob_result(lj, &a));
}
