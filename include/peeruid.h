/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_PEERUID_H
#define CMDGATE_PEERUID_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/*
 * Who owns the socket at the other end of a TCP connection, as the
 * kernel says: one sock_diag netlink request (NETLINK_SOCK_DIAG,
 * inet_diag_req_v2 with the connection's two ends), as ss -e shows it.
 * The broker asks it of its clients (peercred.c), cmdgate(1) of the
 * listener it is about to send a token to (client.c).  Library-like:
 * nothing here exits or logs.
 */

#define PEERUID_TIMEOUT_MS	1000	/* for the kernel's netlink answer */
#define PEERUID_ADDRSTRLEN	56	/* "[" INET6_ADDRSTRLEN "]:65535" */

/* One end of a TCP connection, IPv4-mapped IPv6 made IPv4. */
struct peeruid_end {
	int		 family;
	uint8_t		 addr[16];
	size_t		 alen;
	uint16_t	 port;		/* network order */
};

struct peeruid_conn {
	struct peeruid_end	 local, remote;
};

/*
 * The two ends of fd: 1; 0 when fd is not a TCP connection over IPv4 or
 * IPv6, why says so; -1 when they cannot be read, why says why.
 */
int	peeruid_ends(int fd, struct peeruid_conn *, char *why,
	    size_t whylen);
/* Whether both ends are loopback addresses (127.0.0.0/8, ::1). */
int	peeruid_loopback(const struct peeruid_conn *);
/* The remote end as ADDR:PORT ([ADDR]:PORT for IPv6). */
void	peeruid_remote_str(const struct peeruid_conn *, char *buf,
	    size_t len);
/*
 * The owner of the remote end's socket, held by a process of this
 * machine, within PEERUID_TIMEOUT_MS: 1 with *uid; 0 when the kernel has
 * no such socket (one of another machine, or closed already), why says
 * so; -1 when it cannot tell (no answer, a socket no process holds: not
 * yet accepted, closed, in TIME_WAIT), why says why.
 */
int	peeruid_ask(const struct peeruid_conn *, uid_t *uid, char *why,
	    size_t whylen);

#endif
