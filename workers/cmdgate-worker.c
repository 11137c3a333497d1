/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-worker: the program cmdgated starts once per job.  It reads the
 * job's spec (JSON) from descriptor 3 until end of file, runs the commands
 * in order, and writes one JSON line per event to standard output:
 *
 *	{"event":"start","index":I,"pgid":P}
 *	{"event":"progress","index":I,"progress":P,"total":T,"message":M}
 *	{"event":"log","index":I,"level":L,"message":M}
 *	{"event":"result","index":I,"result":{...}}
 *
 * (progress and log from a tool's notify lines, notify.c, or an mcp-http
 * server's notifications, at most 50 a second per command)
 * then exits 0.  Started with a "probe" spec instead, it polls the
 * editor's state and writes {"event":"editor",...} lines when it changes
 * (edwatch.c), until SIGTERM or the broker is gone.  It never links the
 * broker's store or event loop.  Exec tools run with no shell in a
 * process group of their own; forward tools are one request to an
 * upstream in its dialect (forward.c, upstream.c).  On SIGTERM it passes
 * the signal to the running tool's process group, waits for the tool to
 * end, and starts nothing more; if the tool outlives the spec's
 * kill_grace, its group gets SIGKILL.  The same happens when the broker
 * is gone (its death signal, the event pipe's hang-up, or a write to it
 * that fails), so that no tool is left running that nobody tracks.  The
 * worker is a child subreaper: whatever a command leaves behind, in its
 * process group or in a session of its own, is killed before the
 * command's result is sent.
 * See cmdgated(8), Workers; include/wire.h spells the spec and the
 * events.
 *
 * This file is the entry: the command line, the spec, and which helper
 * runs it (run.c, forward.c, edwatch.c; forker.c for --forker).  What
 * the helpers share is wproc.c's, which includes none of theirs.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "edwatch.h"
#include "forker.h"
#include "forward.h"
#include "jstrict.h"
#include "linkcall.h"
#include "run.h"
#include "wire.h"
#include "wproc.h"

#define EXIT_USAGE	64
#define SPEC_MAX	(64 * 1024 * 1024)

static volatile sig_atomic_t	got_chld;

static void
worker_signal(int sig)
{
	if (sig == SIGTERM)
		got_term = 1;
	else
		got_chld = 1;
}

/* SIGTERM came (it is blocked while the spec is read). */
static int
worker_term_pending(void)
{
	sigset_t	set;

	return got_term || (sigpending(&set) == 0 &&
	    sigismember(&set, SIGTERM));
}

/* Whether the broker's end of the event pipe is closed. */
static int
worker_events_hung_up(void)
{
	struct pollfd	pfd = { WIRE_EVENTS_FD, 0, 0 };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLERR | POLLHUP));
}

/*
 * The spec, all of it until end of file, strictly parsed; NULL if not.
 * parent is the broker that started us (gone: no spec, quietly).
 */
