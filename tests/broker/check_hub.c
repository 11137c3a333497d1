/* SPDX-License-Identifier: ISC */
/*
 * The unity-hub face (issue 34) through a real cmdgated between the
 * stand-ins of MCP for Unity's HTTP mode (tests/fakes/hub_server.py, the
 * Python server's hub and routes; tests/fakes/hub_plugin.py, the Unity
 * plugin, both on python3-websockets): the other routes passed on, the
 * editor registered upstream as the plugin would with the server's own
 * session, executes run as jobs over the editor link, and the issue's
 * scenario: a test run holds a compile, which reaches the editor once
 * when the run ends; the plugin reloads, a read meanwhile waits and is
 * answered; the server hears every answer once.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "fakeutil.h"
#include "jobsutil.h"
#include "testnet.h"

static struct fake	 srv, plug;
static int		 hubport;

static void
hub_setup(void)
{
	setup();
	srv.pid = plug.pid = -1;
}

static void
hub_teardown(void)
{
	fake_stop(&plug);
	fake_stop(&srv);
	teardown();
}

/* A free loopback port (the face's, which the table must name first). */
static int
free_port(void)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert(bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	ck_assert(getsockname(fd, (struct sockaddr *)&sin, &len) == 0);
	close(fd);
	return ntohs(sin.sin_port);
}

/* The server stand-in, and cmdgated's unity-hub face in front of it. */
static void
hub_start(void)
{
	char		 to[64], face[96], url[96];
	const char	*extra[] = { "--listen", face, "--unity-hub-server",
			    url, NULL };

	fake_start(&srv, "FAKE_HUB_SERVER", NULL);
	hubport = free_port();
	snprintf(to, sizeof(to), "127.0.0.1:%d", hubport);
	table_for(tools, "unity-hub.json", 0, "127.0.0.1:8080", to);
	snprintf(face, sizeof(face), "unity-hub@%s", to);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", srv.port);
	start_tools(extra);
}

/* The plugin stand-in, registered on the face and, through cmdgate, on
 * the server. */
static void
plugin_start(void)
{
	char	url[80];

	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/hub/plugin", hubport);
	fake_start(&plug, "FAKE_HUB_PLUGIN", url, "--project",
	    "/tmp/cmdgate-hub-test/Proj", NULL);
	fake_await(&plug, "registered ");
	fake_await(&srv, "registered ");
}

/* The rest of the last log line of f that begins with prefix. */
static void
fake_line(struct fake *f, const char *prefix, char *out, size_t len)
{
	const char	*p = f->log, *hit = NULL;
	size_t		 n = strlen(prefix);

	for (; p != NULL && *p != '\0'; p = strchr(p, '\n') ? strchr(p,
	    '\n') + 1 : NULL)
		if (strncmp(p, prefix, n) == 0)
			hit = p + n;
	ck_assert_msg(hit != NULL, "no \"%s\" in:\n%s", prefix, f->log);
	snprintf(out, len, "%.*s", (int)strcspn(hit, "\n"), hit);
}

/*
 * One HTTP/1.1 exchange on the face's port: the answer up to the end of
 * until (the stand-in server keeps its connections open), or to EOF.
 */
static void
http_exchange(const char *req, const char *until, char *ans, size_t len)
{
	struct pollfd	p;
	size_t		got = 0;
	ssize_t		n;
	int		fd = broker_dial(hubport);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	p.fd = fd;
	p.events = POLLIN;
	ans[0] = '\0';
	while (strstr(ans, until) == NULL) {
		ck_assert_msg(poll(&p, 1, TN_TIMEOUT_MS) == 1 && got + 1 < len,
		    "no \"%s\" in time: %s", until, ans);
		if ((n = read(fd, ans + got, len - 1 - got)) <= 0)
			break;
		got += (size_t)n;
		ans[got] = '\0';
	}
	close(fd);
}

