/* SPDX-License-Identifier: ISC */
/*
 * Finding a broker by its instance file (cmdgate(1), --instance and
 * instances): the file names its endpoints and token file; a broker is
 * live when its pid is and its endpoint answers ping.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <libgen.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "addr.h"
#include "cli.h"
#include "runfile.h"
#include "token.h"
#include "util.h"

static char	*instance_path(const struct cli *, const char *);
static int	 answers(json_object *);

static const char *
member(json_object *o, const char *key)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The first plain TCP address of the file o, split into t; 0 or -1. */
static int
target_tcp(json_object *o, struct client_target *t, char *host, size_t len)
{
	json_object	*a, *v;
	const char	*s, *port;
	size_t		 i;

	if (!json_object_object_get_ex(o, "listen", &a) ||
	    !json_object_is_type(a, json_type_array))
		return -1;
	for (i = 0; i < json_object_array_length(a); i++) {
		v = json_object_array_get_idx(a, i);
		/* The port is the resolver's to refuse, or --port's check. */
		if ((s = json_object_get_string(v)) == NULL ||
		    strchr(s, '@') != NULL ||
		    addr_split(s, host, len, &port) == -1)
			continue;
		t->host = host;
		t->port = port;
		return 0;
	}
	return -1;
}

/* Aim t at the broker of the file o (which keeps the strings): 0/-1. */
static int
target_of(json_object *o, struct client_target *t, char *host, size_t len)
{
	const char	*s;

	if ((s = member(o, "token_file")) != NULL && t->token_file == NULL)
		t->token_file = s;
	if ((s = member(o, "state_dir")) != NULL && t->state_dir == NULL)
		t->state_dir = s;
	if ((s = member(o, "socket")) != NULL) {
		t->socket = s;
		return 0;
	}
	t->socket = NULL;
	return target_tcp(o, t, host, len);
}

