/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <json-c/json.h>

#include "addr.h"
#include "face.h"
#include "log.h"
#include "net.h"
#include "options.h"
#include "server.h"
#include "util.h"

#define ACCEPT_RETRY_S		1	/* after EMFILE, try accepting again */
#define LISTEN_BACKLOG		511
#define SHUTDOWN_FLUSH_S	2	/* longest wait for clients to read */
#define STALE_TRIES		20	/* connects to a socket that answers, */
#define STALE_PAUSE_MS		100	/* this far apart, before giving up */

struct listener {
	struct server		*srv;
	struct evconnlistener	*lev[OPT_MAX_LISTEN + 1];
	int			 is_unix[OPT_MAX_LISTEN + 1];
	enum face		 face[OPT_MAX_LISTEN + 1];
	size_t			 nlev;
	struct event		*retry;
	struct event		*deadline;
	char			*sock_path;
	int			 paused;
};

static void	lst_accept(struct evconnlistener *, evutil_socket_t,
		    struct sockaddr *, int, void *);
static void	lst_accept_error(struct evconnlistener *, void *);
static void	lst_pause(struct listener *);
static void	lst_resume(struct listener *);
static void	lst_retry(evutil_socket_t, short, void *);
static void	lst_reap(evutil_socket_t, short, void *);
static void	lst_flush(evutil_socket_t, short, void *);
static void	lst_deadline(evutil_socket_t, short, void *);
static void	conn_readcb(struct bufferevent *, void *);
static void	conn_resume(struct conn *);
static void	conn_writecb(struct bufferevent *, void *);
static void	conn_eventcb(struct bufferevent *, short, void *);
static void	conn_after_io(struct conn *);
static void	conn_timeout(evutil_socket_t, short, void *);
static void	conn_arm(struct conn *, int64_t);
static void	conn_account(struct conn *);
static void	lst_shed(struct server *);
static int	lst_bind_tcp(struct listener *, const char *, char *, size_t);
static int	lst_bind_unix(struct listener *, const char *, char *, size_t);

static void
lst_addr_string(const struct sockaddr *sa, char *buf, size_t len)
{
	char	host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(sin->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(sin6->sin6_port));
	} else
		snprintf(buf, len, "unix");
}

static struct evconnlistener *
lst_new(struct listener *l, const struct sockaddr *sa, int salen)
{
	struct evconnlistener	*lev;

	lev = evconnlistener_new_bind(l->srv->base, lst_accept, l,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC |
	    LEV_OPT_REUSEABLE, LISTEN_BACKLOG, sa, salen);
	if (lev != NULL)
		evconnlistener_set_error_cb(lev, lst_accept_error);
	return lev;
}

static int
lst_bind_tcp(struct listener *l, const char *spec, char *err, size_t errlen)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	struct evconnlistener	*lev;
	char			 buf[INET6_ADDRSTRLEN + 16], *name;
	const char		*addr;
	enum face		 face;
	int			 sslen;

	if (face_parse(spec, &face, &addr) == -1 ||
	    addr_parse(addr, &ss, &sslen) == -1) {
		snprintf(err, errlen, "--listen %s: not ADDR:PORT", spec);
		return -1;
	}
	if ((lev = lst_new(l, (struct sockaddr *)&ss, sslen)) == NULL) {
		snprintf(err, errlen, "--listen %s: cannot bind: %s", spec,
		    strerror(errno));
		return -1;
	}
	getsockname(evconnlistener_get_fd(lev), (struct sockaddr *)&ss, &len);
	lst_addr_string((struct sockaddr *)&ss, buf, sizeof(buf));
	name = face == FACE_CMDGATE ? xstrdup(buf) :
	    xasprintf("%s@%s", face_name(face), buf);
	json_object_array_add(l->srv->listen_addrs,
	    json_object_new_string(name));
	log_info("listening on %s", name);
	free(name);
	l->face[l->nlev] = face;
	l->is_unix[l->nlev] = 0;
	l->lev[l->nlev++] = lev;
	return 0;
}

