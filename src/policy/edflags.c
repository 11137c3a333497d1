/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <string.h>

#include <json-c/json.h>

#include "policy.h"

static void
edflags_count(unsigned *n, int from, int to)
{
	if (from && !to)
		(*n)--;
	else if (!from && to)
		(*n)++;
}

int
edflags_change(struct edflags *h, const struct editor_flags *from,
    const struct editor_flags *to)
{
	edflags_count(&h->tests_running, from->tests_running,
	    to->tests_running);
	edflags_count(&h->compiling, from->compiling, to->compiling);
	edflags_count(&h->busy, from->busy, to->busy);
	return memcmp(from, to, sizeof(*from)) != 0;
}

int
edflags_set_probe(struct edflags *h, const struct editor_flags *f)
{
	if (memcmp(&h->probe, f, sizeof(*f)) == 0)
		return 0;
	h->probe = *f;
	return 1;
}

void
edflags_get(const struct edflags *h, struct editor_flags *f)
{
	f->tests_running = h->tests_running > 0 || h->probe.tests_running;
	f->compiling = h->compiling > 0 || h->probe.compiling;
	f->busy = h->busy > 0 || h->probe.busy;
}

void
edflags_busy(const struct edflags *h, unsigned tool_bits, struct sched_busy *b)
{
	struct editor_flags	f;

	edflags_get(h, &f);
	b->tests_running = f.tests_running;
	b->compiling = f.compiling;
	b->editor_busy = f.busy;
	sched_hold(b, tool_bits);
}

json_object *
edflags_json(const struct sched_busy *b)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "tests_running",
	    json_object_new_boolean(b->tests_running));
	json_object_object_add(o, "compiling",
	    json_object_new_boolean(b->compiling));
	json_object_object_add(o, "editor_busy",
	    json_object_new_boolean(b->editor_busy));
	return o;
}
