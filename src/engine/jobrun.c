/* SPDX-License-Identifier: ISC */
/*
 * The run of a job, as the coordinator judges it: whether its tools may
 * still run, the spec its worker reads (cmdgate-worker(8)), and how it
 * ended once its worker is reaped.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "log.h"
#include "options.h"
#include "proc.h"
#include "tools.h"
#include "wire.h"

int
jobrun_tools_ok(struct jobs *J, struct job *j, char *why, size_t len)
{
	const struct tool	*t;
	const char		*name;
	size_t			 i;

	for (i = 0; i < j->ncmds; i++) {
		name = json_object_get_string(job_rec_get(
		    json_object_array_get_idx(job_rec_get(j->rec, "commands"),
		    i), "tool"));
		t = tooltab_find(*J->cfg.tools, name);
		if (t == NULL || !t->enabled) {
			snprintf(why, len, "commands[%zu]: tool '%s' %s the "
			    "tool table since the job was queued", i, name,
			    t == NULL ? "is no longer in" : "was disabled in");
			return -1;
		}
	}
	return 0;
}

/* Whether command c (of a record) is a reload by the table now; if so
 * it says so, as a command submitted now would. */
static int
jobrun_cmd_reload(struct jobs *J, json_object *c)
{
	const struct tool	*t;

	if (json_object_get_boolean(job_rec_get(c, "causes_reload")) ||
	    (t = tooltab_find(*J->cfg.tools, json_object_get_string(
	    job_rec_get(c, "tool")))) == NULL ||
	    !tool_command_reload(t, job_rec_get(c, "params")))
		return 0;
	json_object_object_add(c, "causes_reload", json_object_new_boolean(1));
	job_rec_set(c, "tier", tier_name(TIER_HEAVY));
	if (job_rec_get(c, "forward") != NULL)
		json_object_object_add(c, WIRE_CMD_RELOAD,
		    json_object_new_boolean(1));
	return 1;
}

int
jobrun_reload_now(struct jobs *J, struct job *j)
{
	json_object	*cmds;
	size_t		 i;
	int		 any = 0;

	if (j->reload || j->rec == NULL)
		return 0;
	cmds = job_rec_get(j->rec, "commands");
	for (i = 0; i < j->ncmds; i++)
		any |= jobrun_cmd_reload(J, json_object_array_get_idx(cmds, i));
	if (!any)
		return 0;
	json_object_object_add(j->rec, "causes_reload",
	    json_object_new_boolean(1));
	job_rec_set(j->rec, "tier", tier_name(TIER_HEAVY));
	job_reclass(J, j, TIER_HEAVY, 1);
	log_info("%s: the tool table makes it a reload since it was queued: "
	    "it waits for the reload guard as one", j->ticket);
	return 1;
}

const char *
jobrun_state_dir(struct jobs *J, char *buf, size_t len)
{
	const char	*dir = J->cfg.opt->state_dir;

	if (dir[0] != '/' && realpath(dir, buf) != NULL)
		return buf;
	snprintf(buf, len, "%s", dir);
	return buf;
}

/* Where a command's tool starts: the table's cwd, else the state dir. */
static const char *
jobrun_cwd(struct jobs *J, const char *name, char *buf, size_t len)
{
	const struct tool	*t = tooltab_find(*J->cfg.tools, name);

	if (t != NULL && t->cwd != NULL)
		return t->cwd;
	return jobrun_state_dir(J, buf, len);
}

