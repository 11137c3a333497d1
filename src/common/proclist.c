/* SPDX-License-Identifier: ISC */
/* The children of a process, from /proc (proclist.h). */
#include "config.h"

#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proclist.h"

pid_t *
proc_children(pid_t parent, size_t *count)
{
	DIR		*d;
	struct dirent	*e;
	FILE		*f;
	char		 path[300], buf[512], *p;
	pid_t		*list = NULL, *nl;
	size_t		 n = 0;
	long		 ppid;

	*count = 0;
	if ((d = opendir("/proc")) == NULL)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		/* ") S PPID ...": the parent is the second field after. */
		if (p == NULL || sscanf(p + 1, " %*c %ld", &ppid) != 1 ||
		    ppid != (long)parent)
			continue;
		if ((nl = realloc(list, (n + 1) * sizeof(pid_t))) == NULL)
			break;
		list = nl;
		list[n++] = (pid_t)atol(e->d_name);
	}
	closedir(d);
	*count = n;
	return list;
}

#define ENVIRON_CHUNK	4096

int
proc_environ_has(pid_t pid, const char *prefix)
{
	char	path[64], buf[ENVIRON_CHUNK];
	size_t	len = strlen(prefix), have = 0, i;
	ssize_t	r;
	int	fd, found = 0, skip = 0;

	if (len == 0 || len >= sizeof(buf))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	/*
	 * NUL-separated entries, read a chunk at a time: only the start of
	 * each entry matters, so buf keeps at most an entry's first len
	 * bytes across reads; skip: the rest of a longer entry.
	 */
	while (!found && (r = read(fd, buf + have, sizeof(buf) - have)) > 0) {
		size_t	n = have + (size_t)r, start = 0;

		for (i = have; i < n && !found; i++) {
			if (buf[i] != '\0')
				continue;
			if (!skip && i - start >= len &&
			    memcmp(buf + start, prefix, len) == 0)
				found = 1;
			skip = 0;
			start = i + 1;
		}
		/* What is left is the start of an unfinished entry. */
		have = n - start;
		if (!skip && have >= len) {
			found = found || memcmp(buf + start, prefix, len) == 0;
			skip = 1;
			have = 0;
		} else if (skip)
			have = 0;
		else
			memmove(buf, buf + start, have);
	}
	close(fd);
	return found;
}
