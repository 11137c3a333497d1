/* SPDX-License-Identifier: ISC */
/* A forward command's result: its members from a call's end. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "fwdres.h"
#include "jstrict.h"
#include "umcp.h"
#include "wire.h"

static json_object *
fwdres_member(json_object *o, const char *name)
{
	json_object	*v;

	return json_object_object_get_ex(o, name, &v) ? v : NULL;
}

const char *
fwdres_error_type(enum up_status st, int closed)
{
	switch (st) {
	case UP_REFUSED:
		return closed ? WIRE_ERR_CLOSED : WIRE_ERR_REFUSED;
	case UP_LOST:
		return WIRE_ERR_LOST;
	case UP_TIMEOUT:
		return WIRE_ERR_TIMEOUT;
	case UP_CANCELLED:
		return WIRE_ERR_CANCELLED;
	case UP_ERROR:
		return WIRE_ERR_UPSTREAM;
	default:
		return WIRE_ERR_PROTOCOL;
	}
}

void
fwdres_fail(json_object *r, enum up_status st, int closed, const char *err)
{
	json_object_object_add(r, WIRE_RES_OK, json_object_new_boolean(0));
	/* It may quote the upstream's bytes, or cut a text at a byte
	 * count: the broker reads the result as strict JSON. */
	json_object_object_add(r, WIRE_RES_ERROR, jstrict_string(err));
	json_object_object_add(r, WIRE_RES_ERROR_TYPE,
	    json_object_new_string(fwdres_error_type(st, closed)));
	if (st == UP_TIMEOUT)
		json_object_object_add(r, WIRE_RES_TIMED_OUT,
		    json_object_new_boolean(1));
}

int
fwdres_tool_failed(const char *dialect, json_object *res)
{
	json_object	*v;

	if (umcp_dialect(dialect))
		return (v = fwdres_member(res, "success")) != NULL &&
		    json_object_is_type(v, json_type_boolean) &&
		    !json_object_get_boolean(v);
	if (strcmp(dialect, "mcp-http") == 0)
		return (v = fwdres_member(res, "isError")) != NULL &&
		    json_object_is_type(v, json_type_boolean) &&
		    json_object_get_boolean(v);
	return 0;
}

/* res's "error", else its "message", if a string. */
static const char *
fwdres_why(json_object *res)
{
	json_object	*v = fwdres_member(res, "error");

	if (!json_object_is_type(v, json_type_string))
		v = fwdres_member(res, "message");
	return json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : NULL;
}

void
fwdres_answered(json_object *r, const char *dialect, const char *to,
    json_object *res)
{
	const char	*why = fwdres_why(res);
	char		 msg[1024];

	if (fwdres_tool_failed(dialect, res)) {
		snprintf(msg, sizeof(msg), "%s: the tool reported a "
		    "failure%s%.400s", to, why != NULL ? ": " : "",
		    why != NULL ? why : "");
		fwdres_fail(r, UP_PROTOCOL, 0, msg);
		json_object_object_add(r, WIRE_RES_ERROR_TYPE,
		    json_object_new_string(WIRE_ERR_TOOL_FAILED));
	} else
		json_object_object_add(r, WIRE_RES_OK,
		    json_object_new_boolean(1));
	json_object_object_add(r, WIRE_RES_RESULT, res);
}
