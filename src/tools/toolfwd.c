/* SPDX-License-Identifier: ISC */
/*
 * The upstream members of cmdgate.tools(5): forward's object form (to,
 * dialect, method, params, connect_timeout_s, idempotent, ready, await,
 * cancel) and
 * the table's editor probe, checked member by member so that a table
 * that loads is one the worker can act on.
 */
#include "config.h"

#include <arpa/inet.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "addr.h"
#include "jtemplate.h"
#include "tools.h"
#include "util.h"
#include "wire.h"

#define FWD_PATH_MAX	256	/* of a dotted path */

static const char *dialects[] = {
	"jsonrpc", "jsonrpc-lsp", "unity-mcp", "unity-hub", "mcp-http", NULL,
};
static const char *forward_keys[] = {
	"to", "dialect", "method", "params", "connect_timeout_s", "idempotent",
	"ready", "await", "cancel", NULL,
};
static const char *call_keys[] = { "call", "params", NULL };
static const char *await_keys[] = { "call", "params", "until", "every_ms",
	NULL };
static const char *until_keys[] = { "field", "in", "failed", NULL };
static const char *editor_keys[] = { "to", "dialect", "call", "params",
	"every_ms", "flags", NULL };
static const char *flag_names[] = { WIRE_FLAG_COMPILING,
	WIRE_FLAG_TESTS_RUNNING, WIRE_FLAG_EDITOR_BUSY, NULL };
static const char *no_names[] = { NULL };	/* templates: none at all */

static int	fwd_fail(struct fwd_error *, const char *, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

static int
fwd_fail(struct fwd_error *e, const char *field, const char *fmt, ...)
{
	va_list	ap;

	snprintf(e->field, sizeof(e->field), "%s", field);
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static int
in_list(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

/* o is an object with no member outside keys. */
static int
fwd_members(struct fwd_error *e, const char *field, json_object *o,
    const char *const *keys)
{
	if (!json_object_is_type(o, json_type_object))
		return fwd_fail(e, field, "must be an object");
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (!in_list(key, keys))
			return fwd_fail(e, field, "unknown member '%s'", key);
	}
	return 0;
}

/* Member name of o as a non-empty string in *s (NULL when absent). */
static int
fwd_string(struct fwd_error *e, const char *field, json_object *o,
    const char *name, int required, const char **s)
{
	json_object	*v;

	*s = NULL;
	if (!json_object_object_get_ex(o, name, &v)) {
		if (required)
			return fwd_fail(e, field, "needs \"%s\"", name);
		return 0;
	}
	if (!json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0)
		return fwd_fail(e, field, "\"%s\" must be a non-empty string",
		    name);
	*s = json_object_get_string(v);
	return 0;
}

/* Member name of o, when present, a whole number from lo to hi. */
static int
fwd_int(struct fwd_error *e, const char *field, json_object *o,
    const char *name, int64_t lo, int64_t hi)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, name, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < lo || json_object_get_int64(v) > hi)
		return fwd_fail(e, field, "\"%s\" must be a whole number from "
		    "%lld to %lld", name, (long long)lo, (long long)hi);
	return 0;
}

/* Member name of o, when present, true or false. */
static int
fwd_bool(struct fwd_error *e, const char *field, json_object *o,
    const char *name)
{
	json_object	*v;

	if (json_object_object_get_ex(o, name, &v) &&
	    !json_object_is_type(v, json_type_boolean))
		return fwd_fail(e, field, "\"%s\" must be true or false", name);
	return 0;
}

/* Names of letters, digits and '_' joined by single dots. */
static int
fwd_path_ok(const char *p)
{
	size_t	i, n = strlen(p);

	if (n == 0 || n > FWD_PATH_MAX || p[0] == '.' || p[n - 1] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') ||
		    (p[i] >= 'A' && p[i] <= 'Z') ||
		    (p[i] >= '0' && p[i] <= '9') || p[i] == '_' ||
		    (p[i] == '.' && p[i + 1] != '.')))
			return 0;
	return 1;
}

/* A dotted path into an answer: it starts with result. */
static int
fwd_result_path_ok(const char *p)
{
	return fwd_path_ok(p) && strncmp(p, "result", 6) == 0 &&
	    (p[6] == '\0' || p[6] == '.');
}

/*
 * HOST:PORT or [IPV6]:PORT.  A bare host with a colon in it is refused:
 * which colon starts the port would be a guess.
 */
int
tool_forward_split(const char *s, char *host, size_t hostlen, char *port,
    size_t portlen)
{
	struct in6_addr	 a6;
	const char	*p;
	uint64_t	 n;
	int		 bracketed;

	if ((bracketed = addr_split(s, host, hostlen, &p)) == -1 ||
	    host[0] == '\0' || (!bracketed && (s[0] == '[' ||
	    strchr(host, ':') != NULL)) ||
	    (bracketed && inet_pton(AF_INET6, host, &a6) != 1) ||
	    util_parse_u64(p, 1, 65535, &n) == -1)
		return -1;
	snprintf(port, portlen, "%llu", (unsigned long long)n);
	return 0;
}

