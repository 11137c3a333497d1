/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "jstrict.h"
#include "mcpver.h"
#include "net.h"

static int		 rpc_str_has_nul(json_object *);
static int		 rpc_nul_path(json_object *, const char *, char *,
			    size_t);

static const struct {
	int		 code;
	const char	*message;
} rpc_messages[] = {
	{ RPC_PARSE_ERROR, "Parse error" },
	{ RPC_INVALID_REQUEST, "Invalid Request" },
	{ RPC_METHOD_NOT_FOUND, "Method not found" },
	{ RPC_INVALID_PARAMS, "Invalid params" },
	{ RPC_INTERNAL_ERROR, "Internal error" },
	{ RPC_SECURITY_BLOCKED, "Security blocked" },
	{ RPC_UNKNOWN_TICKET, "Unknown ticket" },
	{ RPC_QUEUE_FULL, "Queue full" },
	{ RPC_STORAGE_ERROR, "Storage error" },
	{ RPC_UNAUTHORIZED, "Unauthorized" },
	{ RPC_HELD, "Held" },
	{ RPC_HEADER_MISMATCH, "Header mismatch" },
	{ RPC_MISSING_CAPABILITY, "Missing required client capability" },
	{ RPC_UNSUPPORTED_VERSION, "Unsupported protocol version" },
};

const char *
rpc_code_message(int code)
{
	size_t	i;

	for (i = 0; i < sizeof(rpc_messages) / sizeof(rpc_messages[0]); i++)
		if (rpc_messages[i].code == code)
			return rpc_messages[i].message;
	return "Error";
}

enum rpc_status
rpc_fail(struct rpc_error *err, int code, const char *type,
    const char *fmt, ...)
{
	va_list	ap;

	err->code = code;
	err->type = type;
	va_start(ap, fmt);
	vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
	va_end(ap);
	return RPC_ERROR;
}

json_object *
rpc_error_response(json_object *id, int code, const char *type,
    const char *command, const char *reason)
{
	json_object	*d;

	d = json_object_new_object();
	json_object_object_add(d, "type", json_object_new_string(type));
	json_object_object_add(d, "command", command != NULL ?
	    json_object_new_string(command) : NULL);
	/* A reason may quote what a client sent, cut at a byte count. */
	json_object_object_add(d, "reason", jstrict_string(reason));
	/* The reason as the message: most clients show only that. */
	return rpc_error_envelope(id, code, reason != NULL &&
	    *reason != '\0' ? jstrict_string(reason) :
	    json_object_new_string(rpc_code_message(code)), d);
}

json_object *
rpc_error_envelope(json_object *id, int code, json_object *message,
    json_object *data)
{
	json_object	*r, *e;

	e = json_object_new_object();
	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message", message);
	json_object_object_add(e, "data", data);
	r = json_object_new_object();
	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "id", json_object_get(id));
	json_object_object_add(r, "error", e);
	return r;
}

json_object *
rpc_notification(const char *method, json_object *params)
{
	json_object	*n = json_object_new_object();

	json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(n, "method", json_object_new_string(method));
	json_object_object_add(n, "params", params);
	return n;
}

const struct rpc_method *
rpc_lookup(const char *name)
{
	const struct rpc_method	*m;

	for (m = rpc_methods; m->name != NULL; m++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

/* Whether the string v (or NULL) holds U+0000. */
static int
rpc_str_has_nul(json_object *v)
{
	return json_object_is_type(v, json_type_string) &&
	    strlen(json_object_get_string(v)) !=
	    (size_t)json_object_get_string_len(v);
}

/*
 * Where under v, named at, a string holds U+0000: 1 with path set (for
 * example "params.commands[0].params.text"), else 0.  Member names cannot
 * hold it: jstrict refuses them.
 */
static int
rpc_nul_path(json_object *v, const char *at, char *path, size_t len)
{
	char	sub[RPC_REASON_MAX / 2];
	size_t	i, n;

	if (rpc_str_has_nul(v)) {
		snprintf(path, len, "%s", at);
		return 1;
	}
	if (json_object_is_type(v, json_type_array)) {
		n = json_object_array_length(v);
		for (i = 0; i < n; i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", at, i);
			if (rpc_nul_path(json_object_array_get_idx(v, i), sub,
			    path, len))
				return 1;
		}
	} else if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, val) {
			snprintf(sub, sizeof(sub), "%s.%s", at, key);
			if (rpc_nul_path(val, sub, path, len))
				return 1;
		}
	}
	return 0;
}

/*
 * Check the envelope of one request.  On success *id, *method, *notif are
 * set (id borrowed, NULL for id null).  A request that is not one gets
 * -32600; its id is kept when it is a valid one, so the client can match.
 */
