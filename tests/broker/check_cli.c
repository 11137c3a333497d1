/* SPDX-License-Identifier: ISC */
/* cmdgate(1): every subcommand and every exit status, against the broker. */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "cliutil.h"
#include "testnet.h"


START_TEST(ping_and_unreachable)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd;

	start(NULL);
	ck_assert_int_eq(run(NULL, "ping", NULL), 0);
	ck_assert_ptr_nonnull(strstr(cli_out, "pong"));
	ck_assert_int_eq(run(NULL, "--json", "ping", NULL), 0);
	ck_assert_str_eq(cli_out, "{}\n");
	/* A port nobody listens on: 69, and it says so. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&sin, sizeof(sin));
	getsockname(fd, (struct sockaddr *)&sin, &len);
	snprintf(port, sizeof(port), "%d", ntohs(sin.sin_port));
	close(fd);
	ck_assert_int_eq(run(NULL, "ping", NULL), 69);
	ck_assert_ptr_nonnull(strstr(cli_err, "cannot connect"));
	/* The Unix socket. */
	ck_assert_int_eq(run(NULL, "--socket", b.sock, "ping", NULL), 0);
}
END_TEST

START_TEST(usage_errors)
{
	start(NULL);
	ck_assert_int_eq(run(NULL, NULL), 64);
	ck_assert_int_eq(run(NULL, "frobnicate", NULL), 64);
	ck_assert_ptr_nonnull(strstr(cli_err, "unknown command 'frobnicate'"));
	ck_assert_int_eq(run(NULL, "--bogus", "ping", NULL), 64);
	ck_assert_int_eq(run(NULL, "submit", NULL), 64);
	ck_assert_int_eq(run(NULL, "submit", "echo", "novalue", NULL), 64);
	ck_assert_int_eq(run(NULL, "submit", "count", "n=x", NULL), 64);
	/* Issue 35.6: each says what to type instead. */
	ck_assert_str_eq(cli_err, "cmdgate: n=x: n must be an integer\n");
	ck_assert_int_eq(run(NULL, "submit", "echo", "txt=hi", NULL), 64);
	ck_assert_str_eq(cli_err, "cmdgate: echo has no parameter 'txt'; its "
	    "parameters: text, n (cmdgate tool echo)\n");
	ck_assert_int_eq(run(NULL, "submit", "count", "n=-5", NULL), 64);
	ck_assert_msg(strstr(cli_err, "give a value that does not start with "
	    "'-'") != NULL, "%s", cli_err);
	ck_assert_int_eq(run(NULL, "submit", "nosuch", NULL), 64);
	ck_assert_str_eq(cli_err, "cmdgate: no tool 'nosuch' in the table; "
	    "'cmdgate tools' lists them\n");
	ck_assert_int_eq(run(NULL, "jobs", NULL), 0);
	ck_assert_msg(strstr(cli_out, "t-") == NULL, "a refused submit ran: "
	    "%s", cli_out);
	ck_assert_int_eq(run(NULL, "poll", NULL), 64);
	ck_assert_int_eq(run(NULL, "--port", "0", "ping", NULL), 64);
	ck_assert_int_eq(run(NULL, "--help", NULL), 0);
	ck_assert_ptr_nonnull(strstr(cli_out, "editor-state"));
	ck_assert_int_eq(run(NULL, "--version", NULL), 0);
	ck_assert_ptr_nonnull(strstr(cli_out, PACKAGE_VERSION));
}
END_TEST

START_TEST(token_auth)
{
	const char	*args[] = { "--token-file", NULL, NULL };
	char		 good[256], bad[256];

	snprintf(good, sizeof(good), "%s", broker_path(&b, "token"));
	snprintf(bad, sizeof(bad), "%s", broker_path(&b, "wrong"));
	write_file(good, "sesame\n", 0600);
	write_file(bad, "open\n", 0600);
	args[1] = good;
	start(args);
	ck_assert_int_eq(run(NULL, "ping", NULL), 77);
	ck_assert_int_eq(run(NULL, "--token-file", bad, "ping", NULL), 77);
	ck_assert_ptr_nonnull(strstr(cli_err, "not authorized"));
	ck_assert_int_eq(run(NULL, "--token-file", good, "ping", NULL), 0);
	ck_assert_int_eq(run(NULL, "--token-file", "/nonexistent", "ping",
	    NULL), 77);
}
END_TEST

