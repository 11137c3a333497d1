/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FAKEUP_H
#define CMDGATE_FAKEUP_H

#include <sys/types.h>

#include <stddef.h>

#include <json-c/json.h>

/*
 * check_dialects' harness: loopback fake upstreams that fork per
 * connection and count in shared memory, and the worker run on a spec
 * written to its fd 3 (tests/check_dialects.c).
 */

/* What the fake's connections tell the test. */
struct shared {
	int	requests;	/* calls other than pings and polls */
	int	polls;
	int	cancels;
	int	pings;
	int	conns;
	int	active;		/* connections open now */
	int	overlap;	/* two were open at once */
	int	phase;		/* a fake's own state across connections */
};

typedef void	(*serve_fn)(int fd);

extern struct shared	*sh;
extern pid_t		 fake;		/* the fake's process group */
extern int		 fake_port;
extern int		 note[2];	/* the fake writes a byte per call */
extern char		 lockdir[64];	/* the spec's lock_dir */

void		 dia_setup(void);
void		 dia_teardown(void);
/* The fake tells c; the test waits for it. */
void		 tell(char c);
void		 await_note(char c);
/* A loopback listener on port (0: any); fake_port is set. */
int		 listen_on(int port);
/* A fake on port (0: any) serving each connection with fn. */
void		 fake_start(int port, serve_fn fn);
int		 read_all(int fd, void *buf, size_t n);
/* A unity-mcp frame (caller puts; "ping" is {"ping":true}), or NULL. */
json_object	*frame_read(int fd);
void		 frame_write(int fd, const char *s);
/* The string at path in o, borrowed. */
const char	*fstr(json_object *o, const char *path);
pid_t		 worker_spawn(const char *spec, int *out, int *err);
pid_t		 worker_start(const char *cmd, int *out, int *err);
json_object	*worker_result(pid_t pid, int fd);
json_object	*run(const char *cmd);
void		 assert_result(json_object *r, int ok, const char *etype);

#endif
