/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: STATE_DIR/editor-flags as the broker reads it at
 * start (edsaved.c edsaved_restore).  Whatever it holds, the flags read
 * are each 0 or 1, restored with an --editor-grace; with none, nothing
 * is restored and a file that held flags goes.  Then the flags read are recorded as the broker records them
 * (edsaved_update, live clients holding them) and read back: the same.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "../../src/engine/internal.h"
#include "engine.h"
#include "fuzzutil.h"
#include "log.h"
#include "options.h"
#include "policy.h"

static struct event_base	*base;
static struct options		 opt;
static struct edflags		 holds;
static struct jobs		 J;
static char			*path;

static void
grace_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_init(LOG_LVL_ERROR, "fuzz");
	base = event_base_new();
	opt.state_dir = (char *)fuzz_tmpdir();
	J.cfg.base = base;
	J.cfg.opt = &opt;
	J.cfg.holds = &holds;
	J.grace_ev = evtimer_new(base, grace_cb, NULL);
	if (asprintf(&path, "%s/editor-flags", opt.state_dir) == -1)
		abort();
	return 0;
}

static void
check_bits(const struct sched_busy *b, const char *what)
{
	if ((b->tests_running | b->compiling | b->editor_busy) & ~1)
		fuzz_fail("%s flags not 0 or 1: %d %d %d", what,
		    b->tests_running, b->compiling, b->editor_busy);
}

static int
any(const struct sched_busy *b)
{
	return b->tests_running || b->compiling || b->editor_busy;
}

/* Record b as live clients holding it would, then read it back. */
static void
round_trip(const struct sched_busy *b)
{
	struct sched_busy	got;

	memset(&holds, 0, sizeof(holds));
	holds.tests_running = (unsigned)b->tests_running;
	holds.compiling = (unsigned)b->compiling;
	holds.busy = (unsigned)b->editor_busy;
	/* Unlike any flags: the file is written (or removed) now. */
	memset(&J.editor_saved, 0xff, sizeof(J.editor_saved));
	edsaved_update(&J);
	if (any(b) != (access(path, F_OK) == 0))
		fuzz_fail("editor-flags %s with flags %d %d %d", any(b) ?
		    "missing" : "left", b->tests_running, b->compiling,
		    b->editor_busy);
	opt.editor_grace = 5;
	memset(&J.editor_saved, 0xff, sizeof(J.editor_saved));
	edsaved_restore(&J);
	got = J.editor_saved;
	if (memcmp(&got, b, sizeof(got)) != 0)
		fuzz_fail("flags %d %d %d read back as %d %d %d",
		    b->tests_running, b->compiling, b->editor_busy,
		    got.tests_running, got.compiling, got.editor_busy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sched_busy	read, none = { 0, 0, 0 };

	/* With a grace: what the file holds, restored. */
	fuzz_write_file(path, data, size);
	opt.editor_grace = 5;
	memset(&J.editor_saved, 0xff, sizeof(J.editor_saved));
	memset(&J.editor_restored, 0, sizeof(J.editor_restored));
	memset(&holds, 0, sizeof(holds));
	edsaved_restore(&J);
	read = J.editor_saved;
	check_bits(&read, "read");
	if (memcmp(&J.editor_restored, any(&read) ? &read : &none,
	    sizeof(read)) != 0)
		fuzz_fail("read %d %d %d, restored %d %d %d",
		    read.tests_running, read.compiling, read.editor_busy,
		    J.editor_restored.tests_running,
		    J.editor_restored.compiling,
		    J.editor_restored.editor_busy);
	evtimer_del(J.grace_ev);
	/* Without: nothing restored, and a file that held flags goes. */
	opt.editor_grace = 0;
	memset(&J.editor_restored, 0, sizeof(J.editor_restored));
	edsaved_restore(&J);
	if (any(&J.editor_restored) || (any(&read) && access(path, F_OK) == 0))
		fuzz_fail("no grace: flags restored or the file kept");
	round_trip(&read);
	evtimer_del(J.grace_ev);
	unlink(path);
	return 0;
}