/*
 * A socket file left by a broker that died is removed; one that a live
 * broker answers on, or a file that is no socket, is not touched.  Only a
 * refused connection (or a file gone meanwhile) proves the socket stale:
 * any other error (EACCES from another user's broker, EAGAIN from a busy
 * one) leaves it alone.  The connect does not block on a full backlog.
 */
static int
lst_stale_socket(const char *path, const struct sockaddr_un *sun,
    char *err, size_t errlen)
{
	struct timespec	pause = { 0, STALE_PAUSE_MS * 1000000L };
	struct stat	st;
	int		fd, rc, saved, tries;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "--socket %s: exists and is not a "
		    "socket", path);
		return -1;
	}
	for (tries = 0; ; tries++) {
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0)) == -1)
			return -1;
		rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
		saved = errno;
		close(fd);
		/*
		 * A broker killed while it started a worker leaves its
		 * sockets to that child until the child execs: give such a
		 * socket a moment to go before calling it another broker's.
		 */
		if (rc != 0 || tries == STALE_TRIES)
			break;
		nanosleep(&pause, NULL);
	}
	if (rc == 0) {
		snprintf(err, errlen, "--socket %s: another broker answers "
		    "on it", path);
		return -1;
	}
	if (saved == ENOENT)
		return 0;
	if (saved != ECONNREFUSED) {
		snprintf(err, errlen, "--socket %s: exists, and connecting to "
		    "it failed with \"%s\", not \"%s\": it may be a live "
		    "broker's, so it is left alone", path, strerror(saved),
		    strerror(ECONNREFUSED));
		return -1;
	}
	if (unlink(path) == -1) {
		snprintf(err, errlen, "--socket %s: cannot remove the stale "
		    "socket: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int
lst_bind_unix(struct listener *l, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un	 sun;
	struct evconnlistener	*lev;
	mode_t			 old;
	char			*name;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	err[0] = '\0';
	if (lst_stale_socket(path, &sun, err, errlen) == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "--socket %s: %s", path,
			    strerror(errno));
		return -1;
	}
	/* Created 0660 from the start: no window with wider access. */
	old = umask(0117);
	lev = lst_new(l, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (lev == NULL) {
		snprintf(err, errlen, "--socket %s: cannot bind: %s", path,
		    strerror(errno));
		return -1;
	}
	l->sock_path = xstrdup(path);
	name = xasprintf("unix:%s", path);
	json_object_array_add(l->srv->listen_addrs,
	    json_object_new_string(name));
	free(name);
	log_info("listening on unix socket %s", path);
	l->is_unix[l->nlev] = 1;
	l->lev[l->nlev++] = lev;
	return 0;
}

int
listener_open(struct server *srv, char *err, size_t errlen)
{
	struct listener	*l = xcalloc(1, sizeof(*l));
	size_t		 i;

	l->srv = srv;
	srv->listener = l;
	l->retry = evtimer_new(srv->base, lst_retry, l);
	l->deadline = evtimer_new(srv->base, lst_deadline, l);
	srv->cs.base = srv->base;	/* connections now run on the loop */
	srv->cs.reaper = event_new(srv->base, -1, 0, lst_reap, l);
	srv->cs.flusher = event_new(srv->base, -1, 0, lst_flush, l);
	if (l->retry == NULL || l->deadline == NULL || srv->cs.reaper == NULL ||
	    srv->cs.flusher == NULL)
		fatalx("event_new");
	for (i = 0; i < srv->opt->nlisten; i++)
		if (lst_bind_tcp(l, srv->opt->listen[i], err, errlen) == -1)
			return -1;
	if (srv->opt->socket_path != NULL &&
	    lst_bind_unix(l, srv->opt->socket_path, err, errlen) == -1)
		return -1;
	return 0;
}

void
listener_close(struct server *srv)
{
	struct listener	*l = srv->listener;
	size_t		 i;

	if (l == NULL)
		return;
	for (i = 0; i < l->nlev; i++)
		evconnlistener_free(l->lev[i]);
	l->nlev = 0;
	if (l->sock_path != NULL) {
		unlink(l->sock_path);
		free(l->sock_path);
		l->sock_path = NULL;
	}
}

static void
lst_free(struct listener *l)
{
	event_free(l->retry);
	event_free(l->deadline);
	free(l);
}

static void
lst_pause(struct listener *l)
{
	struct timeval	tv = { ACCEPT_RETRY_S, 0 };
	size_t		i;

	if (l->paused)
		return;
	l->paused = 1;
	for (i = 0; i < l->nlev; i++)
		evconnlistener_disable(l->lev[i]);
	evtimer_add(l->retry, &tv);
}

static void
lst_resume(struct listener *l)
{
	size_t	i;

	if (!l->paused || l->srv->stopping)
		return;
	l->paused = 0;
	evtimer_del(l->retry);
	for (i = 0; i < l->nlev; i++)
		evconnlistener_enable(l->lev[i]);
}

static void
lst_retry(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	lst_resume(arg);
}

/* Out of descriptors: stop accepting for a while instead of spinning. */
static void
lst_accept_error(struct evconnlistener *lev, void *arg)
{
	struct listener	*l = arg;
	int		 err = EVUTIL_SOCKET_ERROR();

	(void)lev;
	if (err == EMFILE || err == ENFILE || err == ENOBUFS ||
	    err == ENOMEM) {
		errno = err;
		log_warn("accept; pausing new connections for %ds",
		    ACCEPT_RETRY_S);
		lst_pause(l);
		return;
	}
	errno = err;
	log_warn("accept");
}

static size_t
lst_index(struct listener *l, struct evconnlistener *lev)
{
	size_t	i;

	for (i = 0; i < l->nlev; i++)
		if (l->lev[i] == lev)
			break;
	return i;
}

static void
lst_accept(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct listener		*l = arg;
	struct server		*srv = l->srv;
	struct bufferevent	*bev;
	struct conn		*c;
	char			 peer[80];
	int			 one = 1, is_unix;
	size_t			 i = lst_index(l, lev);

	(void)salen;
	is_unix = l->is_unix[i];
	if (srv->nconns >= srv->opt->max_clients) {
		log_warnx("--max-clients %llu reached; connection refused",
		    (unsigned long long)srv->opt->max_clients);
		evutil_closesocket(fd);
		return;
	}
	if (is_unix)
		snprintf(peer, sizeof(peer), "unix");
	else {
		lst_addr_string(sa, peer, sizeof(peer));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		log_warnx("bufferevent_socket_new failed; connection dropped");
		evutil_closesocket(fd);
		return;
	}
	if (face_ops[l->face[i]].adopt != NULL) {
		face_ops[l->face[i]].adopt(srv, bev, peer);
		return;
	}
	c = server_conn_new(srv, bev, NULL, is_unix, peer);
	conn_peer_auth(c, fd);
	c->resume = conn_resume;
	if ((c->timer = evtimer_new(srv->base, conn_timeout, c)) == NULL)
		fatalx("evtimer_new");
	bufferevent_setcb(bev, conn_readcb, conn_writecb, conn_eventcb, c);
	bufferevent_setwatermark(bev, EV_WRITE, CONN_OUT_LOW, 0);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	log_debug("client %llu (%s) connected to the %s face",
	    (unsigned long long)c->id, peer, face_name(l->face[i]));
	conn_set_face(c, l->face[i]);
	conn_arm(c, c->since_ms);
	conn_after_io(c);
}

/*
 * The next deadline of c from now: its time to authenticate, or to send
 * a request (--idle-timeout); none when neither applies.
 */
static void
conn_arm(struct conn *c, int64_t now)
{
	const struct options	*opt = c->srv->opt;
	int64_t			 due = INT64_MAX, ms;
	struct timeval		 tv;

	if (conn_needs_auth(c))
		due = c->since_ms + (int64_t)opt->auth_timeout * 1000;
	if (opt->idle_timeout > 0 &&
	    (ms = c->active_ms + (int64_t)opt->idle_timeout * 1000) < due)
		due = ms;
	if (due == INT64_MAX)
		return;
	ms = due > now ? due - now : 0;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(c->timer, &tv);
}

/* Answer one last error and close. */
static void
conn_expire(struct conn *c, int code, const char *type, const char *why)
{
	log_info("client %llu (%s): %s, closed", (unsigned long long)c->id,
	    c->peer, why);
	conn_fail(c, code, type, why);
	conn_after_io(c);
}

static void
conn_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct conn		*c = arg;
	const struct options	*opt = c->srv->opt;
	int64_t			 now = util_monotonic_ms();
	char			 why[128];

	(void)fd;
	(void)ev;
	if (c->closing) {
		log_info("client %llu (%s): did not read its last answer "
		    "in time, dropped", (unsigned long long)c->id, c->peer);
		conn_kill(c);
		return;
	}
	if (conn_needs_auth(c) &&
	    now >= c->since_ms + (int64_t)opt->auth_timeout * 1000) {
		snprintf(why, sizeof(why), "not authenticated within %llu s "
		    "(--auth-timeout)", (unsigned long long)opt->auth_timeout);
		conn_expire(c, RPC_UNAUTHORIZED, "unauthorized", why);
		return;
	}
	if (conn_busy(c))
		c->active_ms = now;
	else if (opt->idle_timeout > 0 &&
	    now >= c->active_ms + (int64_t)opt->idle_timeout * 1000) {
		snprintf(why, sizeof(why), "no request for %llu s "
		    "(--idle-timeout)", (unsigned long long)opt->idle_timeout);
		conn_expire(c, RPC_INVALID_REQUEST, "idle_timeout", why);
		return;
	}
	conn_arm(c, now);
}

/*
 * Count the input c holds unread (partial messages, mostly): the sum for
 * every client is capped by --max-partial (never below --max-message).
 */
static void
conn_account(struct conn *c)
{
	struct server	*srv = c->srv;
	size_t		 n = 0, max;

	if (!c->dead && !c->closing)
		n = evbuffer_get_length(bufferevent_get_input(c->bev));
	srv->cs.inbuf_total = srv->cs.inbuf_total - c->inbuf + n;
	c->inbuf = n;
	max = srv->opt->max_partial > srv->opt->max_message ?
	    srv->opt->max_partial : srv->opt->max_message;
	if (srv->cs.inbuf_total > max)
		lst_shed(srv);
}

/*
 * Too much unread input in all: the client holding the most gets
 * message_too_large and is closed, its input dropped.  It is the one that
 * costs the most, and likely the one that grew it.
 */
static void
lst_shed(struct server *srv)
{
	struct conn	*c, *big = NULL;
	char		 why[160];

	TAILQ_FOREACH(c, &srv->conns, entry)
		if (!c->dead && !c->closing &&
		    (big == NULL || c->inbuf > big->inbuf))
			big = c;
	if (big == NULL || big->inbuf == 0)
		return;
	snprintf(why, sizeof(why), "the broker holds too many unfinished "
	    "messages (--max-partial %llu bytes for all clients), and this "
	    "connection's was the largest",
	    (unsigned long long)srv->opt->max_partial);
	conn_expire(big, RPC_INVALID_REQUEST, "message_too_large", why);
}

static void
conn_after_io(struct conn *c)
{
	struct evbuffer	*in;
	size_t		 pending = conn_unsent(c);

	/* A routed connection (http.c) has no socket of its own here. */
	if (c->dead || c->bev == NULL)
		return;
	/* A half-closed client still gets the answers it waits for. */
	if (c->eof && !c->closing && TAILQ_EMPTY(&c->pending) &&
	    c->batch == NULL && c->face_waits == 0)
		c->closing = 1;
	if (c->closing) {
		/* What it sent after its last request is never read. */
		bufferevent_disable(c->bev, EV_READ);
		in = bufferevent_get_input(c->bev);
		evbuffer_drain(in, evbuffer_get_length(in));
		conn_account(c);
		if (pending == 0)
			conn_kill(c);
		return;
	}
	if (!c->throttled && pending > CONN_OUT_HIGH) {
		c->throttled = 1;
		bufferevent_disable(c->bev, EV_READ);
	}
}

static void
conn_readcb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	conn_input(c, bufferevent_get_input(bev));
	conn_after_io(c);
	conn_account(c);
}

