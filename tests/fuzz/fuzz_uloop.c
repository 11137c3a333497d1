/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: the uloop face (face_uloop.c) as uLoopMCP's clients
 * reach it: JSON-RPC 2.0 in either framing (a message per line, or
 * Content-Length frames), its own methods (ping, set-client-name,
 * get-tool-details, ...) and each table tool by name, on a broker with
 * the uloop tool table and no store (a tool's call is refused as a face
 * job).  The first byte says how the rest is cut into reads.
 *
 * What must hold: every message out is framed as the client framed its
 * own, strict JSON-RPC 2.0; an error has a code, a message and data with
 * its type and the same message (what the uloop CLI shows); no answer of
 * the face's own carries "Ver".  One answer for each request and each
 * message that is no valid notification, with the request's id (null
 * when it had none valid): at once and in order for what the face
 * answers itself, later for a table tool's call; when the framing fails,
 * one last error, and calls still running go unanswered.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "fuzzutil.h"
#include "jstrict.h"
#include "net.h"
#include "options.h"
#include "server.h"
#include "tools.h"

static struct event_base	*base;
static struct options		 opt;
static struct server		 srv;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char	*a[] = { "cmdgated", "--max-message", "65536", NULL };

	(void)argc;
	(void)argv;
	base = event_base_new();
	fuzz_server(&srv, &opt, base, "uloop.json", 3, a);
	return 0;
}

/* An answer due: its id as JSON text; whether it comes later (a table
 * tool's face job) or at once, in the order of the requests. */
struct due {
	char	*id;
	int	 later;
	int	 got;
};

/* The answer due to msg[len]; 0 when it gets none. */
static int
expected_one(const char *msg, size_t len, struct due *d)
{
	struct rpc_error	 err;
	json_object		*o, *id = NULL, *params;
	const struct tool	*t;
	const char		*method = NULL;
	int			 notif = 0, bad;

	memset(d, 0, sizeof(*d));
	if (jstrict_parse(msg, len, &o) != 0) {
		d->id = strdup("null");
		return 1;
	}
	memset(&err, 0, sizeof(err));
	bad = rpc_check(o, &id, &method, &notif, &err) == -1 ||
	    rpc_check_params(o, &params, &err) == -1;
	if (!bad && notif) {
		json_object_put(o);
		return 0;
	}
	d->id = strdup(id != NULL ? json_object_to_json_string_ext(id,
	    JSON_C_TO_STRING_PLAIN) : "null");
	d->later = !bad && (t = tooltab_find(srv.tools, method)) != NULL &&
	    t->enabled;
	json_object_put(o);
	return 1;
}

/* What the input asks, framed as the face frames it: the answers due,
 * in the order of the requests (at most max); *failed when the framing
 * fails, with its error last. */
static size_t
expected(const uint8_t *data, size_t size, struct due *due, size_t max,
    int *failed)
{
	struct framer		 fr;
	struct evbuffer		*in = evbuffer_new();
	enum frame_status	 st;
	char			*msg;
	size_t			 len, n = 0;

	frame_init(&fr, opt.max_message);
	evbuffer_add(in, data, size);
	while ((st = frame_next(&fr, in, &msg, &len)) == FRAME_MSG) {
		if (n < max && expected_one(msg, len, &due[n]))
			n++;
		free(msg);
	}
	*failed = st == FRAME_TOO_LARGE || st == FRAME_BAD_HEADER;
	if (*failed && n < max) {
		memset(&due[n], 0, sizeof(due[n]));
		due[n++].id = strdup("null");
	}
	evbuffer_free(in);
	return n;
}

/* One answer: JSON-RPC 2.0 of the uloop face's shape; its id (caller
 * frees). */
