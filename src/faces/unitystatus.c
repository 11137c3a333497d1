/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "faces.h"
#include "jstrict.h"
#include "log.h"
#include "options.h"
#include "digest.h"
#include "util.h"

#define US_PREFIX	"unity-mcp-status-"
#define US_SUFFIX	".json"
#define US_FILE_MAX	(64 * 1024)	/* a status file is ~300 bytes */
#define US_VERSION_FILE	"ProjectSettings/ProjectVersion.txt"
#define US_VERSION_KEY	"m_EditorVersion:"

struct unitystatus {
	struct event		*ev;
	const struct options	*opt;
	int			 port;
	int			 bridge_port;
	int			 reloading;
	unsigned long long	 seq;
	struct unitystatus_id	 last;		/* fields NULL: none yet */
	int			 dirfd;		/* --unity-status-dir, checked */
	char			*written;	/* its file written, or NULL */
	int			 told;		/* "no project" logged */
};

static char	*us_editor_dir(void);
static int	 us_is_name(const char *);
static json_object *us_read(const char *path);
static int	 us_from_bridge(const char *path, json_object *st,
		    struct unitystatus_id *);
static int	 us_find_bridge(int port, struct unitystatus_id *);
static int	 us_from_project(const char *dir, struct unitystatus_id *);
static json_object *us_json(struct unitystatus *);
static int	 us_replace(struct unitystatus *, const char *name,
		    const char *text);
static void	 us_tick(evutil_socket_t, short, void *);

/* $HOME/.unity-mcp, where the editor's bridge writes.  Caller frees. */
static char *
us_editor_dir(void)
{
	const char	*home = getenv("HOME");

	if (home == NULL || *home == '\0')
		return NULL;
	return xasprintf("%s/%s", home, UNITYSTATUS_EDITOR_DIR);
}

/* Whether name is unity-mcp-status-*.json. */
static int
us_is_name(const char *name)
{
	size_t	n = strlen(name), p = strlen(US_PREFIX), s = strlen(US_SUFFIX);

	return n > p + s && strncmp(name, US_PREFIX, p) == 0 &&
	    strcmp(name + n - s, US_SUFFIX) == 0;
}

/* A JSON object from path, or NULL.  Caller puts. */
static json_object *
us_read(const char *path)
{
	char		*buf;
	json_object	*o = NULL;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return NULL;
	buf = xmalloc(US_FILE_MAX + 1);
	n = read(fd, buf, US_FILE_MAX + 1);
	close(fd);
	if (n > 0 && n <= US_FILE_MAX &&
	    jstrict_parse(buf, (size_t)n, &o) == 0 &&
	    !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	free(buf);
	return o;
}

/* The bridge's status st, read from path: its name and project fields. */
static int
us_from_bridge(const char *path, json_object *st, struct unitystatus_id *id)
{
	static const char	*keep[] = { "project_path", "project_name",
				    "unity_version", "project_scoped_tools" };
	const char		*base = strrchr(path, '/');
	json_object		*v;
	size_t			 i;

	base = base != NULL ? base + 1 : path;
	if (!us_is_name(base) || strlen(base) >= sizeof(id->name))
		return -1;
	snprintf(id->name, sizeof(id->name), "%s", base);
	id->fields = json_object_new_object();
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (json_object_object_get_ex(st, keep[i], &v))
			json_object_object_add(id->fields, keep[i],
			    json_object_get(v));
	return 0;
}

/* The status file in the editor's directory whose unity_port is port. */
static int
us_find_bridge(int port, struct unitystatus_id *id)
{
	DIR		*d;
	struct dirent	*e;
	json_object	*st, *p;
	char		*dir, *path;
	int		 rc = -1;

	if (port <= 0 || (dir = us_editor_dir()) == NULL)
		return -1;
	if ((d = opendir(dir)) == NULL) {
		free(dir);
		return -1;
	}
	while (rc == -1 && (e = readdir(d)) != NULL) {
		if (!us_is_name(e->d_name))
			continue;
		path = xasprintf("%s/%s", dir, e->d_name);
		if ((st = us_read(path)) != NULL &&
		    json_object_object_get_ex(st, "unity_port", &p) &&
		    json_object_is_type(p, json_type_int) &&
		    json_object_get_int64(p) == port)
			rc = us_from_bridge(path, st, id);
		json_object_put(st);
		free(path);
	}
	closedir(d);
	free(dir);
	return rc;
}

/* The editor version of ProjectSettings/ProjectVersion.txt, or NULL. */
static json_object *
us_project_version(const char *root)
{
	char	*path = xasprintf("%s/%s", root, US_VERSION_FILE);
	char	 line[256], *v, *end;
	FILE	*f = fopen(path, "re");
	json_object *o = NULL;

	free(path);
	if (f == NULL)
		return NULL;
	while (o == NULL && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, US_VERSION_KEY, strlen(US_VERSION_KEY)) != 0)
			continue;
		for (v = line + strlen(US_VERSION_KEY); *v == ' '; v++)
			;
		for (end = v; *end != '\0' && *end != '\r' && *end != '\n' &&
		    *end != ' '; end++)
			;
		*end = '\0';
		if (*v != '\0' && util_utf8_len(v) != (size_t)-1)
			o = json_object_new_string(v);
	}
	fclose(f);
	return o;
}

