/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "authlimit.h"
#include "conn.h"
#include "jobs.h"
#include "log.h"
#include "rpc.h"
#include "server.h"
#include "tools.h"
#include "util.h"

void
server_init(struct server *srv, struct event_base *base, struct options *opt,
    struct tooltab *tools)
{
	memset(srv, 0, sizeof(*srv));
	srv->base = base;
	srv->opt = opt;
	srv->tools = tools;
	srv->started_ms = util_monotonic_ms();
	TAILQ_INIT(&srv->conns);
	TAILQ_INIT(&srv->flushq);
	srv->listen_addrs = json_object_new_array();
	srv->store_path = xasprintf("%s/store", opt->state_dir);
}

void
server_free(struct server *srv)
{
	struct conn	*c;

	while ((c = TAILQ_FIRST(&srv->conns)) != NULL)
		conn_free(c);
	jobs_free(srv->jobs);
	srv->jobs = NULL;
	tooltab_free(srv->tools);
	authlimit_free(srv->authlimit);
	json_object_put(srv->listen_addrs);
	if (srv->token != NULL)
		explicit_bzero(srv->token, srv->tokenlen);
	free(srv->token);
	free(srv->worker_path);
	free(srv->store_path);
}

int
server_load_token(struct server *srv, const char *path, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		 buf[SERVER_TOKEN_MAX + 2], *s, *e;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1) {
		snprintf(err, errlen, "--token-file %s: %s", path,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errlen, "--token-file %s: mode %04o lets group "
		    "or others read it; chmod 600 it", path,
		    (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "--token-file %s: %s", path,
		    strerror(errno));
		return -1;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (s = buf; *s == ' ' || *s == '\t' || *s == '\r'; s++)
		;
	for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t' ||
	    e[-1] == '\r'); e--)
		;
	*e = '\0';
	if (*s == '\0' || e - s > SERVER_TOKEN_MAX) {
		snprintf(err, errlen, "--token-file %s: the first line must "
		    "hold a token of 1 to %d bytes", path, SERVER_TOKEN_MAX);
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	free(srv->token);
	srv->token = xstrdup(s);
	srv->tokenlen = (size_t)(e - s);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

/* Time depends only on the length of what the client sent. */
int
server_token_ok(const struct server *srv, const char *given, size_t n)
{
	volatile unsigned char	d;
	size_t			i;

	if (srv->token == NULL)
		return 1;
	d = srv->tokenlen != n;
	for (i = 0; i < n; i++)
		d |= (unsigned char)given[i] ^
		    (unsigned char)srv->token[i % srv->tokenlen];
	return d == 0;
}

void
server_busy(const struct server *srv, struct editor_flags *b)
{
	struct conn	*c;

	memset(b, 0, sizeof(*b));
	TAILQ_FOREACH(c, &srv->conns, entry) {
		b->tests_running |= c->editor.tests_running;
		b->compiling |= c->editor.compiling;
		b->busy |= c->editor.busy;
	}
}

void
server_busy_changed(struct server *srv)
{
	if (srv->jobs != NULL)
		jobs_schedule(srv->jobs);
}

void
server_jobs_stopped(struct server *srv)
{
	if (srv->stopping && srv->nconns == 0)
		event_base_loopexit(srv->base, NULL);
}

void
server_broadcast(struct server *srv, json_object *msg)
{
	struct conn	*c;

	/* A client that has not authenticated hears nothing unasked. */
	TAILQ_FOREACH(c, &srv->conns, entry)
		if (!c->closing && !conn_needs_auth(c))
			conn_send(c, msg);
}

void
server_set_tools(struct server *srv, struct tooltab *tab)
{
	char		 ts[UTIL_TIMESTAMP_LEN];
	json_object	*p, *n;
	int		 changed;

	changed = srv->tools == NULL || !tooltab_same(srv->tools, tab);
	tooltab_free(srv->tools);
	srv->tools = tab;
	if (!changed) {
		log_info("tool table %s unchanged (%zu tools)", tab->source,
		    tab->ntools);
		return;
	}
	log_info("tool table %s loaded (%zu tools)", tab->source,
	    tab->ntools);
	util_timestamp(ts, util_now_ms());
	p = json_object_new_object();
	json_object_object_add(p, "timestamp", json_object_new_string(ts));
	n = rpc_notification("notifications/tools/list_changed", p);
	server_broadcast(srv, n);
	json_object_put(n);
}

int
server_reload_tools(struct server *srv)
{
	struct tooltab	*tab;
	char		 err[1024];

	if (srv->opt->tools_file == NULL)
		tab = tooltab_default();
	else if (tooltab_load_file(srv->opt->tools_file, &tab, err,
	    sizeof(err)) == -1) {
		log_warnx("tool table refused, keeping the old one: %s", err);
		return -1;
	}
	server_set_tools(srv, tab);
	return 0;
}