/*
 * Issue 31.1: the token goes only to a listener of the broker's user.  A
 * user (nobody) holds a loopback port, as one who took the broker's
 * while it was away would; the token file is root's.  cmdgate pings it
 * first (an answer proves it accepted), the kernel says its socket is
 * nobody's: exit 69, both users named, and the listener never saw the
 * token.  The same token file made nobody's is sent (and refused by the
 * fake, 77).  Before, authenticate with the token was the first line.
 */
START_TEST(token_not_to_squatter)
{
	struct squat	 sq;
	char		 tok[256], p[16];
	const char	*first;

	snprintf(tok, sizeof(tok), "%s", broker_path(&b, "token"));
	write_file(tok, "sesame-31-1\n", 0600);
	squat_start(&sq, 65534, 0);
	snprintf(p, sizeof(p), "%d", sq.port);
	ck_assert_int_eq(run(NULL, "--port", p, "--token-file", tok, "ping",
	    NULL), 69);
	ck_assert_msg(strstr(cli_err, "is not the broker's") != NULL &&
	    strstr(cli_err, "uid 65534") != NULL &&
	    strstr(cli_err, "uid 0 (root)") != NULL, "stderr: %s", cli_err);
	ck_assert_msg(squat_await(&sq, "\"ping\"", 1), "seen: %s", sq.seen);
	ck_assert_int_eq(chown(tok, 65534, 65534), 0);
	ck_assert_int_eq(run(NULL, "--port", p, "--token-file", tok, "ping",
	    NULL), 77);
	ck_assert_msg(squat_await(&sq, "sesame-31-1", 1), "seen: %s",
	    sq.seen);
	squat_stop(&sq);
	/* Once, by the second run: after its ping, the second one seen. */
	first = strstr(sq.seen, "sesame-31-1");
	ck_assert_ptr_null(strstr(first + 1, "sesame-31-1"));
	ck_assert_ptr_nonnull(strstr(strstr(sq.seen, "\"ping\"") + 1,
	    "\"ping\""));
	ck_assert(strstr(strstr(sq.seen, "\"ping\"") + 1, "\"ping\"") <
	    first);
}
END_TEST

START_TEST(tools_and_status)
{
	json_object	*o;

	start(NULL);
	ck_assert_int_eq(run(NULL, "tools", NULL), 0);
	ck_assert_ptr_nonnull(strstr(cli_out, "NAME"));
	ck_assert_ptr_nonnull(strstr(cli_out, "\nlocked "));
	ck_assert_int_eq(run(NULL, "--json", "tools", NULL), 0);
	o = out_json();
	ck_assert_int_eq(json_object_array_length(jpath(o, "tools")), 6);
	json_object_put(o);
	ck_assert_int_eq(run(NULL, "tool", "block", NULL), 0);
	ck_assert_ptr_nonnull(strstr(cli_out, "busy tests_running"));
	ck_assert_int_eq(run(NULL, "tool", "nope", NULL), 64);
	ck_assert_ptr_nonnull(strstr(cli_err,
	    "no tool 'nope' in the table; 'cmdgate tools' lists them"));
	ck_assert_int_eq(run(NULL, "status", NULL), 0);
	ck_assert_ptr_nonnull(strstr(cli_out, "holding reloads: nothing"));
	/* Issue 35.7: plain units. */
	ck_assert_msg(strstr(cli_out, ", 1 client\n") != NULL &&
	    strstr(cli_out, " used of 1 GiB\n") != NULL, "%s", cli_out);
	ck_assert_int_eq(run(NULL, "--json", "status", NULL), 0);
	o = out_json();
	ck_assert_ptr_nonnull(jpath(o, "server.version"));
	ck_assert_ptr_nonnull(jpath(o, "queue.busy"));
	json_object_put(o);
}
END_TEST

