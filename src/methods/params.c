/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdint.h>

#include <json-c/json.h>

#include "methods.h"
#include "net.h"
#include "ticket.h"
#include "util.h"

/*
 * Reading a method's params: each helper fills err with a precise
 * invalid_params (or unknown_ticket) error.
 */

int
param_string(json_object *params, const char *key, int required,
    const char **out, struct rpc_error *err)
{
	json_object	*v;

	if (!json_object_object_get_ex(params, key, &v)) {
		if (!required)
			return 1;
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "missing parameter \"%s\" (a string)", key);
		return -1;
	}
	if (!json_object_is_type(v, json_type_string)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "parameter \"%s\" must be a string", key);
		return -1;
	}
	*out = json_object_get_string(v);
	return 0;
}

int
param_bool(json_object *params, const char *key, int *out,
    struct rpc_error *err)
{
	json_object	*v;

	if (!json_object_object_get_ex(params, key, &v))
		return 1;
	if (!json_object_is_type(v, json_type_boolean)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "parameter \"%s\" must be true or false", key);
		return -1;
	}
	*out = json_object_get_boolean(v);
	return 0;
}

int
param_name_ok(const char *s)
{
	const unsigned char	*p;
	size_t			 n = util_utf8_len(s);

	if (n < 1 || n > CONN_NAME_MAX)
		return 0;
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

int
param_uint(json_object *params, const char *key, uint64_t min, uint64_t max,
    uint64_t *out, struct rpc_error *err)
{
	json_object	*v;

	if (!json_object_object_get_ex(params, key, &v))
		return 1;
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < (int64_t)min ||
	    (uint64_t)json_object_get_int64(v) > max) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "parameter "
		    "\"%s\" must be a whole number from %llu to %llu", key,
		    (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = (uint64_t)json_object_get_int64(v);
	return 0;
}

int
param_ticket(json_object *params, uint64_t *num, struct rpc_error *err)
{
	const char	*t;

	if (param_string(params, "ticket", 1, &t, err) == -1)
		return -1;
	if (ticket_parse(t, num) == -1) {
		rpc_fail(err, RPC_UNKNOWN_TICKET, "unknown_ticket", "'%s' is "
		    "not a ticket (they look like t-000042)", t);
		return -1;
	}
	return 0;
}
