/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_EDWATCH_H
#define CMDGATE_EDWATCH_H

#include <signal.h>

#include <json-c/json.h>

/*
 * Probe mode: ask the editor for its state every every_ms (one locked
 * exchange each, in lock_dir) and write
 * {"event":"editor","reachable":...,"flags":{...}|"error":...} to the
 * broker once at start and whenever it changes, until SIGTERM or the
 * broker is gone.  probe is the table's "editor" object (borrowed).
 */
void	edwatch_run(json_object *probe, const char *lock_dir,
	    const sigset_t *waitmask);

#endif
