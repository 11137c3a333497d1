/* SPDX-License-Identifier: ISC */
/*
 * The uloop face (issue 17): listener faces (--listen FACE@ADDR:PORT),
 * then a uLoopMCP client stand-in written here from shared/BRIDGES.md --
 * both framings (lines up to v0.26, Content-Length after), numeric ids
 * (Date.now()) and string ids (ts_<ms>_<pid>_<rand>_<nnnn>), the probe
 * connection opened and closed first, set-client-name (empty allowed)
 * before every call as v2 does -- through a real cmdgated.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "face.h"
#include "fakeutil.h"
#include "jobsutil.h"
#include "jstrict.h"
#include "testnet.h"
#include "ulclient.h"

static struct fake	 fk;		/* the fake editor, when one runs */

static void
fk_setup(void)
{
	setup();
	fk.pid = -1;
}

static void
fk_teardown(void)
{
	fake_stop(&fk);
	teardown();
}

/* The port of the uloop face, from the broker's STATUS= line. */
static int
uloop_port(void)
{
	const char	*p = strstr(b.status, "uloop@127.0.0.1:");

	ck_assert_msg(p != NULL, "no uloop face in: %s", b.status);
	return atoi(p + 16);
}

/* A ToolInfo of list named name, or NULL. */
static json_object *
tool_info(json_object *list, const char *name)
{
	size_t	i;

	for (i = 0; i < json_object_array_length(list); i++)
		if (strcmp(str(json_object_array_get_idx(list, i), "name"),
		    name) == 0)
			return json_object_array_get_idx(list, i);
	return NULL;
}

static void
start_uloop(const char **more)
{
	const char	*extra[8] = { "--listen", "uloop@127.0.0.1:0" };
	int		 n = 2;

	while (more != NULL && *more != NULL)
		extra[n++] = *more++;
	extra[n] = NULL;
	start_with("heavy", extra);
}

/* ---- listener faces ------------------------------------------------ */

START_TEST(face_parse_specs)
{
	enum face	 f;
	const char	*a;

	ck_assert_int_eq(face_parse("uloop@127.0.0.1:8711", &f, &a), 0);
	ck_assert_int_eq(f, FACE_ULOOP);
	ck_assert_str_eq(a, "127.0.0.1:8711");
	ck_assert_int_eq(face_parse("unity-mcp@[::1]:6411", &f, &a), 0);
	ck_assert_int_eq(f, FACE_UNITY);
	ck_assert_str_eq(a, "[::1]:6411");
	ck_assert_int_eq(face_parse("127.0.0.1:8700", &f, &a), 0);
	ck_assert_int_eq(f, FACE_CMDGATE);
	ck_assert_str_eq(a, "127.0.0.1:8700");
	ck_assert_int_eq(face_parse("uLoop@127.0.0.1:1", &f, &a), -1);
	ck_assert_int_eq(face_parse("cmdgate@127.0.0.1:1", &f, &a), -1);
	ck_assert_int_eq(face_parse("@127.0.0.1:1", &f, &a), -1);
	ck_assert_int_eq(face_parse("uloopx@127.0.0.1:1", &f, &a), -1);
	ck_assert_str_eq(face_name(FACE_ULOOP), "uloop");
	ck_assert_str_eq(face_name(FACE_UNITY), "unity-mcp");
	ck_assert_str_eq(face_name(FACE_CMDGATE), "cmdgate");
}
END_TEST

/*
 * As nobody, call ping on the uloop face at port: exit 0 when answered,
 * 1 when refused with the peer check named and closed; other statuses
 * name the step that failed.
 */
static void
nobody_child(int port)
{
	struct passwd	*pw = getpwnam("nobody");
	struct client	*cl;
	char		*s;

	if (pw == NULL || setgroups(0, NULL) == -1 ||
	    setgid(pw->pw_gid) == -1 || setuid(pw->pw_uid) == -1)
		_exit(10);
	if ((cl = client_tcp(port)) == NULL)
		_exit(11);
	client_send(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":{\"Message\":\"x\"}}\n");
	if ((s = client_line(cl)) == NULL)
		_exit(12);
	if (strstr(s, "\"result\"") != NULL)
		_exit(0);
	if (strstr(s, "-32005") == NULL || strstr(s, "peer check") == NULL ||
	    strstr(s, "\"data\":{\"type\":\"unauthorized\",\"message\"") ==
	    NULL)
		_exit(13);
	_exit(client_eof(cl) ? 1 : 14);
}

