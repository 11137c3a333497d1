/* SPDX-License-Identifier: ISC */
/*
 * A JSON-RPC 2.0 upstream's messages, shared by the worker's blocking
 * exchange and the broker's editor link (include/jrpcup.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jrpcup.h"

json_object *
jrpcup_request(int64_t id, const char *method, json_object *params)
{
	json_object	*req = json_object_new_object();

	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(req, "id", json_object_new_int64(id));
	json_object_object_add(req, "method", json_object_new_string(method));
	json_object_object_add(req, "params", params != NULL ?
	    json_object_get(params) : json_object_new_object());
	return req;
}

int
jrpcup_content_length(const char *line, size_t *n)
{
	unsigned long long	 v;
	char			*end;

	if (strncasecmp(line, "Content-Length:", 15) != 0)
		return 0;
	errno = 0;
	v = strtoull(line + 15, &end, 10);
	if (errno != 0 || end == line + 15 || strspn(end, " \t") !=
	    strlen(end) || strchr(line + 15, '-') != NULL)
		return -1;
	*n = (size_t)v;
	return 1;
}

int
jrpcup_is_answer(json_object *msg)
{
	/* A request from the server has an id too: not an answer. */
	return json_object_is_type(msg, json_type_object) &&
	    json_object_object_get_ex(msg, "id", NULL) &&
	    !json_object_object_get_ex(msg, "method", NULL);
}

enum up_status
jrpcup_answer(json_object *msg, json_object **out, char *err, size_t errlen)
{
	json_object	*v, *m;

	*out = NULL;
	if (json_object_object_get_ex(msg, "result", &v)) {
		*out = json_object_get(v);
		return UP_OK;
	}
	if (!json_object_object_get_ex(msg, "error", &v)) {
		snprintf(err, errlen, "sent an answer with neither result "
		    "nor error");
		return UP_PROTOCOL;
	}
	*out = json_object_get(v);
	m = json_object_object_get(v, "message");
	snprintf(err, errlen, "upstream error %d: %s",
	    json_object_get_int(json_object_object_get(v, "code")),
	    m != NULL ? json_object_get_string(m) : "(no message)");
	return UP_ERROR;
}