/* c may read requests again: answer what it sent meanwhile. */
static void
conn_resume(struct conn *c)
{
	if (c->bev != NULL && !c->dead)
		conn_readcb(c->bev, c);
}

static void
conn_writecb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	if (c->throttled && !c->closing &&
	    conn_unsent(c) <= CONN_OUT_LOW) {
		c->throttled = 0;
		if (!c->eof)
			bufferevent_enable(bev, EV_READ);
		/* What was read before the pause is still waiting. */
		if (evbuffer_get_length(bufferevent_get_input(bev)) > 0) {
			conn_readcb(bev, c);
			return;
		}
	}
	conn_after_io(c);
}

static void
conn_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	if (what & BEV_EVENT_ERROR) {
		log_debug("client %llu (%s): %s", (unsigned long long)c->id,
		    c->peer, evutil_socket_error_to_string(
		    EVUTIL_SOCKET_ERROR()));
		conn_kill(c);
	} else if (what & BEV_EVENT_EOF) {
		c->eof = 1;
		bufferevent_disable(bev, EV_READ);
		conn_after_io(c);
	}
}

static void
lst_reap(evutil_socket_t fd, short ev, void *arg)
{
	struct listener	*l = arg;
	struct server	*srv = l->srv;
	struct conn	*c, *next;

	(void)fd;
	(void)ev;
	for (c = TAILQ_FIRST(&srv->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (!c->dead)
			continue;
		log_debug("client %llu (%s) closed",
		    (unsigned long long)c->id, c->peer);
		if (c->bev != NULL)
			bufferevent_free(c->bev);
		server_conn_free(srv, c);
	}
	lst_resume(l);
	server_may_exit(srv);
}

/* The end of a loop turn: write every answer the turn produced. */
static void
lst_flush(evutil_socket_t fd, short ev, void *arg)
{
	struct listener	*l = arg;
	struct conn	*c;

	(void)fd;
	(void)ev;
	while ((c = TAILQ_FIRST(&l->srv->cs.flushq)) != NULL) {
		conn_flush(c);
		conn_after_io(c);
	}
}

static void
lst_deadline(evutil_socket_t fd, short ev, void *arg)
{
	struct listener	*l = arg;

	(void)fd;
	(void)ev;
	server_stop_now(l->srv);
}

void
listener_shutdown(struct server *srv)
{
	struct listener	*l = srv->listener;
	struct timeval	 tv = { SHUTDOWN_FLUSH_S, 0 };
	struct conn	*c;

	/* Workers get --kill-grace to stop before the deadline counts. */
	tv.tv_sec += (time_t)srv->opt->kill_grace;
	json_object	*p, *n;

	srv->stopping = 1;
	listener_close(srv);
	p = json_object_new_object();
	json_object_object_add(p, "reason", json_object_new_string("stopping"));
	n = rpc_notification("notifications/server/shutdown", p);
	TAILQ_FOREACH(c, &srv->conns, entry) {
		/* A face's client sees its connection close. */
		if (!conn_needs_auth(c) && c->face == FACE_CMDGATE)
			conn_send(c, n);
		c->closing = 1;
		conn_after_io(c);
	}
	json_object_put(n);
	evtimer_add(l->deadline, &tv);
	event_active(srv->cs.reaper, EV_TIMEOUT, 0);
}

void
listener_free(struct server *srv)
{
	struct conn	*c;
	int		 f;

	listener_close(srv);
	for (f = 0; f < FACE_COUNT; f++)
		if (face_ops[f].free != NULL)
			face_ops[f].free(srv);
	while ((c = TAILQ_FIRST(&srv->conns)) != NULL) {
		if (c->bev != NULL)
			bufferevent_free(c->bev);
		server_conn_free(srv, c);
	}
	if (srv->cs.reaper != NULL)
		event_free(srv->cs.reaper);
	srv->cs.reaper = NULL;
	if (srv->cs.flusher != NULL)
		event_free(srv->cs.flusher);
	srv->cs.flusher = NULL;
	if (srv->listener != NULL)
		lst_free(srv->listener);
	srv->listener = NULL;
}
