/* SPDX-License-Identifier: ISC */
/* The children of a process, from /proc (proclist.h). */
#include "config.h"

#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