static int
nobody_ping(int port)
{
	pid_t	pid;
	int	status;

	if ((pid = fork()) == 0)
		nobody_child(port);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/*
 * With a token, cmdgate's own listener still asks for it, while the
 * face's clients, which cannot send one, are let in by the peer check:
 * the broker's own user is; another is refused in the face's own error
 * shape and closed, unless --allow-user names it.
 */
START_TEST(face_listener_token)
{
	const char	*args[] = { "--tools", tools, "--token-file", NULL,
			    "--listen", "uloop@127.0.0.1:0", NULL, NULL,
			    NULL };
	char		 tok[256];
	struct ulc	 u;
	json_object	*r;
	int		 i;

	write_tools("heavy");
	snprintf(tok, sizeof(tok), "%s", broker_path(&b, "token"));
	write_file(tok, "0123456789abcdef0123456789abcdef\n", 0600);
	args[3] = tok;
	b.auth = 1;
	for (i = 0; i < 2; i++) {
		if (i == 1) {
			args[6] = "--allow-user";
			args[7] = "nobody";
		}
		ck_assert_int_eq(broker_start(&b, args, 0), 0);
		c = client_tcp(b.port);
		r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		    "\"ping\"}");
		ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")),
		    -32005);
		json_object_put(r);
		ulc_open(&u, uloop_port(), 1, 1);
		r = ulc_call(&u, "ping", "{\"Message\":\"me\"}");
		ck_assert_ptr_nonnull(strstr(str(r, "result.Message"), "me"));
		json_object_put(r);
		ulc_close(&u);
		if (geteuid() != 0 || getpwnam("nobody") == NULL)
			fprintf(stderr, "check_uloop_face: face_listener_token:"
			    " another user's client needs root and a user "
			    "nobody: skipped\n");
		else
			ck_assert_int_eq(nobody_ping(uloop_port()), i == 0 ?
			    1 : 0);
		client_close(c);
		c = NULL;
		ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	}
}
END_TEST

START_TEST(face_listener_status)
{
	json_object	*r, *l;
	size_t		 i;
	int		 seen = 0;

	start_uloop(NULL);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"server_status\"}");
	l = jpath(r, "result.listen");
	for (i = 0; i < json_object_array_length(l); i++)
		if (strncmp(json_object_get_string(json_object_array_get_idx(l,
		    i)), "uloop@127.0.0.1:", 16) == 0)
			seen++;
	ck_assert_int_eq(seen, 1);
	json_object_put(r);
	ck_assert_int_gt(broker_log_count(&b, "listening on uloop@"), 0);
}
END_TEST

/* ---- the uloop face's own methods --------------------------------- */

/*
 * The TypeScript server of v2 (Content-Length, string ids): the probe
 * connection first, then set-client-name with the empty name, ping and
 * get-tool-details built from the table's JSON Schemas.
 */
START_TEST(uloop_v2_handshake)
{
	struct ulc	 probe, u;
	json_object	*r, *tools_, *echo, *p;

	start_uloop(NULL);
	ulc_open(&probe, uloop_port(), 1, 1);
	ulc_close(&probe);
	ulc_open(&u, uloop_port(), 1, 1);
	r = ulc_call(&u, "set-client-name", "{\"ClientName\":\"\"}");
	ck_assert_str_eq(str(r, "result.ClientName"), "");
	json_object_put(r);
	r = ulc_call(&u, "ping", "{\"Message\":\"hello\"}");
	ck_assert_ptr_nonnull(strstr(str(r, "result.Message"), "hello"));
	ck_assert_ptr_null(jpath(r, "result.Ver"));
	json_object_put(r);
	r = ulc_call(&u, "get-tool-details", "{\"IncludeDevelopmentOnly\":"
	    "false}");
	tools_ = jpath(r, "result.Tools");
	ck_assert_ptr_nonnull(tools_);
	ck_assert_ptr_nonnull(tool_info(tools_, "run_tests"));
	/* Disabled tools are not listed. */
	ck_assert_ptr_null(tool_info(tools_, "locked"));
	echo = tool_info(tools_, "echo");
	ck_assert_ptr_nonnull(echo);
	ck_assert(!json_object_get_boolean(jpath(echo,
	    "displayDevelopmentOnly")));
	p = jpath(echo, "parameterSchema");
	ck_assert_str_eq(str(p, "Properties.text.Type"), "string");
	/* integer is no uLoopMCP type: a number. */
	ck_assert_str_eq(str(p, "Properties.n.Type"), "number");
	ck_assert_str_eq(json_object_to_json_string(jpath(p, "Required")),
	    "[ \"text\" ]");
	p = jpath(tool_info(tools_, "refresh"), "parameterSchema");
	ck_assert_str_eq(str(p, "Properties.compile.DefaultValue"), "request");
	json_object_put(r);
	ulc_close(&u);
}
END_TEST

