/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: an upstream's answers as the worker reads them, in
 * each dialect of cmdgate.tools(5) forward: jsonrpc (a JSON line each
 * way), jsonrpc-lsp (Content-Length frames), unity-mcp (the WELCOME
 * line, 8-byte frames, the status envelope) and mcp-http (HTTP
 * responses: JSON, or event streams with notifications) -- upstream.c,
 * httpx.c, mcphttp.c, notify.c, and forward.c around them (retries,
 * await polls, cancel, a reload tool's return).
 *
 * The first byte picks the dialect (bits 0-1) and the tool: awaited
 * (bit 2), with a cancel call (bit 3), a reload tool (bit 4),
 * idempotent (bit 5), or the dialect's ping alone (bit 6), or the editor
 * probe's polls (bit 7, edwatch.c).  The rest is what the upstream says on each
 * connection the worker makes, in turn, split at "\n~~\n"; a connection
 * past the last is closed at once, and the worker's next wait ends as
 * SIGTERM would.  A fake upstream on 127.0.0.1 (a thread) sends each
 * piece, then its end of file.  The worker's clock is the harness's:
 * waits for time pass at once, so polls and backoffs cost nothing.
 *
 * What must hold: forward_run's result is an object with the tool, ok,
 * sent and duration; a failure says why with one of the error types of
 * cmdgate.tools(5); it serializes as strict JSON (but for depth: an
 * answer nested 64 deep is one level deeper in the result); every event
 * the worker emits is what the broker takes (worker.c): start first,
 * progress with a number at least 0 and a total above 0, log with a
 * level and a message, an answer at most once, each of the command's
 * index; and the probe's events are editor events (edprobe.c), strict
 * JSON, reachable with boolean flags or unreachable with an error.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "../../workers/edwatch.h"
#include "../../workers/exchange.h"
#include "../../workers/forward.h"
#include "../../workers/wproc.h"
#include "fuzzutil.h"
#include "jstrict.h"

#define SEP		"\n~~\n"
#define MAXSEG		16
#define INDEX		3		/* the command's index in its job */
#define REAL_WAIT_MS	5000		/* a wait the fake cannot end */

/* ---- what wproc.c gives the worker's files ----------------------------- */

volatile sig_atomic_t	got_term;
int64_t			kill_grace_ms = 5000;
size_t			command_index = INDEX;
int			wproc_relay = 1;

static int64_t		clock_ms;	/* the worker's clock */
static int		nstarts, nanswers, nevents;

int64_t
wproc_now_ms(void)
{
	return clock_ms;
}

void
wproc_broker_gone(struct pollfd *ev)
{
	(void)ev;
}

/* The editor probe's event, as edprobe.c takes it. */
static void
check_editor(json_object *ev, const char *s)
{
	json_object	*r = json_object_object_get(ev, "reachable"), *fl;

	if (!json_object_is_type(r, json_type_boolean))
		fuzz_fail("an editor event without reachable: %s", s);
	if (!json_object_get_boolean(r)) {
		if (!json_object_is_type(json_object_object_get(ev, "error"),
		    json_type_string))
			fuzz_fail("unreachable without an error: %s", s);
		return;
	}
	if (!json_object_object_get_ex(ev, "flags", &fl) ||
	    !json_object_is_type(fl, json_type_object))
		fuzz_fail("reachable without flags: %s", s);
	json_object_object_foreach(fl, k, v) {
		if (!json_object_is_type(v, json_type_boolean))
			fuzz_fail("flag %s is no boolean: %s", k, s);
	}
}

/* An event as the broker would take it (worker.c worker_event). */
static void
check_event(json_object *ev)
{
	const char	*s = jstrict_to_string(ev), *kind;
	json_object	*v;

	if (jstrict_check(s, strlen(s)) != 0)
		fuzz_fail("an event that is not strict JSON: %s", s);
	kind = json_object_get_string(json_object_object_get(ev, "event"));
	if (kind != NULL && strcmp(kind, "editor") == 0) {
		check_editor(ev, s);
		return;
	}
	if (kind == NULL || json_object_get_int64(json_object_object_get(ev,
	    "index")) != INDEX)
		fuzz_fail("an event without its kind or index: %s", s);
	if (nevents == 1 && strcmp(kind, "start") != 0)
		fuzz_fail("the first event is not start: %s", s);
	if (strcmp(kind, "start") == 0) {
		if (nstarts++ > 0 || json_object_get_int(json_object_object_get(
		    ev, "pgid")) != 0)
			fuzz_fail("a second start, or a forward's with a "
			    "group: %s", s);
		return;
	}
	if (strcmp(kind, "answer") == 0) {
		if (nanswers++ > 0 || !json_object_object_get_ex(ev, "result",
		    NULL))
			fuzz_fail("a second answer, or none in it: %s", s);
		return;
	}
	if (json_object_object_get_ex(ev, "message", &v) &&
	    !json_object_is_type(v, json_type_string))
		fuzz_fail("a message that is no string: %s", s);
	if (strcmp(kind, "log") == 0) {
		if (v == NULL || !json_object_is_type(json_object_object_get(ev,
		    "level"), json_type_string))
			fuzz_fail("a log event without level or message: %s",
			    s);
		return;
	}
	if (strcmp(kind, "progress") != 0)
		fuzz_fail("an event the broker does not know: %s", s);
	v = json_object_object_get(ev, "progress");
	if ((!json_object_is_type(v, json_type_int) &&
	    !json_object_is_type(v, json_type_double)) ||
	    json_object_get_double(v) < 0)
		fuzz_fail("a progress that is no number from 0: %s", s);
	if (json_object_object_get_ex(ev, "total", &v) &&
	    ((!json_object_is_type(v, json_type_int) &&
	    !json_object_is_type(v, json_type_double)) ||
	    json_object_get_double(v) <= 0))
		fuzz_fail("a total that is no number above 0: %s", s);
}

void
wproc_emit(json_object *ev)
{
	nevents++;
	check_event(ev);
	json_object_put(ev);
}

void
wproc_emit_start(size_t index, pid_t pgid)
{
	json_object	*ev = json_object_new_object();

	json_object_object_add(ev, "event", json_object_new_string("start"));
	json_object_object_add(ev, "index", json_object_new_int((int)index));
	json_object_object_add(ev, "pgid", json_object_new_int(pgid));
	wproc_emit(ev);
}

/* ---- the fake upstream ------------------------------------------------- */

static struct {
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	int		 lfd;
	int		 port;
	const uint8_t	*seg[MAXSEG];
	size_t		 seglen[MAXSEG];
	size_t		 nseg;
	size_t		 served;	/* connections taken this input */
	int		 busy;		/* one being served */
} up = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, -1, 0,
	{ NULL }, { 0 }, 0, 0, 0 };

