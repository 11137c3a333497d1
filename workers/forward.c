/* SPDX-License-Identifier: ISC */
/*
 * The worker's forward tools: one JSON-RPC request to an upstream over
 * TCP, within the command's timeout, given up on SIGTERM or when the
 * broker is gone.  See cmdgate.tools(5), forward.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <netdb.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "forward.h"
#include "jsonl.h"
#include "worker.h"

#define UPSTREAM_MAX	(64 * 1024 * 1024)	/* longest upstream answer */

static json_object *
fwd_fail(json_object *r, const char *fmt, const char *detail)
{
	char	msg[512];

	json_object_object_add(r, "ok", json_object_new_boolean(0));
	snprintf(msg, sizeof(msg), fmt, detail);
	json_object_object_add(r, "error", json_object_new_string(msg));
	return r;
}

/*
 * Wait for fd until the deadline; 1 ready, 0 timed out, -1 cancelled (or
 * the broker is gone: its end of the event pipe is closed).
 */
static int
fwd_wait(int fd, short events, int64_t deadline, const sigset_t *waitmask)
{
	struct pollfd	pfd[2] = { { fd, events, 0 }, { EVENTS_FD, 0, 0 } };
	struct timespec	ts;
	int64_t		left;

	for (;;) {
		if (got_term)
			return -1;
		if ((left = deadline - now_ms()) <= 0)
			return 0;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		if (ppoll(pfd, 2, &ts, waitmask) <= 0)
			continue;
		broker_gone(&pfd[1]);
		if (pfd[0].revents != 0)
			return 1;
	}
}

/*
 * Send all of s on the non-blocking socket, waiting for room until the
 * deadline: 0, or -1 with r marked failed with the real reason.
 */
static int
fwd_send(int fd, const char *s, size_t n, json_object *r, int64_t deadline,
    const sigset_t *waitmask)
{
	size_t	off = 0;
	ssize_t	w;
	int	rc;

	while (off < n) {
		if ((w = send(fd, s + off, n - off, MSG_NOSIGNAL)) >= 0) {
			off += (size_t)w;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == ECONNRESET || errno == EPIPE) {
			fwd_fail(r, "upstream closed the connection %s",
			    "before it took the whole request");
			return -1;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			fwd_fail(r, "upstream: send failed: %s",
			    strerror(errno));
			return -1;
		}
		if ((rc = fwd_wait(fd, POLLOUT, deadline, waitmask)) <= 0) {
			if (rc == 0)
				json_object_object_add(r, "timed_out",
				    json_object_new_boolean(1));
			fwd_fail(r, "upstream %s", rc == 0 ? "did not take the "
			    "whole request in time" : "call cancelled");
			return -1;
		}
	}
	return 0;
}

/* Mark r failed with why no answer could be read. */
static void
fwd_read_failed(json_object *r, enum jsonl_status st)
{
	switch (st) {
	case JSONL_TIMEOUT:
		json_object_object_add(r, "timed_out",
		    json_object_new_boolean(1));
		fwd_fail(r, "upstream %s", "did not answer in time");
		break;
	case JSONL_CANCELLED:
		fwd_fail(r, "upstream %s", "call cancelled");
		break;
	case JSONL_EOF:
		fwd_fail(r, "upstream closed the connection %s",
		    "before answering");
		break;
	case JSONL_TOO_LONG:
		fwd_fail(r, "upstream: answer longer than %s", "64 MiB");
		break;
	default:
		/* A reset is the upstream closing with our request unread. */
		if (errno == ECONNRESET)
			fwd_fail(r, "upstream closed the connection %s",
			    "(reset) before answering");
		else
			fwd_fail(r, "upstream: read failed: %s",
			    strerror(errno));
		break;
	}
}

/* What fwd_read_wait needs: the call's deadline and signal mask. */
struct fwd_call {
	int64_t		 deadline;
	const sigset_t	*waitmask;
};

/* jsonl's wait: fwd_wait for reading, a cancel as JSONL_WAIT_CANCEL. */
static int
fwd_read_wait(void *arg, int fd, int ms)
{
	struct fwd_call	*fc = arg;
	int		 w;

	(void)ms;	/* the same deadline */
	if ((w = fwd_wait(fd, POLLIN, fc->deadline, fc->waitmask)) < 0)
		return JSONL_WAIT_CANCEL;
	return w;
}

/*
 * The answer with id 1 (caller puts), notifications skipped; NULL with r
 * marked failed with the reason.
 */
static json_object *
fwd_answer(int fd, json_object *r, int64_t deadline,
    const sigset_t *waitmask)
{
	struct fwd_call		 fc = { deadline, waitmask };
	struct jsonl		 jl;
	enum jsonl_status	 st;
	json_object		*resp, *v;

	jsonl_init(&jl, fd, UPSTREAM_MAX);
	jl.wait = fwd_read_wait;
	jl.arg = &fc;
	for (;;) {
		st = jsonl_json(&jl, deadline - now_ms() < 0 ? 0 :
		    deadline - now_ms(), &resp);
		if (st != JSONL_MSG && st != JSONL_BAD_JSON)
			break;
		if (!json_object_is_type(resp, json_type_object)) {
			json_object_put(resp);
			jsonl_free(&jl);
			fwd_fail(r, "upstream sent %s",
			    "something that is not JSON-RPC");
			return NULL;
		}
		if (json_object_object_get_ex(resp, "id", &v) &&
		    json_object_get_int(v) == 1) {
			jsonl_free(&jl);
			return resp;
		}
		json_object_put(resp);	/* a notification: not ours */
	}
	jsonl_free(&jl);
	fwd_read_failed(r, st);
	return NULL;
}

