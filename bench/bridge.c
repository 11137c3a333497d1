/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-bench-bridge: the bench's stand-in editor, for the rows of the
 * editor path (bench/README, rows 6 and 7).
 *
 *	cmdgate-bench-bridge [--delay-ms N]
 *
 * It listens on two loopback ports, chosen by the kernel, and prints
 * "ports UNITY ULOOP" on standard output once both are bound:
 *
 *   UNITY	MCP for Unity's stdio bridge: the WELCOME line on accept,
 *		then 8-byte big-endian length frames both ways; the frame
 *		"ping" gets the compact pong at once, get_editor_state an
 *		editor state as the bridge gives it, any other command type
 *		a plain success.
 *   ULOOP	uLoopMCP's editor server (0.27 and later): JSON-RPC 2.0 in
 *		Content-Length frames; every request is answered with a
 *		result carrying Ver, notifications with nothing.
 *
 * Like an editor, it runs one command at a time (its "main thread"),
 * whichever port it came on, in the order they came; --delay-ms N makes
 * each take N milliseconds (a real editor's main thread takes about 10),
 * 0 (the default) answers at once.  Unlike MCP for Unity's bridge it
 * serves every connection at once, and a new one cuts nobody off: the
 * bench's straight runs open several.  Each connection is answered in
 * order, its next message read once the last is answered; pipelined
 * messages wait in its buffer.  It ends with the bench (SIGKILL when its
 * parent dies, set by the bench before exec) or on SIGTERM.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <json-c/json.h>

#define BRIDGE_WELCOME	"WELCOME UNITY-MCP 1 FRAMING=1\n"
#define BRIDGE_PONG	"{\"status\":\"success\",\"result\":" \
			"{\"message\":\"pong\"}}"
#define BRIDGE_VER	"2.1.0"
#define BRIDGE_MAX_MSG	(1024 * 1024)	/* the bench's: a few hundred bytes */
#define BRIDGE_MAX_HEAD	4096
#define BRIDGE_MAX_CONN	1024

enum bridge_dialect {
	BRIDGE_UNITY,
	BRIDGE_ULOOP
};

struct bridge_conn {
	struct bufferevent		*bev;
	enum bridge_dialect		 dialect;
	char				*cmd;	/* taken, not yet answered */
	TAILQ_ENTRY(bridge_conn)	 entry;	/* in the main thread's queue */
	LIST_ENTRY(bridge_conn)		 all;
};

TAILQ_HEAD(bridge_queue, bridge_conn);
LIST_HEAD(bridge_conns, bridge_conn);

static struct {
	struct event_base	*base;
	struct event		*tick;		/* the running command's end */
	struct bridge_queue	 queue;		/* commands waiting to run */
	struct bridge_conn	*running;	/* on the main thread; NULL */
	struct bridge_conns	 conns;
	struct evconnlistener	*listeners[2];
	struct timeval		 delay;
	int			 delayed;	/* --delay-ms > 0 */
	int			 nconn;
	long			 seq;		/* get_editor_state's count */
} br;

static void	bridge_conn_free(struct bridge_conn *);
static void	bridge_run(void);

static void
bridge_fatal(const char *what)
{
	fprintf(stderr, "cmdgate-bench-bridge: %s: %s\n", what,
	    strerror(errno));
	exit(1);
}

/* ---- answers ---------------------------------------------------------- */

static void
bridge_send_unity(struct bridge_conn *c, const char *s, size_t n)
{
	unsigned char	hdr[8];
	uint64_t	len = n;
	int		i;

	for (i = 7; i >= 0; i--, len >>= 8)
		hdr[i] = (unsigned char)(len & 0xff);
	bufferevent_write(c->bev, hdr, sizeof(hdr));
	bufferevent_write(c->bev, s, n);
}

static void
bridge_send_uloop(struct bridge_conn *c, const char *s)
{
	evbuffer_add_printf(bufferevent_get_output(c->bev),
	    "Content-Length: %zu\r\n\r\n%s", strlen(s), s);
}

/* The editor state as MCP for Unity 10 gives it: nothing running. */
static void
bridge_editor_state(struct bridge_conn *c)
{
	struct timespec	ts;
	char		buf[1024];
	int		n;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, sizeof(buf), "{\"status\":\"success\",\"result\":"
	    "{\"success\":true,\"message\":\"Retrieved editor state.\","
	    "\"data\":{\"observed_at_unix_ms\":%lld,\"sequence\":%ld,"
	    "\"activity\":{\"phase\":\"idle\"},\"editor\":{\"play_mode\":"
	    "{\"is_playing\":false,\"is_paused\":false}},\"compilation\":"
	    "{\"is_compiling\":false,\"is_domain_reload_pending\":false},"
	    "\"assets\":{\"is_updating\":false,\"refresh\":"
	    "{\"is_refresh_in_progress\":false}},\"tests\":{\"is_running\":"
	    "false,\"current_job_id\":null,\"started_by\":null}}}}",
	    (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, ++br.seq);
	bridge_send_unity(c, buf, (size_t)n);
}

/* One MCP for Unity command, its turn come. */
static void
bridge_answer_unity(struct bridge_conn *c, json_object *o)
{
	json_object	*type, *params;
	char		 buf[512];
	int		 n;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "type", &type) ||
	    !json_object_is_type(type, json_type_string) ||
	    (json_object_object_get_ex(o, "params", &params) &&
	    !json_object_is_type(params, json_type_object))) {
		n = snprintf(buf, sizeof(buf), "{\"status\":\"error\","
		    "\"error\":\"Invalid command: expected {type, params}\"}");
	} else if (strcmp(json_object_get_string(type),
	    "get_editor_state") == 0) {
		bridge_editor_state(c);
		return;
	} else
		n = snprintf(buf, sizeof(buf), "{\"status\":\"success\","
		    "\"result\":{\"success\":true,\"message\":\"Done.\","
		    "\"data\":{}}}");
	bridge_send_unity(c, buf, (size_t)n);
}

