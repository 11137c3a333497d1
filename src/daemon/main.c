/* SPDX-License-Identifier: ISC */
/*
 * cmdgated: parse flags, load the configuration, open the listeners and
 * run the loop.  Everything else lives in its own file.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon.h"
#include "daemon.h"
#include "engine.h"
#include "faces.h"
#include "link.h"
#include "log.h"
#include "methods.h"
#include "proc.h"
#include "server.h"
#include "token.h"
#include "tools.h"
#include "util.h"

/* Exit statuses, from sysexits(3); cmdgated(8) lists them. */
#define EXIT_USAGE	64	/* bad flag or value */
#define EXIT_UNAVAIL	69	/* a listen address cannot be bound */
#define EXIT_TEMPFAIL	75	/* another broker holds the state dir */
#define EXIT_CONFIG	78	/* bad tool table, token file, state dir */

#define LOCK_NAME	"lock"	/* in the state dir, flock(2)ed for life */
#define LOCK_WAIT_MS	2000	/* for a dead holder's last child */
#define LOCK_POLL_MS	10

static int	lock_fd = -1;

static int	state_dir_prepare(const char *, char *, size_t);
static int	state_dir_check(const char *, char *, size_t);
static int	state_dir_lock(const char *, char *, size_t);
static int	lock_take(int, char *, size_t);
static int	auth_prepare(struct server *, struct options *, char *,
		    size_t);
static void	raise_nofile(void);
static void	on_sighup(evutil_socket_t, short, void *);
static void	on_sigterm(evutil_socket_t, short, void *);
static void	notify_status(struct server *);
static int	configure(struct server *, struct options *);
static int	serve(struct server *);

/* mkdir -p, each new directory 0700; the last one is made 0700 too. */
static int
state_dir_prepare(const char *dir, char *err, size_t errlen)
{
	char	*p, *path = xstrdup(dir);

	for (p = path + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (*p == '/')
			*p = '\0';
		else
			p = NULL;
		if (mkdir(path, 0700) == -1 && errno != EEXIST) {
			snprintf(err, errlen, "state dir %s: cannot create "
			    "%s: %s", dir, path, strerror(errno));
			free(path);
			return -1;
		}
		if (p == NULL)
			break;
		*p = '/';
	}
	free(path);
	return state_dir_check(dir, err, errlen);
}

/*
 * Whoever else may write in the state dir could plant a token, a store or
 * a lock: it must be ours and closed to group and others.
 */
static const struct util_perm state_dir_perm = {
	"state dir", S_IWGRP | S_IWOTH, "write in it", "chmod 700 it"
};

