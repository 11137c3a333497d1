/* SPDX-License-Identifier: ISC */
/*
 * The broker's instance file, RUNDIR/NAME.json: its pid, endpoints and
 * where its token lives, written once it listens and removed at stop
 * (cmdgated(8), FILES; cmdgate(1) --instance and instances).
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "daemon.h"
#include "log.h"
#include "options.h"
#include "runfile.h"
#include "server.h"
#include "token.h"
#include "util.h"

static char	*published;	/* the file written, to remove at stop */

/* The TCP listen addresses of srv (those of no socket nor HTTP). */
static json_object *
instance_listen(struct server *srv)
{
	json_object	*a = json_object_new_array();
	const char	*s;
	size_t		 i;

	for (i = 0; i < json_object_array_length(srv->listen_addrs); i++) {
		s = json_object_get_string(json_object_array_get_idx(
		    srv->listen_addrs, i));
		if (strncmp(s, "unix:", 5) != 0 && strncmp(s, "http@", 5) != 0)
			json_object_array_add(a, json_object_new_string(s));
	}
	return a;
}

static json_object *
instance_json(struct server *srv)
{
	const struct options	*opt = srv->opt;
	json_object		*o = json_object_new_object();
	char			 ts[UTIL_TIMESTAMP_LEN], *tok;

	json_object_object_add(o, "instance",
	    json_object_new_string(opt->instance));
	json_object_object_add(o, "pid", json_object_new_int64(getpid()));
	json_object_object_add(o, "listen", instance_listen(srv));
	if (opt->socket_path != NULL)
		json_object_object_add(o, "socket",
		    json_object_new_string(opt->socket_path));
	if (opt->http != NULL)
		json_object_object_add(o, "http",
		    json_object_new_string(opt->http));
	tok = opt->no_auth ? NULL : opt->token_file != NULL ?
	    xstrdup(opt->token_file) :
	    xasprintf("%s/%s", opt->state_dir, TOKEN_NAME);
	json_object_object_add(o, "token_file",
	    tok != NULL ? json_object_new_string(tok) : NULL);
	free(tok);
	json_object_object_add(o, "state_dir",
	    json_object_new_string(opt->state_dir));
	util_timestamp(ts, util_now_ms());
	json_object_object_add(o, "started_at", json_object_new_string(ts));
	return o;
}

int
instance_name(struct options *opt, char *err, size_t errlen)
{
	if (opt->instance == NULL)
		opt->instance = xstrdup("default");
	if (runfile_name_ok(opt->instance))
		return 0;
	snprintf(err, errlen, "--instance: '%s' is not 1 to %d of "
	    "A-Z a-z 0-9 . _ -", opt->instance, RUNFILE_NAME_MAX);
	return -1;
}

/*
 * Whether the broker of instance file o is alive: its pid runs and, when
 * its state dir's lock can be read, holds it (a pid taken since by
 * another process does not).  Of our own state dir, whose lock we hold,
 * it is not.
 */
static int
instance_live(const struct options *opt, json_object *o)
{
	const char	*dir;
	char		*lock;
	int64_t		 pid;
	int		 fd, held;

	pid = json_object_get_int64(json_object_object_get(o, "pid"));
	if (pid <= 0 || pid > INT32_MAX || pid == (int64_t)getpid() ||
	    (kill((pid_t)pid, 0) == -1 && errno != EPERM))
		return 0;
	if ((dir = json_object_get_string(json_object_object_get(o,
	    "state_dir"))) == NULL)
		return 1;
	if (strcmp(dir, opt->state_dir) == 0)
		return 0;
	lock = xasprintf("%s/lock", dir);
	fd = open(lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(lock);
	if (fd == -1)
		return errno != ENOENT;	/* none there; else unknown */
	held = flock(fd, LOCK_SH | LOCK_NB) == -1 && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

int
instance_check(const struct options *opt, char *err, size_t errlen)
{
	json_object	*o, *l;
	char		*path = runfile_path(opt->state_dir, opt->instance);
	int		 rc = 0;

	if ((o = runfile_read(path)) != NULL && instance_live(opt, o)) {
		l = json_object_object_get(o, "listen");
		snprintf(err, errlen, "--instance %s: a live broker has that "
		    "name (pid %lld, %s, state dir %s, file %s): stop it, or "
		    "give this one another --instance", opt->instance,
		    (long long)json_object_get_int64(json_object_object_get(o,
		    "pid")), json_object_array_length(l) > 0 ?
		    json_object_get_string(json_object_array_get_idx(l, 0)) :
		    "no TCP address", json_object_get_string(
		    json_object_object_get(o, "state_dir")), path);
		rc = -1;
	}
	json_object_put(o);
	free(path);
	return rc;
}

int
instance_publish(struct server *srv)
{
	json_object	*o;
	char		*dir;
	int		 rc;

	dir = runfile_dir(srv->opt->state_dir);
	if (mkdir(dir, geteuid() == 0 ? 0755 : 0700) == -1 &&
	    errno != EEXIST) {
		log_warn("instance file: mkdir %s", dir);
		free(dir);
		return -1;
	}
	free(dir);
	published = runfile_path(srv->opt->state_dir, srv->opt->instance);
	o = instance_json(srv);
	if ((rc = runfile_write(published, o)) == -1) {
		log_warn("instance file %s", published);
		free(published);
		published = NULL;
	}
	json_object_put(o);
	return rc;
}

void
instance_withdraw(struct server *srv)
{
	json_object	*o;

	(void)srv;
	if (published == NULL)
		return;
	/* Another broker of the same name may have written it since. */
	if ((o = runfile_read(published)) != NULL &&
	    json_object_get_int64(json_object_object_get(o, "pid")) !=
	    (int64_t)getpid()) {
		log_warnx("instance file %s: another broker's now, kept",
		    published);
		json_object_put(o);
		free(published);
		published = NULL;
		return;
	}
	json_object_put(o);
	if (unlink(published) == -1 && errno != ENOENT)
		log_warn("instance file: unlink %s", published);
	free(published);
	published = NULL;
}
