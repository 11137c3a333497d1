/* SPDX-License-Identifier: ISC */
/* What the integration suites share: see integutil.c. */
#ifndef CMDGATE_INTEGUTIL_H
#define CMDGATE_INTEGUTIL_H

#include <json-c/json.h>

#include "testnet.h"

#define PING	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"

extern struct broker	b;
void	 setup(void);
void	 teardown(void);
void	 start(const char **args);
void	 assert_pong(struct client *c);
void	 assert_serves(void);
void	 assert_error(json_object *r, int code, const char *type);

#endif
