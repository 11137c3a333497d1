/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_SDNOTIFY_H
#define CMDGATE_SDNOTIFY_H

/*
 * systemd's notify protocol: one datagram of "KEY=VALUE" lines to the
 * socket named by $NOTIFY_SOCKET ("@name" for the abstract namespace).
 * Without $NOTIFY_SOCKET nothing is sent.  0 on success or when there is
 * no socket, -1 when sending failed (logged).
 */
int	sdnotify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
