/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr.h"
#include "daemon.h"
#include "face.h"
#include "log.h"
#include "runfile.h"
#include "util.h"

#define KIB	1024ULL
#define MIB	(1024ULL * KIB)
#define GIB	(1024ULL * MIB)
#define TIB	(1024ULL * GIB)

enum opt_kind {
	K_STR,		/* string, stored as is */
	K_LISTEN,	/* ADDR:PORT, repeatable */
	K_USER,		/* a user name or uid, repeatable */
	K_GROUP,	/* a group name or gid, repeatable */
	K_SOCKET,	/* a Unix socket path */
	K_HTTP,		/* ADDR:PORT, once */
	K_ORIGIN,	/* a host name, repeatable */
	K_NUM,		/* unsigned integer in [min, max] */
	K_SYNC,
	K_LOGLEVEL,
	K_FLAG,
	K_HELP,
	K_VERSION,
};

struct opt_def {
	const char	*name;
	int		 shortopt;
	enum opt_kind	 kind;
	const char	*metavar;
	const char	*defhelp;	/* default, as --help shows it */
	const char	*help;
	size_t		 field;		/* offsetof in struct options */
	uint64_t	 min, max, def;
};

#define F(m)	offsetof(struct options, m)

static const struct opt_def opt_defs[] = {
	{ "listen", 0, K_LISTEN, "[FACE@]ADDR:PORT", "127.0.0.1:8700",
	  "TCP address to listen on, FACE uloop or unity-mcp (repeatable)",
	  0, 0, 0, 0 },
	{ "socket", 0, K_SOCKET, "PATH", "none",
	  "also listen on this Unix socket (mode 0660)", F(socket_path),
	  0, 0, 0 },
	{ "http", 0, K_HTTP, "ADDR:PORT", "none",
	  "serve MCP over Streamable HTTP at http://ADDR:PORT/mcp",
	  0, 0, 0, 0 },
	{ "http-origin", 0, K_ORIGIN, "HOST", "none",
	  "also let HTTP requests in whose Host or Origin names HOST "
	  "(repeatable)", 0, 0, 0, 0 },
	{ "http-poll", 0, K_NUM, "S", "0",
	  "seconds before a POST's event stream is closed for the client to "
	  "resume (0: never)", F(http_poll), 0, 3600, 0 },
	{ "state-dir", 0, K_STR, "DIR", "see cmdgated(8)",
	  "directory of the job store", F(state_dir), 0, 0, 0 },
	{ "instance", 0, K_STR, "NAME", "default",
	  "publish this broker's endpoints as instance NAME for cmdgate(1)",
	  F(instance), 0, 0, 0 },
	{ "tools", 0, K_STR, "FILE", "embedded table",
	  "JSON tool table", F(tools_file), 0, 0, 0 },
	{ "token-file", 0, K_STR, "FILE", "none",
	  "require TCP clients to authenticate with this token",
	  F(token_file), 0, 0, 0 },
	{ "no-auth", 0, K_FLAG, NULL, NULL,
	  "let TCP clients in without a token (loopback addresses only)",
	  F(no_auth), 0, 0, 0 },
	{ "allow-user", 0, K_USER, "USER", "none",
	  "peer check: also let this user in (repeatable)", 0, 0, 0, 0 },
	{ "allow-group", 0, K_GROUP, "GROUP", "none",
	  "peer check: also let this group's members in (repeatable)",
	  0, 0, 0, 0 },
	{ "peer-auth", 0, K_FLAG, NULL, NULL,
	  "TCP clients the peer check allows need no token",
	  F(peer_auth), 0, 0, 0 },
	{ "max-message", 0, K_NUM, "BYTES", "1048576",
	  "largest message a client may send", F(max_message),
	  1 * KIB, 1 * GIB, 1 * MIB },
	{ "max-batch", 0, K_NUM, "N", "25",
	  "most commands in one job (1-100)", F(max_batch), 1, 100, 25 },
	{ "max-workers", 0, K_NUM, "N", "16",
	  "most worker processes alive at once", F(max_workers),
	  1, 4096, 16 },
	{ "max-queued", 0, K_NUM, "N", "10000",
	  "most jobs waiting to start", F(max_queued), 1, 10000000, 10000 },
	{ "max-clients", 0, K_NUM, "N", "1024",
	  "most client connections at once", F(max_clients),
	  1, 1000000, 1024 },
	{ "max-rpc-batch", 0, K_NUM, "N", "100",
	  "most requests in one JSON-RPC batch", F(max_rpc_batch),
	  1, 10000, 100 },
	{ "max-waits", 0, K_NUM, "N", "1000",
	  "most answers a client may have outstanding", F(max_waits),
	  1, 1000000, 1000 },
	{ "max-waits-total", 0, K_NUM, "N", "100000",
	  "most answers outstanding for all clients", F(max_waits_total),
	  1, 100000000, 100000 },
	{ "max-partial", 0, K_NUM, "BYTES", "67108864",
	  "bytes of unfinished messages buffered for all clients",
	  F(max_partial), 1 * KIB, 64 * GIB, 64 * MIB },
	{ "auth-timeout", 0, K_NUM, "S", "10",
	  "seconds a TCP client has to authenticate", F(auth_timeout),
	  1, 3600, 10 },
	{ "idle-timeout", 0, K_NUM, "S", "600",
	  "seconds without a request before a client is closed (0: never)",
	  F(idle_timeout), 0, 30ULL * 86400, 600 },
	{ "result-ttl", 0, K_NUM, "S", "300",
	  "seconds a finished job is kept", F(result_ttl),
	  1, 365ULL * 86400, 300 },
	{ "kill-grace", 0, K_NUM, "S", "5",
	  "seconds between SIGTERM and SIGKILL", F(kill_grace), 0, 3600, 5 },
	{ "editor-grace", 0, K_NUM, "S", "10",
	  "seconds reloads wait for editor flags held before a restart",
	  F(editor_grace), 0, 3600, 10 },
	{ "output-cap", 0, K_NUM, "BYTES", "65536",
	  "bytes of stdout and stderr kept per command", F(output_cap),
	  0, 64 * MIB, 64 * KIB },
	{ "call-timeout", 0, K_NUM, "S", "60",
	  "seconds an MCP tools/call waits for its job", F(call_timeout),
	  1, 3600, 60 },
	{ "uloop-hold", 0, K_NUM, "S", "100",
	  "seconds a uloop face call waits before it is answered held "
	  "(0: never)", F(uloop_hold), 0, 3600, 100 },
	{ "unity-hold", 0, K_NUM, "S", "20",
	  "seconds a unity-mcp face command waits before a \"held\" answer",
	  F(unity_hold), 1, 3600, 20 },
	{ "unity-status-dir", 0, K_STR, "DIR", "none",
	  "write the unity-mcp face's status file in this directory",
	  F(unity_status_dir), 0, 0, 0 },
	{ "unity-bridge-status", 0, K_STR, "FILE", "found by port",
	  "the editor bridge's status file (name and project taken)",
	  F(unity_bridge_status), 0, 0, 0 },
	{ "unity-project", 0, K_STR, "DIR", "none",
	  "the Unity project: the uloop face's DataPath; the status file's "
	  "when no bridge status file names it",
	  F(unity_project), 0, 0, 0 },
	{ "unity-hub-server", 0, K_STR, "URL", "none",
	  "the MCP for Unity server the unity-hub face stands in front of "
	  "(http://HOST:PORT)", F(unity_hub_server), 0, 0, 0 },
	{ "sync", 0, K_SYNC, "full|group|none", "full",
	  "when the store reaches the disk", F(sync), 0, 0, 0 },
	{ "map-size", 0, K_NUM, "BYTES", "1073741824",
	  "size of the store's memory map", F(map_size),
	  1 * MIB, 16 * TIB, 1 * GIB },
	{ "map-size-max", 0, K_NUM, "BYTES", "17179869184",
	  "size the map may grow to when the store fills", F(map_size_max),
	  1 * MIB, 16 * TIB, 16 * GIB },
	{ "reset-store", 0, K_FLAG, NULL, NULL,
	  "move a damaged store aside and start a new one",
	  F(reset_store), 0, 0, 0 },
	{ "log-level", 0, K_LOGLEVEL, "LEVEL", "info",
	  "error, warning, info or debug", F(log_level), 0, 0, 0 },
	{ "check-config", 'n', K_FLAG, NULL, NULL,
	  "check flags, tool table and state dir, then exit",
	  F(check_config), 0, 0, 0 },
	{ "version", 'V', K_VERSION, NULL, NULL,
	  "print the version and exit", 0, 0, 0, 0 },
	{ "help", 'h', K_HELP, NULL, NULL,
	  "print this help and exit", 0, 0, 0, 0 },
};

