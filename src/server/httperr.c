/* SPDX-License-Identifier: ISC */
/* MCP over HTTP: a request refused, with a JSON-RPC error. */
#include "config.h"

#include <stddef.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include <json-c/json.h>

#include "log.h"
#include "net.h"
#include "server.h"

void
httperr_reply(struct evhttp_request *req, int status, int code,
    const char *type, const char *reason)
{
	json_object	*resp;
	struct evbuffer	*b;
	const char	*s;
	size_t		 len;

	resp = rpc_error_response(NULL, code, type, NULL, reason);
	s = json_object_to_json_string_length(resp, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if ((b = evbuffer_new()) == NULL || evbuffer_add(b, s, len) == -1)
		fatalx("evbuffer_add: out of memory");
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, status, NULL, b);
	evbuffer_free(b);
	json_object_put(resp);
}