/* --unity-project DIR: the bridge's hash of DIR/Assets, its fields. */
static int
us_from_project(const char *dir, struct unitystatus_id *id)
{
	char		 root[PATH_MAX], hash[9], *assets;
	const char	*name;
	json_object	*ver;

	if (realpath(dir, root) == NULL)
		return -1;
	assets = xasprintf("%s%sAssets", root, strcmp(root, "/") ? "/" : "");
	digest_sha1_hex8(assets, hash);
	snprintf(id->name, sizeof(id->name), "%s%s%s", US_PREFIX, hash,
	    US_SUFFIX);
	name = strrchr(root, '/') + 1;
	id->fields = json_object_new_object();
	json_object_object_add(id->fields, "project_path",
	    json_object_new_string(assets));
	json_object_object_add(id->fields, "project_name",
	    json_object_new_string(*name != '\0' ? name : "Unknown"));
	if ((ver = us_project_version(root)) != NULL)
		json_object_object_add(id->fields, "unity_version", ver);
	free(assets);
	return 0;
}

int
unitystatus_identify(const struct options *opt, int bridge_port,
    struct unitystatus_id *id)
{
	json_object	*st;
	int		 rc;

	memset(id, 0, sizeof(*id));
	if (opt->unity_bridge_status != NULL) {
		if ((st = us_read(opt->unity_bridge_status)) != NULL) {
			rc = us_from_bridge(opt->unity_bridge_status, st, id);
			json_object_put(st);
			if (rc == 0)
				return 0;
		}
	} else if (us_find_bridge(bridge_port, id) == 0)
		return 0;
	if (opt->unity_project != NULL)
		return us_from_project(opt->unity_project, id);
	return -1;
}

/*
 * Whoever else may write in the directory could plant a link at the name
 * a root broker writes, or rewrite the file and send agents elsewhere:
 * the state dir's rules (main.c), and no symlink.
 */
static const struct util_perm us_dir_perm = {
	"--unity-status-dir", S_IWGRP | S_IWOTH, "write in it",
	"chmod go-w it, or give a directory of the broker's own"
};

/* Whether the directory fd is path (which must exist). */
static int
us_same_dir(int fd, const char *path)
{
	struct stat	sa, sb;

	return fstat(fd, &sa) == 0 && stat(path, &sb) == 0 &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether fd is where the editor's bridge writes its own file. */
static int
us_editors(const struct options *opt, int fd)
{
	char	*editor, *bdir, *slash;
	int	 same;

	editor = us_editor_dir();
	same = editor != NULL && us_same_dir(fd, editor);
	free(editor);
	if (!same && opt->unity_bridge_status != NULL) {
		bdir = xstrdup(opt->unity_bridge_status);
		if ((slash = strrchr(bdir, '/')) != NULL)
			*slash = '\0';
		same = us_same_dir(fd, slash != NULL ? (*bdir ? bdir : "/") :
		    ".");
		free(bdir);
	}
	return same;
}

int
unitystatus_open_dir(const struct options *opt, char *err, size_t errlen)
{
	const char	*dir = opt->unity_status_dir;
	int		 fd;

	if (dir == NULL) {
		snprintf(err, errlen, "no --unity-status-dir");
		return -1;
	}
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "--unity-status-dir %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if ((fd = util_dir_open(&us_dir_perm, dir, 1, err, errlen)) == -1)
		return -1;
	if (us_editors(opt, fd)) {
		snprintf(err, errlen, "--unity-status-dir %s is where the "
		    "editor's bridge writes its own status file: give the "
		    "face a directory of its own (the agents' servers then "
		    "find cmdgate, not the editor)", dir);
		close(fd);
		return -1;
	}
	return fd;
}

struct unitystatus *
unitystatus_new(struct event_base *base, const struct options *opt, int dirfd,
    int port, int bridge_port)
{
	struct unitystatus	*us = xcalloc(1, sizeof(*us));
	struct timeval		 tv = { 0, UNITYSTATUS_EVERY_MS * 1000 };

	us->opt = opt;
	us->dirfd = dirfd;
	us->port = port;
	us->bridge_port = bridge_port;
	if (base != NULL) {
		if ((us->ev = event_new(base, -1, EV_PERSIST, us_tick,
		    us)) == NULL)
			fatalx("event_new");
		evtimer_add(us->ev, &tv);
	}
	unitystatus_write(us);
	return us;
}

void
unitystatus_free(struct unitystatus *us)
{
	if (us == NULL)
		return;
	if (us->ev != NULL)
		event_free(us->ev);
	if (us->written != NULL && unlinkat(us->dirfd, us->written, 0) == -1 &&
	    errno != ENOENT)
		log_warn("unlink %s/%s", us->opt->unity_status_dir,
		    us->written);
	free(us->written);
	close(us->dirfd);
	json_object_put(us->last.fields);
	free(us);
}

void
unitystatus_set_reloading(struct unitystatus *us, int reloading)
{
	if (us == NULL || us->reloading == !!reloading)
		return;
	us->reloading = !!reloading;
	unitystatus_write(us);
}

static void
us_tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	unitystatus_write(arg);
}