#define NOPTS	(sizeof(opt_defs) / sizeof(opt_defs[0]))

static const char *sync_names[] = { "full", "group", "none" };

static int	opt_apply(struct options *, const struct opt_def *,
		    const char *, char *, size_t);
static int	opt_allow(struct options *, const struct opt_def *,
		    const char *, char *, size_t);
static int	opt_id(const struct opt_def *, const char *, uint64_t *);
static int	opt_default_listen(struct options *, char *, size_t);
static int	opt_check_auth(struct options *, char *, size_t);
static int	opt_check_unity(struct options *, char *, size_t);
static int	opt_check_hub(struct options *, char *, size_t);
static int	opt_loopback(const char *);
static int	opt_listen(struct options *, const char *, char *, size_t);
static int	opt_http(struct options *, const struct opt_def *,
		    const char *, char *, size_t);

const char *
options_sync_name(enum sync_mode m)
{
	return sync_names[m];
}

void
options_usage(FILE *f)
{
	size_t	 i;
	char	 lhs[64];

	fprintf(f, "usage: cmdgated [-hnV] [--listen ADDR:PORT] "
	    "[--socket PATH] [--http ADDR:PORT]\n"
	    "                [--state-dir DIR] [--tools FILE] "
	    "[--token-file FILE | --no-auth]\n"
	    "                [--OPTION VALUE ...]\n\n");
	for (i = 0; i < NOPTS; i++) {
		const struct opt_def *d = &opt_defs[i];

		if (d->shortopt != 0)
			snprintf(lhs, sizeof(lhs), "-%c, --%s", d->shortopt,
			    d->name);
		else
			snprintf(lhs, sizeof(lhs), "    --%s%s%s", d->name,
			    d->metavar != NULL ? " " : "",
			    d->metavar != NULL ? d->metavar : "");
		if (d->defhelp != NULL)
			fprintf(f, "  %-32s %s [%s]\n", lhs, d->help,
			    d->defhelp);
		else
			fprintf(f, "  %-32s %s\n", lhs, d->help);
	}
}