static int
pid_alive(json_object *o)
{
	json_object	*v;
	int64_t		 pid;

	if (!json_object_object_get_ex(o, "pid", &v) ||
	    (pid = json_object_get_int64(v)) <= 0 || pid > INT32_MAX)
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* Whether path is "DIR/NAME/NAME.json" (a system unit's own directory,
 * RuntimeDirectory=cmdgate/NAME), not "DIR/NAME.json". */
static int
instance_nested(const char *path)
{
	const char	*f = strrchr(path, '/'), *d;
	size_t		 n;

	if (f == NULL || f == path)
		return 0;
	for (d = f - 1; d > path && *d != '/'; d--)
		;
	n = (size_t)(f - d - 1);
	return *d == '/' && strlen(f + 1) == n + 5 &&
	    strncmp(d + 1, f + 1, n) == 0 && strcmp(f + 1 + n, ".json") == 0;
}

/*
 * The file names a token to send to an endpoint: one that others may
 * write, or in a directory others may write, is refused (-1, errno).
 */
static int
trusted(const char *path)
{
	struct stat	 st;
	char		*copy, *dir;
	int		 rc, nested;

	if (stat(path, &st) == -1)
		return -1;
	copy = xstrdup(path);
	dir = dirname(copy);
	nested = instance_nested(path);
	rc = (st.st_mode & (S_IWGRP | S_IWOTH)) == 0 &&
	    stat(dir, &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0 &&
	    (!nested || (stat(dirname(dir), &st) == 0 &&
	    (st.st_mode & (S_IWGRP | S_IWOTH)) == 0)) ? 0 : -1;
	free(copy);
	if (rc == -1)
		errno = EPERM;
	return rc;
}

/* Drop member key of o (the file at path, owned by uid) when the token
 * it leads to (its value, then suffix) exists and another user owns it. */
static void
instance_own(json_object *o, const char *path, uid_t uid, const char *key,
    const char *suffix)
{
	struct stat	 st;
	const char	*v;
	char		*tok;

	if ((v = member(o, key)) == NULL)
		return;
	tok = xasprintf("%s%s", v, suffix);
	if (stat(tok, &st) == 0 && st.st_uid != uid) {
		fprintf(stderr, "cmdgate: %s: the token %s is not its owner's: "
		    "not read\n", path, cli_vis(tok));
		json_object_object_del(o, key);
	}
	free(tok);
}

/*
 * The instance file at path, when trusted (NULL otherwise, errno set).
 * Its token file is kept only when the file's own owner owns it too: a
 * broker names its own token, and a file its user could rewrite (a
 * system unit's, whose tools run as that user) must not make cmdgate read
 * and send another user's file.  Caller puts.
 */
static json_object *
instance_read(const char *path)
{
	struct stat	 fst;
	json_object	*o;

	if (trusted(path) == -1 || stat(path, &fst) == -1 ||
	    (o = runfile_read(path)) == NULL)
		return NULL;
	instance_own(o, path, fst.st_uid, "token_file", "");
	instance_own(o, path, fst.st_uid, "state_dir", "/" TOKEN_NAME);
	return o;
}

int
cli_instance_use(struct cli *cl, const char *name)
{
	static char	 host[256];
	char		*path;

	if (!runfile_name_ok(name))
		return cli_usage_error("instance '%s' is not 1 to 64 of "
		    "A-Z a-z 0-9 . _ -", name);
	path = instance_path(cl, name);
	if ((cl->inst = instance_read(path)) == NULL) {
		fprintf(stderr, "cmdgate: instance %s: %s: %s (is cmdgated "
		    "--instance %s running?)\n", name, path, strerror(errno),
		    name);
		free(path);
		return CX_USAGE;
	}
	free(path);
	/* Named as it was found (mcp-config), whatever the file says. */
	json_object_object_add(cl->inst, "instance",
	    json_object_new_string(name));
	if (target_of(cl->inst, &cl->t, host, sizeof(host)) == -1) {
		fprintf(stderr, "cmdgate: instance %s: its file names no "
		    "endpoint\n", name);
		return CX_USAGE;
	}
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(json_object_get_string(*(json_object * const *)a),
	    json_object_get_string(*(json_object * const *)b));
}

#define SYSTEM_RUNDIR	"/run/cmdgate"

/* The dirs searched, NULL-ended: the user's, then the system's. */
static void
rundirs(const struct cli *cl, char *dirs[3])
{
	dirs[0] = runfile_dir(cl->t.state_dir);
	dirs[1] = strcmp(dirs[0], SYSTEM_RUNDIR) != 0 &&
	    getenv("CMDGATE_RUNTIME_DIR") == NULL ? xstrdup(SYSTEM_RUNDIR) :
	    NULL;
	dirs[2] = NULL;
}

/* The file of instance name in dir, NAME.json or NAME/NAME.json, or
 * NULL when there is none.  Caller frees. */
static char *
instance_in(const char *dir, const char *name)
{
	char	*p = xasprintf("%s/%s.json", dir, name);

	if (access(p, F_OK) == 0)
		return p;
	free(p);
	p = xasprintf("%s/%s/%s.json", dir, name, name);
	if (access(p, F_OK) == 0)
		return p;
	free(p);
	return NULL;
}

/* The file of instance name: the user's, else the system's if it is
 * there (the user's path when neither is).  Caller frees. */
static char *
instance_path(const struct cli *cl, const char *name)
{
	char	*dirs[3], *p;

	rundirs(cl, dirs);
	if ((p = instance_in(dirs[0], name)) == NULL && dirs[1] != NULL)
		p = instance_in(dirs[1], name);
	if (p == NULL)
		p = xasprintf("%s/%s.json", dirs[0], name);
	free(dirs[0]);
	free(dirs[1]);
	return p;
}

static int
has_name(json_object *a, const char *name, size_t len)
{
	const char	*s;
	size_t		 i;

	for (i = 0; i < json_object_array_length(a); i++) {
		s = json_object_get_string(json_object_array_get_idx(a, i));
		if (strlen(s) == len && strncmp(s, name, len) == 0)
			return 1;
	}
	return 0;
}

/*
 * NAME of the file "NAME.json" into name, when --instance takes it: 1,
 * else 0 (no broker's file: its name may hold anything, controls too).
 */
static int
json_name(const char *file, char name[RUNFILE_NAME_MAX + 1])
{
	size_t	n = strlen(file);

	if (n <= 5 || n - 5 > RUNFILE_NAME_MAX ||
	    strcmp(file + n - 5, ".json") != 0)
		return 0;
	memcpy(name, file, n - 5);
	name[n - 5] = '\0';
	return runfile_name_ok(name);
}

/* Add the names of the instance files in dir to a. */
static void
dir_names(json_object *a, const char *dir)
{
	struct dirent	*de;
	DIR		*d;
	char		*p, name[RUNFILE_NAME_MAX + 1];
	size_t		 n;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (json_name(de->d_name, name)) {
			if (!has_name(a, name, strlen(name)))
				json_object_array_add(a,
				    json_object_new_string(name));
		} else if (de->d_name[0] != '.' && runfile_name_ok(de->d_name) &&
		    !has_name(a, de->d_name, n)) {
			p = xasprintf("%s/%s/%s.json", dir, de->d_name,
			    de->d_name);
			if (access(p, F_OK) == 0)
				json_object_array_add(a,
				    json_object_new_string(de->d_name));
			free(p);
		}
	}
	closedir(d);
}

/* The names of the instance files, sorted. */
static json_object *
instance_names(const struct cli *cl)
{
	json_object	*a = json_object_new_array();
	char		*dirs[3];

	rundirs(cl, dirs);
	dir_names(a, dirs[0]);
	if (dirs[1] != NULL)
		dir_names(a, dirs[1]);
	free(dirs[0]);
	free(dirs[1]);
	json_object_array_sort(a, name_cmp);
	return a;
}

void
cli_instance_default(struct cli *cl)
{
	json_object	*names, *o;
	const char	*name, *found = NULL;
	char		*path;
	size_t		 i, live = 0;

	names = instance_names(cl);
	for (i = 0; i < json_object_array_length(names); i++) {
		name = json_object_get_string(json_object_array_get_idx(names,
		    i));
		path = instance_path(cl, name);
		o = instance_read(path);
		free(path);
		/* A pid may be another process's by now (pid 1 after a
		 * reboot): only a broker that answers counts. */
		if (o != NULL && pid_alive(o) && answers(o) && live++ == 0)
			found = name;
		json_object_put(o);
	}
	if (live == 1 && runfile_name_ok(found))
		(void)cli_instance_use(cl, found);
	json_object_put(names);
}

/* Does the broker of the file o answer ping? */
static int
answers(json_object *o)
{
	struct client_target	 t;
	struct client_client	 c;
	json_object		*r, *err = NULL;
	char			 host[256];
	int			 ok;

	memset(&t, 0, sizeof(t));
	memset(&c, 0, sizeof(c));
	c.fd = -1;
	t.reply_timeout_ms = 2000;
	if (target_of(o, &t, host, sizeof(host)) == -1 ||
	    client_connect(&c, &t) != 0) {
		client_close(&c);
		return 0;
	}
	r = client_call(&c, "ping", NULL, &err);
	ok = r != NULL;
	json_object_put(r);
	json_object_put(err);
	client_close(&c);
	return ok;
}

/* The row of instance name: {instance, state, file, and the file's}. */
static json_object *
instance_row(const struct cli *cl, const char *name, int prune)
{
	json_object	*o, *row;
	char		*path;
	int		 live;

	path = instance_path(cl, name);
	if ((o = runfile_read(path)) == NULL)
		row = json_object_new_object();
	else
		row = json_object_get(o);
	live = o != NULL && trusted(path) == 0 && pid_alive(o) && answers(o);
	json_object_object_add(row, "instance", json_object_new_string(name));
	json_object_object_add(row, "state",
	    json_object_new_string(live ? "live" : "stale"));
	json_object_object_add(row, "file", json_object_new_string(path));
	/* A broker that is alive but does not answer (stopped, busy) keeps
	 * its file. */
	if (!live && prune && (o == NULL || !pid_alive(o)) &&
	    unlink(path) == 0)
		json_object_object_add(row, "pruned",
		    json_object_new_boolean(1));
	json_object_put(o);
	free(path);
	return row;
}

/* One row of the table; the file's strings shown safely (cli_vis()). */
static void
instance_print(json_object *row)
{
	json_object	*pid = json_object_object_get(row, "pid");
	const char	*ep = member(row, "socket");
	const char	*at = member(row, "started_at");

	if (ep == NULL)
		ep = json_object_get_string(json_object_array_get_idx(
		    json_object_object_get(row, "listen"), 0));
	printf("%-16s %-8s %-7lld %-24s %s\n", member(row, "instance"),
	    member(row, "state"), (long long)json_object_get_int64(pid),
	    ep != NULL ? cli_vis(ep) : "-", at != NULL ? cli_vis(at) : "-");
}

int
cmd_instances(struct cli *cl, int argc, char **argv)
{
	json_object	*names, *rows, *out;
	size_t		 i;
	int		 prune = 0;

	if (argc == 2 && strcmp(argv[1], "--prune") == 0)
		prune = 1;
	else if (argc != 1)
		return cli_usage_error("instances takes only --prune%s", "");
	names = instance_names(cl);
	rows = json_object_new_array();
	for (i = 0; i < json_object_array_length(names); i++)
		json_object_array_add(rows, instance_row(cl,
		    json_object_get_string(json_object_array_get_idx(names,
		    i)), prune));
	json_object_put(names);
	if (cl->json) {
		out = json_object_new_object();
		json_object_object_add(out, "instances", rows);
		cli_print_json(out);
		json_object_put(out);
		return 0;
	}
	printf("%-16s %-8s %-7s %-24s %s\n", "INSTANCE", "STATE", "PID",
	    "ENDPOINT", "STARTED");
	for (i = 0; i < json_object_array_length(rows); i++)
		instance_print(json_object_array_get_idx(rows, i));
	json_object_put(rows);
	return 0;
}