/* cmdgate mcp-config gives the agents MCP for Unity's URL: the face's. */
static void
mcp_config_names_face(void)
{
	json_object	*r;
	char		 want[64];
	int		 out;
	pid_t		 pid;

	pid = cli_spawn(b.port, &out, "mcp-config", "--client", "claude", NULL);
	r = cli_end(pid, out, 0);
	snprintf(want, sizeof(want), "http://127.0.0.1:%d/mcp", hubport);
	ck_assert_str_eq(str(r, "mcpServers.unityMCP.url"), want);
	ck_assert_str_eq(str(r, "mcpServers.unityMCP.type"), "http");
	json_object_put(r);
}

/*
 * What is not the plugin's WebSocket reaches the server unchanged, an
 * event stream too; a plain GET of the hub's path is refused as the
 * server refuses it.
 */
START_TEST(other_routes_passed_on)
{
	char	ans[8192], req[512];
	int	n;

	hub_start();
	http_exchange("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
	    "close\r\n\r\n", "\"healthy\"", ans, sizeof(ans));
	ck_assert_msg(strncmp(ans, "HTTP/1.1 200", 12) == 0, "%s", ans);
	ck_assert_ptr_nonnull(strstr(ans, "\"healthy\""));
	fake_await(&srv, "http GET /health");
	n = snprintf(req, sizeof(req), "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1"
	    "\r\nContent-Type: application/json\r\nAccept: application/json, "
	    "text/event-stream\r\nConnection: close\r\nContent-Length: %d\r\n"
	    "\r\n%s", 40, "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"x\"}  ");
	ck_assert_int_lt(n, (int)sizeof(req));
	http_exchange(req, "\r\n0\r\n\r\n", ans, sizeof(ans));
	ck_assert_msg(strstr(ans, "text/event-stream") != NULL, "%s", ans);
	ck_assert_ptr_nonnull(strstr(ans, "\"id\":77"));
	fake_await(&srv, "http POST /mcp");
	http_exchange("GET /hub/plugin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
	    "\r\n\r\n", ans, sizeof(ans));
	ck_assert_msg(strncmp(ans, "HTTP/1.1 404", 12) == 0, "%s", ans);
	mcp_config_names_face();
}
END_TEST

/* Whether list_tools' answer r names the tool name. */
static int
table_has(json_object *r, const char *name)
{
	json_object	*l = jpath(r, "result.tools");
	size_t		 i;

	for (i = 0; l != NULL && i < json_object_array_length(l); i++)
		if (strcmp(str(json_object_array_get_idx(l, i), "name"),
		    name) == 0)
			return 1;
	return 0;
}

/*
 * Every tool the plugin registered, as the server stored it (the
 * plugin's tools through cmdgate, verbatim), is a tool of unity-hub.json.
 */
static void
tools_in_table(void)
{
	char		 line[4096], *name, *save = NULL;
	json_object	*r;
	int		 n = 0;

	fake_ctl(&srv, "tools");
	fake_line(&srv, "tools ", line, sizeof(line));
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"list_tools\"}");
	ck_assert_ptr_nonnull(strtok_r(line, " ", &save));	/* the sid */
	while ((name = strtok_r(NULL, " ", &save)) != NULL) {
		ck_assert_msg(table_has(r, name), "unity-hub.json lacks %s",
		    name);
		n++;
	}
	ck_assert_int_gt(n, 0);
	json_object_put(r);
}

/* cmdgate top --once shows the editor registered and the server's side. */
static void
top_shows_hub(const char *hash, const char *ssid)
{
	char	buf[16384], want[160];
	int	out, status;
	pid_t	pid;

	setenv("COLUMNS", "300", 1);
	pid = cli_spawn(b.port, &out, "top", "--once", NULL);
	fd_slurp(out, buf, sizeof(buf));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	snprintf(want, sizeof(want), "unity-hub: editor Proj@%s (Unity ", hash);
	ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
	snprintf(want, sizeof(want), " open, session %s, ", ssid);
	ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
	ck_assert_ptr_nonnull(strstr(buf, "editor link 127.0.0.1:"));
}

/*
 * The plugin registers on the face; cmdgate registers the same project
 * on the server with the server's own session, and sends the plugin's
 * tools once the server registered it.
 */
