/* SPDX-License-Identifier: ISC */
/*
 * The broker fixture and the answer checks the integration suites share
 * (check_integration, check_signals, check_sessions).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "integutil.h"
#include "testnet.h"

struct broker	b;

void
setup(void)
{
	broker_prepare(&b);
}

void
teardown(void)
{
	broker_stop(&b);
}

void
start(const char **args)
{
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
}

void
assert_pong(struct client *c)
{
	json_object	*r = client_call(c, PING);

	ck_assert_ptr_nonnull(jpath(r, "result"));
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 1);
	json_object_put(r);
}

/* A new connection is served: the broker survived what came before. */
void
assert_serves(void)
{
	struct client	*c = client_tcp(b.port);

	assert_pong(c);
	client_close(c);
}

void
assert_error(json_object *r, int code, const char *type)
{
	ck_assert_msg(r != NULL, "no answer");
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), code);
	ck_assert_str_eq(json_object_get_string(jpath(r, "error.data.type")),
	    type);
	ck_assert(json_object_object_get_ex(jpath(r, "error.data"), "command",
	    NULL));
	ck_assert_ptr_nonnull(jpath(r, "error.data.reason"));
}
