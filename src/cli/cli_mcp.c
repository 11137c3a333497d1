/* SPDX-License-Identifier: ISC */
/* cmdgate mcp-config: the MCP client configuration that runs the bridge. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "addr.h"
#include "cli.h"
#include "util.h"

/* The URL of mcp-config --http when neither --url nor CMDGATE_HTTP. */
#define MCPCONF_URL	"http://127.0.0.1:8701/mcp"

/* What mcp-config prints: the entries, and how they are wrapped. */
struct mcpconf {
	const char	*client;	/* claude, cursor, vscode, generic */
	const char	*uloop_port;	/* NULL: no uLoopMCP entry */
	const char	*uloop_server;	/* its server.bundle.js */
	char		*unity_dir;	/* NULL: no MCP for Unity entry */
	int		 http;		/* cmdgate's entry: Streamable HTTP */
	const char	*url;		/* its URL */
	char		 port[8];
	char		 hub_url[128];	/* the unity-hub face's /mcp, or "" */
	char		 bundle[PATH_MAX + 40];
	char		 urlbuf[512];
};

/* cmdgate mcp itself, with the connection flags in effect. */
static json_object *
mcpconf_cmdgate(struct cli *cl)
{
	json_object	*srv = json_object_new_object(), *args;
	char		 self[PATH_MAX];
	ssize_t		 n;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		snprintf(self, sizeof(self), "cmdgate");
	else
		self[n] = '\0';
	args = json_object_new_array();
	if (cl->inst != NULL) {
		json_object_array_add(args,
		    json_object_new_string("--instance"));
		json_object_array_add(args, json_object_get(
		    json_object_object_get(cl->inst, "instance")));
	} else if (cl->t.socket != NULL) {
		json_object_array_add(args, json_object_new_string("--socket"));
		json_object_array_add(args,
		    json_object_new_string(cl->t.socket));
	} else {
		json_object_array_add(args, json_object_new_string("--port"));
		json_object_array_add(args, json_object_new_string(cl->t.port));
	}
	if (cl->t.token_file != NULL && cl->inst == NULL) {
		json_object_array_add(args,
		    json_object_new_string("--token-file"));
		json_object_array_add(args,
		    json_object_new_string(cl->t.token_file));
	}
	if (cl->t.state_dir != NULL && cl->inst == NULL) {
		json_object_array_add(args,
		    json_object_new_string("--state-dir"));
		json_object_array_add(args,
		    json_object_new_string(cl->t.state_dir));
	}
	json_object_array_add(args, json_object_new_string("mcp"));
	json_object_object_add(srv, "command", json_object_new_string(self));
	json_object_object_add(srv, "args", args);
	json_object_object_add(srv, "env", json_object_new_object());
	return srv;
}

/* A server entry: command, args (NULL-ended) and one variable. */
static json_object *
mcpconf_entry(const char *command, const char **args, const char *var,
    const char *value)
{
	json_object	*srv = json_object_new_object(), *a, *env;

	a = json_object_new_array();
	while (*args != NULL)
		json_object_array_add(a, json_object_new_string(*args++));
	env = json_object_new_object();
	json_object_object_add(env, var, json_object_new_string(value));
	json_object_object_add(srv, "command",
	    json_object_new_string(command));
	json_object_object_add(srv, "args", a);
	json_object_object_add(srv, "env", env);
	return srv;
}

/*
 * The broker's faces, when neither was named and it answers: the uloop
 * face's port, the unity-mcp face's status dir, and the unity-hub face's
 * address (MCP for Unity's server in HTTP mode, passed on there).  Silent when it does
 * not answer: the cmdgate entry is printed all the same.
 */
static void
mcpconf_ask(struct cli *cl, struct mcpconf *m)
{
	json_object	*s, *l, *e = NULL;
	const char	*a, *port, *dir;
	size_t		 i;

	if (m->uloop_port != NULL || m->unity_dir != NULL ||
	    client_connect(&cl->c, &cl->t) != 0 ||
	    (s = client_call_wait(&cl->c, "server_status", NULL, 0, &e)) == NULL) {
		json_object_put(e);
		return;
	}
	l = json_object_object_get(s, "listen");
	for (i = 0; i < json_object_array_length(l); i++) {
		a = json_object_get_string(json_object_array_get_idx(l, i));
		if (a != NULL && strncmp(a, "uloop@", 6) == 0 &&
		    addr_split(a + 6, NULL, 0, &port) != -1) {
			snprintf(m->port, sizeof(m->port), "%s", port);
			m->uloop_port = m->port;
		}
		if (a != NULL && strncmp(a, "unity-hub@", 10) == 0)
			snprintf(m->hub_url, sizeof(m->hub_url),
			    "http://%s/mcp", a + 10);
	}
	dir = json_object_get_string(json_object_object_get(s,
	    "unity_status_dir"));
	if (dir != NULL && *dir != '\0')
		m->unity_dir = strdup(dir);
	json_object_put(s);
}

