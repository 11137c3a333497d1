/* SPDX-License-Identifier: ISC */
/* The token file: read by the broker and the client, made by the broker. */
#include "config.h"

#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "token.h"
#include "util.h"

static int	token_check(int, const char *, int, uid_t *, char *, size_t);
static char	*token_trim(char *);

static const struct util_perm token_perm = {
	"token file", S_IRWXG | S_IRWXO, "read or write it", "chmod 600 it"
};

/* Whether the open file fd may hold a token; 0 with its *owner, or -1. */
static int
token_check(int fd, const char *path, int strict, uid_t *owner, char *err,
    size_t errlen)
{
	struct stat	st;

	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "token file %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "token file %s: not a regular file",
		    path);
		return -1;
	}
	*owner = st.st_uid;
	if (!strict)
		return 0;
	return util_perm_check(&token_perm, path, &st, err, errlen);
}

/* The first line of buf without surrounding white space; in place. */
static char *
token_trim(char *buf)
{
	char	*s, *e;

	buf[strcspn(buf, "\n")] = '\0';
	for (s = buf; *s == ' ' || *s == '\t' || *s == '\r'; s++)
		;
	for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t' ||
	    e[-1] == '\r'); e--)
		;
	*e = '\0';
	return s;
}

char *
token_read(const char *path, int strict, uid_t *owner, int *errnum,
    char *err, size_t errlen)
{
	char	 buf[TOKEN_MAX + 2], *s, *tok = NULL;
	ssize_t	 n;
	uid_t	 uid;
	int	 fd, flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;

	*errnum = 0;
	if (strict)
		flags |= O_NOFOLLOW;
	if ((fd = open(path, flags)) == -1) {
		*errnum = errno;
		snprintf(err, errlen, "token file %s: %s", path,
		    errno == ELOOP && strict ? "a symlink (give the file "
		    "itself)" : strerror(errno));
		return NULL;
	}
	if (token_check(fd, path, strict, &uid, err, errlen) == -1) {
		close(fd);
		return NULL;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "token file %s: %s", path,
		    strerror(errno));
		return NULL;
	}
	buf[n] = '\0';
	s = token_trim(buf);
	if (*s == '\0' || strlen(s) > TOKEN_MAX)
		snprintf(err, errlen, "token file %s: the first line must "
		    "hold a token of 1 to %d bytes", path, TOKEN_MAX);
	else
		tok = xstrdup(s);
	if (tok != NULL && owner != NULL)
		*owner = uid;
	explicit_bzero(buf, sizeof(buf));
	return tok;
}

int
token_create(const char *path, char *err, size_t errlen)
{
	unsigned char	 raw[TOKEN_BYTES];
	char		 hex[2 * TOKEN_BYTES + 2];
	size_t		 i;
	int		 fd, rc = -1;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		snprintf(err, errlen, "token file %s: getrandom: %s", path,
		    strerror(errno));
		return -1;
	}
	for (i = 0; i < TOKEN_BYTES; i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	hex[2 * TOKEN_BYTES] = '\n';
	hex[2 * TOKEN_BYTES + 1] = '\0';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1 || write(fd, hex, strlen(hex)) != (ssize_t)strlen(hex) ||
	    fsync(fd) == -1)
		snprintf(err, errlen, "token file %s: cannot create: %s",
		    path, strerror(errno));
	else
		rc = 0;
	if (fd != -1 && close(fd) == -1 && rc == 0) {
		snprintf(err, errlen, "token file %s: %s", path,
		    strerror(errno));
		rc = -1;
	}
	if (rc == -1 && fd != -1)
		unlink(path);
	explicit_bzero(raw, sizeof(raw));
	explicit_bzero(hex, sizeof(hex));
	return rc;
}
