/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_WIRE_H
#define CMDGATE_WIRE_H

#include <stdint.h>

/*
 * The wire between the broker and its worker program, cmdgate-worker:
 * what both sides must spell alike.  Types and constants only.
 *
 * A worker is started (proc/launch.c, or forked by the fork server) with
 * its job's spec on WIRE_SPEC_FD and a pipe to the broker on
 * WIRE_EVENTS_FD.  The broker writes the spec, one JSON object, and
 * closes its end; the worker reads it to end of file, runs it, and
 * writes one JSON object per line on WIRE_EVENTS_FD, each an event
 * (WIRE_EV_*), then exits 0.  A spare worker (started ahead of need)
 * whose spec pipe ends empty after a SIGTERM was retired: it exits 0,
 * quietly.  The objects the spec carries from the tool table (a forward,
 * the editor) are spelled as the table spells them (cmdgate.tools(5),
 * checked by tools/toolfwd.c).
 */

#define WIRE_EVENTS_FD	1	/* the worker's standard output */
#define WIRE_SPEC_FD	3

/*
 * The spec's members.  Every spec has the first two; a job's spec has
 * WIRE_SPEC_COMMANDS and what follows it, the editor probe's spec
 * (engine/edprobe.c) WIRE_SPEC_PROBE instead.
 */
#define WIRE_SPEC_BROKER	"broker"	/* the broker's pid: another
						   parent means it is gone */
#define WIRE_SPEC_LOCK_DIR	"lock_dir"	/* absolute: the upstreams'
						   locks (the state dir) */
#define WIRE_SPEC_NOFILE	"nofile"	/* optional: the soft
						   RLIMIT_NOFILE for tools */
#define WIRE_SPEC_COMMANDS	"commands"	/* array: WIRE_CMD_* objects,
						   run in order */
#define WIRE_SPEC_TICKET	"ticket"	/* the job's ticket */
#define WIRE_SPEC_FAIL_FAST	"fail_fast"	/* true: no command after a
						   failed one */
#define WIRE_SPEC_OUTPUT_CAP	"output_cap"	/* bytes kept of a tool's
						   stdout, and of its stderr */
#define WIRE_SPEC_KILL_GRACE	"kill_grace"	/* optional: seconds a tool
						   has after SIGTERM */
#define WIRE_SPEC_PROBE		"probe"		/* the tool table's "editor"
						   object: poll it */

/* A command's members: an exec tool's (WIRE_CMD_EXEC) or a forward's. */
#define WIRE_CMD_TOOL		"tool"		/* the tool's name */
#define WIRE_CMD_PARAMS		"params"	/* the command's params */
#define WIRE_CMD_TIMEOUT	"timeout_s"	/* seconds it may take */
#define WIRE_CMD_EXEC		"exec"		/* array: the program's argv */
#define WIRE_CMD_CWD		"cwd"		/* exec: where it starts */
#define WIRE_CMD_FORWARD	"forward"	/* the table's forward object,
						   or its "to" string */
#define WIRE_CMD_RELOAD		"reload"	/* forward, optional: true
						   when it reloads the editor */

/*
 * Events, worker to broker.  Each has WIRE_EVENT, its kind; a job's have
 * WIRE_INDEX, the index of the command they are about, which the broker
 * checks against the command it awaits.
 */
#define WIRE_EVENT		"event"
#define WIRE_INDEX		"index"

#define WIRE_EV_START		"start"		/* a command began: WIRE_PGID */
#define WIRE_EV_PROGRESS	"progress"	/* WIRE_PROGRESS, WIRE_TOTAL?,
						   WIRE_MESSAGE? */
#define WIRE_EV_LOG		"log"		/* WIRE_LEVEL, WIRE_MESSAGE */
#define WIRE_EV_ANSWER		"answer"	/* an awaited forward's first
						   answer: WIRE_RESULT */
#define WIRE_EV_RESULT		"result"	/* a command ended: WIRE_RESULT,
						   its WIRE_RES_* object */
#define WIRE_EV_EDITOR		"editor"	/* the probe's, no WIRE_INDEX:
						   WIRE_REACHABLE (and then
						   WIRE_FLAGS or WIRE_ERROR),
						   or WIRE_ASKED false and
						   WIRE_ERROR */

/*
 * WIRE_EV_CALL, worker to broker, no WIRE_INDEX: an exchange with an
 * editor's bridge over the broker's link to it (src/link/), one at a
 * time.  The broker answers on the same descriptor (a socket, both
 * ways) with one line: WIRE_CALL_ID, WIRE_CALL_STATUS and the members
 * below it.  A worker whose spec has WIRE_SPEC_LINK false, or none, has
 * no link: it connects for each exchange itself.
 */
#define WIRE_EV_CALL		"call"
#define WIRE_CALL_ID		"call"		/* the worker's count, from 1 */
#define WIRE_CALL_TO		"to"		/* the bridge, HOST:PORT */
#define WIRE_CALL_DIALECT	"dialect"
#define WIRE_CALL_METHOD	"method"	/* absent: the dialect's ping */
#define WIRE_CALL_PARAMS	"params"
#define WIRE_CALL_OPEN_MS	"open_ms"	/* connect and WELCOME within */
#define WIRE_CALL_TIMEOUT_MS	"timeout_ms"	/* the answer within */
/* The answer's, besides WIRE_CALL_ID. */
#define WIRE_CALL_STATUS	"status"	/* WIRE_UP_STATUS[enum up_status] */
#define WIRE_CALL_OUT		"out"		/* the result, or the error */
#define WIRE_CALL_SENT		"sent"		/* booleans, as struct */
#define WIRE_CALL_CLOSED	"closed"	/* link_answer's */
#define WIRE_CALL_NOLISTEN	"nolisten"
#define WIRE_CALL_BEHIND	"behind"
#define WIRE_CALL_SEEN_AGO	"seen_ago_ms"	/* -1: never */
/* WIRE_ERROR: why, unless ok. */