/*
 * MCP for Unity's server in HTTP mode, at the unity-hub face's address
 * (which passes /mcp on to it): the agents' entry as they had it.
 */
static json_object *
mcpconf_hub(const struct mcpconf *m)
{
	json_object	*srv = json_object_new_object();

	if (strcmp(m->client, "cursor") != 0)
		json_object_object_add(srv, "type",
		    json_object_new_string("http"));
	json_object_object_add(srv, "url", json_object_new_string(m->hub_url));
	return srv;
}

/* The host of url (SCHEME://HOST[:PORT]/...), without brackets. */
static void
mcpconf_url_host(const char *url, char *buf, size_t len)
{
	const char	*p = strstr(url, "://") + 3, *end;

	if (*p == '[') {
		p++;
		if ((end = strchr(p, ']')) == NULL)
			end = p + strlen(p);
	} else
		end = p + strcspn(p, ":/?#");
	snprintf(buf, len, "%.*s", (int)(end - p), p);
}

/*
 * cmdgate's entry for Streamable HTTP: the URL, and the bearer token
 * found as for a connection to the URL's host.  NULL with the error
 * printed and *rc set.
 */
static json_object *
mcpconf_http(struct cli *cl, const struct mcpconf *m, int *rc)
{
	struct client_target	 t = cl->t;
	json_object		*srv, *h;
	char			 host[256], *tok, *bearer;

	mcpconf_url_host(m->url, host, sizeof(host));
	t.host = host;
	if ((*rc = client_find_token(&cl->c, &t, &tok, NULL)) != 0) {
		fprintf(stderr, "cmdgate: %s\n", cl->c.err);
		return NULL;
	}
	srv = json_object_new_object();
	if (strcmp(m->client, "cursor") != 0)
		json_object_object_add(srv, "type",
		    json_object_new_string("http"));
	json_object_object_add(srv, "url", json_object_new_string(m->url));
	if (tok != NULL) {
		bearer = xasprintf("Bearer %s", tok);
		h = json_object_new_object();
		json_object_object_add(h, "Authorization",
		    json_object_new_string(bearer));
		json_object_object_add(srv, "headers", h);
		free(bearer);
		free(tok);
		fprintf(stderr, "cmdgate: the entry holds the broker's token "
		    "in the clear: keep the file it goes to private and out "
		    "of version control (list it in .gitignore)\n");
	} else
		fprintf(stderr, "cmdgate: no token found for %s, so the "
		    "entry has no Authorization header: a broker with a "
		    "token refuses it (give --token-file or --state-dir)\n",
		    m->url);
	return srv;
}

/* The URL for --http: --url, CMDGATE_HTTP (a URL or ADDR:PORT), or 8701. */
static int
mcpconf_url(struct mcpconf *m)
{
	const char	*env = getenv("CMDGATE_HTTP");

	if (m->url == NULL && env != NULL && *env != '\0') {
		if (strstr(env, "://") != NULL)
			m->url = env;
		else {
			snprintf(m->urlbuf, sizeof(m->urlbuf), "http://%s/mcp",
			    env);
			m->url = m->urlbuf;
		}
	}
	if (m->url == NULL)
		m->url = MCPCONF_URL;
	if (strncmp(m->url, "http://", 7) != 0 &&
	    strncmp(m->url, "https://", 8) != 0)
		return cli_usage_error("the URL '%s' must start with http:// "
		    "or https://", m->url);
	return 0;
}

/* name: entry (taken), in the client's shape. */
static void
mcpconf_add(const struct mcpconf *m, json_object *servers, const char *name,
    json_object *srv)
{
	if (strcmp(m->client, "vscode") == 0 &&
	    !json_object_object_get_ex(srv, "type", NULL))
		json_object_object_add(srv, "type",
		    json_object_new_string("stdio"));
	if (strcmp(m->client, "generic") == 0) {
		json_object_object_add(srv, "name",
		    json_object_new_string(name));
		json_object_array_add(servers, srv);
	} else
		json_object_object_add(servers, name, srv);
}

