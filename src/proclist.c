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

#define ENVIRON_MAX	65536

int
proc_environ_has(pid_t pid, const char *prefix)
{
	char	path[64], *buf, *p, *end;
	size_t	len = strlen(prefix), n = 0;
	ssize_t	r;
	int	fd, found = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	if ((buf = malloc(ENVIRON_MAX)) == NULL) {
		close(fd);
		return 0;
	}
	while (n < ENVIRON_MAX &&
	    (r = read(fd, buf + n, ENVIRON_MAX - n)) > 0)
		n += (size_t)r;
	close(fd);
	/* NUL-separated entries; the last one may be cut short. */
	for (p = buf, end = buf + n; p < end && !found; p += strlen(p) + 1) {
		if ((size_t)(end - p) < len || memchr(p, '\0', end - p) == NULL)
			break;
		found = strncmp(p, prefix, len) == 0;
	}
	free(buf);
	return found;
}