START_TEST(editor_registered_upstream)
{
	char		 psid[64], ssid[64], hash[64], reg[128];
	json_object	*st;

	hub_start();
	plugin_start();
	fake_line(&plug, "registered ", psid, sizeof(psid));
	fake_line(&srv, "registered ", ssid, sizeof(ssid));
	ck_assert_str_ne(psid, ssid);
	fake_line(&srv, "recv register ", hash, sizeof(hash));
	ck_assert_uint_eq(strlen(hash), 16);
	fake_await(&srv, "recv register_tools ");
	st = callf("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"server_status\"}");
	ck_assert_str_eq(str(st, "result.unity_hub.editors.0.project_hash"),
	    hash);
	ck_assert_str_eq(str(st, "result.unity_hub.editors.0.session_id"),
	    psid);
	ck_assert_str_eq(str(st, "result.unity_hub.upstream.session_id"),
	    ssid);
	ck_assert_str_eq(str(st, "result.unity_hub.upstream.state"), "open");
	json_object_put(st);
	top_shows_hub(hash, ssid);
	snprintf(reg, sizeof(reg), "recv register %s", hash);
	ck_assert_int_eq(fake_count(&srv, reg), 1);
	tools_in_table();
}
END_TEST

/* The server's execute is a job over the editor link, answered with the
 * server's id. */
START_TEST(execute_through_the_link)
{
	char	res[4096];

	hub_start();
	plugin_start();
	fake_await(&srv, "recv register_tools ");
	fake_ctl(&srv, "execute get_editor_state {} 5");
	fake_await(&srv, "result ");
	fake_line(&srv, "result ", res, sizeof(res));
	ck_assert_msg(strstr(res, "Retrieved editor state") != NULL, "%s",
	    res);
	fake_await(&plug, "recv execute cg-");
	ck_assert_int_eq(fake_count(&srv, "timeout "), 0);
}
END_TEST

/*
 * A command_result whose id is not exactly the execute's answers nothing
 * (the server matches ids whole): not "cg-N\u0000x" (cut at the NUL it
 * was cg-N), nor "cg-0N", "cg- N" or "cg-+N" (the same number); the
 * plugin's answer with the right id, sent after them, is the call's.
 */
START_TEST(stray_ids_not_answers)
{
	char	res[4096];

	hub_start();
	plugin_start();
	fake_await(&srv, "recv register_tools ");
	fake_ctl(&plug, "stray \"%s\\u0000x\"");
	fake_ctl(&plug, "stray \"cg-0%d\"");
	fake_ctl(&plug, "stray \"cg- %d\"");
	fake_ctl(&plug, "stray \"cg-+%d\"");
	fake_ctl(&srv, "execute get_editor_state {} 5");
	fake_await(&plug, "stray \"cg-+");
	fake_await(&plug, "answer cg-");
	fake_await(&srv, "result ");
	fake_line(&srv, "result ", res, sizeof(res));
	ck_assert_msg(strstr(res, "Retrieved editor state") != NULL &&
	    strstr(res, "stray answer") == NULL, "%s", res);
}
END_TEST

/*
 * The plugin's message types are compared whole, as the server's
 * dispatch compares them: "register_tools\u0000x" (no tools) and
 * "register\u0000x" (a second register, which would supersede the
 * socket) are types it does not know, ignored; the tools the plugin
 * sends after them are the only ones the server hears again.
 */
START_TEST(nul_types_unknown)
{
	hub_start();
	plugin_start();
	fake_await(&srv, "recv register_tools ");
	fake_ctl(&plug, "raw {\"type\":\"register_tools\\u0000x\","
	    "\"tools\":[]}");
	fake_ctl(&plug, "raw {\"type\":\"register\\u0000x\","
	    "\"project_hash\":\"0123456789abcdef\"}");
	fake_ctl(&plug, "retools");
	fake_await(&srv, "recv register_tools ");
	ck_assert_int_eq(fake_count(&srv, "recv register_tools\\u0000"), 0);
	ck_assert_int_eq(fake_count(&srv, "recv register_tools 0"), 0);
	ck_assert_int_eq(fake_count(&srv, "recv register "), 1);
	ck_assert_int_eq(fake_count(&plug, "close "), 0);
	ck_assert_int_eq(fake_count(&plug, "registered "), 1);
}
END_TEST