/* v0.26: one message per line, Date.now() ids that must stay numbers. */
START_TEST(uloop_v026_lines)
{
	struct ulc	 u;
	json_object	*r;

	start_uloop(NULL);
	ulc_open(&u, uloop_port(), 0, 0);
	r = ulc_call(&u, "setClientName", "{\"ClientName\":\"Cursor\"}");
	ck_assert(json_object_is_type(jpath(r, "id"), json_type_int));
	ck_assert_str_eq(str(r, "result.ClientName"), "Cursor");
	json_object_put(r);
	r = ulc_call(&u, "get-command-details", "{}");
	ck_assert_ptr_nonnull(tool_info(jpath(r, "result.Tools"), "echo"));
	json_object_put(r);
	r = ulc_call(&u, "getAvailableCommands", "{}");
	ck_assert(json_object_is_type(jpath(r, "result"), json_type_array));
	json_object_put(r);
	ulc_close(&u);
}
END_TEST

/* Bad input: a precise error, and the connection keeps serving. */
START_TEST(uloop_errors)
{
	struct ulc	 u;
	json_object	*r;
	char		 name[610];
	int		 i;

	start_uloop(NULL);
	ulc_open(&u, uloop_port(), 1, 0);
	r = ulc_call(&u, "no-such-tool", "{}");
	assert_ul_error(r, -32601, "method_not_found");
	json_object_put(r);
	r = ulc_call(&u, "locked", "{}");
	assert_ul_error(r, -32601, "method_not_found");
	ck_assert_ptr_nonnull(strstr(str(r, "error.message"), "disabled"));
	json_object_put(r);
	r = ulc_call(&u, "set-client-name", "{\"ClientName\":7}");
	assert_ul_error(r, -32602, "invalid_params");
	json_object_put(r);
	/* Quoted and cut at 512 bytes inside a character: still JSON. */
	memset(name, 0, sizeof(name));
	name[0] = 'a';
	for (i = 0; i < 300; i++)
		memcpy(name + 1 + 2 * i, "\xc3\xa9", 2);
	r = ulc_call(&u, name, "{}");
	assert_ul_error(r, -32601, "method_not_found");
	ck_assert_ptr_nonnull(strstr(str(r, "error.message"), "\xef\xbf\xbd"));
	json_object_put(r);
	ulc_send(&u, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":");
	r = ulc_read(&u);
	assert_ul_error(r, -32700, "parse_error");
	json_object_put(r);
	ulc_send(&u, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\","
	    "\"params\":[1]}");
	r = ulc_read(&u);
	assert_ul_error(r, -32602, "invalid_params");
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 6);
	json_object_put(r);
	r = ulc_call(&u, "ping", "{\"Message\":\"still here\"}");
	ck_assert_ptr_nonnull(strstr(str(r, "result.Message"), "still here"));
	json_object_put(r);
	ulc_close(&u);
}
END_TEST

/*
 * Issue 35.5: the face's own get-version is listed (after "uloop sync"
 * the CLI calls only what it was told of) and gives the DataPath of
 * --unity-project, which the CLI checks its project against; without a
 * project the broker says which flag gives it.
 */