static int
state_dir_check(const char *dir, char *err, size_t errlen)
{
	struct stat	st;
	int		fd;

	if ((fd = util_dir_open(&state_dir_perm, dir, 0, err, errlen)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || ((st.st_mode & 077) != 0 &&
	    fchmod(fd, 0700) == -1)) {
		snprintf(err, errlen, "state dir %s: chmod 0700: %s", dir,
		    strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (access(dir, R_OK | W_OK | X_OK) == -1) {
		snprintf(err, errlen, "state dir %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * One broker per state dir: an exclusive flock(2) on STATE_DIR/lock, held
 * (close-on-exec, so no worker keeps it) until the broker exits, with the
 * holder's pid in it.  0, -1 with err, or -2 when another broker holds it.
 */
static int
state_dir_lock(const char *dir, char *err, size_t errlen)
{
	char	*path = xasprintf("%s/%s", dir, LOCK_NAME), pid[32];
	ssize_t	 n;
	int	 fd;

	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1) {
		snprintf(err, errlen, "lock file %s: %s", path,
		    strerror(errno));
		free(path);
		return -1;
	}
	if (lock_take(fd, pid, sizeof(pid)) == -1) {
		snprintf(err, errlen, "state dir %s is in use by another "
		    "cmdgated (pid %s holds %s); stop it, or give this one "
		    "another --state-dir", dir, pid[0] != '\0' ? pid : "?",
		    path);
		close(fd);
		free(path);
		return -2;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == -1 || pwrite(fd, pid, (size_t)n, 0) != n)
		log_warn("lock file %s: cannot write the pid", path);
	free(path);
	lock_fd = fd;
	return 0;
}

/*
 * flock fd, or say who holds it (pid, from the file).  A broker killed
 * while it started a worker leaves the lock to that child until it execs
 * (it is close-on-exec): when the pid in the file is gone, wait a moment
 * for it.  0, or -1 with the holder's pid in pid ("" if unknown).
 */
static int
lock_take(int fd, char *pid, size_t len)
{
	struct timespec	 ts = { 0, LOCK_POLL_MS * 1000000L };
	ssize_t		 n;
	long		 holder;
	int		 waited = 0;

	while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EINTR)
			continue;
		n = errno == EWOULDBLOCK ? pread(fd, pid, len - 1, 0) : -1;
		pid[n > 0 ? (size_t)n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		holder = strtol(pid, NULL, 10);
		if (n <= 0 || holder <= 0 || kill((pid_t)holder, 0) == 0 ||
		    errno != ESRCH || waited >= LOCK_WAIT_MS)
			return -1;
		if (waited == 0)
			log_info("the state dir's lock outlives its broker "
			    "(pid %ld, gone): waiting up to %d ms for its "
			    "last child", holder, LOCK_WAIT_MS);
		nanosleep(&ts, NULL);
		waited += LOCK_POLL_MS;
	}
	return 0;
}

/*
 * TCP clients authenticate unless --no-auth: with --token-file's token,
 * else with STATE_DIR/token, made at first start and kept.
 */
static int
auth_prepare(struct server *srv, struct options *opt, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		*path;
	int		 rc;

	if (opt->no_auth) {
		log_info("--no-auth: TCP clients are not asked for a token");
		return 0;
	}
	if (opt->token_file != NULL)
		return server_load_token(srv, opt->token_file, err, errlen);
	path = xasprintf("%s/%s", opt->state_dir, TOKEN_NAME);
	if (lstat(path, &st) == -1 && errno == ENOENT) {
		if (opt->check_config) {
			free(path);
			return 0;	/* made at the first real start */
		}
		if (token_create(path, err, errlen) == -1) {
			free(path);
			return -1;
		}
		log_info("made a new token for TCP clients: %s", path);
	}
	rc = server_load_token(srv, path, err, errlen);
	free(path);
	return rc;
}

/* Client connections need descriptors: take all the hard limit allows. */
static void
raise_nofile(void)
{
	struct rlimit	rl;

	launch_save_nofile();	/* tools get the limit we were given */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			log_warn("setrlimit RLIMIT_NOFILE");
	}
}

static void
notify_status(struct server *srv)
{
	json_object	*a = srv->listen_addrs;
	char		 buf[512];
	size_t		 i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < json_object_array_length(a) && off < sizeof(buf); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s",
		    i > 0 ? " " : "", json_object_get_string(
		    json_object_array_get_idx(a, i)));
	sdnotify("READY=1\nSTATUS=listening on %s; %zu tools", buf,
	    srv->tools->ntools);
}

static void
on_sighup(evutil_socket_t sig, short ev, void *arg)
{
	struct server	*srv = arg;
	struct timespec	 ts;

	(void)sig;
	(void)ev;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sdnotify("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading the "
	    "tool table", (unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000);
	log_info("SIGHUP: rereading the tool table");
	server_reload_tools(srv);
	notify_status(srv);
}

static void
on_sigterm(evutil_socket_t sig, short ev, void *arg)
{
	struct server	*srv = arg;

	(void)ev;
	if (srv->stopping)
		return;
	log_info("%s: stopping", strsignal(sig));
	sdnotify("STOPPING=1\nSTATUS=stopping");
	srv->stopping = 1;
	if (srv->jobs != NULL)
		jobs_shutdown(srv->jobs);
	server_probe_stop(srv);
	listener_shutdown(srv);
	http_shutdown(srv);
}

/*
 * uLoopMCP's CLI checks every command's project with get-version's
 * DataPath: the table's get-version tool (the editor's) or
 * --unity-project give it; without either, say so once.
 */
static void
uloop_project_note(const struct options *opt, const struct tooltab *tab)
{
	size_t	i;

	if (opt->unity_project != NULL || tooltab_find(tab, "get-version") !=
	    NULL)
		return;
	for (i = 0; i < opt->nlisten; i++)
		if (strncmp(opt->listen[i], "uloop@", 6) == 0) {
			log_warnx("uloop face: no get-version tool in the "
			    "table and no --unity-project: the uloop CLI "
			    "will warn \"Could not verify project identity\" "
			    "on every command; give --unity-project DIR");
			return;
		}
}

/* Load what the flags name; 0, or an exit status with the cause logged. */
static int
configure(struct server *srv, struct options *opt)
{
	struct tooltab	*tab;
	char		 err[1024];

	if (opt->tools_file == NULL)
		tab = tooltab_default();
	else if (tooltab_load_file(opt->tools_file, &tab, err,
	    sizeof(err)) == -1) {
		log_errx("%s", err);
		return EXIT_CONFIG;
	}
	srv->tools = tab;
	uloop_project_note(opt, tab);
	if (state_dir_prepare(opt->state_dir, err, sizeof(err)) == -1)
		goto bad;
	if (!opt->check_config) {
		switch (state_dir_lock(opt->state_dir, err, sizeof(err))) {
		case -1:
			goto bad;
		case -2:
			log_errx("%s", err);
			return EXIT_TEMPFAIL;
		}
	}
	if (auth_prepare(srv, opt, err, sizeof(err)) == -1 ||
	    launch_find_worker(&srv->worker_path, err, sizeof(err)) == -1)
		goto bad;
	return 0;
bad:
	log_errx("%s", err);
	return EXIT_CONFIG;
}

/* Listen and run the loop until a signal stops it; the exit status. */
static int
serve(struct server *srv)
{
	static const int	 signals[] = { SIGHUP, SIGTERM, SIGINT };
	struct event		*sig[3] = { NULL, NULL, NULL };
	struct event_base	*base;
	char			 err[1024];
	size_t			 i;
	int			 rc = 0;

	raise_nofile();
	signal(SIGPIPE, SIG_IGN);
	log_route_libevent();
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	srv->base = base;
	/* Bound first: a port in use stops us before recovery runs. */
	if (listener_open(srv, err, sizeof(err)) == -1 ||
	    http_open(srv, err, sizeof(err)) == -1) {
		log_errx("%s", err);
		rc = EXIT_UNAVAIL;
		goto out;
	}
	/* Its instance file would hide a live broker's of the name. */
	if (instance_check(srv->opt, err, sizeof(err)) == -1) {
		log_errx("%s", err);
		rc = EXIT_TEMPFAIL;
		goto out;
	}
	if ((rc = server_jobs_open(srv)) != 0)
		goto out;
	if (unity_face_start(srv, err, sizeof(err)) == -1) {
		log_errx("%s", err);
		rc = EXIT_CONFIG;
		goto out;
	}
	for (i = 0; i < 3; i++) {
		sig[i] = evsignal_new(base, signals[i],
		    signals[i] == SIGHUP ? on_sighup : on_sigterm, srv);
		if (sig[i] == NULL || evsignal_add(sig[i], NULL) == -1)
			fatalx("evsignal_add");
	}
	log_info("cmdgated %s ready: %zu tools from %s, state dir %s, "
	    "worker %s", PACKAGE_VERSION, srv->tools->ntools,
	    srv->tools->source, srv->opt->state_dir, srv->worker_path);
	if (!srv->opt->check_config)
		(void)instance_publish(srv);
	notify_status(srv);
	if (event_base_dispatch(base) == -1)
		fatalx("event_base_dispatch failed");
	log_info("stopped");
out:
	instance_withdraw(srv);
	for (i = 0; i < 3; i++)
		if (sig[i] != NULL)
			event_free(sig[i]);
	http_free(srv);
	listener_free(srv);
	/* Their calls' answers go to the probe and the workers: first. */
	links_free(srv->links);
	srv->links = NULL;
	server_probe_free(srv);
	unity_face_stop(srv);
	mcptask_watch_free_all();
	jobs_free(srv->jobs);
	srv->jobs = NULL;
	server_status_free(srv);
	event_base_free(base);
	return rc;
}

int
main(int argc, char **argv)
{
	struct options	opt;
	struct server	srv;
	char		err[1024];
	int		rc;

	switch (options_parse(&opt, argc, argv, stdout, err, sizeof(err))) {
	case OPT_EXIT:
		options_free(&opt);
		return 0;
	case OPT_USAGE:
		fprintf(stderr, "cmdgated: %s (see cmdgated --help)\n", err);
		options_free(&opt);
		return EXIT_USAGE;
	case OPT_RUN:
		break;
	}
	if (instance_name(&opt, err, sizeof(err)) == -1) {
		fprintf(stderr, "cmdgated: %s (see cmdgated --help)\n", err);
		options_free(&opt);
		return EXIT_USAGE;
	}
	log_init(opt.log_level, "cmdgated");
	server_init(&srv, NULL, &opt, NULL);
	if ((rc = configure(&srv, &opt)) == 0) {
		if (opt.check_config)
			printf("cmdgated: configuration OK: %zu tools from %s, "
			    "state dir %s\n", srv.tools->ntools,
			    srv.tools->source, opt.state_dir);
		else
			rc = serve(&srv);
	}
	server_free(&srv);
	options_free(&opt);
	if (lock_fd != -1)
		close(lock_fd);
	return rc;
}