/* How long ago the face heard the editor's last pong (server_status). */
static int64_t
pong_ago_ms(void)
{
	json_object	*st, *v;
	int64_t		 ms;

	st = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"server_status\"}");
	v = jpath(st, "result.unity_hub.editors.0.pong_ago_ms");
	ck_assert_ptr_nonnull(v);
	ms = json_object_get_int64(v);
	json_object_put(st);
	return ms;
}

/* The plugin's message line, then its tools again, once the server has
 * them: the face read that line before. */
static void
plugin_then_tools(const char *line)
{
	fake_ctl(&plug, line);
	fake_ctl(&plug, "retools");
	fake_await(&srv, "recv register_tools ");
}

/*
 * A pong naming "<sid>\u0000x" refreshes no session (the server keys
 * sessions on the whole id): with the plugin's own pongs stopped, its
 * session's last pong only ages; a pong naming the sid itself refreshes
 * it.  No event tells a pong's age: poll until it is over a second.
 */
START_TEST(nul_pong_refreshes_nothing)
{
	struct timespec	 ts = { 0, 50 * 1000 * 1000 };
	int64_t		 aged;
	int		 i;

	hub_start();
	plugin_start();
	fake_await(&srv, "recv register_tools ");
	fake_ctl(&plug, "silent");
	for (i = 0; i < 200 && (aged = pong_ago_ms()) < 1000; i++)
		nanosleep(&ts, NULL);
	ck_assert_int_ge(aged, 1000);
	plugin_then_tools("raw {\"type\":\"pong\",\"session_id\":"
	    "\"%s\\u0000x\"}");
	ck_assert_int_ge(pong_ago_ms(), aged);
	plugin_then_tools("raw {\"type\":\"pong\",\"session_id\":\"%s\"}");
	ck_assert_int_lt(pong_ago_ms(), aged);
}
END_TEST

/*
 * Towards the server, its message types are compared whole as the
 * plugin's switch compares them: an "execute\u0000x" is a type the
 * plugin does not know, ignored; the execute sent after it is the one
 * answered.
 */
START_TEST(upstream_nul_type_unknown)
{
	hub_start();
	plugin_start();
	fake_await(&srv, "recv register_tools ");
	fake_ctl(&srv, "raw {\"type\":\"execute\\u0000x\",\"id\":\"nul-type\","
	    "\"name\":\"get_editor_state\",\"params\":{},\"timeout\":5}");
	fake_ctl(&srv, "raw {\"type\":\"execute\",\"id\":\"whole-type\","
	    "\"name\":\"get_editor_state\",\"params\":{},\"timeout\":5}");
	fake_await(&srv, "recv command_result whole-type ");
	ck_assert_int_eq(fake_count(&srv, "recv command_result nul-type "), 0);
	/* A name with a NUL is no tool's; an id with one is unreadable. */
	fake_ctl(&srv, "raw {\"type\":\"execute\",\"id\":\"nul-name\","
	    "\"name\":\"get_editor_state\\u0000x\",\"params\":{},"
	    "\"timeout\":5}");
	fake_ctl(&srv, "raw {\"type\":\"execute\",\"id\":\"nul\\u0000id\","
	    "\"name\":\"get_editor_state\",\"params\":{},\"timeout\":5}");
	fake_ctl(&srv, "raw {\"type\":\"execute\",\"id\":\"after\","
	    "\"name\":\"get_editor_state\",\"params\":{},\"timeout\":5}");
	fake_await(&srv, "recv command_result after ");
	ck_assert_int_eq(fake_count(&srv, "recv command_result nul "), 0);
	ck_assert_int_eq(fake_count(&srv, "recv command_result nul-name "), 1);
	ck_assert_msg(strstr(srv.log, "recv command_result nul-name {\"status\":"
	    "\"error\",\"error\":\"Unknown or unsupported") != NULL, "%s",
	    srv.log);
}
END_TEST

