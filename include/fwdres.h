/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FWDRES_H
#define CMDGATE_FWDRES_H

#include <json-c/json.h>

#include "upstatus.h"

/*
 * A forward command's result object (cmdgate.tools(5), Forward results),
 * as the worker's forward tools make it and the broker makes it for a
 * read it forwards itself over an editor link (engine/edread.c): the
 * same members, error types and messages from the same status.
 */

/* The WIRE_ERR_* of a call that ended st (closed: UP_REFUSED came after
 * the connect, the request not taken whole). */
const char	*fwdres_error_type(enum up_status st, int closed);
/* r failed: ok false, error err (made valid UTF-8), its type, timed_out
 * on UP_TIMEOUT. */
void		 fwdres_fail(json_object *r, enum up_status st, int closed,
		    const char *err);
/* Whether res, a call's result in dialect, says the tool ran and failed
 * (unity-mcp: success false; mcp-http: isError true). */
int		 fwdres_tool_failed(const char *dialect, json_object *res);
/* r answered with res (taken): ok, or tool_failed with res kept; to names
 * the upstream in the error. */
void		 fwdres_answered(json_object *r, const char *dialect,
		    const char *to, json_object *res);

#endif
