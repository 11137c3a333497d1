/* SPDX-License-Identifier: ISC */
/*
 * Instance files: where a broker publishes its endpoints and its token's
 * path, for cmdgate(1) to find it by name (cmdgated(8), FILES).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "runfile.h"
#include "util.h"

int
runfile_name_ok(const char *name)
{
	size_t	n = strlen(name);

	if (n == 0 || n > RUNFILE_NAME_MAX || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return 0;
	return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-") == n;
}

char *
runfile_state_dir(void)
{
	const char	*s;

	if ((s = getenv("CMDGATE_STATE_DIR")) != NULL && *s == '/')
		return xstrdup(s);
	/* systemd's StateDirectory= may name several, colon-separated. */
	if ((s = getenv("STATE_DIRECTORY")) != NULL && *s != '\0')
		return xasprintf("%.*s", (int)strcspn(s, ":"), s);
	if (geteuid() == 0)
		return xstrdup("/var/lib/cmdgate");
	if ((s = getenv("XDG_STATE_HOME")) != NULL && *s == '/')
		return xasprintf("%s/cmdgate", s);
	if ((s = getenv("HOME")) != NULL && *s == '/')
		return xasprintf("%s/.local/state/cmdgate", s);
	return xstrdup("/tmp/cmdgate-state");
}

char *
runfile_dir(const char *state_dir)
{
	const char	*s;
	char		*d, *r;

	if ((s = getenv("CMDGATE_RUNTIME_DIR")) != NULL && *s == '/')
		return xstrdup(s);
	if (geteuid() == 0)
		return xstrdup("/run/cmdgate");
	if ((s = getenv("XDG_RUNTIME_DIR")) != NULL && *s == '/')
		return xasprintf("%s/cmdgate", s);
	if (state_dir != NULL)
		return xasprintf("%s/run", state_dir);
	d = runfile_state_dir();
	r = xasprintf("%s/run", d);
	free(d);
	return r;
}

char *
runfile_path(const char *state_dir, const char *name)
{
	char	*d, *p;

	d = runfile_dir(state_dir);
	p = xasprintf("%s/%s.json", d, name);
	free(d);
	return p;
}

/* Write all of s to fd, synced: 0, or -1. */
static int
write_all(int fd, const char *s)
{
	size_t	len = strlen(s);
	ssize_t	n;

	while (len > 0) {
		if ((n = write(fd, s, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += n;
		len -= (size_t)n;
	}
	return fsync(fd);
}

int
runfile_write(const char *path, json_object *o)
{
	char	*tmp;
	int	 fd, rc, saved;

	tmp = xasprintf("%s.XXXXXX", path);
	if ((fd = mkstemp(tmp)) == -1) {
		free(tmp);
		return -1;
	}
	rc = fchmod(fd, 0644) == -1 || write_all(fd,
	    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) == -1 ?
	    -1 : 0;
	saved = errno;
	if (close(fd) == -1 && rc == 0) {
		rc = -1;
		saved = errno;
	}
	if (rc == 0 && rename(tmp, path) == -1) {
		rc = -1;
		saved = errno;
	}
	if (rc == -1)
		unlink(tmp);
	free(tmp);
	errno = saved;
	return rc;
}

json_object *
runfile_read(const char *path)
{
	json_object	*o;

	if ((o = json_object_from_file(path)) == NULL) {
		if (errno == 0)
			errno = EINVAL;
		return NULL;
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		errno = EINVAL;
		return NULL;
	}
	return o;
}