START_TEST(submit_statuses)
{
	json_object	*o;
	char		 ticket[32], want[256];
	int		 fd;

	start(NULL);
	ck_assert_int_eq(run(NULL, "submit", "echo", "text=hello world",
	    NULL), 0);
	ck_assert_ptr_nonnull(strstr(cli_out, "hello world"));
	/* Converted by the schema: n is an integer. */
	ck_assert_int_eq(run(NULL, "--json", "submit", "count", "n=42", NULL),
	    0);
	o = out_json();
	ck_assert_str_eq(json_object_get_string(jpath(o, "results.0.stdout")),
	    "42\n");
	json_object_put(o);
	ck_assert_int_eq(run(NULL, "submit", "fail", NULL), 1);
	ck_assert_ptr_nonnull(strstr(cli_out, "FAILED"));
	ck_assert_int_eq(run(NULL, "submit", "nope", NULL), 64);
	ck_assert_int_eq(run(NULL, "submit", "locked", NULL), 77);
	/* Still running when --timeout passes: 3. */
	ck_assert_int_eq(run(NULL, "submit", "block", "--timeout", "1", NULL),
	    3);
	ck_assert_int_eq(run(NULL, "--json", "submit", "block", "--async",
	    NULL), 0);
	o = out_json();
	snprintf(ticket, sizeof(ticket), "%s",
	    json_object_get_string(jpath(o, "ticket")));
	json_object_put(o);
	ck_assert_int_eq(run(NULL, "poll", ticket, NULL), 3);
	/* Not on a terminal: each change is a line, then the job. */
	ck_assert_int_eq(run(NULL, "submit", "--async", "reload", NULL), 64);
	ck_assert_int_eq(run(NULL, "wait", ticket, "--timeout", "2", NULL), 3);
	ck_assert_ptr_nonnull(strstr(cli_out, " running, 0 of 1 commands\n"));
	ck_assert_int_eq(run(NULL, "cancel", ticket, NULL), 0);
	ck_assert_ptr_nonnull(strstr(cli_out, "cancelled"));
	ck_assert_int_eq(run(NULL, "wait", ticket, NULL), 2);
	ck_assert_int_eq(run(NULL, "cancel", ticket, NULL), 1);
	ck_assert_int_eq(run(NULL, "poll", "t-999999", NULL), 64);
	ck_assert_ptr_nonnull(strstr(cli_err, "unknown_ticket"));
	/*
	 * Issue 35.8: a reload held back says since when and by which job;
	 * wait's lines (not on a terminal) only when that changes.
	 */
	ck_assert_int_eq(run(NULL, "--json", "submit", "rebuild", "--async",
	    NULL), 0);
	o = out_json();
	snprintf(ticket, sizeof(ticket), "%s",
	    json_object_get_string(jpath(o, "ticket")));
	json_object_put(o);
	ck_assert_int_eq(run(NULL, "poll", ticket, NULL), 3);
	snprintf(want, sizeof(want), "%s queued ", ticket);
	ck_assert_msg(strncmp(cli_out, want, strlen(want)) == 0 &&
	    strstr(cli_out, "s, position 0, blocked by tests_running (held by "
	    "t-000003 block, running ") != NULL, "%s", cli_out);
	ck_assert_int_eq(run(NULL, "wait", ticket, "--timeout", "2", NULL), 3);
	snprintf(want, sizeof(want), "%s queued, position 0, blocked by "
	    "tests_running (held by t-000003 block)\n%s queued ", ticket,
	    ticket);
	ck_assert_msg(strncmp(cli_out, want, strlen(want)) == 0, "%s",
	    cli_out);
	/* The first blocked job still reads the FIFO. */
	fd = open(fifo, O_WRONLY);
	close(fd);
	ck_assert_int_eq(run(NULL, "wait", "t-000003", "--timeout", "20",
	    NULL), 0);
}
END_TEST

