/* SPDX-License-Identifier: ISC */
/*
 * A fake of uLoopMCP's editor side (its TCP JSON-RPC 2.0 server), on the
 * wire as /work/shared/BRIDGES.md describes the real one, for the tests:
 *
 *	fake_uloop [-c] [-l] [-p port]
 *
 * It listens on 127.0.0.1 (any free port without -p) and prints
 * "port N" first.  Messages are one JSON a line, or with -l
 * "Content-Length: N\r\n\r\n" then the JSON (over 1 MiB closes the
 * connection).  Methods: set-client-name, ping {Message} -> {Message,
 * Ver}, get-version, get-tool-details, and the tools by their own name:
 * get-logs (at once), compile and run-tests (answered when the control
 * channel says so).  Every answer carries Ver.  With -c an answered
 * compile reloads the editor: notifications/server/shutdown
 * {reason: DomainReload} to every client, every connection closed and
 * connects refused until reload-done.
 *
 * Control channel, lines on stdin (EOF ends the fake): end-compile
 * [errors], end-tests succeeded|failed, reload, reload-done, quit.  Log on
 * stdout, one event a line: port N, accept, close, recv METHOD PARAMS,
 * reload start, reload end, ctl LINE (once it took effect).
 */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fakebridge.h"
#include "jstrict.h"

#define VER		"2.1.1"
#define LSP_MAX		(1024 * 1024)
#define LSP_HEAD_MAX	1024

/* A compile or run-tests waiting for the control channel. */
struct pending {
	struct fb_conn	*conn;		/* NULL: none */
	int		 fd;		/* conn's fd when it was asked */
	json_object	*id;
};

static struct {
	int		 lfd;		/* -1 while reloading */
	int		 port;
	int		 lsp;		/* -l */
	int		 compile_reloads; /* -c */
	int		 reloading;
	struct pending	 compile, tests;
	struct fb_conn	 conns[FB_MAXCONN];
} fl;

static json_object *
msg_new(json_object *id)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(o, "id", json_object_get(id));
	return o;
}

static void
send_msg(int fd, json_object *o)
{
	const char	*s = jstrict_to_string(o);
	char		 head[64];

	if (fl.lsp) {
		snprintf(head, sizeof(head), "Content-Length: %zu\r\n\r\n",
		    strlen(s));
		if (fb_write(fd, head, strlen(head)) == -1)
			return;
		fb_write(fd, s, strlen(s));
	} else if (fb_write(fd, s, strlen(s)) == 0)
		fb_write(fd, "\n", 1);
}

/* The result r (owned) with Ver added, to id. */
static void
answer(int fd, json_object *id, json_object *r)
{
	json_object	*o = msg_new(id);

	json_object_object_add(r, "Ver", json_object_new_string(VER));
	json_object_object_add(o, "result", r);
	send_msg(fd, o);
	json_object_put(o);
}

static void
answer_error(int fd, json_object *id, int code, const char *message)
{
	json_object	*o = msg_new(id), *e = json_object_new_object();
	json_object	*d = json_object_new_object();

	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message", json_object_new_string(message));
	json_object_object_add(d, "message", json_object_new_string(message));
	json_object_object_add(e, "data", d);
	json_object_object_add(o, "error", e);
	send_msg(fd, o);
	json_object_put(o);
}

static json_object *
message(const char *text)
{
	json_object	*r = json_object_new_object();

	json_object_object_add(r, "Message", json_object_new_string(text));
	return r;
}

static const char *
param(json_object *params, const char *name, const char *def)
{
	json_object	*v;

	if (params == NULL || !json_object_object_get_ex(params, name, &v) ||
	    !json_object_is_type(v, json_type_string))
		return def;
	return json_object_get_string(v);
}

static json_object *
tool_info(const char *name, const char *desc, const char *prop,
    const char *type)
{
	json_object	*t = json_object_new_object(), *s, *props, *p;

	json_object_object_add(t, "name", json_object_new_string(name));
	json_object_object_add(t, "description", json_object_new_string(desc));
	p = json_object_new_object();
	json_object_object_add(p, "Type", json_object_new_string(type));
	props = json_object_new_object();
	json_object_object_add(props, prop, p);
	s = json_object_new_object();
	json_object_object_add(s, "Properties", props);
	json_object_object_add(s, "Required", json_object_new_array());
	json_object_object_add(t, "parameterSchema", s);
	json_object_object_add(t, "displayDevelopmentOnly",
	    json_object_new_boolean(0));
	return t;
}