/* How many executes of name the plugin received. */
static int
plugin_got(const char *name)
{
	const char	*p = plug.log;
	char		 pat[96];
	int		 n = 0;

	snprintf(pat, sizeof(pat), " %s ", name);
	for (; p != NULL && *p != '\0'; p = strchr(p, '\n') ? strchr(p,
	    '\n') + 1 : NULL)
		if (strncmp(p, "recv execute ", 13) == 0 &&
		    strstr(p, pat) != NULL && strstr(p, pat) < strchr(p, '\n'))
			n++;
	return n;
}

/* The ticket a held answer names (the server's last result). */
static void
held_ticket(char ticket[32])
{
	char		 res[4096], *json;
	json_object	*o;

	fake_line(&srv, "result ", res, sizeof(res));
	ck_assert_msg(strstr(res, "\"held\"") != NULL, "%s", res);
	ck_assert_ptr_nonnull(json = strchr(res, '{'));
	ck_assert_ptr_nonnull(o = json_tokener_parse(json));
	snprintf(ticket, 32, "%s", str(o, "result.data.ticket"));
	json_object_put(o);
}

/*
 * The scenario: agent A's test run (its job id answered at once)
 * holds agent B's compile, answered "held" before the server's timeout,
 * blocked_by tests_running; the run ends; the compile reaches the editor
 * once, and the editor reloads; while the plugin is away a command is
 * held as reloading before the server's 2 s, and a read with time to
 * spare waits for it and is answered; the server hears one answer for
 * each execute, and no command reaches the editor twice.
 */
START_TEST(test_run_holds_compile)
{
	char		 rd[4096], ticket[32];
	json_object	*r;

	setenv("HUB_TIME_SCALE", "0.1", 1);
	hub_start();
	plugin_start();
	fake_await(&srv, "recv register_tools ");
	fake_ctl(&srv, "execute run_tests {\"mode\":\"EditMode\"} 10");
	fake_await(&srv, "result ");
	fake_line(&srv, "result ", rd, sizeof(rd));
	ck_assert_msg(strstr(rd, "job_id") != NULL, "%s", rd);
	fake_ctl(&srv, "execute refresh_unity {\"compile\":\"request\"} 4");
	fake_await(&srv, "result ");
	held_ticket(ticket);
	r = poll_job(ticket);
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
	ck_assert_int_eq(plugin_got("refresh_unity"), 0);
	fake_ctl(&plug, "end-tests succeeded");
	fake_await(&plug, "abort reload");
	ck_assert_int_eq(plugin_got("refresh_unity"), 1);
	/* The editor is away: held as reloading before 2 s; a read with
	 * time to spare waits for it. */
	fake_ctl(&srv, "execute get_project_info {} 2");
	fake_await(&srv, "result ");
	fake_line(&srv, "result ", rd, sizeof(rd));
	ck_assert_msg(strstr(rd, "\"reason\":\"reloading\"") != NULL, "%s",
	    rd);
	fake_ctl(&srv, "execute get_editor_state {} 20");
	fake_ctl(&plug, "reload-done");
	fake_await(&srv, "result ");
	fake_line(&srv, "result ", rd, sizeof(rd));
	ck_assert_msg(strstr(rd, "Retrieved editor state") != NULL, "%s", rd);
	wait_end(ticket, "done");
	fake_ctl(&srv, "tools");
	ck_assert_int_eq(plugin_got("refresh_unity"), 1);
	ck_assert_int_eq(plugin_got("run_tests"), 1);
	ck_assert_int_eq(fake_count(&srv, "result "), 4);
	ck_assert_int_eq(fake_count(&srv, "timeout "), 0);
	ck_assert_int_eq(fake_count(&srv, "sent execute "), 4);
}
END_TEST