START_TEST(multi_and_stdin)
{
	json_object	*o;

	start(NULL);
	ck_assert_int_eq(run(NULL, "--json", "submit", "echo", "text=one",
	    "--then", "count", "n:=2", "--label", "two", "--agent", "cli",
	    NULL), 0);
	o = out_json();
	ck_assert_int_eq(json_object_array_length(jpath(o, "results")), 2);
	ck_assert_str_eq(json_object_get_string(jpath(o, "results.1.stdout")),
	    "2\n");
	ck_assert_str_eq(json_object_get_string(jpath(o, "label")), "two");
	ck_assert_str_eq(json_object_get_string(jpath(o, "agent")), "cli");
	json_object_put(o);
	ck_assert_int_eq(run("[{\"tool\":\"echo\",\"params\":{\"text\":"
	    "\"piped\"}},{\"tool\":\"fail\"}]", "--json", "submit", "-",
	    "--fail-fast", NULL), 1);
	o = out_json();
	ck_assert_int_eq(json_object_get_int(jpath(o, "failed_at_command")),
	    1);
	json_object_put(o);
	ck_assert_int_eq(run("not json", "submit", "-", NULL), 64);
	ck_assert_int_eq(run(NULL, "jobs", "--status", "failed", NULL), 0);
	ck_assert_ptr_nonnull(strstr(cli_out, "t-000001"));
	ck_assert_ptr_null(strstr(cli_out, "t-000000"));
	/* Issue 35.7: the tools of each job. */
	ck_assert_msg(strstr(cli_out, " TOOLS ") != NULL &&
	    strstr(cli_out, " no      echo,fail        anonymous ") != NULL,
	    "%s", cli_out);
	ck_assert_int_eq(run(NULL, "--json", "jobs", "--agent", "cli", NULL),
	    0);
	o = out_json();
	ck_assert_int_eq(json_object_array_length(jpath(o, "jobs")), 1);
	json_object_put(o);
	ck_assert_int_eq(run(NULL, "jobs", "--status", NULL), 64);
}
END_TEST

START_TEST(editor_state_wraps)
{
	char		 cmd[512];
	json_object	*o;

	start(NULL);
	snprintf(cmd, sizeof(cmd), "%s --json status; exit 5",
	    getenv("CMDGATE"));
	ck_assert_int_eq(run(NULL, "editor-state", "--tests-running", "--",
	    "sh", "-c", cmd, NULL), 5);
	o = out_json();
	ck_assert(json_object_get_boolean(jpath(o,
	    "queue.busy.tests_running")));
	json_object_put(o);
	/* Afterwards nothing holds. */
	ck_assert_int_eq(run(NULL, "--json", "status", NULL), 0);
	o = out_json();
	ck_assert(!json_object_get_boolean(jpath(o,
	    "queue.busy.tests_running")));
	json_object_put(o);
	ck_assert_int_eq(run(NULL, "editor-state", "--tests-running", NULL),
	    64);
	ck_assert_int_eq(run(NULL, "editor-state", "--", "/nonexistent",
	    NULL), 127);
}
END_TEST

START_TEST(mcp_bridge)
{
	char	*l1, *l2;

	start(NULL);
	ck_assert_int_eq(run("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":"
	    "\"1\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
	    "\"arguments\":{\"text\":\"bridged\"}}}\n", "mcp", NULL), 0);
	l1 = cli_out;
	l2 = strchr(cli_out, '\n');
	ck_assert_ptr_nonnull(l2);
	*l2++ = '\0';
	ck_assert_ptr_nonnull(strstr(l1, "\"serverInfo\""));
	ck_assert_ptr_nonnull(strstr(l2, "\"id\":2"));
	ck_assert_ptr_nonnull(strstr(l2, "bridged"));
	ck_assert_ptr_nonnull(strstr(l2, "\"isError\":false"));
}
END_TEST

