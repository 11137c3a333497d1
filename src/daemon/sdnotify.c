/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"

int
sdnotify(const char *fmt, ...)
{
	struct sockaddr_un	 sun;
	const char		*path = getenv("NOTIFY_SOCKET");
	char			 msg[1024];
	socklen_t		 len;
	va_list			 ap;
	size_t			 plen;
	int			 fd;
	ssize_t			 n;

	if (path == NULL || *path == '\0')
		return 0;
	plen = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || plen >= sizeof(sun.sun_path)) {
		log_warnx("NOTIFY_SOCKET '%s' is not a socket path", path);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, plen);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("sd_notify socket");
		return -1;
	}
	n = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL,
	    (struct sockaddr *)&sun, len);
	close(fd);
	if (n == -1) {
		log_warn("sd_notify to %s", path);
		return -1;
	}
	return 0;
}