START_TEST(uloop_version_project)
{
	const char	*proj[] = { "--unity-project", "/home/u/Game", NULL };
	struct ulc	 u;
	json_object	*r;

	start_uloop(_i == 1 ? proj : NULL);
	ck_assert_int_eq(broker_log_count(&b, "uloop face: no get-version "
	    "tool in the table and no --unity-project"), (_i == 1 ? 0 : 1));
	ulc_open(&u, uloop_port(), 1, 0);
	r = ulc_call(&u, "get-tool-details", "{}");
	ck_assert_ptr_nonnull(tool_info(jpath(r, "result.Tools"),
	    "get-version"));
	json_object_put(r);
	r = ulc_call(&u, "get-version", "{}");
	if (_i == 1)
		ck_assert_str_eq(str(r, "result.DataPath"),
		    "/home/u/Game/Assets");
	else
		ck_assert_ptr_null(jpath(r, "result.DataPath"));
	json_object_put(r);
	ulc_close(&u);
}
END_TEST

/*
 * SIGHUP with a changed table: the clients re-fetch the tools.  A client
 * that never named itself (uLoopMCP's CLI, which takes the first frame it
 * reads as its answer) hears no notification.
 */
START_TEST(uloop_list_changed)
{
	struct ulc	 u, cli;
	json_object	*r, *n;

	start_uloop(NULL);
	ulc_open(&u, uloop_port(), 1, 1);
	ulc_open(&cli, uloop_port(), 1, 0);
	r = ulc_call(&u, "set-client-name", "{\"ClientName\":\"agent\"}");
	json_object_put(r);
	r = ulc_call(&cli, "get-version", "{}");	/* the CLI's first */
	json_object_put(r);
	write_tools("smooth");
	kill(b.pid, SIGHUP);
	while ((n = ulc_read(&u)) != NULL &&
	    strcmp(str(n, "method"), "notifications/tools/list_changed") != 0)
		json_object_put(n);
	ck_assert_ptr_nonnull(n);
	json_object_put(n);
	ulc_send(&cli, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
	    "\"ping\",\"params\":{\"Message\":\"m\"}}");
	r = ulc_read(&cli);
	ck_assert_msg(r != NULL && jpath(r, "id") != NULL, "the CLI's first "
	    "frame is not its answer: %s", r != NULL ?
	    json_object_to_json_string(r) : "(none)");
	json_object_put(r);
	ulc_close(&cli);
	ulc_close(&u);
}
END_TEST

/* ---- table tools as face jobs ------------------------------------- */

/*
 * Exec tools by their names: a JSON result is the answer; plain output
 * is the command result; a failure is an error naming its ticket; bad
 * params are refused before any job.
 */
/* A client that half-closes after its call (nc -N) still gets the answer. */
START_TEST(uloop_half_closed)
{
	struct ulc	 u;
	json_object	*r;

	start_uloop(NULL);
	ulc_open(&u, uloop_port(), 0, 0);
	ulc_send(&u, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\","
	    "\"params\":{\"text\":\"hi\"}}");
	ck_assert_int_eq(shutdown(u.cl->fd, SHUT_WR), 0);
	r = ulc_read(&u);
	ck_assert_msg(r != NULL, "no answer after the half-close");
	ck_assert_str_eq(str(r, "result.stdout"), "hi\n");
	json_object_put(r);
	ulc_close(&u);
}
END_TEST

START_TEST(uloop_exec_tools)
{
	struct ulc	 u;
	json_object	*r;

	start_uloop(NULL);
	ulc_open(&u, uloop_port(), 1, 1);
	r = ulc_tool(&u, "", "refresh", "{\"compile\":\"none\"}");
	ck_assert_str_eq(str(r, "result.refreshed"), "none");
	json_object_put(r);
	r = ulc_tool(&u, "", "echo", "{\"text\":\"hi\"}");
	ck_assert(json_object_get_boolean(jpath(r, "result.ok")));
	ck_assert_str_eq(str(r, "result.stdout"), "hi\n");
	json_object_put(r);
	r = ulc_tool(&u, "", "fail", "{}");
	assert_ul_error(r, -32603, "tool_failed");
	ck_assert_str_eq(str(r, "error.data.ticket"), "t-000002");
	ck_assert_ptr_nonnull(strstr(str(r, "error.message"), "t-000002"));
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "error.data.result.exit_code")), 3);
	json_object_put(r);
	r = ulc_tool(&u, "", "echo", "{\"n\":1}");
	assert_ul_error(r, -32602, "invalid_params");
	ck_assert_ptr_nonnull(strstr(str(r, "error.message"), "text"));
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"list_jobs\"}");
	ck_assert_uint_eq(json_object_array_length(jpath(r, "result.jobs")),
	    3);
	json_object_put(r);
	ulc_close(&u);
}
END_TEST