START_TEST(mcp_config)
{
	json_object	*o;

	snprintf(port, sizeof(port), "8700");
	ck_assert_int_eq(run(NULL, "mcp-config", "--client", "claude", NULL),
	    0);
	o = out_json();
	ck_assert_ptr_nonnull(strstr(json_object_get_string(jpath(o,
	    "mcpServers.cmdgate.command")), "cmdgate"));
	ck_assert_str_eq(json_object_get_string(jpath(o,
	    "mcpServers.cmdgate.args.2")), "mcp");
	json_object_put(o);
	ck_assert_int_eq(run(NULL, "mcp-config", "--client", "cursor", NULL),
	    0);
	o = out_json();
	ck_assert_ptr_nonnull(jpath(o, "mcpServers.cmdgate"));
	json_object_put(o);
	ck_assert_int_eq(run(NULL, "mcp-config", "--client", "vscode", NULL),
	    0);
	o = out_json();
	ck_assert_str_eq(json_object_get_string(jpath(o,
	    "servers.cmdgate.type")), "stdio");
	json_object_put(o);
	/* Issue 35.14: outside a Unity project, the default bundle is not
	 * there, and it says so; one that is there is taken silently. */
	ck_assert_int_eq(run(NULL, "mcp-config", "--uloop-port", "8711",
	    NULL), 0);
	ck_assert_msg(strstr(cli_err, "/Library/uLoopMCP/server.bundle.js: "
	    "No such file or directory: run mcp-config in the Unity project's "
	    "directory, or give --uloop-server PATH") != NULL, "%s", cli_err);
	ck_assert_int_eq(run(NULL, "mcp-config", "--uloop-port", "8711",
	    "--uloop-server", getenv("CMDGATE"), NULL), 0);
	ck_assert_str_eq(cli_err, "");
	ck_assert_int_eq(run(NULL, "--socket", "/run/x.sock", "mcp-config",
	    NULL), 0);
	o = out_json();
	ck_assert_str_eq(json_object_get_string(jpath(o, "args.1")),
	    "/run/x.sock");
	json_object_put(o);
	ck_assert_int_eq(run(NULL, "mcp-config", "--client", "emacs", NULL),
	    64);
}
END_TEST

/*
 * The cmdgate entry of cmdgate OPT VAL mcp-config --client client --http
 * [--url url] as JSON (caller puts).
 */
static json_object *
http_entry(const char *client, const char *opt, const char *val,
    const char *url)
{
	json_object	*o, *e;

	ck_assert_msg(run(NULL, opt, val, "mcp-config", "--client", client,
	    "--http", url != NULL ? "--url" : NULL, url, NULL) == 0,
	    "stderr: %s", cli_err);
	o = out_json();
	if (strcmp(client, "generic") == 0)
		return o;
	e = jpath(o, strcmp(client, "vscode") == 0 ? "servers.cmdgate" :
	    "mcpServers.cmdgate");
	ck_assert_ptr_nonnull(e);
	json_object_get(e);
	json_object_put(o);
	return e;
}

static const char *
member(json_object *o, const char *path)
{
	json_object	*v = jpath(o, path);

	return v != NULL ? json_object_get_string(v) : NULL;
}

/*
 * Issue 13: mcp-config --http gives each client kind its entry for
 * Streamable HTTP: the URL (--url, CMDGATE_HTTP, else 8701) and the
 * bearer token when there is one, the state dir's only for loopback.
 */