/* The file's object, with the real bridge's fields in its order. */
static json_object *
us_json(struct unitystatus *us)
{
	json_object	*o = json_object_new_object();
	char		 when[UTIL_TIMESTAMP_LEN];

	util_timestamp(when, util_now_ms());
	json_object_object_add(o, "unity_port", json_object_new_int(us->port));
	json_object_object_add(o, "reloading",
	    json_object_new_boolean(us->reloading));
	json_object_object_add(o, "reason", json_object_new_string(
	    us->reloading ? "reloading" : "ready"));
	json_object_object_add(o, "seq", json_object_new_int64(
	    (int64_t)++us->seq));
	json_object_object_foreach(us->last.fields, k, v)
		json_object_object_add(o, k, json_object_get(v));
	json_object_object_add(o, "last_heartbeat",
	    json_object_new_string(when));
	return o;
}

/*
 * A new NAME.tmp in the directory: O_EXCL and O_NOFOLLOW, so that nothing
 * found at that name (a file left by a crash, a planted link) is ever
 * written through; what is there is removed (the link itself) once.
 */
static int
us_create_tmp(struct unitystatus *us, const char *tmp)
{
	int	fd, tries;

	for (tries = 0; tries < 2; tries++) {
		fd = openat(us->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd != -1 || errno != EEXIST ||
		    unlinkat(us->dirfd, tmp, 0) == -1)
			break;
	}
	return fd;
}

/* Replace the directory's name whole with text (a temporary, renamed). */
static int
us_replace(struct unitystatus *us, const char *name, const char *text)
{
	char	*tmp = xasprintf("%s.tmp", name);
	size_t	 len = strlen(text);
	int	 fd, rc = -1;

	if ((fd = us_create_tmp(us, tmp)) != -1) {
		if (write(fd, text, len) == (ssize_t)len && close(fd) == 0)
			rc = renameat(us->dirfd, tmp, us->dirfd, name);
		else
			close(fd);
	}
	if (rc == -1) {
		log_warn("unity status file %s/%s", us->opt->unity_status_dir,
		    name);
		(void)unlinkat(us->dirfd, tmp, 0);
	}
	free(tmp);
	return rc;
}

int
unitystatus_write(struct unitystatus *us)
{
	struct unitystatus_id	 id;
	json_object		*o;
	int			 rc;

	if (unitystatus_identify(us->opt, us->bridge_port, &id) == 0) {
		json_object_put(us->last.fields);
		us->last = id;
	} else if (us->last.fields == NULL) {
		if (!us->told++)
			log_warnx("unity status file: no project known yet "
			    "(no bridge status file, no --unity-project); "
			    "written once one is");
		return 1;
	}
	if (us->written != NULL && strcmp(us->written, us->last.name) != 0)
		(void)unlinkat(us->dirfd, us->written, 0);
	o = us_json(us);
	rc = us_replace(us, us->last.name, jstrict_to_string(o));
	json_object_put(o);
	free(us->written);
	us->written = xstrdup(us->last.name);
	return rc;
}
