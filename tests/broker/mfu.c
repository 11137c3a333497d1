/* SPDX-License-Identifier: ISC */
/* MCP for Unity's server as a bridge sees it: see mfu.h. */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "broker.h"
#include "jstrict.h"
#include "mfu.h"

#define MFU_FRAMED_MAX	(64ULL * 1024 * 1024)
#define MFU_PREFIX	"unity-mcp-status-"

static int64_t
mfu_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read exactly n bytes before deadline: 0, or -1 (EOF, error, late). */
static int
mfu_read(int fd, void *buf, size_t n, int64_t deadline)
{
	struct pollfd	 p = { fd, POLLIN, 0 };
	char		*b = buf;
	ssize_t		 r;
	int64_t		 left;

	while (n > 0) {
		if ((left = deadline - mfu_now_ms()) <= 0 ||
		    poll(&p, 1, (int)left) != 1)
			return -1;
		if ((r = read(fd, b, n)) <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* The first line the bridge sends, up to 512 bytes, before deadline. */
static int
mfu_handshake(int fd, int64_t deadline)
{
	char	buf[513];
	size_t	n = 0;

	while (n < sizeof(buf) - 1 && mfu_read(fd, buf + n, 1, deadline) == 0)
		if (buf[n++] == '\n')
			break;
	buf[n] = '\0';
	return strstr(buf, "FRAMING=1") != NULL ? 0 : -1;
}

static int
mfu_send_frame(int fd, const char *s)
{
	unsigned char	hdr[8];
	uint64_t	n = strlen(s);
	int		i;

	for (i = 0; i < 8; i++)
		hdr[i] = (unsigned char)(n >> (56 - 8 * i));
	/* As sendall does: a closed peer is an error, not SIGPIPE. */
	if (send(fd, hdr, 8, MSG_NOSIGNAL) != 8 ||
	    send(fd, s, n, MSG_NOSIGNAL) != (ssize_t)n)
		return -1;
	return 0;
}

/* One framed answer (heartbeats skipped), or NULL.  Caller frees. */
static char *
mfu_recv_frame(int fd, int64_t deadline)
{
	unsigned char	hdr[8];
	uint64_t	n;
	char		*s;
	int		i;

	do {
		if (mfu_read(fd, hdr, 8, deadline) == -1)
			return NULL;
		for (n = 0, i = 0; i < 8; i++)
			n = n << 8 | hdr[i];
	} while (n == 0);
	if (n > MFU_FRAMED_MAX || (s = malloc(n + 1)) == NULL)
		return NULL;
	if (mfu_read(fd, s, n, deadline) == -1) {
		free(s);
		return NULL;
	}
	s[n] = '\0';
	return s;
}

void
mfu_init(struct mfu *m, const char *dir, int timeout_ms)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->dir, sizeof(m->dir), "%s", dir);
	m->fd = -1;
	m->timeout_ms = timeout_ms;
}

int
mfu_probe(struct mfu *m, int port)
{
	int64_t	 deadline = mfu_now_ms() + MFU_PROBE_MS;
	char	*s = NULL;
	int	 fd, ok = 0;

	m->probes++;
	if ((fd = broker_dial(port)) == -1)
		return 0;
	if (mfu_handshake(fd, deadline) == 0 &&
	    mfu_send_frame(fd, "ping") == 0 &&
	    (s = mfu_recv_frame(fd, mfu_now_ms() + MFU_PROBE_MS)) != NULL)
		ok = strstr(s, "\"message\":\"pong\"") != NULL;
	free(s);
	close(fd);
	return ok;
}

/* The status file's JSON, or NULL.  Caller puts. */
static json_object *
mfu_status(const char *path)
{
	FILE		*f = fopen(path, "r");
	char		 buf[4096];
	size_t		 n;
	json_object	*o = NULL;

	if (f == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (jstrict_parse(buf, n, &o) != 0)
		return NULL;
	return o;
}

int
mfu_discover(struct mfu *m)
{
	DIR		*d = opendir(m->dir);
	struct dirent	*e;
	struct stat	 st;
	json_object	*o, *p;
	char		 path[PATH_MAX];
	time_t		 best = 0;
	int		 port;

	m->port = 0;
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, MFU_PREFIX, strlen(MFU_PREFIX)) != 0 ||
		    strstr(e->d_name, ".json") == NULL ||
		    strcmp(strstr(e->d_name, ".json"), ".json") != 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", m->dir,
		    e->d_name) >= sizeof(path) || stat(path, &st) == -1 || (o = mfu_status(path)) == NULL)
			continue;
		port = json_object_object_get_ex(o, "unity_port", &p) &&
		    json_object_is_type(p, json_type_int) ?
		    json_object_get_int(p) : 0;
		json_object_put(o);
		if (port > 0 && st.st_mtime >= best && mfu_probe(m, port)) {
			best = st.st_mtime;
			m->port = port;
			snprintf(m->status, sizeof(m->status), "%s", path);
		}
	}
	closedir(d);
	return m->port > 0 ? 0 : -1;
}

int
mfu_reloading(struct mfu *m)
{
	json_object	*o = mfu_status(m->status), *r;
	int		 yes;

	yes = o != NULL && json_object_object_get_ex(o, "reloading", &r) &&
	    json_object_get_boolean(r);
	json_object_put(o);
	return yes;
}

void
mfu_close(struct mfu *m)
{
	if (m->fd != -1)
		close(m->fd);
	m->fd = -1;
}

/* Connect and take the handshake: 0, or -1. */
static int
mfu_connect(struct mfu *m)
{
	if (m->fd != -1)
		return 0;
	if ((m->fd = broker_dial(m->port)) == -1)
		return -1;
	if (mfu_handshake(m->fd, mfu_now_ms() + MFU_HANDSHAKE_MS) == -1) {
		mfu_close(m);
		return -1;
	}
	return 0;
}

/* One try: the answer, or NULL (the connection is then closed). */
static json_object *
mfu_try(struct mfu *m, const char *payload)
{
	json_object	*r = NULL, *st;
	char		*s = NULL;

	if (mfu_connect(m) == 0 && mfu_send_frame(m->fd, payload) == 0)
		s = mfu_recv_frame(m->fd, mfu_now_ms() + m->timeout_ms);
	if (s != NULL && jstrict_parse_str(s, &r) != 0)
		r = NULL;
	free(s);
	/* An outer error closes the connection too: the next try is new. */
	if (r == NULL || (json_object_object_get_ex(r, "status", &st) &&
	    strcmp(json_object_get_string(st), "error") == 0))
		mfu_close(m);
	return r;
}

json_object *
mfu_send(struct mfu *m, const char *type, const char *params)
{
	json_object	*r = NULL, *st;
	char		*payload;

	if (asprintf(&payload, "{\"type\":\"%s\",\"params\":%s}", type,
	    params) == -1)
		ck_abort_msg("asprintf");
	for (m->tries = 1; m->tries <= MFU_TRIES; m->tries++) {
		json_object_put(r);
		if ((r = mfu_try(m, payload)) != NULL &&
		    json_object_object_get_ex(r, "status", &st) &&
		    strcmp(json_object_get_string(st), "success") == 0)
			break;
	}
	if (m->tries > MFU_TRIES)
		m->tries = MFU_TRIES;
	free(payload);
	return r;
}
