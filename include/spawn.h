/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_SPAWN_H
#define CMDGATE_SPAWN_H

#include <stddef.h>

/*
 * Starting worker processes.  The worker is its own program,
 * cmdgate-worker: in the build tree next to the broker's (so the broker
 * runs uninstalled), else in LIBEXECDIR.
 */

/* Find the worker: 0 and *path (caller frees), or -1 with err. */
int	spawn_find_worker(char **path, char *err, size_t errlen);

#endif