json_object *
jobrun_spec(struct jobs *J, struct job *j)
{
	static const char *keep[] = { WIRE_CMD_TOOL, WIRE_CMD_EXEC,
	    WIRE_CMD_FORWARD, WIRE_CMD_RELOAD, WIRE_CMD_PARAMS,
	    WIRE_CMD_TIMEOUT, NULL };
	json_object	*spec = json_object_new_object(), *cmds, *c, *src;
	char		 dir[PATH_MAX];
	size_t		 i, k;

	json_object_object_add(spec, WIRE_SPEC_TICKET,
	    json_object_new_string(j->ticket));
	json_object_object_add(spec, WIRE_SPEC_FAIL_FAST,
	    json_object_new_boolean(json_object_get_boolean(job_rec_get(j->rec,
	    "fail_fast")) || json_object_get_boolean(job_rec_get(j->rec,
	    "atomic"))));
	json_object_object_add(spec, WIRE_SPEC_OUTPUT_CAP,
	    json_object_new_int64((int64_t)J->cfg.opt->output_cap));
	json_object_object_add(spec, WIRE_SPEC_KILL_GRACE,
	    json_object_new_int64((int64_t)J->cfg.opt->kill_grace));
	json_object_object_add(spec, WIRE_SPEC_BROKER,
	    json_object_new_int64(getpid()));
	json_object_object_add(spec, WIRE_SPEC_LOCK_DIR,
	    json_object_new_string(jobrun_state_dir(J, dir, sizeof(dir))));
	json_object_object_add(spec, WIRE_SPEC_LINK,
	    json_object_new_boolean(J->cfg.links != NULL));
	if (launch_nofile() > 0)
		json_object_object_add(spec, WIRE_SPEC_NOFILE,
		    json_object_new_int64(launch_nofile()));
	cmds = json_object_new_array();
	for (i = 0; i < j->ncmds; i++) {
		src = json_object_array_get_idx(job_rec_get(j->rec,
		    "commands"), i);
		c = json_object_new_object();
		for (k = 0; keep[k] != NULL; k++)
			job_copy(c, src, keep[k]);
		if (job_rec_get(src, WIRE_CMD_EXEC) != NULL)
			json_object_object_add(c, WIRE_CMD_CWD,
			    json_object_new_string(jobrun_cwd(J,
			    json_object_get_string(job_rec_get(src,
			    WIRE_CMD_TOOL)), dir, sizeof(dir))));
		json_object_array_add(cmds, c);
	}
	json_object_object_add(spec, WIRE_SPEC_COMMANDS, cmds);
	return spec;
}

enum job_status
jobrun_outcome(struct job *j, struct worker *w, int status, char *why,
    size_t len)
{
	json_object	*res = job_rec_get(j->rec, "results"), *r, *e;
	size_t		 i, n = json_object_array_length(res);
	int		 ff;

	if (j->cancelling) {
		snprintf(why, len, "cancelled");
		return JOB_CANCELLED;
	}
	if (w != NULL && w->garbled != NULL) {
		snprintf(why, len, "%s; the worker was stopped", w->garbled);
		return JOB_FAILED;
	}
	if (w != NULL && WIFSIGNALED(status)) {
		snprintf(why, len, "the worker was killed by signal %d (SIG%s)",
		    WTERMSIG(status), sigabbrev_np(WTERMSIG(status)) ?
		    sigabbrev_np(WTERMSIG(status)) : "?");
		return JOB_FAILED;
	}
	if (w != NULL && WEXITSTATUS(status) != 0) {
		snprintf(why, len, "the worker exited with status %d",
		    WEXITSTATUS(status));
		return JOB_FAILED;
	}
	for (i = 0; i < n; i++) {
		r = json_object_array_get_idx(res, i);
		if (json_object_get_boolean(job_rec_get(r, WIRE_RES_OK)))
			continue;
		json_object_object_add(j->rec, "failed_at_command",
		    json_object_new_int64((int64_t)i));
		json_object_object_add(j->rec, "rolled_back",
		    json_object_new_boolean(0));
		e = job_rec_get(r, WIRE_RES_ERROR);
		snprintf(why, len, "command %zu (%s) failed%s%s", i,
		    json_object_get_string(job_rec_get(r, WIRE_RES_TOOL)),
		    e ? ": " : "", e ? json_object_get_string(e) : "");
		return JOB_FAILED;
	}
	ff = json_object_get_boolean(job_rec_get(j->rec, "fail_fast"));
	if (n < j->ncmds && !ff) {
		snprintf(why, len, "the worker stopped after %zu of %zu "
		    "commands", n, j->ncmds);
		return JOB_FAILED;
	}
	why[0] = '\0';
	return JOB_DONE;
}
