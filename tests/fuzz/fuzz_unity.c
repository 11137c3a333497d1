/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: the unity-mcp face (face_unity.c) as a client of
 * MCP for Unity's bridge reaches it: the WELCOME line, then 8-byte
 * big-endian frames of {"type", "params"} commands and pings, through
 * the connection's framer, on a broker with the unity-mcp tool table
 * and no store (each tool's command is refused as a face job).  The
 * first byte says how the rest is cut into reads.
 *
 * What must hold: the WELCOME line first, then only frames of at most
 * the bridge's limit, each a JSON object with status "success" (and a
 * result) or "error" (and an error text); a ping is answered with the
 * bridge's exact pong; every whole frame gets exactly one answer, in
 * order, and a frame of length 0 or over the limit one last error.
 *
 * Then, as a second door, the answers the face makes of a face job's
 * news (unity_answer): the input's JSON as a command result, for each
 * kind of news; each answer is a success with a result, an object when
 * the face says why it has none (held, refused, failed).
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "faces.h"
#include "fuzzutil.h"
#include "jstrict.h"
#include "net.h"
#include "options.h"
#include "server.h"

static struct event_base	*base;
static struct options		 opt;
static struct server		 srv;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char	*a[] = { "cmdgated", NULL };

	(void)argc;
	(void)argv;
	base = event_base_new();
	fuzz_server(&srv, &opt, base, "unity-mcp.json", 1, a);
	return 0;
}

