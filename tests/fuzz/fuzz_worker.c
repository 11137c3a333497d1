/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: a worker's event lines as the broker reads them
 * (worker.c worker_read, the parse of each event and its checks).  The
 * first byte says how the rest is cut into reads; every cut must tell
 * the hooks the same events as one read, each of the shape its hook is
 * promised (a start's group, a result object, a checked progress or log
 * event), nothing after a garbled line, and with a small event_max no
 * partial line is ever kept past it.
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "fuzzutil.h"
#include "jstrict.h"
#include "proc.h"

/* What the hooks were told, one line per call. */
static struct evbuffer	*said;

static void
said_add(const char *what, struct worker *w, json_object *o)
{
	if (w->garbled != NULL)
		fuzz_fail("%s told after the worker was garbled", what);
	evbuffer_add_printf(said, "%s %zu %d %s\n", what, w->next_index,
	    (int)w->tool_pgid, o != NULL ? jstrict_to_string(o) : "");
}

static void
hook_started(void *arg, struct worker *w)
{
	(void)arg;
	if (w->tool_pgid <= 1)
		fuzz_fail("started with group %d", (int)w->tool_pgid);
	said_add("started", w, NULL);
}

static int
hook_result(void *arg, struct worker *w, json_object *res)
{
	(void)arg;
	if (!json_object_is_type(res, json_type_object))
		fuzz_fail("a result that is no object");
	said_add("result", w, res);
	return 0;
}

/* A number of ev's member name, or -1 when it is none. */
static double
number(json_object *ev, const char *name)
{
	json_object	*v = json_object_object_get(ev, name);

	if (!json_object_is_type(v, json_type_int) &&
	    !json_object_is_type(v, json_type_double))
		return -1;
	return json_object_get_double(v);
}

static void
hook_note(void *arg, struct worker *w, json_object *ev)
{
	json_object	*m = json_object_object_get(ev, "message");
	const char	*kind = json_object_get_string(
			    json_object_object_get(ev, "event"));

	(void)arg;
	if (m != NULL && !json_object_is_type(m, json_type_string))
		fuzz_fail("a note whose message is no string");
	if (strcmp(kind, "log") == 0 ? m == NULL ||
	    !json_object_is_type(json_object_object_get(ev, "level"),
	    json_type_string) : number(ev, "progress") < 0 ||
	    (json_object_object_get_ex(ev, "total", NULL) &&
	    number(ev, "total") <= 0))
		fuzz_fail("a note of the wrong shape: %s",
		    jstrict_to_string(ev));
	said_add("note", w, ev);
}

static void
hook_answer(void *arg, struct worker *w, json_object *res)
{
	(void)arg;
	said_add("answer", w, res);
}

/* Feed data[n] in reads of step bytes; what the hooks heard (caller
 * frees). */
static char *
run(const uint8_t *data, size_t n, size_t step, size_t max, size_t *len)
{
	struct workers	 W;
	struct worker	 w;
	struct evbuffer	*in = evbuffer_new();
	size_t		 off, k;
	char		*out;

	memset(&W, 0, sizeof(W));
	W.event_max = max;
	W.hooks.started = hook_started;
	W.hooks.result = hook_result;
	W.hooks.note = hook_note;
	W.hooks.answer = hook_answer;
	memset(&w, 0, sizeof(w));
	w.W = &W;
	/* No process: a pid none can have, and worker_kill does nothing. */
	w.pid = INT_MAX;
	w.reaped = 1;
	w.job = (struct job *)&w;	/* any job: the hooks never look */
	said = evbuffer_new();
	for (off = 0; off < n; off += k) {
		k = n - off < step ? n - off : step;
		evbuffer_add(in, data + off, k);
		worker_read(&w, in);
		if (w.garbled != NULL && evbuffer_get_length(in) > 0)
			fuzz_fail("input kept after the worker was garbled");
		if (w.garbled == NULL && evbuffer_get_length(in) > max)
			fuzz_fail("%zu bytes kept, over event_max %zu",
			    evbuffer_get_length(in), max);
	}
	evbuffer_add_printf(said, "end %s\n", w.garbled != NULL ? w.garbled :
	    "");
	free(w.garbled);
	evbuffer_free(in);
	*len = evbuffer_get_length(said);
	out = malloc(*len + 1);
	evbuffer_remove(said, out, *len);
	evbuffer_free(said);
	return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*a, *b, *c;
	size_t	 la, lb, lc, step;

	if (size < 1)
		return 0;
	step = 1 + data[0] % 97;
	/* event_max above any input: cutting must not matter. */
	a = run(data + 1, size - 1, size, SIZE_MAX / 2, &la);
	b = run(data + 1, size - 1, step, SIZE_MAX / 2, &lb);
	if (la != lb || memcmp(a, b, la) != 0)
		fuzz_fail("one read and reads of %zu differ:\n%.*s---\n%.*s",
		    step, (int)la, a, (int)lb, b);
	/* A small event_max: checked inside run(). */
	c = run(data + 1, size - 1, step, 16 + data[0] % 64, &lc);
	free(a);
	free(b);
	free(c);
	return 0;
}
