/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fdpass.h"

union fdpass_cmsg {
	struct cmsghdr	h;
	char		buf[CMSG_SPACE(2 * sizeof(int))];
};

int
fdpass_send(int sock, char byte, const int fds[2], int flags)
{
	union fdpass_cmsg	 cm;
	struct cmsghdr		*c;
	struct msghdr		 msg;
	struct iovec		 iov = { &byte, 1 };

	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(c), fds, 2 * sizeof(int));
	return sendmsg(sock, &msg, flags) == 1 ? 0 : -1;
}

int
fdpass_recv(int sock, char *byte, int fds[2])
{
	union fdpass_cmsg	 cm;
	struct cmsghdr		*c;
	struct msghdr		 msg;
	struct iovec		 iov = { byte, 1 };
	ssize_t			 n;
	int			 got[2] = { -1, -1 };

	do {
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cm.buf;
		msg.msg_controllen = sizeof(cm.buf);
	} while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) == -1 &&
	    errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -1;
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(2 * sizeof(int)) && got[0] == -1)
			memcpy(got, CMSG_DATA(c), sizeof(got));
		else if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_RIGHTS) {
			int	*p = (int *)(void *)CMSG_DATA(c);
			size_t	 k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			while (k-- > 0)
				close(p[k]);
		}
	if (n != 1 || got[0] == -1 || (msg.msg_flags & MSG_CTRUNC)) {
		if (got[0] != -1) {
			close(got[0]);
			close(got[1]);
		}
		return -1;
	}
	fds[0] = got[0];
	fds[1] = got[1];
	return 1;
}