/*
 * The server restarts (closes its hub sockets 1012), its answer to the
 * next upgrade cut after cut bytes when cut is not 0: cmdgate connects
 * again, registers the editor and its tools anew, and the plugin's own
 * connection to the face is never touched.
 */
static void
registers_again(int cut)
{
	char	res[4096], line[32];

	hub_start();
	plugin_start();
	fake_await(&srv, "recv register_tools ");
	snprintf(line, sizeof(line), "cut %d", cut);
	if (cut > 0)
		fake_ctl(&srv, line);
	fake_ctl(&srv, "drop 1012");
	fake_await(&srv, "close 1012");
	if (cut > 0)
		fake_await(&srv, line);
	fake_await(&srv, "recv register ");
	fake_await(&srv, "registered ");
	fake_await(&srv, "recv register_tools ");
	ck_assert_int_eq(fake_count(&srv, "recv register "), 2);
	fake_ctl(&srv, "execute get_editor_state {} 5");
	fake_await(&srv, "result ");
	fake_line(&srv, "result ", res, sizeof(res));
	ck_assert_msg(strstr(res, "Retrieved editor state") != NULL, "%s",
	    res);
	ck_assert_int_eq(fake_count(&plug, "close "), 0);
	ck_assert_int_eq(fake_count(&plug, "abort "), 0);
}

START_TEST(server_restart_registers_again)
{
	registers_again(0);
}
END_TEST

/*
 * A server that dies in the middle of its answer to the upgrade (600
 * bytes of header lines, no end): the next connection's answer, shorter
 * than that, is read from its first byte (the count of head bytes looked
 * at starts again at each connect), and the editor is registered again.
 */
START_TEST(cut_answer_then_whole)
{
	registers_again(600);
}
END_TEST

/*
 * The editor itself still registered straight on the server: the two
 * registrants evict each other; the third time in a minute cmdgate says
 * who holds the project and stops trying for a while.
 */
START_TEST(another_registrant_noticed)
{
	struct fake	direct;
	char		url[80];

	setenv("HUB_TIME_SCALE", "0.1", 1);
	direct.pid = -1;
	hub_start();
	plugin_start();
	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/hub/plugin", srv.port);
	fake_start(&direct, "FAKE_HUB_PLUGIN", url, "--project",
	    "/tmp/cmdgate-hub-test/Proj", NULL);
	ck_assert_int_eq(broker_await_log(&b, "another registrant holds "
	    "project"), 1);
	fake_stop(&direct);
}
END_TEST

/*
 * A server whose session ids are longer than a UUID (87 bytes here):
 * cmdgate's pongs name the session whole, so that the server keeps it
 * (the id was cut to 63 bytes when kept, and the pongs named no session).
 */
START_TEST(server_session_whole)
{
	char	sid[256], pong[300];

	setenv("HUB_TIME_SCALE", "0.1", 1);
	setenv("HUB_SID_SUFFIX", "-longer-than-a-uuid-as-another-server-might-"
	    "make-it", 1);
	hub_start();
	plugin_start();
	fake_line(&srv, "registered ", sid, sizeof(sid));
	ck_assert_uint_gt(strlen(sid), 64);
	snprintf(pong, sizeof(pong), "recv pong %s", sid);
	fake_await(&srv, pong);
	ck_assert_int_eq(fake_count(&srv, "stale "), 0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("hub");
	TCase	*tc = tcase_create("hub");

	tcase_add_checked_fixture(tc, hub_setup, hub_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, other_routes_passed_on);
	tcase_add_test(tc, editor_registered_upstream);
	tcase_add_test(tc, execute_through_the_link);
	tcase_add_test(tc, stray_ids_not_answers);
	tcase_add_test(tc, nul_types_unknown);
	tcase_add_test(tc, nul_pong_refreshes_nothing);
	tcase_add_test(tc, upstream_nul_type_unknown);
	tcase_add_test(tc, test_run_holds_compile);
	tcase_add_test(tc, server_restart_registers_again);
	tcase_add_test(tc, cut_answer_then_whole);
	tcase_add_test(tc, another_registrant_noticed);
	tcase_add_test(tc, server_session_whole);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