static int
mcpconf_args(struct mcpconf *m, int argc, char **argv)
{
	uint64_t	port;
	int		i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--http") == 0) {
			m->http = 1;
			continue;
		}
		if (i + 1 == argc)
			break;
		if (strcmp(argv[i], "--client") == 0)
			m->client = argv[i + 1];
		else if (strcmp(argv[i], "--uloop-port") == 0)
			m->uloop_port = argv[i + 1];
		else if (strcmp(argv[i], "--uloop-server") == 0)
			m->uloop_server = argv[i + 1];
		else if (strcmp(argv[i], "--unity-status-dir") == 0) {
			free(m->unity_dir);
			m->unity_dir = strdup(argv[i + 1]);
		} else if (strcmp(argv[i], "--url") == 0) {
			m->url = argv[i + 1];
			m->http = 1;
		} else
			break;
		i++;
	}
	if (i != argc)
		return cli_usage_error("mcp-config [--client claude|cursor|"
		    "vscode|generic] [--http] [--url URL] [--uloop-port PORT] "
		    "[--uloop-server PATH] [--unity-status-dir DIR]%s", "");
	if (m->http && mcpconf_url(m) != 0)
		return CX_USAGE;
	if (strcmp(m->client, "claude") != 0 &&
	    strcmp(m->client, "cursor") != 0 &&
	    strcmp(m->client, "vscode") != 0 &&
	    strcmp(m->client, "generic") != 0)
		return cli_usage_error("--client '%s': claude, cursor, vscode "
		    "or generic", m->client);
	if (m->uloop_port != NULL &&
	    util_parse_u64(m->uloop_port, 1, 65535, &port) == -1)
		return cli_usage_error("--uloop-port '%s' is not 1-65535",
		    m->uloop_port);
	return 0;
}

/*
 * The entries that register cmdgate mcp, and the agents' own servers of
 * the editor bridges put in front of the broker's faces: uLoopMCP's
 * (node server.bundle.js, UNITY_TCP_PORT the uloop face's port) and MCP
 * for Unity's (uvx mcp-for-unity, UNITY_MCP_STATUS_DIR the unity-mcp
 * face's status dir; or, in HTTP mode, the unity-hub face's URL).
 */
int
cmd_mcp_config(struct cli *cl, int argc, char **argv)
{
	static const char	*unity_args[] = { "--from", "mcpforunityserver",
				    "mcp-for-unity", "--transport", "stdio",
				    NULL };
	const char		*uloop_args[2] = { NULL, NULL };
	struct mcpconf		 m;
	json_object		*servers, *root, *self;
	char			 cwd[PATH_MAX];
	int			 rc;

	memset(&m, 0, sizeof(m));
	m.client = "generic";
	if ((rc = mcpconf_args(&m, argc, argv)) != 0)
		return rc;
	mcpconf_ask(cl, &m);
	if (m.uloop_server == NULL) {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			snprintf(cwd, sizeof(cwd), ".");
		snprintf(m.bundle, sizeof(m.bundle),
		    "%s/Library/uLoopMCP/server.bundle.js", cwd);
		m.uloop_server = m.bundle;
	}
	if (!m.http)
		self = mcpconf_cmdgate(cl);
	else if ((self = mcpconf_http(cl, &m, &rc)) == NULL) {
		free(m.unity_dir);
		return rc;
	}
	servers = strcmp(m.client, "generic") == 0 ? json_object_new_array() :
	    json_object_new_object();
	mcpconf_add(&m, servers, "cmdgate", self);
	if (m.uloop_port != NULL) {
		uloop_args[0] = m.uloop_server;
		/* Outside the project the default names nothing. */
		if (access(m.uloop_server, R_OK) == -1)
			fprintf(stderr, "cmdgate: %s: %s: run mcp-config in "
			    "the Unity project's directory, or give "
			    "--uloop-server PATH (uLoopMCP's server.bundle.js)"
			    "\n", m.uloop_server, strerror(errno));
		mcpconf_add(&m, servers, "uLoopMCP", mcpconf_entry("node",
		    uloop_args, "UNITY_TCP_PORT", m.uloop_port));
	}
	if (m.unity_dir != NULL)
		mcpconf_add(&m, servers, "unityMCP", mcpconf_entry("uvx",
		    unity_args, "UNITY_MCP_STATUS_DIR", m.unity_dir));
	else if (m.hub_url[0] != '\0')
		mcpconf_add(&m, servers, "unityMCP", mcpconf_hub(&m));
	free(m.unity_dir);
	if (strcmp(m.client, "generic") == 0 &&
	    json_object_array_length(servers) == 1) {
		/* Only cmdgate's: the bare entry, as it always was. */
		root = json_object_get(json_object_array_get_idx(servers, 0));
		json_object_put(servers);
	} else if (strcmp(m.client, "generic") == 0)
		root = servers;
	else {
		root = json_object_new_object();
		json_object_object_add(root, strcmp(m.client, "vscode") == 0 ?
		    "servers" : "mcpServers", servers);
	}
	printf("%s\n", json_object_to_json_string_ext(root,
	    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return 0;
}