START_TEST(mcp_config_http)
{
	char		 tok[512], dir[256], nodir[256], url[64];
	json_object	*e;

	snprintf(tok, sizeof(tok), "%s", broker_path(&b, "tok"));
	write_file(tok, "sesame\n", 0600);
	snprintf(dir, sizeof(dir), "%s", broker_path(&b, "sd"));
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(tok, sizeof(tok), "%s/token", dir);
	write_file(tok, "opensesame\n", 0600);
	snprintf(nodir, sizeof(nodir), "%s", broker_path(&b, "none"));
	snprintf(port, sizeof(port), "9");
	unsetenv("CMDGATE_HTTP");
	/* No token: no headers; the default URL. */
	e = http_entry("claude", "--state-dir", nodir, NULL);
	ck_assert_str_eq(member(e, "type"), "http");
	ck_assert_str_eq(member(e, "url"), "http://127.0.0.1:8701/mcp");
	ck_assert_ptr_null(jpath(e, "headers"));
	ck_assert_ptr_null(jpath(e, "command"));
	ck_assert_ptr_nonnull(strstr(cli_err, "no Authorization header"));
	json_object_put(e);
	/* The state dir's token, to a loopback URL. */
	e = http_entry("vscode", "--state-dir", dir, NULL);
	ck_assert_ptr_null(strstr(cli_err, "no token found"));
	/* Issue 35.13: the token is in the clear, and it says so. */
	ck_assert_msg(strstr(cli_err, "token in the clear: keep the file it "
	    "goes to private and out of version control") != NULL, "%s",
	    cli_err);
	ck_assert_str_eq(member(e, "type"), "http");
	ck_assert_str_eq(member(e, "headers.Authorization"),
	    "Bearer opensesame");
	json_object_put(e);
	e = http_entry("cursor", "--state-dir", dir,
	    "http://[::1]:8123/mcp");
	ck_assert_ptr_null(jpath(e, "type"));
	ck_assert_str_eq(member(e, "url"), "http://[::1]:8123/mcp");
	ck_assert_str_eq(member(e, "headers.Authorization"),
	    "Bearer opensesame");
	json_object_put(e);
	/* ... never to another host; a named token file goes anywhere. */
	e = http_entry("claude", "--state-dir", dir,
	    "https://build.example:8701/mcp");
	ck_assert_ptr_null(jpath(e, "headers"));
	json_object_put(e);
	snprintf(tok, sizeof(tok), "%s", broker_path(&b, "tok"));
	e = http_entry("generic", "--token-file", tok,
	    "https://build.example:8701/mcp");
	ck_assert_str_eq(member(e, "name"), "cmdgate");
	ck_assert_str_eq(member(e, "headers.Authorization"), "Bearer sesame");
	json_object_put(e);
	/* CMDGATE_HTTP: ADDR:PORT or a URL; --url wins. */
	setenv("CMDGATE_HTTP", "127.0.0.2:8800", 1);
	e = http_entry("claude", "--state-dir", nodir, NULL);
	ck_assert_str_eq(member(e, "url"), "http://127.0.0.2:8800/mcp");
	json_object_put(e);
	setenv("CMDGATE_HTTP", "http://localhost:8801/x", 1);
	e = http_entry("claude", "--state-dir", nodir, NULL);
	ck_assert_str_eq(member(e, "url"), "http://localhost:8801/x");
	json_object_put(e);
	snprintf(url, sizeof(url), "http://127.0.0.1:1/mcp");
	e = http_entry("claude", "--state-dir", nodir, url);
	ck_assert_str_eq(member(e, "url"), url);
	json_object_put(e);
	unsetenv("CMDGATE_HTTP");
	/* A token that cannot be read, a URL that is not HTTP. */
	ck_assert_int_eq(run(NULL, "--token-file", "/nonexistent",
	    "mcp-config", "--http", NULL), 77);
	ck_assert_int_eq(run(NULL, "mcp-config", "--url", "ftp://x/mcp",
	    NULL), 64);
	ck_assert_ptr_nonnull(strstr(cli_err, "must start with http://"));
}
END_TEST

/* ---- H4: answers that end every call, safe terminal output --------- */

