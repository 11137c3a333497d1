/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_TOOLFWD_H
#define CMDGATE_TOOLFWD_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * The upstream members of cmdgate.tools(5): a tool's "forward" in its
 * object form and the table's "editor" probe.  Checked here, strictly;
 * the worker acts on them.  Library-like: nothing here exits or logs.
 */

#define FWD_CONNECT_TIMEOUT_DEFAULT	30	/* seconds */
#define FWD_CONNECT_TIMEOUT_MAX		3600
#define FWD_EVERY_MS_DEFAULT		1000
#define FWD_EVERY_MS_MIN		50
#define FWD_EVERY_MS_MAX		60000

/* Where a check failed: the member ("forward.await.until") and why. */
struct fwd_error {
	char	field[96];
	char	msg[448];
};

/*
 * Check the object form of forward, o, for a tool whose params schema is
 * schema (NULL: none): 0, or -1 with e filled.
 */
int	toolfwd_check(json_object *o, json_object *schema,
	    struct fwd_error *e);
/* Check the table's "editor" probe object: 0, or -1 with e filled. */
int	toolfwd_check_editor(json_object *o, struct fwd_error *e);

/*
 * Split a forward address, HOST:PORT or [IPV6]:PORT, into host (without
 * brackets) and port: 0, or -1 when it is neither.
 */
int	tool_forward_split(const char *, char *host, size_t hostlen,
	    char *port, size_t portlen);

#endif
