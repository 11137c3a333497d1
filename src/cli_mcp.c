/* SPDX-License-Identifier: ISC */
/* cmdgate(1) as an MCP stdio server: the bridge, and its client config. */
#include "config.h"

#include <sys/socket.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <json-c/json.h>

#include "cli.h"
#include "cli_mcp.h"
#include "client.h"
#include "jsonl.h"

struct bridge {
	struct event_base	*base;
	struct bufferevent	*in, *out, *sock;
	int			 stdin_done, rc;
};

static void
bridge_stdin(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;

	bufferevent_write_buffer(b->sock, bufferevent_get_input(bev));
}

static void
bridge_sock(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;

	bufferevent_write_buffer(b->out, bufferevent_get_input(bev));
}

static void
bridge_sock_flushed(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;

	/* The client is done and all it said has gone: half-close. */
	if (b->stdin_done)
		shutdown(bufferevent_getfd(bev), SHUT_WR);
}

static void
bridge_out_flushed(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;

	(void)bev;
	if (b->sock == NULL)
		event_base_loopexit(b->base, NULL);
}

static void
bridge_stdin_event(struct bufferevent *bev, short what, void *arg)
{
	struct bridge	*b = arg;

	(void)what;
	bufferevent_disable(bev, EV_READ);
	b->stdin_done = 1;
	if (evbuffer_get_length(bufferevent_get_output(b->sock)) == 0)
		shutdown(bufferevent_getfd(b->sock), SHUT_WR);
}

static void
bridge_sock_event(struct bufferevent *bev, short what, void *arg)
{
	struct bridge	*b = arg;

	if (!b->stdin_done) {
		fprintf(stderr, "cmdgate mcp: the broker closed the "
		    "connection%s\n", what & BEV_EVENT_ERROR ?
		    " with an error" : "");
		b->rc = CX_UNAVAILABLE;
	}
	bufferevent_write_buffer(b->out, bufferevent_get_input(bev));
	bufferevent_free(bev);
	b->sock = NULL;
	if (evbuffer_get_length(bufferevent_get_output(b->out)) == 0)
		event_base_loopexit(b->base, NULL);
}

int
cmd_mcp(struct cli *cl, int argc, char **argv)
{
	struct bridge	 b;
	const char	*rest;
	size_t		 n;

	(void)argv;
	if (argc != 1)
		return cli_usage_error("mcp takes no arguments%s", "");
	memset(&b, 0, sizeof(b));
	signal(SIGPIPE, SIG_IGN);
	if ((b.base = event_base_new()) == NULL)
		return CX_UNAVAILABLE;
	b.in = bufferevent_socket_new(b.base, 0, 0);
	b.out = bufferevent_socket_new(b.base, 1, 0);
	b.sock = bufferevent_socket_new(b.base, cl->c.fd, BEV_OPT_CLOSE_ON_FREE);
	if (b.in == NULL || b.out == NULL || b.sock == NULL)
		return CX_UNAVAILABLE;
	cl->c.fd = -1;	/* the bridge owns it now */
	/* Anything read past the authentication goes first. */
	if ((rest = jsonl_rest(&cl->c.jl, &n)) != NULL && n > 0)
		bufferevent_write(b.out, rest, n);
	bufferevent_setcb(b.in, bridge_stdin, NULL, bridge_stdin_event, &b);
	bufferevent_setcb(b.out, NULL, bridge_out_flushed, NULL, &b);
	bufferevent_setcb(b.sock, bridge_sock, bridge_sock_flushed,
	    bridge_sock_event, &b);
	bufferevent_enable(b.in, EV_READ);
	bufferevent_enable(b.sock, EV_READ | EV_WRITE);
	bufferevent_enable(b.out, EV_WRITE);
	event_base_dispatch(b.base);
	bufferevent_free(b.in);
	bufferevent_free(b.out);
	if (b.sock != NULL)
		bufferevent_free(b.sock);
	event_base_free(b.base);
	return b.rc;
}

int
cmd_mcp_config(struct cli *cl, int argc, char **argv)
{
	const char	*client = "generic";
	json_object	*args, *srv, *root, *inner, *env;
	char		 self[PATH_MAX];
	ssize_t		 n;

	if (argc == 3 && strcmp(argv[1], "--client") == 0)
		client = argv[2];
	else if (argc != 1)
		return cli_usage_error("mcp-config [--client claude|cursor|"
		    "vscode|generic]%s", "");
	if (strcmp(client, "claude") != 0 && strcmp(client, "cursor") != 0 &&
	    strcmp(client, "vscode") != 0 && strcmp(client, "generic") != 0)
		return cli_usage_error("--client '%s': claude, cursor, vscode "
		    "or generic", client);
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		snprintf(self, sizeof(self), "cmdgate");
	else
		self[n] = '\0';
	args = json_object_new_array();
	if (cl->t.socket != NULL) {
		json_object_array_add(args, json_object_new_string("--socket"));
		json_object_array_add(args,
		    json_object_new_string(cl->t.socket));
	} else {
		json_object_array_add(args, json_object_new_string("--port"));
		json_object_array_add(args, json_object_new_string(cl->t.port));
	}
	if (cl->t.token_file != NULL) {
		json_object_array_add(args,
		    json_object_new_string("--token-file"));
		json_object_array_add(args,
		    json_object_new_string(cl->t.token_file));
	}
	if (cl->t.state_dir != NULL) {
		json_object_array_add(args,
		    json_object_new_string("--state-dir"));
		json_object_array_add(args,
		    json_object_new_string(cl->t.state_dir));
	}
	json_object_array_add(args, json_object_new_string("mcp"));
	srv = json_object_new_object();
	if (strcmp(client, "vscode") == 0)
		json_object_object_add(srv, "type",
		    json_object_new_string("stdio"));
	json_object_object_add(srv, "command", json_object_new_string(self));
	json_object_object_add(srv, "args", args);
	env = json_object_new_object();
	json_object_object_add(srv, "env", env);
	if (strcmp(client, "generic") == 0) {
		json_object_object_add(srv, "name",
		    json_object_new_string("cmdgate"));
		root = srv;
	} else {
		inner = json_object_new_object();
		json_object_object_add(inner, "cmdgate", srv);
		root = json_object_new_object();
		json_object_object_add(root, strcmp(client, "vscode") == 0 ?
		    "servers" : "mcpServers", inner);
	}
	printf("%s\n", json_object_to_json_string_ext(root,
	    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return 0;
}
