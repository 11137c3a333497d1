/* SPDX-License-Identifier: ISC */
/*
 * The broker's instance file, RUNDIR/NAME.json: its pid, endpoints and
 * where its token lives, written once it listens and removed at stop
 * (cmdgated(8), FILES; cmdgate(1) --instance and instances).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "instance.h"
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