/* http://HOST:PORT/PATH or http://[IPV6]:PORT/PATH, PATH not empty. */
static int
fwd_url_ok(const char *s)
{
	const char	*auth = s + 7, *slash;
	char		 hp[300], host[256], port[8];

	if (strncmp(s, "http://", 7) != 0 ||
	    (slash = strchr(auth, '/')) == NULL || slash[1] == '\0' ||
	    (size_t)(slash - auth) >= sizeof(hp) ||
	    strpbrk(slash, " \t\r\n#") != NULL)
		return 0;
	memcpy(hp, auth, (size_t)(slash - auth));
	hp[slash - auth] = '\0';
	return tool_forward_split(hp, host, sizeof(host), port,
	    sizeof(port)) == 0;
}

/* to and dialect of o (the dialect defaults to jsonrpc). */
static int
fwd_to(struct fwd_error *e, const char *field, json_object *o)
{
	const char	*to, *d;
	char		 host[256], port[8], f[96];

	snprintf(f, sizeof(f), "%s.dialect", field);
	if (fwd_string(e, f, o, "dialect", 0, &d) == -1)
		return -1;
	if (d != NULL && !in_list(d, dialects))
		return fwd_fail(e, f, "'%s' is none of jsonrpc, jsonrpc-lsp, "
		    "unity-mcp, unity-hub, mcp-http", d);
	snprintf(f, sizeof(f), "%s.to", field);
	if (fwd_string(e, field, o, "to", 1, &to) == -1)
		return -1;
	if (d != NULL && strcmp(d, "mcp-http") == 0) {
		if (!fwd_url_ok(to))
			return fwd_fail(e, f, "'%s' is not http://HOST:PORT/"
			    "PATH (mcp-http: the MCP endpoint's URL, an IPv6 "
			    "address in brackets)", to);
	} else if (tool_forward_split(to, host, sizeof(host), port,
	    sizeof(port)) == -1)
		return fwd_fail(e, f, "'%s' is not HOST:PORT or [IPV6]:PORT "
		    "with a port from 1 to 65535", to);
	return 0;
}

/* A template member of o (params), when present: an object, checked. */
static int
fwd_template(struct fwd_error *e, const char *field, json_object *o,
    const char *const *first)
{
	json_object	*v;
	char		 f[96], msg[384];

	if (!json_object_object_get_ex(o, "params", &v))
		return 0;
	snprintf(f, sizeof(f), "%s.params", field);
	if (!json_object_is_type(v, json_type_object))
		return fwd_fail(e, f, "must be an object");
	if (jtemplate_check(v, first, msg, sizeof(msg)) == -1)
		return fwd_fail(e, f, "%s", msg);
	return 0;
}

/* ready, cancel: {call, params?}. */
static int
fwd_call(struct fwd_error *e, const char *field, json_object *o,
    const char *const *keys, const char *const *first)
{
	const char	*s;

	if (fwd_members(e, field, o, keys) == -1 ||
	    fwd_string(e, field, o, "call", 1, &s) == -1)
		return -1;
	return fwd_template(e, field, o, first);
}

/* A non-empty list of strings, numbers or booleans (until.in, failed). */
static int
fwd_scalars(struct fwd_error *e, const char *field, json_object *o,
    const char *name)
{
	json_object	*v;
	size_t		 i, n;
	json_type	 t;

	if (!json_object_object_get_ex(o, name, &v))
		return 0;
	if (!json_object_is_type(v, json_type_array) ||
	    (n = json_object_array_length(v)) == 0)
		return fwd_fail(e, field, "\"%s\" must be a non-empty list of "
		    "strings, numbers or booleans", name);
	for (i = 0; i < n; i++) {
		t = json_object_get_type(json_object_array_get_idx(v, i));
		if (t != json_type_string && t != json_type_boolean &&
		    t != json_type_int && t != json_type_double)
			return fwd_fail(e, field, "\"%s\" must be a non-empty "
			    "list of strings, numbers or booleans", name);
	}
	return 0;
}

/* await.until: {field: "result...", in: [...], failed?: [...]}. */
static int
fwd_until(struct fwd_error *e, json_object *o)
{
	const char	*field = "forward.await.until", *p;

	if (fwd_members(e, field, o, until_keys) == -1 ||
	    fwd_string(e, field, o, "field", 1, &p) == -1)
		return -1;
	if (!fwd_result_path_ok(p))
		return fwd_fail(e, field, "\"field\" '%s' must be a dotted "
		    "path that starts with result", p);
	if (!json_object_object_get_ex(o, "in", NULL))
		return fwd_fail(e, field, "needs \"in\": the values that end "
		    "the wait");
	if (fwd_scalars(e, field, o, "in") == -1 ||
	    fwd_scalars(e, field, o, "failed") == -1)
		return -1;
	return 0;
}