static int
opt_apply(struct options *o, const struct opt_def *d, const char *arg,
    char *err, size_t errlen)
{
	char	*base = (char *)o;
	int	 lvl;
	size_t	 i;

	switch (d->kind) {
	case K_STR:
		if (*arg == '\0')
			goto bad;
		free(*(char **)(base + d->field));
		*(char **)(base + d->field) = xstrdup(arg);
		return 0;
	case K_SOCKET:
		if (*arg == '\0' ||
		    strlen(arg) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			snprintf(err, errlen, "--socket: path '%s' is empty "
			    "or longer than %zu bytes", arg,
			    sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
			return -1;
		}
		free(o->socket_path);
		o->socket_path = xstrdup(arg);
		return 0;
	case K_LISTEN:
		return opt_listen(o, arg, err, errlen);
	case K_HTTP:
	case K_ORIGIN:
		return opt_http(o, d, arg, err, errlen);
	case K_USER:
	case K_GROUP:
		return opt_allow(o, d, arg, err, errlen);
	case K_NUM:
		if (util_parse_u64(arg, d->min, d->max,
		    (uint64_t *)(base + d->field)) == -1) {
			snprintf(err, errlen, "--%s: '%s' is not a whole "
			    "number from %llu to %llu", d->name, arg,
			    (unsigned long long)d->min,
			    (unsigned long long)d->max);
			return -1;
		}
		return 0;
	case K_SYNC:
		for (i = 0; i < 3; i++)
			if (strcmp(arg, sync_names[i]) == 0) {
				o->sync = (enum sync_mode)i;
				return 0;
			}
		goto bad;
	case K_LOGLEVEL:
		if ((lvl = log_parselevel(arg)) == -1)
			goto bad;
		o->log_level = lvl;
		return 0;
	case K_FLAG:
		*(int *)(base + d->field) = 1;
		return 0;
	case K_HELP:
	case K_VERSION:
		return 0;
	}
bad:
	snprintf(err, errlen, "--%s: '%s' is not %s", d->name, arg,
	    d->kind == K_STR ? "a non-empty value" : d->metavar);
	if (d->kind == K_LOGLEVEL)
		snprintf(err, errlen, "--log-level: '%s' is not one of error, "
		    "warning, info, debug", arg);
	return -1;
}

/*
 * --allow-user and --allow-group: the name, else the number, resolved
 * now, so that an unknown name stops the start (exit 64) naming it.
 */
static int
opt_allow(struct options *o, const struct opt_def *d, const char *arg,
    char *err, size_t errlen)
{
	size_t		*n = d->kind == K_USER ? &o->nallow_uid : &o->nallow_gid;
	uint64_t	 id;

	if (*n == OPT_MAX_ALLOW) {
		snprintf(err, errlen, "--%s: more than %d of them", d->name,
		    OPT_MAX_ALLOW);
		return -1;
	}
	if (opt_id(d, arg, &id) == -1) {
		snprintf(err, errlen, "--%s: no %s '%s' (neither a name in "
		    "the %s database nor a number)", d->name,
		    d->kind == K_USER ? "user" : "group", arg,
		    d->kind == K_USER ? "user" : "group");
		return -1;
	}
	if (d->kind == K_USER)
		o->allow_uid[(*n)++] = (uid_t)id;
	else
		o->allow_gid[(*n)++] = (gid_t)id;
	return 0;
}

/* The id a user or group name or number stands for: 0, or -1. */
static int
opt_id(const struct opt_def *d, const char *arg, uint64_t *id)
{
	struct passwd	*pw;
	struct group	*gr;

	if (*arg == '\0')
		return -1;
	if (d->kind == K_USER && (pw = getpwnam(arg)) != NULL) {
		*id = pw->pw_uid;
		return 0;
	}
	if (d->kind == K_GROUP && (gr = getgrnam(arg)) != NULL) {
		*id = gr->gr_gid;
		return 0;
	}
	/* (uid_t)-1 and (gid_t)-1 mean "no id" to the kernel. */
	return util_parse_u64(arg, 0, UINT32_MAX - 1, id);
}

/* One --listen: "[FACE@]ADDR:PORT". */
static int
opt_listen(struct options *o, const char *arg, char *err, size_t errlen)
{
	struct sockaddr_storage	 ss;
	enum face		 face;
	const char		*addr;
	int			 sslen;

	if (face_parse(arg, &face, &addr) == -1) {
		snprintf(err, errlen, "--listen: '%.*s' is no face: uloop@ADDR:"
		    "PORT, unity-mcp@ADDR:PORT or unity-hub@ADDR:PORT, or "
		    "ADDR:PORT for cmdgate's own", (int)strcspn(arg, "@"), arg);
		return -1;
	}
	if (addr_parse(addr, &ss, &sslen) == -1) {
		snprintf(err, errlen, "--listen: '%s' is not %s%sADDR:PORT "
		    "(numeric IPv4, or [IPv6], port 0-65535)", arg,
		    face == FACE_CMDGATE ? "" : face_name(face),
		    face == FACE_CMDGATE ? "" : "@");
		return -1;
	}
	if (o->nlisten == OPT_MAX_LISTEN) {
		snprintf(err, errlen, "--listen: more than %d addresses",
		    OPT_MAX_LISTEN);
		return -1;
	}
	o->listen[o->nlisten++] = xstrdup(arg);
	return 0;
}

/* --http ADDR:PORT, once, and --http-origin HOST, repeatable. */
static int
opt_http(struct options *o, const struct opt_def *d, const char *arg,
    char *err, size_t errlen)
{
	struct sockaddr_storage	 ss;
	int			 sslen;

	if (d->kind == K_ORIGIN) {
		if (*arg == '\0' || strlen(arg) > 253 ||
		    strpbrk(arg, "/ \t,") != NULL ||
		    o->nhttp_origin == OPT_MAX_ALLOW) {
			snprintf(err, errlen, "--http-origin: '%s' is not a "
			    "host name, or more than %d of them", arg,
			    OPT_MAX_ALLOW);
			return -1;
		}
		o->http_origin[o->nhttp_origin++] = xstrdup(arg);
		return 0;
	}
	if (addr_parse(arg, &ss, &sslen) == -1) {
		snprintf(err, errlen, "--http: '%s' is not ADDR:PORT (numeric "
		    "IPv4, or [IPv6], port 0-65535)", arg);
		return -1;
	}
	free(o->http);
	o->http = xstrdup(arg);
	return 0;
}

/*
 * Without a --listen of cmdgate's own (only faces, or none), cmdgate's
 * own listens on the default address, where cmdgate(1) looks for it.
 */
static int
opt_default_listen(struct options *o, char *err, size_t errlen)
{
	const char	*env = getenv("CMDGATE_PORT"), *addr;
	uint64_t	 port = OPT_DEFAULT_PORT;
	enum face	 face;
	size_t		 i;

	for (i = 0; i < o->nlisten; i++)
		if (face_parse(o->listen[i], &face, &addr) == 0 &&
		    face == FACE_CMDGATE)
			return 0;
	if (o->nlisten == OPT_MAX_LISTEN) {
		snprintf(err, errlen, "--listen: %d faces leave no room for "
		    "cmdgate's own address", OPT_MAX_LISTEN);
		return -1;
	}
	if (env != NULL && util_parse_u64(env, 1, 65535, &port) == -1) {
		snprintf(err, errlen, "CMDGATE_PORT: '%s' is not a port "
		    "number from 1 to 65535", env);
		return -1;
	}
	o->listen[o->nlisten] = xasprintf("127.0.0.1:%llu",
	    (unsigned long long)port);
	for (i = 0; i < o->nlisten; i++)
		if (face_parse(o->listen[i], &face, &addr) == 0 &&
		    strcmp(addr, o->listen[o->nlisten]) == 0) {
			snprintf(err, errlen, "--listen %s: that is cmdgate's "
			    "own default address; give cmdgate's own another "
			    "one with --listen ADDR:PORT", o->listen[i]);
			free(o->listen[o->nlisten]);
			o->listen[o->nlisten] = NULL;
			return -1;
		}
	o->nlisten++;
	return 0;
}

/* Whether a --listen names the face of prefix ("uloop@"). */
static int
opt_has_face(const struct options *o, const char *prefix)
{
	size_t	i;

	for (i = 0; i < o->nlisten; i++)
		if (strncmp(o->listen[i], prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

/*
 * The unity-mcp face's status file needs that face, and what names its
 * project needs the file (or, for --unity-project, a uloop face, whose
 * get-version gives its DataPath).
 */
static int
opt_check_unity(struct options *o, char *err, size_t errlen)
{
	const char	*prefix = "unity-mcp@";
	size_t		 i;

	if (o->unity_status_dir == NULL) {
		if (o->unity_bridge_status == NULL && (o->unity_project ==
		    NULL || opt_has_face(o, "uloop@")))
			return 0;
		snprintf(err, errlen, "%s: only names the project of "
		    "--unity-status-dir's status file%s: give that too",
		    o->unity_project != NULL ? "--unity-project" :
		    "--unity-bridge-status", o->unity_project != NULL ?
		    " or of a uloop face" : "");
		return -1;
	}
	for (i = 0; i < o->nlisten; i++)
		if (strncmp(o->listen[i], prefix, strlen(prefix)) == 0)
			return 0;
	snprintf(err, errlen, "--unity-status-dir: the status file names "
	    "a unity-mcp face, and there is none: add --listen "
	    "unity-mcp@127.0.0.1:PORT");
	return -1;
}

/*
 * A unity-hub face needs the server it stands in front of, on loopback
 * (the editor's plugin sends it nothing secret, and cmdgate checks no
 * certificate), and the server needs the face; its URL is kept as
 * HOST:PORT.
 */
static int
opt_check_hub(struct options *o, char *err, size_t errlen)
{
	const char	*u = o->unity_hub_server, *hp;
	size_t		 n;
	char		*to;

	if (!opt_has_face(o, "unity-hub@") && u == NULL)
		return 0;
	if (u == NULL || !opt_has_face(o, "unity-hub@")) {
		snprintf(err, errlen, "%s", u == NULL ? "--listen unity-hub@: "
		    "give --unity-hub-server URL, the MCP for Unity server "
		    "on another port (http://127.0.0.1:8081)" :
		    "--unity-hub-server: it is the unity-hub face's; add "
		    "--listen unity-hub@127.0.0.1:8080");
		return -1;
	}
	hp = strncmp(u, "http://", 7) == 0 ? u + 7 : strncmp(u, "ws://",
	    5) == 0 ? u + 5 : NULL;
	n = hp != NULL ? strcspn(hp, "/") : 0;
	to = hp != NULL ? xasprintf("%.*s", (int)n, hp) : NULL;
	if (to == NULL || (hp[n] != '\0' && strcmp(hp + n, "/") != 0) ||
	    !opt_loopback(to)) {
		snprintf(err, errlen, "--unity-hub-server %s: give "
		    "http://ADDR:PORT with a loopback address and no path "
		    "(the server serves its hub at /hub/plugin only)", u);
		free(to);
		return -1;
	}
	free(o->unity_hub_server);
	o->unity_hub_server = to;
	return 0;
}

/* Whether the address of "[FACE@]ADDR:PORT" is a loopback one. */
static int
opt_loopback(const char *spec)
{
	struct sockaddr_storage	 ss;
	enum face		 face;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	const uint8_t		*a = sin6->sin6_addr.s6_addr;
	int			 sslen;

	if (face_parse(spec, &face, &spec) == -1 ||
	    addr_parse(spec, &ss, &sslen) == -1)
		return 0;
	if (ss.ss_family == AF_INET)
		return (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
	if (IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr))
		return 1;
	return IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr) && a[12] == 127;
}

/*
 * --no-auth is for loopback only, and contradicts --token-file and the
 * peer check's flags (it lets every peer in: they would do nothing).
 */
static int
opt_check_auth(struct options *o, char *err, size_t errlen)
{
	size_t	i;

	if (!o->no_auth)
		return 0;
	if (o->token_file != NULL) {
		snprintf(err, errlen, "--no-auth and --token-file: give one "
		    "or the other");
		return -1;
	}
	if (o->peer_auth || o->nallow_uid > 0 || o->nallow_gid > 0) {
		snprintf(err, errlen, "--no-auth lets every peer in: "
		    "--peer-auth, --allow-user and --allow-group would do "
		    "nothing; drop one side");
		return -1;
	}
	for (i = 0; i < o->nlisten; i++)
		if (!opt_loopback(o->listen[i])) {
			snprintf(err, errlen, "--no-auth: refused, because "
			    "--listen %s is not a loopback address (anyone "
			    "who reaches it could run every tool); drop "
			    "--no-auth or listen on 127.0.0.1", o->listen[i]);
			return -1;
		}
	if (o->http != NULL && !opt_loopback(o->http)) {
		snprintf(err, errlen, "--no-auth: refused, because --http %s "
		    "is not a loopback address", o->http);
		return -1;
	}
	return 0;
}

enum opt_result
options_parse(struct options *o, int argc, char **argv, FILE *out,
    char *err, size_t errlen)
{
	struct option	 lopts[NOPTS + 1];
	char		 shorts[2 * NOPTS + 2], *sp = shorts;
	const char	*name;
	size_t		 i;
	int		 c, idx, want_help = 0, want_version = 0;

	memset(o, 0, sizeof(*o));
	o->log_level = LOG_LVL_INFO;
	o->sync = SYNC_FULL;
	*sp++ = ':';
	for (i = 0; i < NOPTS; i++) {
		const struct opt_def *d = &opt_defs[i];

		if (d->kind == K_NUM)
			*(uint64_t *)((char *)o + d->field) = d->def;
		lopts[i].name = d->name;
		lopts[i].has_arg = d->metavar != NULL ? required_argument :
		    no_argument;
		lopts[i].flag = NULL;
		lopts[i].val = d->shortopt != 0 ? d->shortopt : 256 + (int)i;
		if (d->shortopt != 0)
			*sp++ = (char)d->shortopt;
	}
	*sp = '\0';
	memset(&lopts[NOPTS], 0, sizeof(lopts[NOPTS]));

	optind = 0;	/* full reset, so tests may parse many times */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lopts, &idx)) != -1) {
		const struct opt_def *d = NULL;

		if (c == '?' || c == ':') {
			name = argv[optind - 1];
			snprintf(err, errlen, c == '?' ? "unknown flag '%s'" :
			    "flag '%s' needs a value", name);
			return OPT_USAGE;
		}
		for (i = 0; i < NOPTS; i++)
			if ((opt_defs[i].shortopt != 0 &&
			    c == opt_defs[i].shortopt) || c == 256 + (int)i)
				d = &opt_defs[i];
		if (d->kind == K_HELP)
			want_help = 1;
		else if (d->kind == K_VERSION)
			want_version = 1;
		else if (opt_apply(o, d, optarg, err, errlen) == -1)
			return OPT_USAGE;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'",
		    argv[optind]);
		return OPT_USAGE;
	}
	if (want_help) {
		options_usage(out);
		return OPT_EXIT;
	}
	if (want_version) {
		fprintf(out, "cmdgated %s\n", PACKAGE_VERSION);
		return OPT_EXIT;
	}
	if (opt_default_listen(o, err, errlen) == -1 ||
	    opt_check_auth(o, err, errlen) == -1 ||
	    opt_check_unity(o, err, errlen) == -1 ||
	    opt_check_hub(o, err, errlen) == -1)
		return OPT_USAGE;
	if (o->state_dir == NULL)
		o->state_dir = runfile_state_dir();
	return OPT_RUN;
}

void
options_free(struct options *o)
{
	size_t	i;

	for (i = 0; i < o->nlisten; i++)
		free(o->listen[i]);
	free(o->socket_path);
	free(o->state_dir);
	free(o->instance);
	free(o->tools_file);
	free(o->token_file);
	free(o->http);
	for (i = 0; i < o->nhttp_origin; i++)
		free(o->http_origin[i]);
	free(o->unity_status_dir);
	free(o->unity_bridge_status);
	free(o->unity_project);
	free(o->unity_hub_server);
	memset(o, 0, sizeof(*o));
}
