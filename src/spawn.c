/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawn.h"
#include "util.h"

#define WORKER_NAME	"cmdgate-worker"

int
spawn_find_worker(char **path, char *err, size_t errlen)
{
	char	exe[PATH_MAX], cand[PATH_MAX + 64], *dir;
	ssize_t	n;

	/* Built but not installed: src/cmdgated finds workers/. */
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		dir = dirname(exe);
		snprintf(cand, sizeof(cand), "%s/../workers/%s", dir,
		    WORKER_NAME);
		if (access(cand, X_OK) == 0 &&
		    realpath(cand, exe) != NULL) {
			*path = xstrdup(exe);
			return 0;
		}
	}
	snprintf(cand, sizeof(cand), "%s/%s", LIBEXECDIR, WORKER_NAME);
	if (access(cand, X_OK) == 0) {
		*path = xstrdup(cand);
		return 0;
	}
	snprintf(err, errlen, "worker program %s: %s (is cmdgate installed?)",
	    cand, strerror(errno));
	return -1;
}