static json_object *
fwd_exchange(int fd, json_object *r, const char *tool, json_object *params,
    int64_t deadline, const sigset_t *waitmask)
{
	json_object	*req, *resp, *v;
	const char	*s;
	char		*line;
	size_t		 n;
	int		 rc;

	req = json_object_new_object();
	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(req, "id", json_object_new_int(1));
	json_object_object_add(req, "method", json_object_new_string(tool));
	json_object_object_add(req, "params", params != NULL ?
	    json_object_get(params) : json_object_new_object());
	s = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	/* The line and its newline in one send: one message, one segment. */
	line = malloc(n + 1);
	if (line == NULL) {
		json_object_put(req);
		fwd_fail(r, "upstream: %s", strerror(ENOMEM));
		return r;
	}
	memcpy(line, s, n);
	line[n] = '\n';
	json_object_put(req);
	rc = fwd_send(fd, line, n + 1, r, deadline, waitmask);
	free(line);
	if (rc == -1)
		return r;
	if ((resp = fwd_answer(fd, r, deadline, waitmask)) == NULL)
		return r;
	if (json_object_object_get_ex(resp, "result", &v)) {
		json_object_object_add(r, "ok", json_object_new_boolean(1));
		json_object_object_add(r, "result", json_object_get(v));
	} else if (json_object_object_get_ex(resp, "error", &v)) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "upstream error %d: %s",
		    json_object_get_int(json_object_object_get(v, "code")),
		    json_object_get_string(json_object_object_get(v,
		    "message")));
		json_object_object_add(r, "ok", json_object_new_boolean(0));
		json_object_object_add(r, "error", json_object_new_string(msg));
		json_object_object_add(r, "upstream_error",
		    json_object_get(v));
	} else
		fwd_fail(r, "upstream sent %s", "an answer with neither "
		    "result nor error");
	json_object_put(resp);
	return r;
}

/*
 * HOST:PORT or [IPV6]:PORT (the table checked it when it was loaded):
 * host without brackets and port; 0, or -1.
 */
static int
fwd_split(const char *addr, char *host, size_t hostlen, char *port,
    size_t portlen)
{
	const char	*h = addr, *he, *colon;

	if (addr[0] == '[') {
		h = addr + 1;
		if ((he = strchr(h, ']')) == NULL || he[1] != ':')
			return -1;
		colon = he + 1;
	} else if ((colon = he = strrchr(addr, ':')) == NULL)
		return -1;
	if ((size_t)(he - h) >= hostlen || strlen(colon + 1) >= portlen)
		return -1;
	memcpy(host, h, (size_t)(he - h));
	host[he - h] = '\0';
	snprintf(port, portlen, "%s", colon + 1);
	return 0;
}

json_object *
forward_run(json_object *cmd, size_t index, const sigset_t *waitmask)
{
	json_object	*v, *params = NULL, *r = json_object_new_object();
	struct addrinfo	 hints, *ai = NULL;
	const char	*tool, *addr;
	char		 host[256], port[8];
	int64_t		 t0 = now_ms(), deadline;
	int		 fd = -1, w, err = 0;
	socklen_t	 elen = sizeof(err);

	json_object_object_get_ex(cmd, "tool", &v);
	tool = json_object_get_string(v);
	json_object_object_get_ex(cmd, "params", &params);
	json_object_object_get_ex(cmd, "forward", &v);
	addr = json_object_get_string(v);
	json_object_object_get_ex(cmd, "timeout_s", &v);
	deadline = t0 + json_object_get_int64(v) * 1000;
	json_object_object_add(r, "tool", json_object_new_string(tool));
	emit_start(index, 0);
	if (fwd_split(addr, host, sizeof(host), port, sizeof(port)) == -1) {
		fwd_fail(r, "upstream: bad address '%s'", addr);
		goto out;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((w = getaddrinfo(host, port, &hints, &ai)) != 0) {
		fwd_fail(r, "upstream: %s", gai_strerror(w));
		goto out;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1 || (connect(fd, ai->ai_addr, ai->ai_addrlen) == -1 &&
	    errno != EINPROGRESS)) {
		fwd_fail(r, "upstream: cannot connect: %s", strerror(errno));
		goto out;
	}
	if ((w = fwd_wait(fd, POLLOUT, deadline, waitmask)) <= 0) {
		if (w == 0)
			json_object_object_add(r, "timed_out",
			    json_object_new_boolean(1));
		fwd_fail(r, "upstream: %s", w == 0 ? "connect timed out" :
		    "call cancelled");
		goto out;
	}
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
	if (err != 0) {
		fwd_fail(r, "upstream: cannot connect: %s", strerror(err));
		goto out;
	}
	fwd_exchange(fd, r, tool, params, deadline, waitmask);
out:
	if (fd != -1)
		close(fd);
	if (ai != NULL)
		freeaddrinfo(ai);
	json_object_object_add(r, "duration_ms",
	    json_object_new_int64(now_ms() - t0));
	return r;
}