static json_object *
tool_details(void)
{
	json_object	*r = json_object_new_object();
	json_object	*a = json_object_new_array();

	json_object_array_add(a, tool_info("compile", "Compile the project",
	    "ForceRecompile", "boolean"));
	json_object_array_add(a, tool_info("run-tests", "Run the tests",
	    "TestMode", "string"));
	json_object_array_add(a, tool_info("get-logs", "Read the console",
	    "LogType", "string"));
	json_object_object_add(r, "Tools", a);
	return r;
}

static json_object *
logs(json_object *params)
{
	json_object	*r = json_object_new_object(), *a, *e;

	a = json_object_new_array();
	e = json_object_new_object();
	json_object_object_add(e, "Type", json_object_new_string("Log"));
	json_object_object_add(e, "Message",
	    json_object_new_string("fake editor started"));
	json_object_array_add(a, e);
	json_object_object_add(r, "TotalCount", json_object_new_int(1));
	json_object_object_add(r, "DisplayedCount", json_object_new_int(1));
	json_object_object_add(r, "LogType",
	    json_object_new_string(param(params, "LogType", "All")));
	json_object_object_add(r, "Logs", a);
	return r;
}

/* Keep the request for the control channel, or refuse a second one. */
static void
defer(struct pending *p, struct fb_conn *c, json_object *id,
    const char *what)
{
	if (p->conn != NULL) {
		answer(c->fd, id, message(what));
		return;
	}
	p->conn = c;
	p->fd = c->fd;
	p->id = json_object_get(id);
}

static void
request(struct fb_conn *c, const char *method, json_object *params,
    json_object *id)
{
	if (strcmp(method, "ping") == 0)
		answer(c->fd, id, message(param(params, "Message", "")));
	else if (strcmp(method, "set-client-name") == 0)
		answer(c->fd, id, message("Client name set"));
	else if (strcmp(method, "get-version") == 0)
		answer(c->fd, id, json_object_new_object());
	else if (strcmp(method, "get-tool-details") == 0)
		answer(c->fd, id, tool_details());
	else if (strcmp(method, "get-logs") == 0)
		answer(c->fd, id, logs(params));
	else if (strcmp(method, "compile") == 0)
		defer(&fl.compile, c, id, "Compilation already in progress");
	else if (strcmp(method, "run-tests") == 0)
		defer(&fl.tests, c, id, "Tests are already running");
	else
		answer_error(c->fd, id, -32601, "Method not found");
}

static void
message_in(struct fb_conn *c, const char *s, size_t n)
{
	json_object	*m, *id = NULL, *params = NULL;
	const char	*method;

	if (jstrict_parse(s, n, &m) != 0) {
		fb_log("recv (bad json)");
		answer_error(c->fd, NULL, -32700, "Parse error");
		return;
	}
	method = param(m, "method", NULL);
	json_object_object_get_ex(m, "params", &params);
	fb_log_recv(method != NULL ? method : "(none)", params);
	if (method == NULL)
		answer_error(c->fd, NULL, -32600, "Invalid Request");
	else if (json_object_object_get_ex(m, "id", &id))
		request(c, method, params, id);
	json_object_put(m);
}

/* One LSP message from c's buffer: its size consumed, 0 (more to come), -1. */
static int
lsp_one(struct fb_conn *c)
{
	char		*end = strstr(c->buf, "\r\n\r\n"), *h;
	size_t		 head, body = 0;
	int		 seen = 0;

	if (end == NULL)
		return c->len > LSP_HEAD_MAX ? -1 : 0;
	head = (size_t)(end - c->buf) + 4;
	for (h = c->buf; h < end; h = strstr(h, "\r\n") + 2)
		if (strncasecmp(h, "Content-Length:", 15) == 0) {
			body = strtoul(h + 15, NULL, 10);
			seen = 1;
		}
	if (!seen || body == 0 || body > LSP_MAX)
		return -1;
	if (c->len < head + body)
		return 0;
	message_in(c, c->buf + head, body);
	fb_conn_consume(c, head + body);
	return 1;
}

static void
serve(struct fb_conn *c)
{
	char	*nl;
	int	 r;

	if (!fb_conn_read(c)) {
		fb_log("close");
		fb_conn_close(c);
		return;
	}
	if (fl.lsp) {
		while (c->fd != -1 && (r = lsp_one(c)) != 0)
			if (r == -1) {
				fb_log("bad frame");
				fb_conn_close(c);
			}
		return;
	}
	while (c->fd != -1 && (nl = memchr(c->buf, '\n', c->len)) != NULL) {
		*nl = '\0';
		if (nl > c->buf)
			message_in(c, c->buf, (size_t)(nl - c->buf));
		fb_conn_consume(c, (size_t)(nl - c->buf) + 1);
	}
}

