/* SPDX-License-Identifier: ISC */
/*
 * The worker process's own state and its one link to the broker, which
 * every helper of cmdgate-worker uses and none of them owns: whether it
 * is stopping (SIGTERM, or the broker gone), the events it writes
 * (include/wire.h), and the wait that ends early when it stops.  The
 * entry, cmdgate-worker.c, sets the state from the spec; the fuzzer and
 * tests/mcphttp_drive.c give their own in its place.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/uio.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "wire.h"
#include "wproc.h"

volatile sig_atomic_t	got_term;
int64_t			kill_grace_ms = 5000;
size_t			command_index;
int			wproc_relay = 1;

int64_t
wproc_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
wproc_emit(json_object *ev)
{
	struct iovec	 iov[2];
	const char	*s;
	size_t		 len, off = 0;
	ssize_t		 w;

	s = json_object_to_json_string_length(ev, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	/* The line and its newline in one write: one wakeup of the broker. */
	while (off < len + 1) {
		iov[0].iov_base = (char *)s + (off < len ? off : len);
		iov[0].iov_len = off < len ? len - off : 0;
		iov[1].iov_base = (char *)"\n";
		iov[1].iov_len = 1;
		if ((w = writev(WIRE_EVENTS_FD, iov, 2)) == -1) {
			if (errno == EINTR)
				continue;
			/*
			 * The broker is gone: nobody will hear of this job.
			 * Stop as for SIGTERM, so that no tool is left behind.
			 */
			if (got_term == 0)
				got_term = 1;
			break;
		}
		off += (size_t)w;
	}
	json_object_put(ev);
}

void
wproc_emit_start(size_t index, pid_t pgid)
{
	json_object	*ev = json_object_new_object();

	json_object_object_add(ev, WIRE_EVENT,
	    json_object_new_string(WIRE_EV_START));
	json_object_object_add(ev, WIRE_INDEX,
	    json_object_new_int((int)index));
	json_object_object_add(ev, WIRE_PGID, json_object_new_int(pgid));
	wproc_emit(ev);
}

void
wproc_emit_result(size_t index, json_object *result)
{
	json_object	*ev = json_object_new_object();

	json_object_object_add(ev, WIRE_EVENT,
	    json_object_new_string(WIRE_EV_RESULT));
	json_object_object_add(ev, WIRE_INDEX,
	    json_object_new_int((int)index));
	json_object_object_add(ev, WIRE_RESULT, result);
	wproc_emit(ev);
}

/* The broker's end of the event pipe is closed: it is gone. */
void
wproc_broker_gone(struct pollfd *ev)
{
	if (ev->fd >= 0 && (ev->revents & (POLLERR | POLLHUP))) {
		if (got_term == 0)
			got_term = 1;
		ev->fd = -1;
	}
}

int
wproc_wait(int fd, short events, int64_t deadline, const sigset_t *waitmask)
{
	struct pollfd	pfd[2] = { { fd, events, 0 },
	    { WIRE_EVENTS_FD, 0, 0 } };
	struct timespec	ts;
	int64_t		left;

	for (;;) {
		if (got_term)
			return -1;
		if ((left = deadline - wproc_now_ms()) <= 0)
			return 0;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		if (ppoll(pfd, 2, &ts, waitmask) <= 0)
			continue;
		wproc_broker_gone(&pfd[1]);
		if (pfd[0].fd >= 0 && pfd[0].revents != 0)
			return 1;
	}
}