static char *
check_answer(const char *buf, size_t len)
{
	json_object	*o = fuzz_json("a uloop answer", buf, len), *e, *d;
	json_object	*r;
	char		*id;

	if (!json_object_is_type(o, json_type_object) ||
	    strcmp(json_object_get_string(json_object_object_get(o,
	    "jsonrpc")), "2.0") != 0 ||
	    !json_object_object_get_ex(o, "id", NULL) ||
	    json_object_object_get_ex(o, "result", &r) ==
	    json_object_object_get_ex(o, "error", &e))
		fuzz_fail("not a JSON-RPC answer: %.*s", (int)len, buf);
	if (r != NULL && json_object_object_get_ex(r, "Ver", NULL))
		fuzz_fail("an answer of cmdgate's own with Ver");
	if (e != NULL && (!json_object_is_type(json_object_object_get(e,
	    "code"), json_type_int) || !json_object_is_type(
	    json_object_object_get(e, "message"), json_type_string) ||
	    !json_object_object_get_ex(e, "data", &d) ||
	    !json_object_is_type(json_object_object_get(d, "type"),
	    json_type_string) || !json_object_equal(json_object_object_get(d,
	    "message"), json_object_object_get(d, "type"))))
		fuzz_fail("not the uloop face's error: %.*s", (int)len, buf);
	id = strdup(json_object_to_json_string_ext(json_object_object_get(o,
	    "id"), JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return id;
}

/*
 * Match id with the next answer due at once, or else with one due
 * later (answers of equal ids are alike): 0, or -1 when none is due.
 */
static int
match(struct due *due, size_t n, size_t *next, const char *id)
{
	size_t	i;

	while (*next < n && due[*next].later)
		(*next)++;
	if (*next < n && strcmp(due[*next].id, id) == 0) {
		due[(*next)++].got = 1;
		return 0;
	}
	for (i = 0; i < n; i++)
		if (due[i].later && !due[i].got && strcmp(due[i].id, id) == 0) {
			due[i].got = 1;
			return 0;
		}
	return -1;
}

static void
check_out(struct evbuffer *out, struct due *due, size_t n, int failed)
{
	struct framer		 fr;
	enum frame_status	 st;
	char			*msg, *id;
	size_t			 len, i, next = 0;

	frame_init(&fr, SIZE_MAX / 2);
	while ((st = frame_next(&fr, out, &msg, &len)) == FRAME_MSG) {
		id = check_answer(msg, len);
		if (match(due, n, &next, id) == -1)
			fuzz_fail("an answer with id %s, not due", id);
		free(id);
		free(msg);
	}
	if (st != FRAME_MORE || evbuffer_get_length(out) > 0)
		fuzz_fail("output not framed whole");
	/* Closed on a framing error: calls still running go unanswered. */
	for (i = 0; i < n; i++)
		if (!due[i].got && (!due[i].later || !failed))
			fuzz_fail("no answer with id %s", due[i].id);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evbuffer	*out, *in;
	struct conn	*c;
	struct due	 due[512];
	size_t		 off = 0, k, step, turns, before, n, i;
	int		 failed;

	if (size < 1)
		return 0;
	step = 1 + data[0] % 128;
	data++;
	size--;
	out = evbuffer_new();
	in = evbuffer_new();
	c = server_conn_new(&srv, NULL, out, 1, "fuzz");
	conn_set_face(c, FACE_ULOOP);
	for (turns = 0; turns < 10000 && !c->closing; turns++) {
		k = size - off < step ? size - off : step;
		evbuffer_add(in, data + off, k);
		off += k;
		before = evbuffer_get_length(in);
		conn_input(c, in);
		/* The face jobs' news. */
		fuzz_loop_settle(base, 16);
		if (off == size && c->face_waits == 0 &&
		    evbuffer_get_length(in) == before)
			break;
	}
	n = expected(data, size, due, 512, &failed);
	if (n < 512)
		check_out(out, due, n, failed);
	for (i = 0; i < n; i++)
		free(due[i].id);
	server_conn_free(&srv, c);
	fuzz_loop_settle(base, 16);
	evbuffer_free(in);
	evbuffer_free(out);
	return 0;
}