/* A loopback port that accepts connections and never answers; its fd. */
static int
silent_listener(void)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd;

	ck_assert_int_ge(fd = socket(AF_INET, SOCK_STREAM, 0), 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	snprintf(port, sizeof(port), "%d", ntohs(sin.sin_port));
	return fd;
}

/*
 * Issue 19.8: an argument that is not UTF-8 is answered -32700 with a
 * null id, which ends the call (it hung); a broker that does not answer
 * ends it after --reply-timeout.
 */
START_TEST(cli_never_hangs)
{
	int	fd;

	start(NULL);
	ck_assert_int_eq(run(NULL, "submit", "echo", "text=\xff", NULL), 64);
	ck_assert_msg(strstr(cli_err, "parse_error") != NULL, "stderr: %s", cli_err);
	ck_assert_int_eq(run(NULL, "--reply-timeout", "0", "ping", NULL), 64);
	ck_assert_int_eq(run(NULL, "--reply-timeout", "x", "ping", NULL), 64);
	/* A wait step's answer may take the step on top of the timeout. */
	ck_assert_int_eq(run(NULL, "submit", "block", "--async", NULL), 0);
	ck_assert_int_eq(run(NULL, "--reply-timeout", "1", "wait", "t-000000",
	    "--timeout", "3", NULL), 3);
	ck_assert_int_ge(fd = open(fifo, O_WRONLY | O_CLOEXEC), 0);
	close(fd);
	fd = silent_listener();
	ck_assert_int_eq(run(NULL, "--reply-timeout", "1", "ping", NULL), 69);
	ck_assert_msg(strstr(cli_err, "did not answer within 1 s") != NULL,
	    "stderr: %s", cli_err);
	ck_assert_int_eq(run(NULL, "--reply-timeout", "1", "submit", "echo",
	    "text=x", NULL), 69);
	close(fd);
}
END_TEST

/* No byte that a terminal takes as a control: C0 but \n, DEL, C1. */
static void
assert_inert(const char *what, const char *s)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)s; *p != '\0'; p++)
		ck_assert_msg((*p >= 0x20 || *p == '\n') && *p != 0x7f &&
		    !(p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0),
		    "%s: control byte 0x%02x at %zu: %s", what, *p,
		    (size_t)(p - (const unsigned char *)s), s);
}

/*
 * Issue 11 section 4: names, labels and tool output are shown with their
 * control characters escaped (\xHH, C1 as \u00HH), never raw.
 */
START_TEST(cli_escapes_controls)
{
	start(NULL);
	ck_assert_int_eq(run(NULL, "submit", "echo",
	    "text=a\x1b]0;pwned\x07z", "--agent", "ev\xc2\x9b" "2Jil",
	    "--label", "L\x1b[2J\nfake line", NULL), 0);
	assert_inert("submit", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "a\\x1b]0;pwned\\x07z"));
	ck_assert_ptr_nonnull(strstr(cli_out, "agent ev\\u009b2Jil"));
	ck_assert_ptr_nonnull(strstr(cli_out, "label L\\x1b[2J\\x0afake line"));
	ck_assert_int_eq(run(NULL, "jobs", NULL), 0);
	assert_inert("jobs", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "ev\\u009b2Jil"));
	ck_assert_ptr_nonnull(strstr(cli_out, "L\\x1b[2J\\x0afake line"));
	ck_assert_int_eq(run(NULL, "poll", "t-000000", NULL), 0);
	assert_inert("poll", cli_out);
	/* --json is for programs: the values as they are, in JSON. */
	ck_assert_int_eq(run(NULL, "--json", "poll", "t-000000", NULL), 0);
	ck_assert_ptr_nonnull(strstr(cli_out, "\\u001b]0;pwned\\u0007z"));
}
END_TEST

/*
 * Issue 19.2: editor-state keeps its hold across a broker restart: it
 * reconnects and reports again, the restarted broker keeps the flags
 * for --editor-grace meanwhile, and a reload queued before the restart
 * stays held until the command ends.
 */
