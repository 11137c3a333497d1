/* SPDX-License-Identifier: ISC */
/* Checked allocators and small helpers. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

void *
xmalloc(size_t n)
{
	void	*p = malloc(n == 0 ? 1 : n);

	if (p == NULL)
		fatal("malloc %zu", n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void	*p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);

	if (p == NULL)
		fatal("calloc %zu*%zu", n, size);
	return p;
}

void *
xrealloc(void *old, size_t n)
{
	void	*p = realloc(old, n == 0 ? 1 : n);

	if (p == NULL)
		fatal("realloc %zu", n);
	return p;
}

char *
xstrdup(const char *s)
{
	char	*p = strdup(s);

	if (p == NULL)
		fatal("strdup");
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list	 ap;
	char	*p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
	return p;
}

void
util_timestamp(char buf[UTIL_TIMESTAMP_LEN], int64_t unix_ms)
{
	struct tm	tm;
	time_t		secs = (time_t)(unix_ms / 1000);
	char		date[20];

	gmtime_r(&secs, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, UTIL_TIMESTAMP_LEN, "%s.%03dZ", date,
	    (int)(unix_ms % 1000));
}

int64_t
util_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
util_monotonic_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
util_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char		*end;
	uintmax_t	 v;

	if (*s < '0' || *s > '9') {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtoumax(s, &end, 10);
	if (*end != '\0') {
		errno = EINVAL;
		return -1;
	}
	if (errno == ERANGE || v < min || v > max) {
		errno = ERANGE;
		return -1;
	}
	*out = v;
	return 0;
}

/* Why the directory path (no trailing '/') could not be opened (errno e). */
static const char *
util_dir_why(const char *path, int e, int nofollow)
{
	struct stat	st;

	if (nofollow && (e == ENOTDIR || e == ELOOP) &&
	    lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return "a symlink (give the directory itself)";
	return e == ENOTDIR ? "not a directory" : strerror(e);
}

int
util_dir_open(const struct util_perm *p, const char *path, int nofollow,
    char *err, size_t errlen)
{
	struct stat	 st;
	char		*bare = xstrdup(path);
	size_t		 n = strlen(bare);
	int		 fd;

	/* "link/" would follow the link whatever O_NOFOLLOW says. */
	while (n > 1 && bare[n - 1] == '/')
		bare[--n] = '\0';
	fd = open(bare, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
	    (nofollow ? O_NOFOLLOW : 0));
	if (fd == -1)
		snprintf(err, errlen, "%s %s: %s", p->what, path,
		    util_dir_why(bare, errno, nofollow));
	else if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s %s: %s", p->what, path,
		    strerror(errno));
		close(fd);
		fd = -1;
	} else if (util_perm_check(p, path, &st, err, errlen) == -1) {
		close(fd);
		fd = -1;
	}
	free(bare);
	return fd;
}

size_t
util_utf8_len(const char *s)
{
	size_t	n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

int
util_perm_check(const struct util_perm *p, const char *path,
    const struct stat *st, char *err, size_t errlen)
{
	if (st->st_uid != geteuid()) {
		snprintf(err, errlen, "%s %s: owned by uid %u, not by uid %u "
		    "that cmdgated runs as", p->what, path,
		    (unsigned)st->st_uid, (unsigned)geteuid());
		return -1;
	}
	if (st->st_mode & p->deny) {
		snprintf(err, errlen, "%s %s: mode %04o lets group or others "
		    "%s; %s", p->what, path, (unsigned)(st->st_mode & 07777),
		    p->lets, p->fix);
		return -1;
	}
	return 0;
}