static void
reload_start(void)
{
	json_object	*o = json_object_new_object(), *p;
	int		 i;

	if (fl.reloading)
		return;
	json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(o, "method",
	    json_object_new_string("notifications/server/shutdown"));
	p = json_object_new_object();
	json_object_object_add(p, "reason",
	    json_object_new_string("DomainReload"));
	json_object_object_add(o, "params", p);
	for (i = 0; i < FB_MAXCONN; i++)
		if (fl.conns[i].fd != -1) {
			send_msg(fl.conns[i].fd, o);
			fb_conn_close(&fl.conns[i]);
		}
	json_object_put(o);
	close(fl.lfd);
	fl.lfd = -1;
	fl.reloading = 1;
	fb_log("reload start");
}

static void
reload_finish(void)
{
	if (!fl.reloading)
		return;
	fl.lfd = fb_listen(fl.port);
	fl.reloading = 0;
	fb_log("reload end");
}

/* Answer the waiting request with r (owned), if its client is still there. */
static void
finish(struct pending *p, json_object *r)
{
	if (p->conn != NULL && p->conn->fd == p->fd)
		answer(p->fd, p->id, r);
	else
		json_object_put(r);
	json_object_put(p->id);
	p->id = NULL;
	p->conn = NULL;
}

static void
end_compile(const char *how)
{
	int		 errors = strcmp(how, "errors") == 0;
	json_object	*r = json_object_new_object();

	json_object_object_add(r, "Success", json_object_new_boolean(!errors));
	json_object_object_add(r, "ErrorCount", json_object_new_int(errors));
	json_object_object_add(r, "WarningCount", json_object_new_int(0));
	json_object_object_add(r, "Errors", json_object_new_array());
	json_object_object_add(r, "Warnings", json_object_new_array());
	json_object_object_add(r, "Message", json_object_new_string(errors ?
	    "Compilation failed" : "Compilation completed"));
	finish(&fl.compile, r);
	if (fl.compile_reloads)
		reload_start();
}

static void
end_tests(const char *how)
{
	int		 failed = strcmp(how, "failed") == 0;
	json_object	*r = json_object_new_object();

	json_object_object_add(r, "Success", json_object_new_boolean(!failed));
	json_object_object_add(r, "Message", json_object_new_string(failed ?
	    "Some tests failed" : "All tests passed"));
	json_object_object_add(r, "TestCount", json_object_new_int(3));
	json_object_object_add(r, "PassedCount",
	    json_object_new_int(failed ? 2 : 3));
	json_object_object_add(r, "FailedCount", json_object_new_int(failed));
	json_object_object_add(r, "SkippedCount", json_object_new_int(0));
	finish(&fl.tests, r);
}

static void
control(char *line)
{
	if (strncmp(line, "end-compile", 11) == 0 && fl.compile.conn != NULL)
		end_compile(line + 11 + (line[11] == ' '));
	else if (strncmp(line, "end-tests ", 10) == 0 && fl.tests.conn != NULL)
		end_tests(line + 10);
	else if (strcmp(line, "reload") == 0)
		reload_start();
	else if (strcmp(line, "reload-done") == 0)
		reload_finish();
	else if (strcmp(line, "quit") == 0)
		exit(0);
	else
		fb_log("ctl-refused %s", line);
}

static void
accept_one(void)
{
	int	fd;

	if ((fd = accept4(fl.lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return;
	if (fb_conn_add(fl.conns, fd) == NULL) {
		close(fd);
		return;
	}
	fb_log("accept");
}

static void
loop(void)
{
	static const struct fb_loop l = { &fl.lfd, fl.conns, control,
	    accept_one, serve, NULL, NULL };

	fb_loop(&l);
}

int
main(int argc, char *argv[])
{
	int	ch, i;

	while ((ch = getopt(argc, argv, "clp:")) != -1) {
		switch (ch) {
		case 'c':
			fl.compile_reloads = 1;
			break;
		case 'l':
			fl.lsp = 1;
			break;
		case 'p':
			fl.port = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: fake_uloop [-c] [-l] "
			    "[-p port]\n");
			return 64;
		}
	}
	for (i = 0; i < FB_MAXCONN; i++)
		fl.conns[i].fd = -1;
	fl.lfd = fb_listen(fl.port);
	fl.port = fb_port(fl.lfd);
	fb_log("port %d", fl.port);
	loop();
}
