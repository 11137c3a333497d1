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

#include "face.h"
#include "jstrict.h"
#include "testnet.h"
#include "jobsutil.h"
#include "fakeutil.h"
#include "ckrun.h"

/* One uLoopMCP client: its connection, its framing and its id style. */
struct ulc {
	struct client	*cl;
	int		 lsp;		/* Content-Length framing (v0.27 on) */
	int		 str_ids;	/* ts_... ids (v0.28.4 on) */
	long long	 next;		/* the next id */
	json_object	*notes;		/* notifications read meanwhile */
};

/* The port of the uloop face, from the broker's STATUS= line. */
static int
uloop_port(void)
{
	const char	*p = strstr(b.status, "uloop@127.0.0.1:");

	ck_assert_msg(p != NULL, "no uloop face in: %s", b.status);
	return atoi(p + 16);
}

static void
ulc_open(struct ulc *u, int lsp, int str_ids)
{
	memset(u, 0, sizeof(*u));
	u->cl = client_tcp(uloop_port());
	ck_assert_ptr_nonnull(u->cl);
	u->lsp = lsp;
	u->str_ids = str_ids;
	/* Date.now() ids are far above 2^32. */
	u->next = str_ids ? 1 : 1732400000000LL;
	u->notes = json_object_new_array();
}

static void
ulc_close(struct ulc *u)
{
	client_close(u->cl);
	json_object_put(u->notes);
	u->cl = NULL;
	u->notes = NULL;
}

static void
ulc_send(struct ulc *u, const char *body)
{
	char	*msg;
	int	 n;

	if (u->lsp)
		n = asprintf(&msg, "Content-Length: %zu\r\n\r\n%s",
		    strlen(body), body);
	else
		n = asprintf(&msg, "%s\n", body);
	ck_assert_int_ne(n, -1);
	client_send(u->cl, msg);
	free(msg);
}

/* The next message in u's framing, parsed (caller puts), or NULL. */
static json_object *
ulc_read(struct ulc *u)
{
	char		*line, *s;
	size_t		 n = 0;
	json_object	*r;

	if (!u->lsp) {
		if ((s = client_line(u->cl)) == NULL)
			return NULL;
	} else {
		while ((line = client_line(u->cl)) != NULL &&
		    strcmp(line, "\r") != 0) {
			if (strncmp(line, "Content-Length: ", 16) == 0)
				n = strtoul(line + 16, NULL, 10);
			free(line);
		}
		if (line == NULL)
			return NULL;
		free(line);
		ck_assert_uint_gt(n, 0);
		s = client_read(u->cl, n);
		ck_assert_ptr_nonnull(s);
	}
	ck_assert_msg(jstrict_parse_str(s, &r) == 0, "not JSON: %s", s);
	free(s);
	return r;
}

/* The id u sends next, as JSON text. */
static void
ulc_id(struct ulc *u, char *buf, size_t len)
{
	if (u->str_ids)
		snprintf(buf, len, "\"ts_1732400000000_%d_k3x9_%04lld\"",
		    (int)getpid(), u->next++);
	else
		snprintf(buf, len, "%lld", u->next++);
}

/*
 * Call method with params (JSON text) and return its answer (caller
 * puts), its id checked to be the one sent, of the same type.
 */
static json_object *
ulc_call(struct ulc *u, const char *method, const char *params)
{
	char		 id[96], *body;
	json_object	*r, *rid;

	ulc_id(u, id, sizeof(id));
	ck_assert_int_ne(asprintf(&body, "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"method\":\"%s\",\"params\":%s}", id, method, params), -1);
	ulc_send(u, body);
	free(body);
	while ((r = ulc_read(u)) != NULL &&
	    !json_object_object_get_ex(r, "id", NULL))
		json_object_array_add(u->notes, r);
	ck_assert_msg(r != NULL, "no answer to %s", method);
	rid = jpath(r, "id");
	ck_assert_str_eq(json_object_to_json_string(rid), id);
	return r;
}

/* The error of r: its code, and a reason in message and data.message. */
static void
assert_ul_error(json_object *r, int code, const char *type)
{
	const char	*m;

	ck_assert_msg(jpath(r, "error") != NULL, "not an error: %s",
	    json_object_to_json_string(r));
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), code);
	ck_assert_str_eq(str(r, "error.data.type"), type);
	m = str(r, "error.message");
	ck_assert_uint_gt(strlen(m), 10);
	ck_assert_str_eq(str(r, "error.data.message"), m);
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
		ulc_open(&u, 1, 1);
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
	ulc_open(&probe, 1, 1);
	ulc_close(&probe);
	ulc_open(&u, 1, 1);
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
	ulc_open(&u, 0, 0);
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

	start_uloop(NULL);
	ulc_open(&u, 1, 0);
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

/* SIGHUP with a changed table: the clients re-fetch the tools. */
START_TEST(uloop_list_changed)
{
	struct ulc	 u;
	json_object	*r, *n;

	start_uloop(NULL);
	ulc_open(&u, 1, 1);
	r = ulc_call(&u, "set-client-name", "{\"ClientName\":\"agent\"}");
	json_object_put(r);
	write_tools("smooth");
	kill(b.pid, SIGHUP);
	while ((n = ulc_read(&u)) != NULL &&
	    strcmp(str(n, "method"), "notifications/tools/list_changed") != 0)
		json_object_put(n);
	ck_assert_ptr_nonnull(n);
	json_object_put(n);
	ulc_close(&u);
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
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, uloop_v2_handshake);
	tcase_add_test(tc, uloop_v026_lines);
	tcase_add_test(tc, uloop_errors);
	tcase_add_test(tc, uloop_list_changed);
	tcase_add_test(tc, mcp_config_entries);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