START_TEST(editor_state_survives_restart)
{
	const char	*args[] = { "--tools", tools, NULL };
	char		 json[512];
	const char	*cli[] = { "editor-state", "--tests-running", "--",
			    "sh", "-c", NULL, NULL };
	char		 cmd[512];
	json_object	*r;
	pid_t		 pid;
	int		 efd, wfd, status;

	snprintf(json, sizeof(json), "{\"tools\":[{\"name\":\"rebuild\","
	    "\"tier\":\"heavy\",\"reload\":true,\"exec\":[\"true\"]}]}");
	write_file(tools, json, 0600);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	snprintf(cmd, sizeof(cmd), "cat %s >/dev/null", fifo);
	cli[5] = cmd;
	await_err(-1, NULL);
	pid = spawn_cli(&efd, cli);
	/*
	 * Open once the command reads: the flags are reported by then.  No
	 * broker may inherit it, or the command would never see its end.
	 */
	ck_assert_int_ge(wfd = open(fifo, O_WRONLY | O_CLOEXEC), 0);
	r = broker_call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":"
	    "\"rebuild\"}],\"async\":true}}");
	ck_assert_str_eq(json_object_get_string(jpath(r, "ticket")),
	    "t-000000");
	json_object_put(r);
	assert_held("t-000000");
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	/* Held from the start: the flags were held when it stopped. */
	assert_held("t-000000");
	ck_assert_msg(await_err(efd, "lost the broker"), "stderr: %s", cli_err);
	ck_assert_msg(await_err(efd, "reconnected"), "stderr: %s", cli_err);
	assert_held("t-000000");
	close(wfd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	close(efd);
	r = broker_call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"t-000000\","
	    "\"timeout_s\":20}}");
	ck_assert_str_eq(json_object_get_string(jpath(r, "status")), "done");
	json_object_put(r);
}
END_TEST

/*
 * Issue 19.2: when the broker does not come back within
 * --reconnect-timeout, editor-state says so and exits 69 once the command
 * ends, never 0.
 */
START_TEST(editor_state_fails_loudly)
{
	const char	*cli[] = { "editor-state", "--reconnect-timeout", "1",
			    "--tests-running", "--", "sh", "-c", NULL, NULL };
	char		 cmd[512];
	pid_t		 pid;
	int		 efd, wfd, status;

	start(NULL);
	ck_assert_int_eq(run(NULL, "editor-state", "--reconnect-timeout", "0",
	    "--", "true", NULL), 64);
	snprintf(cmd, sizeof(cmd), "cat %s >/dev/null", fifo);
	cli[7] = cmd;
	await_err(-1, NULL);
	pid = spawn_cli(&efd, cli);
	ck_assert_int_ge(wfd = open(fifo, O_WRONLY | O_CLOEXEC), 0);
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	ck_assert_msg(await_err(efd, "lost the broker"), "stderr: %s", cli_err);
	ck_assert_msg(await_err(efd, "NOT held"), "stderr: %s", cli_err);
	close(wfd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 69);
	close(efd);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("cli");
	TCase	*tc = tcase_create("cli");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ping_and_unreachable);
	tcase_add_test(tc, usage_errors);
	tcase_add_test(tc, token_auth);
	tcase_add_test(tc, token_not_to_squatter);
	tcase_add_test(tc, tools_and_status);
	tcase_add_test(tc, submit_statuses);
	tcase_add_test(tc, multi_and_stdin);
	tcase_add_test(tc, editor_state_wraps);
	tcase_add_test(tc, mcp_bridge);
	tcase_add_test(tc, mcp_config);
	tcase_add_test(tc, mcp_config_http);
	/* H4 */
	tcase_add_test(tc, cli_never_hangs);
	tcase_add_test(tc, cli_escapes_controls);
	tcase_add_test(tc, editor_state_survives_restart);
	tcase_add_test(tc, editor_state_fails_loudly);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
