/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_RUN_H
#define CMDGATE_RUN_H

#include <signal.h>
#include <stddef.h>

#include <json-c/json.h>

/*
 * Run exec command cmd (the index-th of job ticket): emit its start once
 * the tool runs, keep the last cap bytes of stdout and stderr, wait under
 * waitmask.  The result object (caller puts).
 */
json_object	*run_exec(const char *ticket, json_object *cmd, size_t index,
		    size_t cap, const sigset_t *waitmask);

#endif
