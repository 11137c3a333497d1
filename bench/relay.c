/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-bench-relay: the floor of the editor path's rates (bench/README,
 * row 6): what any gateway that carries many agents over one connection
 * to the bridge costs on this machine, with no work of its own.
 *
 *	cmdgate-bench-relay PORT
 *
 * It connects to MCP for Unity's bridge framing at 127.0.0.1:PORT (the
 * bench bridge), reads its WELCOME, then listens on a loopback port of
 * the kernel's and prints "port N".  Each agent that connects gets the
 * WELCOME line; each frame it sends is written to the bridge as it
 * comes, and each answer the bridge gives goes to the agent of the
 * oldest frame unanswered (the bridge answers in order).  No JSON is
 * read, nothing is stored: the frames are moved between buffers whole.
 * It ends with the bench (SIGKILL when its parent dies) or on SIGTERM.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#define RELAY_HDR	8
#define RELAY_MAX_MSG	(1024 * 1024)

struct agent {
	struct bufferevent	*bev;
	LIST_ENTRY(agent)	 all;
};

/* A frame written to the bridge, its answer owed to agent (NULL: gone). */
struct owed {
	struct agent		*agent;
	TAILQ_ENTRY(owed)	 entry;
};

static struct {
	struct event_base	*base;
	struct bufferevent	*up;
	char			*welcome;
	LIST_HEAD(, agent)	 agents;
	TAILQ_HEAD(, owed)	 owed;
} rl;

static void
relay_fatal(const char *what)
{
	fprintf(stderr, "cmdgate-bench-relay: %s\n", what);
	exit(1);
}

/* A whole frame at the head of in: its size with its header, or 0. */
static size_t
relay_frame(struct evbuffer *in)
{
	unsigned char	h[RELAY_HDR];
	size_t		n;

	if (evbuffer_copyout(in, h, RELAY_HDR) != RELAY_HDR)
		return 0;
	n = (size_t)h[4] << 24 | (size_t)h[5] << 16 | (size_t)h[6] << 8 | h[7];
	if (h[0] | h[1] | h[2] | h[3] || n > RELAY_MAX_MSG)
		relay_fatal("a frame over 1 MiB");
	return evbuffer_get_length(in) >= RELAY_HDR + n ? RELAY_HDR + n : 0;
}

static void
relay_up_read(struct bufferevent *bev, void *arg)
{
	struct evbuffer	*in = bufferevent_get_input(bev);
	struct owed	*o;
	size_t		 n;

	(void)arg;
	while ((n = relay_frame(in)) > 0) {
		if ((o = TAILQ_FIRST(&rl.owed)) == NULL)
			relay_fatal("the bridge answered no frame");
		TAILQ_REMOVE(&rl.owed, o, entry);
		if (o->agent != NULL)
			evbuffer_remove_buffer(in,
			    bufferevent_get_output(o->agent->bev), n);
		else
			evbuffer_drain(in, n);
		free(o);
	}
}

static void
relay_up_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev, (void)what, (void)arg;
	relay_fatal("the bridge closed the connection");
}

static void
relay_agent_read(struct bufferevent *bev, void *arg)
{
	struct evbuffer	*in = bufferevent_get_input(bev);
	struct owed	*o;
	size_t		 n;

	while ((n = relay_frame(in)) > 0) {
		if ((o = calloc(1, sizeof(*o))) == NULL)
			relay_fatal("out of memory");
		o->agent = arg;
		TAILQ_INSERT_TAIL(&rl.owed, o, entry);
		evbuffer_remove_buffer(in, bufferevent_get_output(rl.up), n);
	}
}

static void
relay_agent_free(struct agent *a)
{
	struct owed	*o;

	TAILQ_FOREACH(o, &rl.owed, entry)
		if (o->agent == a)
			o->agent = NULL;
	LIST_REMOVE(a, all);
	bufferevent_free(a->bev);
	free(a);
}

static void
relay_agent_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev, (void)what;
	relay_agent_free(arg);
}

static void
relay_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int len, void *arg)
{
	struct agent	*a;
	int		 one = 1;

	(void)l, (void)sa, (void)len, (void)arg;
	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (a->bev = bufferevent_socket_new(rl.base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		relay_fatal("out of memory");
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	bufferevent_setcb(a->bev, relay_agent_read, NULL, relay_agent_event,
	    a);
	bufferevent_enable(a->bev, EV_READ | EV_WRITE);
	LIST_INSERT_HEAD(&rl.agents, a, all);
	bufferevent_write(a->bev, rl.welcome, strlen(rl.welcome));
}

/* The connection to the bridge, its WELCOME line read (blocking). */
static void
relay_connect(int port)
{
	struct sockaddr_in	 sin;
	char			 line[4096];
	size_t			 n = 0;
	int			 fd, one = 1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		relay_fatal("cannot connect to the bridge");
	while (n == 0 || line[n - 1] != '\n')
		if (n + 1 >= sizeof(line) || read(fd, line + n, 1) != 1)
			relay_fatal("no WELCOME line from the bridge");
		else
			n++;
	line[n] = '\0';
	if ((rl.welcome = strdup(line)) == NULL)
		relay_fatal("out of memory");
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	evutil_make_socket_nonblocking(fd);
	if ((rl.up = bufferevent_socket_new(rl.base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		relay_fatal("out of memory");
	bufferevent_setcb(rl.up, relay_up_read, NULL, relay_up_event, NULL);
	bufferevent_enable(rl.up, EV_READ | EV_WRITE);
}

/* A listener on 127.0.0.1, a port of the kernel's: its port. */
static int
relay_listen(struct evconnlistener **l)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((*l = evconnlistener_new_bind(rl.base, relay_accept, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 64,
	    (struct sockaddr *)&sin, sizeof(sin))) == NULL ||
	    getsockname(evconnlistener_get_fd(*l), (struct sockaddr *)&sin,
	    &len) == -1)
		relay_fatal("cannot listen on 127.0.0.1");
	return ntohs(sin.sin_port);
}

static void
relay_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)sig, (void)what, (void)arg;
	event_base_loopexit(rl.base, NULL);
}

/* At SIGTERM: everything freed, so that valgrind finds nothing left. */
static void
relay_free(struct evconnlistener *l, struct event *term)
{
	struct owed	*o;

	while (!LIST_EMPTY(&rl.agents))
		relay_agent_free(LIST_FIRST(&rl.agents));
	while ((o = TAILQ_FIRST(&rl.owed)) != NULL) {
		TAILQ_REMOVE(&rl.owed, o, entry);
		free(o);
	}
	bufferevent_free(rl.up);
	evconnlistener_free(l);
	event_free(term);
	event_base_free(rl.base);
	free(rl.welcome);
}

int
main(int argc, char **argv)
{
	struct evconnlistener	*l;
	struct event		*term;
	char			*end = "x";
	long			 port = 0;

	if (argc == 2)
		port = strtol(argv[1], &end, 10);
	if (*end != '\0' || port < 1 || port > 65535) {
		fprintf(stderr, "usage: cmdgate-bench-relay PORT\n");
		return 64;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((rl.base = event_base_new()) == NULL)
		relay_fatal("event_base_new");
	LIST_INIT(&rl.agents);
	TAILQ_INIT(&rl.owed);
	relay_connect((int)port);
	term = evsignal_new(rl.base, SIGTERM, relay_signal, NULL);
	if (term == NULL || evsignal_add(term, NULL) == -1)
		relay_fatal("evsignal_new");
	printf("port %d\n", relay_listen(&l));
	fflush(stdout);
	event_base_dispatch(rl.base);
	relay_free(l, term);
	return 0;
}
