/* SPDX-License-Identifier: ISC */
/* What the harnesses of tests/fuzz/ share. */
#include "config.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "fuzzutil.h"
#include "jstrict.h"
#include "log.h"
#include "../../src/daemon/daemon.h"
#include "options.h"
#include "server.h"
#include "tools.h"

static char	fuzz_dir[256];
static pid_t	fuzz_owner;

void
fuzz_fail(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "fuzz invariant failed: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

static int
fuzz_rm_one(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void
fuzz_rmtree(const char *path)
{
	nftw(path, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void
fuzz_tmpdir_gone(void)
{
	/* Only the process that made it (libFuzzer may fork -jobs). */
	if (fuzz_dir[0] != '\0' && getpid() == fuzz_owner)
		fuzz_rmtree(fuzz_dir);
}

const char *
fuzz_tmpdir(void)
{
	const char	*t = getenv("TMPDIR");

	if (fuzz_dir[0] != '\0')
		return fuzz_dir;
	snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/cgfuzz.XXXXXX",
	    t != NULL && *t != '\0' ? t : "/tmp");
	if (mkdtemp(fuzz_dir) == NULL)
		fuzz_fail("mkdtemp %s", fuzz_dir);
	fuzz_owner = getpid();
	atexit(fuzz_tmpdir_gone);
	return fuzz_dir;
}

void
fuzz_write_file(const char *path, const void *data, size_t len)
{
	int	fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 || (len > 0 && write(fd, data, len) != (ssize_t)len))
		fuzz_fail("cannot write %s", path);
	close(fd);
}

json_object *
fuzz_json(const char *what, const char *buf, size_t len)
{
	json_object	*o;
	int		 rc;

	if ((rc = jstrict_parse(buf, len, &o)) != 0)
		fuzz_fail("%s is not JSON (%s): %.*s", what,
		    jstrict_strerror(rc), (int)(len > 300 ? 300 : len), buf);
	return o;
}

void
fuzz_server(struct server *srv, struct options *opt, struct event_base *base,
    const char *table, int argc, char **argv)
{
	struct tooltab	*tab;
	char		 err[1024], *path;

	log_init(LOG_LVL_ERROR, "fuzz");
	if (options_parse(opt, argc, argv, stdout, err, sizeof(err)) !=
	    OPT_RUN)
		fuzz_fail("options: %s", err);
	free(opt->state_dir);
	opt->state_dir = strdup(fuzz_tmpdir());
	if (table == NULL)
		tab = tooltab_default();
	else {
		if (asprintf(&path, "%s/%s", FUZZ_TOOLS_DIR, table) == -1 ||
		    tooltab_load_file(path, &tab, err, sizeof(err)) != 0)
			fuzz_fail("tool table %s: %s", table, err);
		free(path);
	}
	server_init(srv, base, opt, tab);
}

int
fuzz_loop_settle(struct event_base *base, int max)
{
	int	n;

	for (n = 0; n < max; n++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (event_base_get_num_events(base,
		    EVENT_BASE_COUNT_ACTIVE) == 0)
			return n + 1;
	}
	return n;
}
