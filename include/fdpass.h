/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FDPASS_H
#define CMDGATE_FDPASS_H

#include <sys/types.h>

/*
 * One byte with two descriptors over a Unix socket (SCM_RIGHTS): what the
 * broker sends the fork server for each worker (forksrv.h).
 */

/* Send byte with fds[0] and fds[1] (flags as send(2)'s): 0, or -1. */
int	fdpass_send(int sock, char byte, const int fds[2], int flags);
/*
 * Receive one message, close-on-exec: 1 with *byte and both fds, 0 at
 * the end of the socket, -1 on an error or a message that is not one
 * byte with two descriptors (any received are closed).
 */
int	fdpass_recv(int sock, char *byte, int fds[2]);

#endif
