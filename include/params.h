/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_PARAMS_H
#define CMDGATE_PARAMS_H

#include <stdint.h>

#include <json-c/json.h>

#include "rpc.h"

/*
 * A method's params: 0, 1 when absent and optional, or -1 with err
 * filled (invalid_params, or unknown_ticket for param_ticket()).
 */
int	param_string(json_object *params, const char *key, int required,
	    const char **out, struct rpc_error *err);
int	param_bool(json_object *params, const char *key, int *out,
	    struct rpc_error *err);
int	param_uint(json_object *params, const char *key, uint64_t min,
	    uint64_t max, uint64_t *out, struct rpc_error *err);
/* The ticket parameter; -1 with err when missing or not a ticket. */
int	param_ticket(json_object *params, uint64_t *num, struct rpc_error *err);
/* Check a client name: 1-64 characters, no control characters. */
int	param_name_ok(const char *);

#endif