int
rpc_check(json_object *msg, json_object **id, const char **method,
    int *notif, struct rpc_error *err)
{
	json_object	*v;
	enum json_type	 t;
	int		 has_id;

	*id = NULL;
	*method = NULL;
	*notif = 0;
	if (!json_object_is_type(msg, json_type_object)) {
		rpc_fail(err, RPC_INVALID_REQUEST, "invalid_request",
		    "a request must be a JSON object");
		return -1;
	}
	has_id = json_object_object_get_ex(msg, "id", &v);
	t = json_object_get_type(v);
	if (has_id && (t == json_type_string || t == json_type_int))
		*id = v;
	if (json_object_object_get_ex(msg, "method", &v) &&
	    rpc_str_has_nul(v)) {
		rpc_fail(err, RPC_INVALID_REQUEST, "invalid_request",
		    "\"method\" holds U+0000, which no method name does");
		return -1;
	}
	if (json_object_is_type(v, json_type_string))
		*method = json_object_get_string(v);
	if (has_id && t != json_type_string && t != json_type_int &&
	    t != json_type_null) {
		rpc_fail(err, RPC_INVALID_REQUEST, "invalid_request",
		    "\"id\" must be a string, an integer or null");
		return -1;
	}
	if (!json_object_object_get_ex(msg, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) != 3 ||
	    strcmp(json_object_get_string(v), "2.0") != 0) {
		rpc_fail(err, RPC_INVALID_REQUEST, "invalid_request",
		    "\"jsonrpc\" must be \"2.0\"");
		return -1;
	}
	if (*method == NULL) {
		rpc_fail(err, RPC_INVALID_REQUEST, "invalid_request",
		    "\"method\" must be a string");
		return -1;
	}
	*notif = !has_id;
	return 0;
}

/*
 * Check the params of msg: absent, or an object with no U+0000 in any
 * string.  0 with *params set (borrowed, NULL when absent), or -1 with err.
 */
int
rpc_check_params(json_object *msg, json_object **params,
    struct rpc_error *err)
{
	char	where[RPC_REASON_MAX / 2];

	*params = NULL;
	if (json_object_object_get_ex(msg, "params", params) &&
	    *params != NULL &&
	    !json_object_is_type(*params, json_type_object)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "\"params\" must be an object");
		return -1;
	}
	if (jstrict_has_nul(*params)) {
		rpc_nul_path(*params, "params", where, sizeof(where));
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "%s holds U+0000 (\\u0000), which the broker refuses in "
		    "any string", where);
		return -1;
	}
	return 0;
}

int
rpc_mcp_envelope(json_object *params, struct rpc_error *err)
{
	json_object	*meta, *v, *caps, *sup;

	if (!json_object_object_get_ex(params, "_meta", &meta) ||
	    !json_object_object_get_ex(meta, MCP_META_VERSION, &v))
		return 0;
	if (!json_object_is_type(v, json_type_string) ||
	    mcp_version_rev(json_object_get_string(v)) != MCP_REV_2026) {
		rpc_fail(err, RPC_UNSUPPORTED_VERSION,
		    "unsupported_protocol_version", "protocol version '%.40s' "
		    "in _meta is not one this broker speaks without "
		    "initialize: " MCP_VERSION_2026 " (the older ones begin "
		    "with initialize)", json_object_get_string(v));
		sup = mcp_versions_json();
		err->data = json_object_new_object();
		json_object_object_add(err->data, "supported", sup);
		json_object_object_add(err->data, "requested",
		    json_object_get(v));
		return -1;
	}
	if (!json_object_object_get_ex(meta, MCP_META_CAPS, &caps) ||
	    !json_object_is_type(caps, json_type_object)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "the "
		    "_meta of a " MCP_VERSION_2026 " request must carry "
		    "\"" MCP_META_CAPS "\", an object ({} for none)");
		return -1;
	}
	return 1;
}

/* A modern result: resultType "complete" unless it says otherwise, and
 * who answered in _meta. */
static void
rpc_stamp(json_object *result)
{
	json_object	*meta, *info;

	if (!json_object_object_get_ex(result, "resultType", NULL))
		json_object_object_add(result, "resultType",
		    json_object_new_string("complete"));
	if (!json_object_object_get_ex(result, "_meta", &meta)) {
		meta = json_object_new_object();
		json_object_object_add(result, "_meta", meta);
	}
	info = json_object_new_object();
	json_object_object_add(info, "name", json_object_new_string("cmdgate"));
	json_object_object_add(info, "version",
	    json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(meta, MCP_META_SERVER_INFO, info);
}

json_object *
rpc_answer(struct rpc_req *req, enum rpc_status st, json_object *result,
    struct rpc_error *err)
{
	json_object	*r, *d;

	if (req->notification) {
		json_object_put(result);
		if (st == RPC_ERROR)
			json_object_put(err->data);
		return NULL;
	}
	/* 2026-07-28 servers must not send -32002 (its old meaning). */
	if (st == RPC_ERROR && req->modern && err->code == RPC_UNKNOWN_TICKET)
		err->code = RPC_INVALID_PARAMS;
	if (st == RPC_ERROR) {
		r = rpc_error_response(req->id, err->code, err->type,
		    err->command != NULL ? err->command : req->method,
		    err->reason);
		if (err->data != NULL) {
			d = json_object_object_get(json_object_object_get(r,
			    "error"), "data");
			json_object_object_foreach(err->data, k, v)
				json_object_object_add(d, k,
				    json_object_get(v));
			json_object_put(err->data);
			err->data = NULL;
		}
		return r;
	}
	if (result == NULL)
		result = json_object_new_object();
	if (req->modern && json_object_is_type(result, json_type_object))
		rpc_stamp(result);
	r = json_object_new_object();
	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "id", json_object_get(req->id));
	json_object_object_add(r, "result", result);
	return r;
}
