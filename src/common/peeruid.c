/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "peeruid.h"

#define PU_ANSWER	8192	/* bytes of the netlink answer read */
#define PU_EINTR_TRIES	3	/* waits for it cut short by a signal */

static int	peeruid_end(const struct sockaddr_storage *,
		    struct peeruid_end *);
static int	peeruid_end_loopback(const struct peeruid_end *);
static int	peeruid_read(int, const struct peeruid_conn *, uid_t *,
		    char *, size_t);
static int	peeruid_match(const struct inet_diag_msg *,
		    const struct peeruid_conn *);

int
peeruid_ends(int fd, struct peeruid_conn *pc, char *why, size_t whylen)
{
	struct sockaddr_storage	 ls, rs;
	socklen_t		 llen = sizeof(ls), rlen = sizeof(rs);
	int			 proto = 0;
	socklen_t		 plen = sizeof(proto);

	if (getsockname(fd, (struct sockaddr *)&ls, &llen) == -1 ||
	    getpeername(fd, (struct sockaddr *)&rs, &rlen) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &plen) == -1) {
		snprintf(why, whylen, "the connection's ends: %s",
		    strerror(errno));
		return -1;
	}
	if (proto != IPPROTO_TCP || peeruid_end(&ls, &pc->local) == -1 ||
	    peeruid_end(&rs, &pc->remote) == -1 ||
	    pc->local.family != pc->remote.family) {
		snprintf(why, whylen, "not a TCP connection over IPv4 or "
		    "IPv6");
		return 0;
	}
	return 1;
}

static int
peeruid_end(const struct sockaddr_storage *ss, struct peeruid_end *e)
{
	const struct sockaddr_in	*sin = (const void *)ss;
	const struct sockaddr_in6	*sin6 = (const void *)ss;

	memset(e, 0, sizeof(*e));
	if (ss->ss_family == AF_INET) {
		e->family = AF_INET;
		e->alen = 4;
		memcpy(e->addr, &sin->sin_addr, 4);
		e->port = sin->sin_port;
		return 0;
	}
	if (ss->ss_family != AF_INET6)
		return -1;
	e->port = sin6->sin6_port;
	if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
		/* An IPv4 end of a dual-stack socket is an IPv4 socket's. */
		e->family = AF_INET;
		e->alen = 4;
		memcpy(e->addr, &sin6->sin6_addr.s6_addr[12], 4);
		return 0;
	}
	e->family = AF_INET6;
	e->alen = 16;
	memcpy(e->addr, &sin6->sin6_addr, 16);
	return 0;
}

/* 127.0.0.0/8 or ::1. */
static int
peeruid_end_loopback(const struct peeruid_end *e)
{
	if (e->family == AF_INET)
		return e->addr[0] == 127;
	return IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)e->addr);
}

int
peeruid_loopback(const struct peeruid_conn *pc)
{
	return peeruid_end_loopback(&pc->local) &&
	    peeruid_end_loopback(&pc->remote);
}

void
peeruid_remote_str(const struct peeruid_conn *pc, char *buf, size_t len)
{
	const struct peeruid_end	*e = &pc->remote;
	char				 host[INET6_ADDRSTRLEN];

	inet_ntop(e->family, e->addr, host, sizeof(host));
	snprintf(buf, len, e->family == AF_INET ? "%s:%u" : "[%s]:%u", host,
	    ntohs(e->port));
}

/*
 * Ask the kernel for the one socket whose source is the remote end and
 * whose destination is ours: the peer's.
 */