static uint64_t
be64(const uint8_t *p)
{
	uint64_t	v = 0;
	int		i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static int
is_ping(const uint8_t *p, size_t n)
{
	while (n > 0 && isspace(*p)) {
		p++;
		n--;
	}
	while (n > 0 && isspace(p[n - 1]))
		n--;
	return n == 4 && memcmp(p, "ping", 4) == 0;
}

/* The face's frame limit: --max-message, at most the bridge's own. */
static uint64_t
frame_max(void)
{
	return opt.max_message < FRAME_UNITY_MAX ? opt.max_message :
	    FRAME_UNITY_MAX;
}

/*
 * What the input asks, read here on its own: *pings[i] whether frame i
 * is a ping; the number of whole frames, and *last whether a bad frame
 * (length 0, or over the limit) ends it.
 */
static size_t
frames(const uint8_t *p, size_t n, int *pings, size_t maxf, int *last)
{
	size_t		nf = 0;
	uint64_t	len;

	*last = 0;
	while (n >= 8) {
		len = be64(p);
		if (len == 0 || len > frame_max()) {
			*last = 1;
			break;
		}
		if (n - 8 < len)
			break;
		if (nf < maxf)
			pings[nf] = is_ping(p + 8, (size_t)len);
		nf++;
		p += 8 + len;
		n -= 8 + (size_t)len;
	}
	return nf;
}

/* One answer of the face: a checked envelope. */
static void
check_answer(const char *buf, size_t len, int ping)
{
	json_object	*o = fuzz_json("a unity answer", buf, len), *v;
	const char	*status;

	if (ping && (len != strlen(UNITY_PONG) ||
	    memcmp(buf, UNITY_PONG, len) != 0))
		fuzz_fail("a ping answered %.*s", (int)len, buf);
	status = json_object_get_string(json_object_object_get(o, "status"));
	if (!json_object_is_type(o, json_type_object) || status == NULL ||
	    (strcmp(status, "success") == 0 ?
	    !json_object_object_get_ex(o, "result", NULL) :
	    strcmp(status, "error") != 0 || !json_object_object_get_ex(o,
	    "error", &v) || !json_object_is_type(v, json_type_string)))
		fuzz_fail("not the bridge's envelope: %.*s", (int)len, buf);
	json_object_put(o);
}

/* The WELCOME line and the frames out, against what came in. */
static void
check_out(struct evbuffer *out, const int *pings, size_t nf, int last)
{
	size_t		 n, len, got = 0;
	char		*line, *body;
	unsigned char	 h[8];

	line = evbuffer_readln(out, &n, EVBUFFER_EOL_LF);
	if (line == NULL || strcmp(line, UNITY_WELCOME) != 0)
		fuzz_fail("no WELCOME line first");
	free(line);
	while (evbuffer_get_length(out) > 0) {
		if (evbuffer_remove(out, h, 8) != 8)
			fuzz_fail("a frame header cut short");
		len = (size_t)be64(h);
		if (len == 0 || len > frame_max() ||
		    evbuffer_get_length(out) < len)
			fuzz_fail("a frame of %zu bytes out", len);
		body = malloc(len);
		evbuffer_remove(out, body, len);
		check_answer(body, len, got < nf && pings[got]);
		free(body);
		got++;
	}
	if (got != nf + (size_t)last)
		fuzz_fail("%zu frames in (%s), %zu answers", nf, last ?
		    "then a bad one" : "whole", got);
}

static void
run_conn(const uint8_t *data, size_t size, size_t step)
{
	struct evbuffer	*out = evbuffer_new(), *in = evbuffer_new();
	struct conn	*c = server_conn_new(&srv, NULL, out, 1, "fuzz");
	size_t		 off = 0, k, nf, turns, before;
	int		 pings[256], last;

	conn_set_face(c, FACE_UNITY);
	for (turns = 0; turns < 10000 && !c->closing; turns++) {
		k = size - off < step ? size - off : step;
		evbuffer_add(in, data + off, k);
		off += k;
		before = evbuffer_get_length(in);
		conn_input(c, in);
		/* The face jobs' news, and what it lets the connection read. */
		fuzz_loop_settle(base, 16);
		if (off == size && c->holds == 0 &&
		    evbuffer_get_length(in) == before)
			break;
	}
	nf = frames(data, size, pings, 256, &last);
	if (nf <= 256)
		check_out(out, pings, nf, last);
	server_conn_free(&srv, c);
	fuzz_loop_settle(base, 16);
	evbuffer_free(in);
	evbuffer_free(out);
}

/* The face's answers to a job's news of result r (borrowed). */
static void
run_news(json_object *r, uint8_t flags)
{
	struct facejob_news	 n;
	json_object		*a, *res;
	int			 ev;

	for (ev = FJ_DONE; ev <= FJ_REFUSED; ev++) {
		memset(&n, 0, sizeof(n));
		n.event = (enum facejob_event)ev;
		n.ticket = ev == FJ_REFUSED ? NULL : "t-000001";
		n.result = r;
		n.ok = flags & 1;
		n.attached = (flags & 2) != 0;
		n.code = -32602;
		n.type = flags & 4 ? "invalid_params" : NULL;
		n.why = flags & 8 ? "tests_running" : NULL;
		a = unity_answer(flags & 16 ? "run_tests" : "refresh_unity",
		    &n);
		res = json_object_object_get(a, "result");
		/* What the face says itself is a failure object; an answer
		 * that ran is the editor's own, whatever it is. */
		if (strcmp(json_object_get_string(json_object_object_get(a,
		    "status")), "success") != 0 ||
		    !json_object_object_get_ex(a, "result", NULL) ||
		    ((ev == FJ_HELD || ev == FJ_REFUSED || (ev == FJ_DONE &&
		    !n.ok)) && !json_object_is_type(res, json_type_object)) ||
		    jstrict_check(jstrict_to_string(a),
		    strlen(jstrict_to_string(a))) != 0)
			fuzz_fail("news %d answered %s", ev,
			    jstrict_to_string(a));
		json_object_put(a);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_object	*r;

	if (size < 1)
		return 0;
	if (data[0] == 0xff) {
		/* The news door: byte 2 its flags, then the result. */
		if (size >= 2 && jstrict_parse((const char *)data + 2,
		    size - 2, &r) == 0) {
			run_news(r, data[1]);
			json_object_put(r);
		}
		return 0;
	}
	run_conn(data + 1, size - 1, 1 + data[0] % 128);
	return 0;
}