static int
fwd_await(struct fwd_error *e, json_object *o, const char *const *first)
{
	const char	*field = "forward.await";
	json_object	*u;

	if (fwd_call(e, field, o, await_keys, first) == -1 ||
	    fwd_int(e, field, o, "every_ms", FWD_EVERY_MS_MIN,
	    FWD_EVERY_MS_MAX) == -1)
		return -1;
	if (!json_object_object_get_ex(o, "until", &u))
		return fwd_fail(e, field, "needs \"until\": when the wait ends");
	return fwd_until(e, u);
}

/*
 * The names a template may begin with: the schema's properties (plus
 * "result" when with_result), or NULL (any) when it lists none.
 * Caller frees the array; the names are borrowed from schema.
 */
static const char **
fwd_firsts(json_object *schema, int with_result)
{
	json_object	*props;
	const char	**first;
	size_t		 n = 0;

	if (schema == NULL ||
	    !json_object_object_get_ex(schema, "properties", &props) ||
	    !json_object_is_type(props, json_type_object))
		return NULL;
	first = xcalloc((size_t)json_object_object_length(props) + 2,
	    sizeof(*first));
	if (with_result)
		first[n++] = "result";
	json_object_object_foreach(props, key, val) {
		(void)val;
		first[n++] = key;
	}
	return first;
}

/* The members of forward that name calls: ready, await, cancel. */
static int
fwd_calls(struct fwd_error *e, json_object *o, json_object *schema)
{
	json_object	*v;
	const char	**first = fwd_firsts(schema, 1);
	int		  rc = 0;

	if (json_object_object_get_ex(o, "ready", &v))
		rc = fwd_call(e, "forward.ready", v, call_keys, first);
	if (rc == 0 && json_object_object_get_ex(o, "await", &v))
		rc = fwd_await(e, v, first);
	if (rc == 0 && json_object_object_get_ex(o, "cancel", &v))
		rc = fwd_call(e, "forward.cancel", v, call_keys, first);
	free(first);
	return rc;
}

int
toolfwd_check(json_object *o, json_object *schema, struct fwd_error *e)
{
	const char	**first, *s;
	int		  rc;

	if (fwd_members(e, "forward", o, forward_keys) == -1 ||
	    fwd_to(e, "forward", o) == -1 ||
	    fwd_string(e, "forward", o, "method", 0, &s) == -1 ||
	    fwd_int(e, "forward", o, "connect_timeout_s", 1,
	    FWD_CONNECT_TIMEOUT_MAX) == -1 ||
	    fwd_bool(e, "forward", o, "idempotent") == -1)
		return -1;
	first = fwd_firsts(schema, 0);
	rc = fwd_template(e, "forward", o, first);
	free(first);
	if (rc == -1)
		return -1;
	if (json_object_object_get_ex(o, "cancel", NULL) &&
	    !json_object_object_get_ex(o, "await", NULL))
		return fwd_fail(e, "forward.cancel", "only a forward with "
		    "\"await\" has a run to cancel");
	return fwd_calls(e, o, schema);
}

/* editor.flags: some of the three flags, each a dotted path. */
static int
fwd_flags(struct fwd_error *e, json_object *o)
{
	const char	*field = "editor.flags";

	if (!json_object_is_type(o, json_type_object) ||
	    json_object_object_length(o) == 0)
		return fwd_fail(e, field, "must be an object naming a path for "
		    "some of compiling, tests_running, editor_busy");
	json_object_object_foreach(o, key, val) {
		if (!in_list(key, flag_names))
			return fwd_fail(e, field, "'%s' is none of compiling, "
			    "tests_running, editor_busy", key);
		if (!json_object_is_type(val, json_type_string) ||
		    !fwd_result_path_ok(json_object_get_string(val)))
			return fwd_fail(e, field, "'%s' must be a dotted path "
			    "that starts with result (names of letters, digits "
			    "and _ joined by single dots)", key);
	}
	return 0;
}

int
toolfwd_check_editor(json_object *o, struct fwd_error *e)
{
	json_object	*v;
	const char	*s;
	char		 msg[384];

	if (fwd_members(e, "editor", o, editor_keys) == -1 ||
	    fwd_to(e, "editor", o) == -1 ||
	    fwd_string(e, "editor", o, "call", 1, &s) == -1 ||
	    fwd_int(e, "editor", o, "every_ms", FWD_EVERY_MS_MIN,
	    FWD_EVERY_MS_MAX) == -1)
		return -1;
	if (json_object_object_get_ex(o, "params", &v) &&
	    (!json_object_is_type(v, json_type_object) ||
	    jtemplate_check(v, no_names, msg, sizeof(msg)) == -1))
		return fwd_fail(e, "editor.params", "must be an object without "
		    "templates: the probe's call is always the same");
	if (!json_object_object_get_ex(o, "flags", &v))
		return fwd_fail(e, "editor", "needs \"flags\": which answer "
		    "paths are the editor's flags");
	return fwd_flags(e, v);
}
