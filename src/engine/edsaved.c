/* SPDX-License-Identifier: ISC */
/*
 * Editor flags across a restart (cmdgated(8), --editor-grace): what the
 * editor clients held is kept in STATE_DIR/editor-flags, and after a
 * restart it holds reload jobs until they report again.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "jstrict.h"
#include "log.h"
#include "options.h"
#include "policy.h"
#include "util.h"

#define EDITOR_FILE	"editor-flags"	/* in the state dir */
#define EDITOR_FILE_MAX	512

/* The editor flags of the live connections. */
static void
edsaved_now(struct jobs *J, struct sched_busy *b)
{
	edflags_busy(J->cfg.holds, 0, b);
}

static int
edsaved_any(const struct sched_busy *b)
{
	return b->tests_running || b->compiling || b->editor_busy;
}

/*
 * Record b in STATE_DIR/editor-flags (written whole, then renamed), or
 * remove the file when nothing is held.  No sync: a crash of the machine
 * ends the editors' commands too.
 */
static void
edsaved_save(struct jobs *J, const struct sched_busy *b)
{
	char	*path, *tmp, buf[128];
	int	 fd, n, ok;

	path = xasprintf("%s/%s", J->cfg.opt->state_dir, EDITOR_FILE);
	tmp = xasprintf("%s.tmp", path);
	if (!edsaved_any(b))
		ok = unlink(path) == 0 || errno == ENOENT;
	else {
		n = snprintf(buf, sizeof(buf), "{\"tests_running\":%s,"
		    "\"compiling\":%s,\"editor_busy\":%s}\n",
		    b->tests_running ? "true" : "false",
		    b->compiling ? "true" : "false",
		    b->editor_busy ? "true" : "false");
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		ok = fd != -1 && write(fd, buf, (size_t)n) == n;
		if (fd != -1 && close(fd) == -1)
			ok = 0;
		ok = ok && rename(tmp, path) == 0;
		if (!ok && fd != -1)
			(void)unlink(tmp);
	}
	if (ok)
		J->editor_saved = *b;
	else
		log_warn("%s: the editor flags could not be recorded; after a "
		    "restart reloads would not wait for them", path);
	free(tmp);
	free(path);
}

/*
 * Record what a restart must find held, if it changed: the live flags,
 * and those restored at start whose grace has not ended, so that a
 * second restart within --editor-grace still holds reloads for them.
 */
static void
edsaved_record(struct jobs *J, const struct sched_busy *now)
{
	struct sched_busy	keep = *now;

	keep.tests_running |= J->editor_restored.tests_running;
	keep.compiling |= J->editor_restored.compiling;
	keep.editor_busy |= J->editor_restored.editor_busy;
	if (memcmp(&keep, &J->editor_saved, sizeof(keep)) != 0)
		edsaved_save(J, &keep);
}

/* What STATE_DIR/editor-flags says was held; all zero when nothing. */
static void
edsaved_read(struct jobs *J, struct sched_busy *b)
{
	json_object	*o = NULL, *v;
	char		*path, buf[EDITOR_FILE_MAX];
	ssize_t		 n = -1;
	int		 fd;

	memset(b, 0, sizeof(*b));
	path = xasprintf("%s/%s", J->cfg.opt->state_dir, EDITOR_FILE);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) != -1) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	} else if (errno != ENOENT)
		log_warn("%s", path);
	if (n >= 0 && jstrict_parse(buf, (size_t)n, &o) != 0)
		log_warnx("%s: not the editor flags; ignored", path);
	free(path);
	if (o == NULL)
		return;
	if (json_object_object_get_ex(o, "tests_running", &v))
		b->tests_running = json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "compiling", &v))
		b->compiling = json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "editor_busy", &v))
		b->editor_busy = json_object_get_boolean(v);
	json_object_put(o);
}

/*
 * At start: the flags editor clients held when the last run ended hold
 * reloads for --editor-grace seconds, or until live clients hold them
 * again, so that a client that reconnects finds its hold kept.
 */
void
edsaved_restore(struct jobs *J)
{
	struct timeval		tv = { (time_t)J->cfg.opt->editor_grace, 0 };
	struct sched_busy	none = { 0, 0, 0 };

	edsaved_read(J, &J->editor_saved);
	if (!edsaved_any(&J->editor_saved))
		return;
	if (J->cfg.opt->editor_grace == 0) {
		edsaved_save(J, &none);
		return;
	}
	J->editor_restored = J->editor_saved;
	evtimer_add(J->grace_ev, &tv);
	log_info("editor flags (%s) were held when the broker stopped: "
	    "reload jobs wait up to %llus for editor clients to report again",
	    sched_guard(&J->editor_restored),
	    (unsigned long long)J->cfg.opt->editor_grace);
}

/* A flag held again by a live client is no longer the restored one's. */
static void
edsaved_taken_over(struct jobs *J, const struct sched_busy *now)
{
	struct sched_busy	*r = &J->editor_restored;

	if (!edsaved_any(r))
		return;
	r->tests_running &= !now->tests_running;
	r->compiling &= !now->compiling;
	r->editor_busy &= !now->editor_busy;
	if (!edsaved_any(r)) {
		evtimer_del(J->grace_ev);
		log_info("editor clients hold their flags again");
	}
}

void
edsaved_update(struct jobs *J)
{
	struct sched_busy	now;

	edsaved_now(J, &now);
	edsaved_taken_over(J, &now);
	edsaved_record(J, &now);
}

void
edsaved_grace_over(struct jobs *J)
{
	struct sched_busy	 now;

	log_info("--editor-grace passed: the editor flags held before the "
	    "restart (%s) no longer hold reload jobs",
	    sched_guard(&J->editor_restored));
	memset(&J->editor_restored, 0, sizeof(J->editor_restored));
	edsaved_now(J, &now);
	edsaved_record(J, &now);
}