/*
 * A call that waits keeps its connection from --idle-timeout: the CLI
 * (no client name, ids from 1) waits 2 s for its held answer with a 1 s
 * idle timeout, and gets it, not an idle_timeout.
 */
START_TEST(uloop_waiting_not_idle)
{
	const char	*more[] = { "--idle-timeout", "1", "--uloop-hold", "2",
			    NULL };
	struct ulc	 u;
	json_object	*r;

	start_uloop(more);
	ulc_open(&u, uloop_port(), 1, 0);
	u.next = 1;
	r = ulc_call(&u, "run_tests", "{}");
	assert_ul_error(r, -32006, "held");
	json_object_put(r);
	release();
	ulc_close(&u);
}
END_TEST

/*
 * Issue 17's scenario on the uloop face, through the shipped table to
 * the fake editor (Content-Length, -c: a compile reloads it): agent A
 * (v2: Content-Length, string ids, a probe connection first, its name
 * set before every call) runs the tests; agent B (v0.26: lines, Date.now()
 * ids, an empty name) asks for a compile meanwhile.  Both are answered
 * "held" after --uloop-hold, naming their tickets; each repeat attaches
 * to its job; the compile reaches the editor once, after the tests.
 */
START_TEST(uloop_scenario)
{
	const char	*extra[] = { "--listen", "uloop@127.0.0.1:0",
			    "--uloop-hold", "1", NULL };
	struct ulc	 a, bb, probe;
	char		 ida[96], ta[32], tb[32];
	json_object	*r;
	int		 tries;

	fake_start(&fk, "FAKE_ULOOP", "-c", "-l", NULL);
	table_for(tools, "uloop.json", fk.port, NULL, NULL);
	start_tools(extra);
	ulc_open(&probe, uloop_port(), 1, 1);
	ulc_close(&probe);
	ulc_open(&a, uloop_port(), 1, 1);
	ulc_open(&bb, uloop_port(), 0, 0);
	r = ulc_call(&a, "set-client-name", "{\"ClientName\":\"A\"}");
	json_object_put(r);
	ulc_ask(&a, "run-tests", "{\"TestMode\":\"EditMode\"}", ida,
	    sizeof(ida));
	fake_await(&fk, "recv run-tests ");
	r = ulc_tool(&bb, "", "compile", "{}");
	assert_ul_error(r, -32006, "held");
	snprintf(tb, sizeof(tb), "%s", str(r, "error.data.ticket"));
	ck_assert_ptr_nonnull(strstr(str(r, "error.message"),
	    "call compile again"));
	ck_assert_ptr_nonnull(strstr(str(r, "error.message"), tb));
	json_object_put(r);
	/* A's run outlasts the hold too: held, and the run goes on. */
	r = ulc_answer(&a, ida);
	assert_ul_error(r, -32006, "held");
	snprintf(ta, sizeof(ta), "%s", str(r, "error.data.ticket"));
	json_object_put(r);
	ck_assert_str_ne(ta, tb);
	fake_ctl(&fk, "end-tests succeeded");
	r = ulc_tool(&a, "A", "run-tests", "{\"TestMode\":\"EditMode\"}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "result.PassedCount")),
	    3);
	json_object_put(r);
	fake_await(&fk, "recv compile ");
	fake_ctl(&fk, "end-compile");
	fake_await(&fk, "reload start");
	fake_ctl(&fk, "reload-done");
	/* B asks again until its compile's result comes (bounded). */
	for (tries = 0; tries < 10; tries++) {
		r = ulc_tool(&bb, "", "compile", "{}");
		if (jpath(r, "error") == NULL)
			break;
		assert_ul_error(r, -32006, "held");
		ck_assert_str_eq(str(r, "error.data.ticket"), tb);
		json_object_put(r);
	}
	ck_assert_int_lt(tries, 10);
	ck_assert(json_object_get_boolean(jpath(r, "result.Success")));
	json_object_put(r);
	/*
	 * The compile was a reload: A, idle meanwhile, was told the editor
	 * reloads (so it waits), then that it is back (so it lists again).
	 */
	r = ulc_note(&a, "notifications/server/shutdown");
	ck_assert_str_eq(str(r, "params.reason"), "DomainReload");
	json_object_put(r);
	r = ulc_note(&a, "notifications/tools/list_changed");
	json_object_put(r);
	/* get-version is the table's: the editor's answer, its Ver kept. */
	r = ulc_tool(&bb, "", "get-version", "{}");
	ck_assert_str_eq(str(r, "result.Ver"), "2.1.1");
	json_object_put(r);
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "recv run-tests "), 1);
	ck_assert_int_eq(fake_count(&fk, "recv compile "), 1);
	ck_assert_int_eq(fake_count(&fk, "recv get-version "), 1);
	ulc_close(&a);
	ulc_close(&bb);
}
END_TEST