/* One uLoopMCP request, its turn come; a notification gets nothing. */
static void
bridge_answer_uloop(struct bridge_conn *c, json_object *o)
{
	json_object	*id, *method, *ans, *res;

	if (!json_object_object_get_ex(o, "id", &id) || id == NULL)
		return;
	json_object_object_get_ex(o, "method", &method);
	res = json_object_new_object();
	json_object_object_add(res, "Success", json_object_new_boolean(1));
	json_object_object_add(res, "Message", json_object_new_string(
	    json_object_is_type(method, json_type_string) ?
	    json_object_get_string(method) : ""));
	json_object_object_add(res, "Ver", json_object_new_string(BRIDGE_VER));
	ans = json_object_new_object();
	json_object_object_add(ans, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(ans, "id", json_object_get(id));
	json_object_object_add(ans, "result", res);
	bridge_send_uloop(c, json_object_to_json_string_ext(ans,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(ans);
}

/* The command of c, its turn on the main thread over: answered. */
static void
bridge_answer(struct bridge_conn *c)
{
	json_object	*o = json_tokener_parse(c->cmd);

	if (c->dialect == BRIDGE_UNITY)
		bridge_answer_unity(c, o);
	else if (o != NULL)
		bridge_answer_uloop(c, o);
	else
		bridge_send_uloop(c, "{\"jsonrpc\":\"2.0\",\"id\":null,"
		    "\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}");
	json_object_put(o);
	free(c->cmd);
	c->cmd = NULL;
}

/* ---- messages in -------------------------------------------------------- */

/* The next whole frame's payload (caller frees), NULL: none yet; -1 bad. */
static int
bridge_take_unity(struct bridge_conn *c, char **out)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	unsigned char	 hdr[8];
	uint64_t	 len = 0;
	int		 i;

	*out = NULL;
	if (evbuffer_copyout(in, hdr, sizeof(hdr)) < (ev_ssize_t)sizeof(hdr))
		return 0;
	for (i = 0; i < 8; i++)
		len = len << 8 | hdr[i];
	if (len == 0 || len > BRIDGE_MAX_MSG)
		return -1;
	if (evbuffer_get_length(in) < sizeof(hdr) + len)
		return 0;
	evbuffer_drain(in, sizeof(hdr));
	if ((*out = malloc(len + 1)) == NULL)
		bridge_fatal("malloc");
	evbuffer_remove(in, *out, len);
	(*out)[len] = '\0';
	return 0;
}

/* The same for a Content-Length frame. */
static int
bridge_take_uloop(struct bridge_conn *c, char **out)
{
	struct evbuffer		*in = bufferevent_get_input(c->bev);
	struct evbuffer_ptr	 end;
	char			 head[BRIDGE_MAX_HEAD + 1], *p;
	size_t			 hlen;
	long			 len = -1;

	*out = NULL;
	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos == -1)
		return evbuffer_get_length(in) > BRIDGE_MAX_HEAD ? -1 : 0;
	if ((hlen = (size_t)end.pos) > BRIDGE_MAX_HEAD)
		return -1;
	evbuffer_copyout(in, head, hlen);
	head[hlen] = '\0';
	for (p = head; p != NULL && *p != '\0'; p = strstr(p, "\r\n"),
	    p = p != NULL ? p + 2 : NULL)
		if (strncasecmp(p, "Content-Length:", 15) == 0)
			len = strtol(p + 15, NULL, 10);
	if (len <= 0 || len > BRIDGE_MAX_MSG)
		return -1;
	if (evbuffer_get_length(in) < hlen + 4 + (size_t)len)
		return 0;
	evbuffer_drain(in, hlen + 4);
	if ((*out = malloc((size_t)len + 1)) == NULL)
		bridge_fatal("malloc");
	evbuffer_remove(in, *out, (size_t)len);
	(*out)[len] = '\0';
	return 0;
}

/*
 * Take c's next message if it has none waiting: a ping is answered at once
 * (the bridge's socket thread does that), a command queued for the main
 * thread.  0, or -1 when c sent a bad frame (closed).
 */
static int
bridge_next(struct bridge_conn *c)
{
	char	*msg;

	while (c->cmd == NULL) {
		if ((c->dialect == BRIDGE_UNITY ? bridge_take_unity(c, &msg) :
		    bridge_take_uloop(c, &msg)) == -1) {
			bridge_conn_free(c);
			return -1;
		}
		if (msg == NULL)
			return 0;
		if (c->dialect == BRIDGE_UNITY && strcmp(msg, "ping") == 0) {
			bridge_send_unity(c, BRIDGE_PONG, strlen(BRIDGE_PONG));
			free(msg);
			continue;
		}
		c->cmd = msg;
		TAILQ_INSERT_TAIL(&br.queue, c, entry);
	}
	return 0;
}

/* ---- the main thread ---------------------------------------------------- */

/* The running command's time is up: answer it, take the next. */
static void
bridge_tick_callback(evutil_socket_t fd, short what, void *arg)
{
	struct bridge_conn	*c = br.running;

	(void)fd, (void)what, (void)arg;
	br.running = NULL;
	bridge_answer(c);
	bridge_next(c);
	bridge_run();
}

/*
 * Start the queued commands, one at a time: with no delay each is answered
 * here, in a loop (no recursion however many wait); with one, the first
 * runs until its tick.
 */
static void
bridge_run(void)
{
	struct bridge_conn	*c;

	while (br.running == NULL && (c = TAILQ_FIRST(&br.queue)) != NULL) {
		TAILQ_REMOVE(&br.queue, c, entry);
		if (br.delayed) {
			br.running = c;
			evtimer_add(br.tick, &br.delay);
			return;
		}
		bridge_answer(c);
		bridge_next(c);
	}
}

/* ---- connections -------------------------------------------------------- */

static void
bridge_conn_free(struct bridge_conn *c)
{
	if (c == br.running) {
		evtimer_del(br.tick);
		br.running = NULL;
	} else if (c->cmd != NULL)
		TAILQ_REMOVE(&br.queue, c, entry);
	LIST_REMOVE(c, all);
	free(c->cmd);
	bufferevent_free(c->bev);
	free(c);
	br.nconn--;
}

static void
bridge_read_callback(struct bufferevent *bev, void *arg)
{
	(void)bev;
	bridge_next(arg);
	bridge_run();
}

static void
bridge_event_callback(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		bridge_conn_free(arg);
		bridge_run();
	}
}