int
peeruid_ask(const struct peeruid_conn *pc, uid_t *uid, char *why,
    size_t whylen)
{
	struct {
		struct nlmsghdr		nlh;
		struct inet_diag_req_v2	req;
	} msg;
	struct sockaddr_nl	 nl;
	struct timeval		 tv = { PEERUID_TIMEOUT_MS / 1000,
				    (PEERUID_TIMEOUT_MS % 1000) * 1000 };
	int			 fd, rc;

	memset(&msg, 0, sizeof(msg));
	msg.nlh.nlmsg_len = sizeof(msg);
	msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.nlh.nlmsg_flags = NLM_F_REQUEST;	/* one socket, no dump */
	msg.nlh.nlmsg_seq = 1;
	msg.req.sdiag_family = (uint8_t)pc->local.family;
	msg.req.sdiag_protocol = IPPROTO_TCP;
	msg.req.idiag_states = ~0U;
	msg.req.id.idiag_sport = pc->remote.port;
	msg.req.id.idiag_dport = pc->local.port;
	memcpy(msg.req.id.idiag_src, pc->remote.addr, pc->remote.alen);
	memcpy(msg.req.id.idiag_dst, pc->local.addr, pc->local.alen);
	msg.req.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	msg.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	memset(&nl, 0, sizeof(nl));
	nl.nl_family = AF_NETLINK;
	if ((fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
	    NETLINK_SOCK_DIAG)) == -1) {
		snprintf(why, whylen, "sock_diag netlink socket: %s",
		    strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&nl,
	    sizeof(nl)) != (ssize_t)sizeof(msg)) {
		snprintf(why, whylen, "sock_diag request: %s",
		    strerror(errno));
		close(fd);
		return -1;
	}
	rc = peeruid_read(fd, pc, uid, why, whylen);
	close(fd);
	return rc;
}

/* The one answer to peeruid_ask: as peeruid_ask returns. */
static int
peeruid_read(int fd, const struct peeruid_conn *pc, uid_t *uid, char *why,
    size_t whylen)
{
	uint32_t		 buf[PU_ANSWER / sizeof(uint32_t)];
	struct nlmsghdr		*h = (struct nlmsghdr *)buf;
	struct nlmsgerr		*e;
	struct inet_diag_msg	*d;
	ssize_t			 n;
	int			 err, tries = 0;

	/* A signal (SIGCHLD) may cut the wait short: a few more tries. */
	while ((n = recv(fd, buf, sizeof(buf), MSG_TRUNC)) == -1 &&
	    errno == EINTR && tries++ < PU_EINTR_TRIES)
		;
	if (n == -1) {
		snprintf(why, whylen, "sock_diag answer: %s",
		    errno == EAGAIN ? "none within the timeout" :
		    strerror(errno));
		return -1;
	}
	if (n > (ssize_t)sizeof(buf) || !NLMSG_OK(h, (size_t)n) ||
	    h->nlmsg_seq != 1) {
		snprintf(why, whylen, "sock_diag answer: malformed");
		return -1;
	}
	if (h->nlmsg_type == NLMSG_ERROR) {
		e = NLMSG_DATA(h);
		err = h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) ? -e->error : 0;
		snprintf(why, whylen, "the peer's socket: %s", err == ENOENT ?
		    "none found (closed already?)" : strerror(err));
		return err == ENOENT ? 0 : -1;
	}
	d = NLMSG_DATA(h);
	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*d)) || !peeruid_match(d, pc)) {
		snprintf(why, whylen, "the peer's socket: the kernel answered "
		    "with another one");
		return -1;
	}
	/*
	 * A socket no process holds (not accepted yet, closed, time-wait)
	 * may say uid 0, which is nobody's word: only a live one is
	 * believed.
	 */
	if (d->idiag_inode == 0 || d->idiag_state == TCP_TIME_WAIT ||
	    d->idiag_state == TCP_SYN_RECV) {
		snprintf(why, whylen, "the peer's socket is not accepted "
		    "yet, or no longer held by a process (state %u)",
		    d->idiag_state);
		return -1;
	}
	*uid = d->idiag_uid;
	return 1;
}

/* Whether d is the socket asked for: the remote end first, then ours. */
static int
peeruid_match(const struct inet_diag_msg *d, const struct peeruid_conn *pc)
{
	return d->idiag_family == pc->local.family &&
	    d->id.idiag_sport == pc->remote.port &&
	    d->id.idiag_dport == pc->local.port &&
	    memcmp(d->id.idiag_src, pc->remote.addr, pc->remote.alen) == 0 &&
	    memcmp(d->id.idiag_dst, pc->local.addr, pc->local.alen) == 0;
}