/* enum up_status (include/upstatus.h) on the wire, in its order. */
#define WIRE_UP_STATUS	{ "ok", "error", "refused", "lost", "timeout", \
			  "cancelled", "protocol", "too_long" }

#define WIRE_SPEC_LINK		"link"		/* true: WIRE_EV_CALL for every
						   exchange with a bridge the
						   broker links (unity-mcp) */

/* The events' other members. */
#define WIRE_PGID		"pgid"		/* the tool's process group;
						   0: none (a forward) */
#define WIRE_PROGRESS		"progress"	/* a number, at least 0 */
#define WIRE_TOTAL		"total"		/* a number over 0 */
#define WIRE_MESSAGE		"message"	/* a string */
#define WIRE_LEVEL		"level"		/* an MCP logging level */
#define WIRE_RESULT		"result"
#define WIRE_REACHABLE		"reachable"	/* whether the editor answers */
#define WIRE_FLAGS		"flags"		/* WIRE_FLAG_*: true or false */
#define WIRE_ASKED		"asked"		/* false: a job's exchange held
						   the bridge all the poll */
#define WIRE_ERROR		"error"		/* why, for people */

/*
 * The editor's flags: the keys of the table's editor.flags, which the
 * worker copies into WIRE_FLAGS with what the paths they name hold.
 */
#define WIRE_FLAG_COMPILING	"compiling"
#define WIRE_FLAG_TESTS_RUNNING	"tests_running"
#define WIRE_FLAG_EDITOR_BUSY	"editor_busy"

/*
 * A command's result, the object of WIRE_EV_RESULT.  The broker stores
 * it as it comes, in the job's results, and clients read it there
 * (cmdgate-protocol(7), Jobs).
 */
#define WIRE_RES_TOOL		"tool"		/* the command's tool */
#define WIRE_RES_OK		"ok"		/* whether it succeeded */
#define WIRE_RES_DURATION	"duration_ms"
#define WIRE_RES_ERROR		"error"		/* not ok: why */
#define WIRE_RES_RESULT		"result"	/* the tool's JSON, or the
						   upstream's result */
#define WIRE_RES_TIMED_OUT	"timed_out"	/* true: its timeout_s passed */
/* An exec tool's. */
#define WIRE_RES_EXIT_CODE	"exit_code"
#define WIRE_RES_SIGNAL		"signal"	/* "SIGKILL": what killed it */
#define WIRE_RES_STDOUT		"stdout"	/* the last output_cap bytes */
#define WIRE_RES_STDERR		"stderr"	/* the same */
#define WIRE_RES_TRUNCATED	"truncated"	/* true: either lost bytes */
/* A forward's. */
#define WIRE_RES_ERROR_TYPE	"error_type"	/* not ok: a WIRE_ERR_* */
#define WIRE_RES_UPSTREAM_ERROR	"upstream_error"	/* as the upstream
							   sent it */
#define WIRE_RES_SENT		"sent"		/* the request was written */
#define WIRE_RES_RESENT		"resent"	/* times an idempotent one
						   lost was sent again */
#define WIRE_RES_POLLS		"polls"		/* calls an await made */
#define WIRE_RES_RELOADED	"reloaded"	/* a reload's loss, then its
						   readiness call answered */

/* A forward's WIRE_RES_ERROR_TYPE. */
#define WIRE_ERR_REFUSED	"upstream_refused"
#define WIRE_ERR_CLOSED		"upstream_closed"
#define WIRE_ERR_LOST		"upstream_lost"
#define WIRE_ERR_TIMEOUT	"upstream_timeout"
#define WIRE_ERR_PROTOCOL	"upstream_protocol"
#define WIRE_ERR_UPSTREAM	"upstream_error"
#define WIRE_ERR_TOOL_FAILED	"tool_failed"
#define WIRE_ERR_CANCELLED	"cancelled"

/*
 * A tool's environment has the job's ticket in WIRE_ENV_TICKET: the
 * broker knows a tool whose worker died by it (a process it inherited).
 */
#define WIRE_ENV_TICKET		"CMDGATE_TICKET"

/*
 * The fork server: cmdgate-worker FORKER_ARG, with a socket on FORKER_FD.
 * What the two sides say there.
 */
#define FORKER_ARG	"--forker"
#define FORKER_FD	3
#define FORKER_HELLO	'h'	/* the fork server, once, when ready */
#define FORKER_NOPIDFD	'p'	/* instead: no pidfds, it cannot serve */
#define FORKER_REQUEST	'w'	/* the broker: a worker, with 2 fds */

struct forker_reply {
	int32_t	pid;		/* the worker's, or -errno */
	int32_t	forks;		/* 1: cloned; 2: forked twice over */
};

#endif
