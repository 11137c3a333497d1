/* SPDX-License-Identifier: ISC */
/* What the rpc suites share: see rpcutil.c. */
#ifndef CMDGATE_RPCUTIL_H
#define CMDGATE_RPCUTIL_H

#include <json-c/json.h>

#include <event2/buffer.h>

#include "net.h"
#include "options.h"
#include "server.h"

extern struct options	 opt;
extern struct server	 srv;
extern struct evbuffer	*out;
extern struct conn	*c;
void	 setup(void);
void	 teardown(void);
json_object	*call(const char *line);
json_object	*get(json_object *o, const char *path);
const char	*getstr(json_object *o, const char *path);
void	 assert_error(json_object *r, int code, const char *type,
	    const char *cmd);
void	 expect_error(const char *line, int code, const char *type,
	    const char *cmd);
void	 expect_alive(void);

#endif