static void
bridge_accept_callback(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct bridge_conn	*c;
	int			 one = 1;

	(void)l, (void)sa, (void)salen;
	if (br.nconn >= BRIDGE_MAX_CONN || (c = calloc(1, sizeof(*c))) ==
	    NULL) {
		evutil_closesocket(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->dialect = *(enum bridge_dialect *)arg;
	if ((c->bev = bufferevent_socket_new(br.base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		bridge_fatal("bufferevent_socket_new");
	/* What a client pipelines past this waits in the kernel. */
	bufferevent_setwatermark(c->bev, EV_READ, 0, 2 * BRIDGE_MAX_MSG);
	bufferevent_setcb(c->bev, bridge_read_callback, NULL,
	    bridge_event_callback, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	LIST_INSERT_HEAD(&br.conns, c, all);
	br.nconn++;
	if (c->dialect == BRIDGE_UNITY)
		bufferevent_write(c->bev, BRIDGE_WELCOME,
		    strlen(BRIDGE_WELCOME));
}

/* A listener on 127.0.0.1, a port of the kernel's: its port. */
static int
bridge_listen(enum bridge_dialect *d)
{
	static int		 n;
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	struct evconnlistener	*l;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l = evconnlistener_new_bind(br.base, bridge_accept_callback, d,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 64,
	    (struct sockaddr *)&sin, sizeof(sin))) == NULL)
		bridge_fatal("listen on 127.0.0.1");
	br.listeners[n++] = l;
	if (getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&sin,
	    &len) == -1)
		bridge_fatal("getsockname");
	return ntohs(sin.sin_port);
}

static void
bridge_signal_callback(evutil_socket_t sig, short what, void *arg)
{
	(void)sig, (void)what, (void)arg;
	event_base_loopexit(br.base, NULL);
}

/* At SIGTERM: everything freed, so that valgrind finds nothing left. */
static void
bridge_free(struct event *term)
{
	while (!LIST_EMPTY(&br.conns))
		bridge_conn_free(LIST_FIRST(&br.conns));
	evconnlistener_free(br.listeners[0]);
	evconnlistener_free(br.listeners[1]);
	event_free(term);
	event_free(br.tick);
	event_base_free(br.base);
}

int
main(int argc, char **argv)
{
	static enum bridge_dialect	 unity = BRIDGE_UNITY;
	static enum bridge_dialect	 uloop = BRIDGE_ULOOP;
	struct event_config		*cfg;
	struct event			*term;
	long				 ms = 0;
	char				*end = "";

	if (argc == 3 && strcmp(argv[1], "--delay-ms") == 0)
		ms = strtol(argv[2], &end, 10);
	else if (argc != 1)
		end = "x";
	if (*end != '\0' || argv[argc - 1][0] == '\0' || ms < 0 ||
	    ms > 60000) {
		fprintf(stderr, "usage: cmdgate-bench-bridge [--delay-ms N]"
		    " (N from 0 to 60000)\n");
		return 64;
	}
	br.delay.tv_sec = ms / 1000;
	br.delay.tv_usec = ms % 1000 * 1000;
	br.delayed = ms > 0;
	TAILQ_INIT(&br.queue);
	signal(SIGPIPE, SIG_IGN);
	/* A delay of 10 ms should be 10 ms, not epoll's rounding of it. */
	if ((cfg = event_config_new()) == NULL ||
	    event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER) == -1 ||
	    (br.base = event_base_new_with_config(cfg)) == NULL)
		bridge_fatal("event_base_new");
	event_config_free(cfg);
	br.tick = evtimer_new(br.base, bridge_tick_callback, NULL);
	term = evsignal_new(br.base, SIGTERM, bridge_signal_callback, NULL);
	if (br.tick == NULL || term == NULL || evsignal_add(term, NULL) == -1)
		bridge_fatal("event_new");
	LIST_INIT(&br.conns);
	printf("ports %d %d\n", bridge_listen(&unity), bridge_listen(&uloop));
	fflush(stdout);
	event_base_dispatch(br.base);
	bridge_free(term);
	return 0;
}
