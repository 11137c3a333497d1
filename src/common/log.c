/* SPDX-License-Identifier: ISC */
/* Logging to stderr, journald-aware. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"

static enum log_level	 log_level = LOG_LVL_INFO;
static const char	*log_name = "cmdgated";
static int		 log_journal;

static const struct {
	const char	*name;
	enum log_level	 level;
} log_levels[] = {
	{ "error", LOG_LVL_ERROR },
	{ "warning", LOG_LVL_WARNING },
	{ "info", LOG_LVL_INFO },
	{ "debug", LOG_LVL_DEBUG },
};

static void	log_vwrite(enum log_level, const char *, va_list, int);
static void	log_libevent(int, const char *);

void
log_init(enum log_level level, const char *progname)
{
	log_level = level;
	if (progname != NULL)
		log_name = progname;
	/* journald sets JOURNAL_STREAM on the services it collects. */
	log_journal = getenv("JOURNAL_STREAM") != NULL;
}

void
log_setlevel(enum log_level level)
{
	log_level = level;
}

enum log_level
log_getlevel(void)
{
	return log_level;
}

int
log_parselevel(const char *name)
{
	size_t	i;

	for (i = 0; i < sizeof(log_levels) / sizeof(log_levels[0]); i++)
		if (strcmp(name, log_levels[i].name) == 0)
			return log_levels[i].level;
	return -1;
}

static void
log_vwrite(enum log_level level, const char *fmt, va_list ap, int err)
{
	char	msg[4096], line[4352];
	int	saved = errno, n;

	if (level > log_level) {
		errno = saved;
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* One write a line: the workers' lines never land inside it. */
	if (log_journal)
		n = snprintf(line, sizeof(line), "<%d>%s%s%s\n", (int)level,
		    msg, err != 0 ? ": " : "", err != 0 ? strerror(err) : "");
	else
		n = snprintf(line, sizeof(line), "%s: %s%s%s\n", log_name, msg,
		    err != 0 ? ": " : "", err != 0 ? strerror(err) : "");
	if (n >= 0 && (size_t)n >= sizeof(line))
		memcpy(line + sizeof(line) - 2, "\n", 2);	/* cut */
	if (n >= 0) {
		fputs(line, stderr);
		fflush(stderr);
	}
	errno = saved;
}

void
log_errx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LVL_ERROR, fmt, ap, 0);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list	ap;
	int	err = errno;

	va_start(ap, fmt);
	log_vwrite(LOG_LVL_WARNING, fmt, ap, err);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LVL_WARNING, fmt, ap, 0);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LVL_INFO, fmt, ap, 0);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LVL_DEBUG, fmt, ap, 0);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	ap;
	int	err = errno;

	va_start(ap, fmt);
	log_vwrite(LOG_LVL_ERROR, fmt, ap, err);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LVL_ERROR, fmt, ap, 0);
	va_end(ap);
	exit(1);
}

static void
log_libevent(int severity, const char *msg)
{
	switch (severity) {
	case EVENT_LOG_DEBUG:
		log_debug("libevent: %s", msg);
		break;
	case EVENT_LOG_MSG:
		log_info("libevent: %s", msg);
		break;
	default:
		log_warnx("libevent: %s", msg);
		break;
	}
}

void
log_route_libevent(void)
{
	event_set_log_callback(log_libevent);
}