/*
 * cmdgate mcp-config: uLoopMCP's own server put in front of the broker's
 * uloop face (its port asked from the broker), MCP for Unity's with the
 * status dir given.
 */
START_TEST(mcp_config_entries)
{
	json_object	*r, *e;
	char		 port[16];
	pid_t		 pid;
	int		 out;

	start_uloop(NULL);
	pid = cli_spawn(b.port, &out, "mcp-config", "--client", "claude", NULL);
	r = cli_end(pid, out, 0);
	e = jpath(r, "mcpServers.uLoopMCP");
	ck_assert_ptr_nonnull(e);
	snprintf(port, sizeof(port), "%d", uloop_port());
	ck_assert_str_eq(str(e, "env.UNITY_TCP_PORT"), port);
	ck_assert_str_eq(str(e, "command"), "node");
	ck_assert_ptr_nonnull(strstr(str(e, "args.0"),
	    "/Library/uLoopMCP/server.bundle.js"));
	ck_assert_ptr_nonnull(jpath(r, "mcpServers.cmdgate"));
	ck_assert_ptr_null(jpath(r, "mcpServers.unityMCP"));
	json_object_put(r);
	pid = cli_spawn(b.port, &out, "mcp-config", "--client", "vscode",
	    "--uloop-port", "8711", "--uloop-server", "/p/server.bundle.js",
	    "--unity-status-dir", "/run/st", NULL);
	r = cli_end(pid, out, 0);
	ck_assert_str_eq(str(r, "servers.uLoopMCP.env.UNITY_TCP_PORT"),
	    "8711");
	ck_assert_str_eq(str(r, "servers.uLoopMCP.args.0"),
	    "/p/server.bundle.js");
	ck_assert_str_eq(str(r, "servers.uLoopMCP.type"), "stdio");
	e = jpath(r, "servers.unityMCP");
	ck_assert_str_eq(str(e, "env.UNITY_MCP_STATUS_DIR"), "/run/st");
	ck_assert_str_eq(str(e, "command"), "uvx");
	ck_assert_str_eq(str(e, "args.2"), "mcp-for-unity");
	json_object_put(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("uloop_face");
	TCase	*tc = tcase_create("faces");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, face_parse_specs);
	tcase_add_test(tc, face_listener_token);
	tcase_add_test(tc, face_listener_status);
	suite_add_tcase(s, tc);
	tc = tcase_create("uloop");
	tcase_add_checked_fixture(tc, fk_setup, fk_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, uloop_v2_handshake);
	tcase_add_test(tc, uloop_v026_lines);
	tcase_add_test(tc, uloop_errors);
	tcase_add_test(tc, uloop_list_changed);
	tcase_add_loop_test(tc, uloop_version_project, 0, 2);
	tcase_add_test(tc, mcp_config_entries);
	tcase_add_test(tc, uloop_half_closed);
	tcase_add_test(tc, uloop_exec_tools);
	tcase_add_test(tc, uloop_waiting_not_idle);
	tcase_add_test(tc, uloop_scenario);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
