/* SPDX-License-Identifier: ISC */
/*
 * check_dialects' harness: loopback fakes that fork per connection, and
 * the worker run directly on a spec (fd 3), its events on fd 1.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "fakeup.h"
#include "jsonl.h"
#include "jtemplate.h"

struct shared		*sh;
pid_t			 fake = -1;	/* its process group */
int			 fake_port;
int			 note[2];	/* the fake writes a byte per call */
char			 lockdir[64];

void
dia_setup(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED |
	    MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(sh, MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	ck_assert_int_eq(pipe(note), 0);
	snprintf(lockdir, sizeof(lockdir), "/tmp/cgdialects.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(lockdir));
	signal(SIGPIPE, SIG_IGN);
}

void
dia_teardown(void)
{
	char	cmd[128];

	if (fake > 0) {
		kill(-fake, SIGKILL);
		waitpid(fake, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", lockdir);
	(void)!system(cmd);
}

/* ---- the fakes -------------------------------------------------------- */

void
tell(char c)
{
	(void)!write(note[1], &c, 1);
}

/* Wait for the fake to tell c (bounded by the test's timeout). */
void
await_note(char c)
{
	char	got;

	while (read(note[0], &got, 1) == 1)
		if (got == c)
			return;
	ck_abort_msg("the fake's pipe closed");
}

int
listen_on(int port)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)port);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(fd, 16), 0);
	getsockname(fd, (struct sockaddr *)&sin, &len);
	fake_port = ntohs(sin.sin_port);
	return fd;
}

/* A fake on port (0: any) serving each connection in a child of its own. */
void
fake_start(int port, serve_fn fn)
{
	int	lfd = listen_on(port), fd, a;

	if ((fake = fork()) != 0) {
		close(lfd);
		setpgid(fake, fake);
		return;
	}
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);	/* a failed test ends it too */
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) == -1)
			_exit(1);
		__atomic_add_fetch(&sh->conns, 1, __ATOMIC_SEQ_CST);
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(lfd);
			if ((a = __atomic_add_fetch(&sh->active, 1,
			    __ATOMIC_SEQ_CST)) > 1)
				sh->overlap = 1;
			fn(fd);
			__atomic_sub_fetch(&sh->active, 1, __ATOMIC_SEQ_CST);
			close(fd);
			_exit(0);
		}
		close(fd);
	}
}

int
read_all(int fd, void *buf, size_t n)
{
	size_t	off = 0;
	ssize_t	r;

	while (off < n) {
		if ((r = read(fd, (char *)buf + off, n - off)) <= 0)
			return -1;
		off += (size_t)r;
	}
	return 0;
}

/* One unity-mcp frame (caller puts; "ping" is {"ping":true}), or NULL. */
json_object *
frame_read(int fd)
{
	unsigned char	 h[8];
	uint64_t	 n = 0;
	char		*buf;
	json_object	*o;
	int		 i;

	if (read_all(fd, h, 8) == -1)
		return NULL;
	for (i = 0; i < 8; i++)
		n = n << 8 | h[i];
	if (n == 0 || n > 1 << 20 || (buf = calloc(1, n + 1)) == NULL ||
	    read_all(fd, buf, n) == -1)
		return NULL;
	o = strcmp(buf, "ping") == 0 ? json_tokener_parse("{\"ping\":true}") :
	    json_tokener_parse(buf);
	free(buf);
	return o;
}

void
frame_write(int fd, const char *s)
{
	uint64_t	n = strlen(s);
	unsigned char	h[8];
	int		i;

	for (i = 0; i < 8; i++)
		h[i] = (unsigned char)(n >> (56 - 8 * i));
	(void)!write(fd, h, 8);
	(void)!write(fd, s, n);
}

const char *
fstr(json_object *o, const char *path)
{
	return json_object_get_string(jpath_get(o, path));
}

/* ---- running the worker ----------------------------------------------- */

/* Start the worker on spec: its pid, *out its events, *err its stderr. */
pid_t
worker_spawn(const char *spec, int *out, int *err)
{
	const char	*w = getenv("CMDGATE_WORKER");
	int		 sp[2], ev[2], er[2];
	pid_t		 pid;

	ck_assert_int_eq(pipe(sp), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, ev), 0);
	ck_assert_int_eq(pipe(er), 0);
	if ((pid = fork()) == 0) {
		close(note[0]);
		close(note[1]);
		dup2(sp[0], 3);
		dup2(ev[1], 1);
		dup2(er[1], 2);
		execl(w != NULL ? w : "workers/cmdgate-worker",
		    "cmdgate-worker", (char *)NULL);
		_exit(127);
	}
	close(sp[0]);
	close(ev[1]);
	close(er[1]);
	ck_assert_int_eq(write(sp[1], spec, strlen(spec)), (ssize_t)strlen(spec));
	close(sp[1]);
	*out = ev[0];
	if (err != NULL)
		*err = er[0];
	else
		close(er[0]);
	return pid;
}

/* The worker on a spec of one command cmd (JSON, %d: the fake's port). */
pid_t
worker_start(const char *cmd, int *out, int *err)
{
	char	spec[4096], c[2048];

	snprintf(c, sizeof(c), cmd, fake_port);
	snprintf(spec, sizeof(spec), "{\"ticket\":\"t\",\"lock_dir\":\"%s\","
	    "\"commands\":[%s]}", lockdir, c);
	return worker_spawn(spec, out, err);
}

/* The command's result from events fd (caller puts); reaps pid. */
json_object *
worker_result(pid_t pid, int fd)
{
	struct jsonl	 jl;
	json_object	*ev, *r = NULL;
	int		 status;

	jsonl_init(&jl, fd, 1 << 20);
	while (r == NULL && jsonl_json(&jl, 20000, &ev) == JSONL_MSG) {
		if (strcmp(fstr(ev, "event"), "result") == 0)
			r = json_object_get(jpath_get(ev, "result"));
		json_object_put(ev);
	}
	jsonl_free(&jl);
	close(fd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(r != NULL, "the worker sent no result (status %d)", status);
	return r;
}

/* Run cmd to its end: the result (caller puts). */
json_object *
run(const char *cmd)
{
	int	fd;
	pid_t	pid = worker_start(cmd, &fd, NULL);

	return worker_result(pid, fd);
}

void
assert_result(json_object *r, int ok, const char *etype)
{
	const char	*s = json_object_to_json_string(r);

	ck_assert_msg(json_object_get_boolean(jpath_get(r, "ok")) == ok,
	    "%s", s);
	if (etype != NULL)
		ck_assert_msg(fstr(r, "error_type") != NULL &&
		    strcmp(fstr(r, "error_type"), etype) == 0, "%s", s);
}

