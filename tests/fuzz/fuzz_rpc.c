/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: one message through the JSON-RPC path (parse, checks,
 * dispatch, the methods, the answer), on a connection with no socket and a
 * broker with no store.  Whatever comes in, one line goes out at most per
 * request, and it is strict JSON (jstrict: RFC 8259, UTF-8).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "fuzzutil.h"
#include "jstrict.h"
#include "log.h"
#include "net.h"
#include "../../src/daemon/daemon.h"
#include "options.h"
#include "server.h"
#include "tools.h"

static struct options	opt;
static struct server	srv;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char	*a[] = { "cmdgated", "--state-dir", "/nonexistent", NULL };
	char	 err[256];

	(void)argc;
	(void)argv;
	log_init(LOG_LVL_ERROR, "fuzz");
	if (options_parse(&opt, 3, a, stdout, err, sizeof(err)) != OPT_RUN)
		abort();
	server_init(&srv, NULL, &opt, tooltab_default());
	srv.token = strdup("tok");
	srv.tokenlen = 3;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evbuffer	*out = evbuffer_new();
	struct conn	*c = server_conn_new(&srv, NULL, out, size > 0 &&
			    (data[0] & 1), "fuzz");
	char		*msg = malloc(size + 1), *line;
	size_t		 n;
	json_object	*o;

	memcpy(msg, data, size);
	msg[size] = '\0';
	conn_message(c, msg, size);
	while ((line = evbuffer_readln(out, &n, EVBUFFER_EOL_LF)) != NULL) {
		/* Every answer is JSON, strictly: RFC 8259, UTF-8. */
		if (jstrict_parse(line, n, &o) != 0)
			fuzz_fail("an answer that is not JSON: %s", line);
		json_object_put(o);
		free(line);
	}
	free(msg);
	server_conn_free(&srv, c);
	evbuffer_free(out);
	return 0;
}
