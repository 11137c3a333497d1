/* SPDX-License-Identifier: ISC */
/*
 * MCP 2026-07-28 over Streamable HTTP (cmdgate-protocol(7), Model
 * Context Protocol): a POST whose message names its revision in
 * params._meta needs no session.  Its headers must agree with its body
 * (MCP-Protocol-Version, Mcp-Method, Mcp-Name), or it is refused with
 * 400 and -32020 before it runs; then it runs on a session of its own,
 * which goes with its answer (httpsess.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <json-c/json.h>
#include <nettle/base64.h>

#include "log.h"
#include "mcpver.h"
#include "net.h"
#include "server.h"
#include "util.h"

#define NAME_MAX_BYTES	4096	/* of an Mcp-Name, decoded */

/* The methods that name what they act on in Mcp-Name: where. */
static const struct {
	const char	*method;
	const char	*param;
} hm_named[] = {
	{ "tools/call", "name" },
	{ "prompts/get", "name" },
	{ "resources/read", "uri" },
	{ "tasks/get", "taskId" },
	{ "tasks/update", "taskId" },
	{ "tasks/cancel", "taskId" },
};

static const char *
hm_header(struct evhttp_request *req, const char *name)
{
	return evhttp_find_header(evhttp_request_get_input_headers(req),
	    name);
}

/* The version a POST's message names in params._meta, or NULL. */
static const char *
hm_body_version(json_object *msg)
{
	json_object	*p, *meta, *v;

	if (!json_object_object_get_ex(msg, "params", &p) ||
	    !json_object_object_get_ex(p, "_meta", &meta) ||
	    !json_object_object_get_ex(meta, MCP_META_VERSION, &v))
		return NULL;
	return json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : "";
}

int
httpmodern_is(struct evhttp_request *req, json_object *msg)
{
	const char	*v = hm_header(req, "MCP-Protocol-Version");

	if (v != NULL && strcmp(v, MCP_VERSION_2026) == 0)
		return 1;
	return json_object_is_type(msg, json_type_object) &&
	    hm_body_version(msg) != NULL;
}

/*
 * An Mcp-Name value as sent: itself, or what "=?base64?B64?=" encodes.
 * Caller frees; NULL when it is not valid base64.
 */
static char *
hm_decode(const char *v)
{
	struct base64_decode_ctx	 ctx;
	size_t				 n = strlen(v), len;
	uint8_t				*out;

	if (n < 12 || strncmp(v, "=?base64?", 9) != 0 ||
	    strcmp(v + n - 2, "?=") != 0)
		return xstrdup(v);
	n -= 11;
	if (BASE64_DECODE_LENGTH(n) > NAME_MAX_BYTES)
		return NULL;
	out = xcalloc(1, BASE64_DECODE_LENGTH(n) + 1);
	base64_decode_init(&ctx);
	if (!base64_decode_update(&ctx, &len, out, n, v + 9) ||
	    !base64_decode_final(&ctx) || memchr(out, '\0', len) != NULL) {
		free(out);
		return NULL;
	}
	out[len] = '\0';
	return (char *)out;
}

/* -32020: header and body disagree (or the header is missing). */
static int
hm_mismatch(struct rpc_error *err, const char *header, const char *want,
    const char *got)
{
	rpc_fail(err, RPC_HEADER_MISMATCH, "header_mismatch", "the %s header "
	    "%s%.80s%s but the body says '%.80s'", header, got == NULL ?
	    "is missing" : "says '", got == NULL ? "" : got, got == NULL ?
	    "" : "'", want);
	return -1;
}

