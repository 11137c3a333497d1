/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FUZZUTIL_H
#define CMDGATE_FUZZUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* What the harnesses of tests/fuzz/ share. */

struct event_base;
struct options;
struct server;

/* Say why on stderr, then abort(): an invariant failed. */
void		 fuzz_fail(const char *fmt, ...)
		    __attribute__((format(printf, 1, 2), noreturn));
/*
 * A directory of the process's own under $TMPDIR (or /tmp), made once
 * and removed with its contents at exit.  Static.
 */
const char	*fuzz_tmpdir(void);
/* Remove path and what is under it (a missing path is no error). */
void		 fuzz_rmtree(const char *path);
/* Write data[len] to path whole (abort if it cannot). */
void		 fuzz_write_file(const char *path, const void *data,
		    size_t len);
/*
 * buf[len] as one strict JSON value (jstrict): the value (caller puts;
 * NULL for JSON null), or fuzz_fail naming what.
 */
json_object	*fuzz_json(const char *what, const char *buf, size_t len);
/*
 * opt parsed from argv (cmdgated's flags; the state dir is the tmpdir),
 * then srv on base with the tool table in FUZZ_TOOLS_DIR/table (NULL:
 * the default table), no store, no token.  Aborts on error.
 */
void		 fuzz_server(struct server *, struct options *,
		    struct event_base *, const char *table, int argc,
		    char **argv);
/* Run base's ready callbacks, turn after turn, until a turn runs
 * nothing new (at most max turns); the number of turns run. */
int		 fuzz_loop_settle(struct event_base *, int max);

#endif