/* One connection: its piece (or nothing), end of file, then read to its
 * close, so that the worker reads all of it. */
static void
up_serve(int fd, const uint8_t *p, size_t n)
{
	struct pollfd	pfd = { fd, POLLIN, 0 };
	char		buf[4096];
	ssize_t		w;
	size_t		off = 0;

	while (off < n && (w = send(fd, p + off, n - off, MSG_NOSIGNAL)) > 0)
		off += (size_t)w;
	shutdown(fd, SHUT_WR);
	while (poll(&pfd, 1, REAL_WAIT_MS) == 1 &&
	    read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

static void *
up_thread(void *arg)
{
	struct pollfd	 pfd = { up.lfd, POLLIN, 0 };
	const uint8_t	*p;
	size_t		 n;
	int		 fd;

	(void)arg;
	for (;;) {
		if (poll(&pfd, 1, 1000) != 1)
			continue;
		/* Taken and given its piece under the lock: never a
		 * connection of one input with a piece of the next. */
		pthread_mutex_lock(&up.mu);
		if ((fd = accept4(up.lfd, NULL, NULL, SOCK_CLOEXEC)) == -1) {
			pthread_mutex_unlock(&up.mu);
			continue;
		}
		p = up.served < up.nseg ? up.seg[up.served] : NULL;
		n = up.served < up.nseg ? up.seglen[up.served] : 0;
		up.served++;
		up.busy = 1;
		pthread_mutex_unlock(&up.mu);
		up_serve(fd, p, n);
		pthread_mutex_lock(&up.mu);
		up.busy = 0;
		pthread_cond_signal(&up.cv);
		pthread_mutex_unlock(&up.mu);
	}
	return NULL;
}

/* Every connection of the input done; any left unaccepted closed. */
static void
up_quiet(void)
{
	int	fd;

	pthread_mutex_lock(&up.mu);
	while (up.busy)
		pthread_cond_wait(&up.cv, &up.mu);
	while ((fd = accept4(up.lfd, NULL, NULL, SOCK_CLOEXEC)) != -1)
		close(fd);
	up.nseg = up.served = 0;
	pthread_mutex_unlock(&up.mu);
}

static size_t
up_served(void)
{
	size_t	n;

	pthread_mutex_lock(&up.mu);
	n = up.served;
	pthread_mutex_unlock(&up.mu);
	return n;
}

/*
 * The worker's wait: for time, the clock moves to the deadline at once
 * (when every piece was taken, SIGTERM comes instead: nothing more will
 * answer); for a descriptor, a real poll.
 */
int
wproc_wait(int fd, short events, int64_t deadline, const sigset_t *waitmask)
{
	struct pollfd	pfd = { fd, events, 0 };
	int64_t		left;

	(void)waitmask;
	if (got_term)
		return -1;
	if ((left = deadline - clock_ms) <= 0)
		return 0;
	if (fd < 0) {
		if (up_served() >= up.nseg) {
			got_term = 1;
			return -1;
		}
		clock_ms = deadline;
		return 0;
	}
	if (poll(&pfd, 1, left < REAL_WAIT_MS ? (int)left : REAL_WAIT_MS) ==
	    1)
		return 1;
	clock_ms = deadline;
	return 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in	sin;
	socklen_t		sl = sizeof(sin);
	pthread_t		th;

	(void)argc;
	(void)argv;
	signal(SIGPIPE, SIG_IGN);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((up.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 ||
	    bind(up.lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(up.lfd, 64) == -1 ||
	    getsockname(up.lfd, (struct sockaddr *)&sin, &sl) == -1)
		fuzz_fail("fake upstream: %s", strerror(errno));
	up.port = ntohs(sin.sin_port);
	if (pthread_create(&th, NULL, up_thread, NULL) != 0)
		fuzz_fail("pthread_create");
	return 0;
}

/* ---- the command --------------------------------------------------- */

static const char *const dialects[] = { "jsonrpc", "jsonrpc-lsp",
    "unity-mcp", "mcp-http" };

/* The forward command of flags f, as the broker's spec gives it. */
static json_object *
command(uint8_t f)
{
	char		 to[64];
	json_object	*cmd;
	char		*text;
	int		 d = f & 3;

	if (d == 3)
		snprintf(to, sizeof(to), "http://127.0.0.1:%d/mcp", up.port);
	else
		snprintf(to, sizeof(to), "127.0.0.1:%d", up.port);
	if (asprintf(&text, "{\"tool\":\"t\",\"params\":{\"job\":"
	    "\"j1\",\"n\":1},\"timeout_s\":30,\"reload\":%s,\"forward\":{"
	    "\"to\":\"%s\",\"dialect\":\"%s\",\"method\":\"m\","
	    "\"connect_timeout_s\":0,\"idempotent\":%s%s%s%s}}",
	    f & 16 ? "true" : "false", to, dialects[d],
	    f & 32 ? "true" : "false",
	    f & 4 ? ",\"await\":{\"call\":\"poll\",\"params\":{\"job\":"
	    "\"{result.data.job_id}\"},\"until\":{\"field\":"
	    "\"result.data.status\",\"in\":[\"succeeded\",\"failed\"],"
	    "\"failed\":[\"failed\"]},\"every_ms\":50}" : "",
	    f & 8 ? ",\"cancel\":{\"call\":\"cancel\",\"params\":{\"job\":"
	    "\"{job}\"}}" : "",
	    f & 16 ? ",\"ready\":{\"call\":\"state\",\"params\":{}}" : "") ==
	    -1)
		abort();
	cmd = fuzz_json("the command", text, strlen(text));
	free(text);
	return cmd;
}

static void
check_result(json_object *r)
{
	static const char	*types[] = { "upstream_closed",
				    "upstream_refused", "upstream_lost",
				    "upstream_timeout", "cancelled",
				    "upstream_error", "upstream_protocol",
				    "tool_failed", NULL };
	const char		*s = jstrict_to_string(r), *t;
	json_object		*e;
	size_t			 i;
	int			 rc;

	if ((rc = jstrict_check(s, strlen(s))) != 0 && rc != JSTRICT_DEPTH)
		fuzz_fail("a result that is not strict JSON (%s): %s",
		    jstrict_strerror(rc), s);
	if (strcmp(json_object_get_string(json_object_object_get(r, "tool")),
	    "t") != 0 || !json_object_is_type(json_object_object_get(r, "ok"),
	    json_type_boolean) || !json_object_is_type(json_object_object_get(
	    r, "sent"), json_type_boolean) ||
	    !json_object_is_type(json_object_object_get(r, "duration_ms"),
	    json_type_int))
		fuzz_fail("a result without tool, ok, sent, duration: %s", s);
	if (json_object_get_boolean(json_object_object_get(r, "ok"))) {
		if (!json_object_object_get_ex(r, "result", NULL))
			fuzz_fail("ok without a result: %s", s);
		return;
	}
	t = json_object_get_string(json_object_object_get(r, "error_type"));
	for (i = 0; t != NULL && types[i] != NULL; i++)
		if (strcmp(t, types[i]) == 0)
			break;
	if (t == NULL || types[i] == NULL || !json_object_object_get_ex(r,
	    "error", &e) || !json_object_is_type(e, json_type_string) ||
	    json_object_get_string_len(e) == 0)
		fuzz_fail("a failure without its error or type: %s", s);
}

/* The editor probe's polls, until the pieces run out. */
static void
probe(uint8_t f)
{
	json_object	*p;
	char		*text;
	sigset_t	 mask;

	sigemptyset(&mask);
	if (asprintf(&text, "{\"to\":\"%s127.0.0.1:%d%s\",\"dialect\":"
	    "\"%s\",\"call\":\"get_editor_state\",\"params\":{},"
	    "\"every_ms\":50,\"flags\":{\"compiling\":"
	    "\"result.data.compilation.is_compiling\",\"tests_running\":"
	    "\"result.data.tests.is_running\",\"editor_busy\":"
	    "\"result.data.assets.refresh.is_refresh_in_progress\"}}",
	    (f & 3) == 3 ? "http://" : "", up.port, (f & 3) == 3 ? "/mcp" :
	    "", dialects[f & 3]) == -1)
		abort();
	p = fuzz_json("the probe", text, strlen(text));
	free(text);
	edwatch_run(p, NULL, &mask);
	if (nevents == 0)
		fuzz_fail("the probe said nothing");
	json_object_put(p);
}

/* The dialect's ping alone, as the editor probe sends it. */
static void
ping(uint8_t f)
{
	struct exchange	 x;
	json_object	*out = NULL;
	char		 to[64];
	sigset_t	 mask;
	enum up_status	 st;

	sigemptyset(&mask);
	memset(&x, 0, sizeof(x));
	if ((f & 3) == 3)
		snprintf(to, sizeof(to), "http://127.0.0.1:%d/mcp", up.port);
	else
		snprintf(to, sizeof(to), "127.0.0.1:%d", up.port);
	x.dialect = dialects[f & 3];
	x.to = to;
	x.waitmask = &mask;
	x.open_ms = 1000;
	st = exchange_once(&x, NULL, NULL, clock_ms + 2000, &out);
	/* Any answer is the upstream alive; anything else says why. */
	if (st > UP_TOO_LONG || (st != UP_OK && x.err[0] == '\0'))
		fuzz_fail("ping %s, error \"%s\"", up_strstatus(st), x.err);
	json_object_put(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t	*p, *end, *s;
	json_object	*cmd, *r;
	sigset_t	 mask;
	uint8_t		 f;

	if (size < 1)
		return 0;
	f = data[0];
	/* The pieces, one per connection. */
	pthread_mutex_lock(&up.mu);
	for (p = data + 1, end = data + size; up.nseg < MAXSEG; p = s +
	    strlen(SEP)) {
		s = memmem(p, (size_t)(end - p), SEP, strlen(SEP));
		up.seg[up.nseg] = p;
		up.seglen[up.nseg++] = s != NULL ? (size_t)(s - p) :
		    (size_t)(end - p);
		if (s == NULL)
			break;
	}
	up.served = 0;
	pthread_mutex_unlock(&up.mu);
	got_term = 0;
	clock_ms = 1000000;
	nstarts = nanswers = nevents = 0;
	wproc_relay = 1;	/* the probe's edwatch_run clears it */
	if (f & 128)
		probe(f);
	else if (f & 64)
		ping(f);
	else {
		sigemptyset(&mask);
		cmd = command(f);
		r = forward_run(cmd, INDEX, NULL, &mask);
		check_result(r);
		if (nstarts != 1)
			fuzz_fail("%d start events", nstarts);
		json_object_put(r);
		json_object_put(cmd);
	}
	up_quiet();
	return 0;
}
