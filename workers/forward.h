/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FORWARD_H
#define CMDGATE_FORWARD_H

#include <signal.h>
#include <stddef.h>

#include <json-c/json.h>

/*
 * Run forward command cmd (the index-th of the job): emit its start, send
 * the request in the upstream's dialect, wait for the answer (and for an
 * await's end, or a reload tool's bridge to come back) under waitmask;
 * lock_dir keeps when an unlinked upstream was last reached (upseen.c;
 * NULL: not kept).  The result object (caller puts): ok, result or error
 * and error_type, timed_out, sent, polls, reloaded, duration_ms.
 */
json_object	*forward_run(json_object *cmd, size_t index,
		    const char *lock_dir, const sigset_t *waitmask);

#endif
