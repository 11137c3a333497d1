/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_LOG_H
#define CMDGATE_LOG_H

/*
 * One log for the whole broker.  Messages go to stderr; under systemd
 * (JOURNAL_STREAM set) each line starts with a "<N>" syslog priority so
 * journald files it at the right level.  Every function keeps errno intact.
 */

enum log_level {
	LOG_LVL_ERROR = 3,
	LOG_LVL_WARNING = 4,
	LOG_LVL_INFO = 6,
	LOG_LVL_DEBUG = 7,
};

void	log_init(enum log_level level, const char *progname);
void	log_setlevel(enum log_level level);
enum log_level log_getlevel(void);
/* Parse "error", "warning", "info" or "debug"; -1 when unknown. */
int	log_parselevel(const char *name);
void	log_route_libevent(void);

/* An error the broker stops for (logged at every --log-level). */
void	log_errx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