/* Mcp-Name, for a method that names its object: as the body's. */
static int
hm_check_name(struct evhttp_request *req, const char *method,
    json_object *params, struct rpc_error *err)
{
	const char	*h = hm_header(req, "Mcp-Name"), *want;
	json_object	*v;
	char		*got;
	size_t		 i;
	int		 same;

	for (i = 0; i < sizeof(hm_named) / sizeof(hm_named[0]); i++)
		if (strcmp(hm_named[i].method, method) == 0)
			break;
	if (i == sizeof(hm_named) / sizeof(hm_named[0]) ||
	    !json_object_object_get_ex(params, hm_named[i].param, &v) ||
	    !json_object_is_type(v, json_type_string))
		return 0;	/* the method's own check names the lack */
	want = json_object_get_string(v);
	if (h == NULL)
		return hm_mismatch(err, "Mcp-Name", want, NULL);
	if ((got = hm_decode(h)) == NULL) {
		rpc_fail(err, RPC_HEADER_MISMATCH, "header_mismatch", "the "
		    "Mcp-Name header is not valid =?base64?...?=");
		return -1;
	}
	same = strcmp(got, want) == 0;
	free(got);
	return same ? 0 : hm_mismatch(err, "Mcp-Name", want, h);
}

/* The checks of a modern POST's message msg: 0, or -1 with err. */
static int
hm_check(struct evhttp_request *req, json_object *msg, struct rpc_error *err)
{
	const char	*hv = hm_header(req, "MCP-Protocol-Version"), *bv;
	const char	*hm = hm_header(req, "Mcp-Method"), *method;
	json_object	*params = NULL, *id;
	int		 notif, env;

	if (!json_object_is_type(msg, json_type_object)) {
		rpc_fail(err, RPC_INVALID_REQUEST, "invalid_request", "a POST "
		    "of MCP " MCP_VERSION_2026 " carries one message, not a "
		    "batch");
		return -1;
	}
	if (rpc_check(msg, &id, &method, &notif, err) == -1 ||
	    rpc_check_params(msg, &params, err) == -1)
		return -1;
	/* Header and body first: a version they disagree on is -32020. */
	bv = hm_body_version(msg);
	if (bv != NULL && (hv == NULL || strcmp(hv, bv) != 0))
		return hm_mismatch(err, "MCP-Protocol-Version", bv, hv);
	if ((env = rpc_mcp_envelope(params, err)) == -1)
		return -1;
	if (env == 0) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "the "
		    "MCP-Protocol-Version header names " MCP_VERSION_2026
		    " but params._meta does not carry \"" MCP_META_VERSION
		    "\"");
		return -1;
	}
	if (hm == NULL || strcmp(hm, method) != 0)
		return hm_mismatch(err, "Mcp-Method", method, hm);
	return hm_check_name(req, method, params, err);
}

int
httpmodern_check(struct evhttp_request *req, json_object *msg)
{
	struct rpc_error	 err;
	json_object		*resp, *id = NULL, *d;

	memset(&err, 0, sizeof(err));
	if (hm_check(req, msg, &err) == 0)
		return 0;
	json_object_object_get_ex(msg, "id", &id);
	if (!json_object_is_type(id, json_type_string) &&
	    !json_object_is_type(id, json_type_int))
		id = NULL;
	resp = rpc_error_response(id, err.code, err.type, NULL, err.reason);
	if (err.data != NULL) {
		d = json_object_object_get(json_object_object_get(resp,
		    "error"), "data");
		json_object_object_foreach(err.data, k, v)
			json_object_object_add(d, k, json_object_get(v));
		json_object_put(err.data);
	}
	http_json_reply(req, HTTP_BADREQUEST, resp);
	json_object_put(resp);
	return -1;
}

int
httpmodern_status(const char *answer)
{
	json_object	*a, *e, *code;
	int		 status = HTTP_OK;

	if ((a = json_tokener_parse(answer)) == NULL)
		return HTTP_OK;
	if (json_object_object_get_ex(a, "error", &e) &&
	    json_object_object_get_ex(e, "code", &code)) {
		switch (json_object_get_int(code)) {
		case RPC_METHOD_NOT_FOUND:
			status = HTTP_NOTFOUND;
			break;
		case RPC_HEADER_MISMATCH:
		case RPC_MISSING_CAPABILITY:
		case RPC_UNSUPPORTED_VERSION:
			status = HTTP_BADREQUEST;
			break;
		}
	}
	json_object_put(a);
	return status;
}
