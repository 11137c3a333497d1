/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FORWARD_H
#define CMDGATE_FORWARD_H

#include <signal.h>
#include <stddef.h>

#include <json-c/json.h>

/*
 * Run forward command cmd (the index-th of the job): emit its start, send
 * the request, wait for the answer under waitmask.  The result object
 * (caller puts), with ok, result or error, timed_out and duration_ms.
 */
json_object	*forward_run(json_object *cmd, size_t index,
		    const sigset_t *waitmask);

#endif