static json_object *
worker_read_spec(pid_t parent)
{
	json_object	*spec = NULL;
	char		*buf = NULL, *nb;
	size_t		 len = 0, cap = 0;
	ssize_t		 n;

	for (;;) {
		if (len == cap) {
			cap = cap == 0 ? READ_CHUNK : cap * 2;
			if (cap > SPEC_MAX + 1 || (nb = realloc(buf, cap)) == NULL)
				break;
			buf = nb;
		}
		if ((n = read(WIRE_SPEC_FD, buf + len, cap - len)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0) {
			/* A spare the broker retired (or left, even while
			 * it is still dying): no job. */
			if (n == 0 && len == 0 && (worker_term_pending() ||
			    getppid() != parent || worker_events_hung_up()))
				exit(0);
			if (n == 0)
				jstrict_parse(buf, len, &spec);
			break;
		}
		len += (size_t)n;
	}
	close(WIRE_SPEC_FD);
	free(buf);
	return spec;
}

/*
 * What the spec says about this process: the broker that started it
 * (gone before the death signal was set: stop at once) and the soft limit
 * on open files to give back to tools (the broker raised its own).
 */
static void
worker_spec_process(json_object *spec)
{
	json_object	*v;
	struct rlimit	 rl;

	if (json_object_object_get_ex(spec, WIRE_SPEC_BROKER, &v) &&
	    getppid() != (pid_t)json_object_get_int64(v))
		got_term = 1;
	if (json_object_object_get_ex(spec, WIRE_SPEC_NOFILE, &v) &&
	    json_object_get_int64(v) > 0 &&
	    getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    (rlim_t)json_object_get_int64(v) < rl.rlim_cur) {
		rl.rlim_cur = (rlim_t)json_object_get_int64(v);
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * This process as a job needs it: no descriptor past the spec's, the
 * broker's death its SIGTERM, a subreaper of what tools leave, and
 * SIGTERM and SIGCHLD blocked except while it waits, under *waitmask.
 */
static void
worker_process(sigset_t *waitmask)
{
	struct sigaction	 sa;
	sigset_t		 block;

	close_range(WIRE_SPEC_FD + 1, ~0U, 0);
	/* The broker's death ends our tools (SIGTERM, then the grace). */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = worker_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a write to a gone broker fails */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, waitmask);
	sigdelset(waitmask, SIGTERM);
	sigdelset(waitmask, SIGCHLD);
}

/* A job's commands, cmds of spec, each by its helper, its result told. */
static void
worker_commands(json_object *spec, json_object *cmds,
    const sigset_t *waitmask)
{
	json_object	*cmd, *v, *r;
	const char	*ticket, *lock_dir;
	size_t		 i, n, cap;
	int		 fail_fast, ok;

	ticket = json_object_get_string(json_object_object_get(spec,
	    WIRE_SPEC_TICKET));
	fail_fast = json_object_get_boolean(json_object_object_get(spec,
	    WIRE_SPEC_FAIL_FAST));
	cap = (size_t)json_object_get_int64(json_object_object_get(spec,
	    WIRE_SPEC_OUTPUT_CAP));
	if (json_object_object_get_ex(spec, WIRE_SPEC_KILL_GRACE, &v))
		kill_grace_ms = json_object_get_int64(v) * 1000;
	lock_dir = json_object_get_string(json_object_object_get(spec,
	    WIRE_SPEC_LOCK_DIR));
	worker_spec_process(spec);
	n = json_object_array_length(cmds);
	/*
	 * SIGTERM is blocked until a tool is waited for: one that came while
	 * the spec was read (a cancel, a shutdown) is pending, and nothing
	 * starts after it.
	 */
	for (i = 0; i < n && !worker_term_pending(); i++) {
		cmd = json_object_array_get_idx(cmds, i);
		command_index = i;
		if (json_object_object_get_ex(cmd, WIRE_CMD_EXEC, NULL))
			r = run_exec(ticket, cmd, i, cap, waitmask);
		else
			r = forward_run(cmd, i, lock_dir, waitmask);
		ok = json_object_get_boolean(json_object_object_get(r,
		    WIRE_RES_OK));
		wproc_emit_result(i, r);
		if (!ok && fail_fast)
			break;
	}
}

/* One job (or the probe): the spec on WIRE_SPEC_FD, the events on
 * WIRE_EVENTS_FD. */
static int
worker_main(void)
{
	json_object	*spec, *cmds, *probe;
	sigset_t	 waitmask;

	worker_process(&waitmask);
	if ((spec = worker_read_spec(getppid())) == NULL ||
	    (!json_object_object_get_ex(spec, WIRE_SPEC_COMMANDS, &cmds) &&
	    !json_object_object_get_ex(spec, WIRE_SPEC_PROBE, &probe))) {
		fprintf(stderr, "cmdgate-worker: no job spec on fd 3\n");
		return EXIT_USAGE;
	}
	linkcall_on = json_object_get_boolean(json_object_object_get(spec,
	    WIRE_SPEC_LINK));
	if (json_object_object_get_ex(spec, WIRE_SPEC_PROBE, &probe)) {
		worker_spec_process(spec);
		edwatch_run(probe, json_object_get_string(
		    json_object_object_get(spec, WIRE_SPEC_LOCK_DIR)),
		    &waitmask);
	} else
		worker_commands(spec, cmds, &waitmask);
	json_object_put(spec);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("cmdgate-worker %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (argc > 2 || (argc == 2 && strcmp(argv[1], FORKER_ARG) != 0) ||
	    fcntl(WIRE_SPEC_FD, F_GETFD) == -1) {
		fprintf(stderr, "cmdgate-worker: started by cmdgated, not by "
		    "hand (see cmdgated(8))\n");
		return EXIT_USAGE;
	}
	if (argc == 2)
		return forker_run(argv[1], worker_main);
	return worker_main();
}
