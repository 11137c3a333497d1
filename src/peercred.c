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
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "peercred.h"

#define PC_NGROUPS	64	/* supplementary groups tried first */
#define PC_ANSWER	8192	/* bytes of the netlink answer read */
#define PC_EINTR_TRIES	3	/* waits for it cut short by a signal */

/* One end of a TCP connection, IPv4-mapped IPv6 made IPv4. */
struct pc_end {
	int		 family;
	uint8_t		 addr[16];
	size_t		 alen;
	uint16_t	 port;		/* network order */
};

/* Who the kernel says the peer is. */
struct pc_peer {
	uid_t	 uid;
	gid_t	 gid;		/* the socket's (Unix); (gid_t)-1 if unknown */
};

static int	pc_unix(int, struct pc_peer *, char *, size_t);
static int	pc_tcp(int, struct pc_peer *, char *, size_t);
static int	pc_end(const struct sockaddr_storage *, struct pc_end *);
static int	pc_loopback(const struct pc_end *);
static void	pc_endstr(const struct pc_end *, char *, size_t);
static int	pc_diag_ask(const struct pc_end *, const struct pc_end *,
		    uid_t *, char *, size_t);
static int	pc_diag_read(int, const struct pc_end *, const struct pc_end *,
		    uid_t *, char *, size_t);
static int	pc_diag_match(const struct inet_diag_msg *,
		    const struct pc_end *, const struct pc_end *);
static int	pc_allowed(const struct options *, const struct pc_peer *,
		    char *, size_t);
static int	pc_in_groups(const struct options *, const struct pc_peer *,
		    const struct passwd *, gid_t *);
static int	pc_gid_allowed(const struct options *, gid_t);

int
peercred_check(const struct options *opt, int fd, char *why, size_t whylen)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	struct pc_peer		 p;
	int			 rc;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1) {
		snprintf(why, whylen, "getsockname: %s", strerror(errno));
		return -1;
	}
	p.gid = (gid_t)-1;
	switch (ss.ss_family) {
	case AF_UNIX:
		rc = pc_unix(fd, &p, why, whylen);
		break;
	case AF_INET:
	case AF_INET6:
		rc = pc_tcp(fd, &p, why, whylen);
		break;
	default:
		snprintf(why, whylen, "peer credentials only on loopback and "
		    "Unix sockets (address family %d)", ss.ss_family);
		return 0;
	}
	if (rc != 1)
		return rc;
	return pc_allowed(opt, &p, why, whylen);
}

static int
pc_unix(int fd, struct pc_peer *p, char *why, size_t whylen)
{
	struct ucred	uc;
	socklen_t	len = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == -1) {
		snprintf(why, whylen, "SO_PEERCRED: %s", strerror(errno));
		return -1;
	}
	p->uid = uc.uid;
	p->gid = uc.gid;
	return 1;
}

/* The owner of the peer's socket of a loopback TCP connection. */
static int
pc_tcp(int fd, struct pc_peer *p, char *why, size_t whylen)
{
	struct sockaddr_storage	 ls, rs;
	socklen_t		 llen = sizeof(ls), rlen = sizeof(rs);
	struct pc_end		 local, remote;
	char			 addr[INET6_ADDRSTRLEN + 8];
	int			 proto = 0;
	socklen_t		 plen = sizeof(proto);

	if (getsockname(fd, (struct sockaddr *)&ls, &llen) == -1 ||
	    getpeername(fd, (struct sockaddr *)&rs, &rlen) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &plen) == -1) {
		snprintf(why, whylen, "the connection's ends: %s",
		    strerror(errno));
		return -1;
	}
	if (proto != IPPROTO_TCP || pc_end(&ls, &local) == -1 ||
	    pc_end(&rs, &remote) == -1 || local.family != remote.family) {
		snprintf(why, whylen, "peer credentials only on loopback TCP "
		    "and Unix sockets");
		return 0;
	}
	pc_endstr(&remote, addr, sizeof(addr));
	if (!pc_loopback(&remote) || !pc_loopback(&local)) {
		snprintf(why, whylen, "peer %s: peer credentials only on "
		    "loopback and Unix sockets", addr);
		return 0;
	}
	if (pc_diag_ask(&local, &remote, &p->uid, why, whylen) == -1)
		return -1;
	return 1;
}

static int
pc_end(const struct sockaddr_storage *ss, struct pc_end *e)
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
		/* The peer of a dual-stack listener is an IPv4 socket. */
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
pc_loopback(const struct pc_end *e)
{
	if (e->family == AF_INET)
		return e->addr[0] == 127;
	return IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)e->addr);
}

static void
pc_endstr(const struct pc_end *e, char *buf, size_t len)
{
	char	host[INET6_ADDRSTRLEN];

	inet_ntop(e->family, e->addr, host, sizeof(host));
	snprintf(buf, len, e->family == AF_INET ? "%s:%u" : "[%s]:%u", host,
	    ntohs(e->port));
}

/*
 * Ask the kernel for the one socket whose source is the peer's end and
 * whose destination is ours: the peer's.  0 with its owner in *uid, or
 * -1 with why.
 */
static int
pc_diag_ask(const struct pc_end *local, const struct pc_end *remote,
    uid_t *uid, char *why, size_t whylen)
{
	struct {
		struct nlmsghdr		nlh;
		struct inet_diag_req_v2	req;
	} msg;
	struct sockaddr_nl	 nl;
	struct timeval		 tv = { PEERCRED_TIMEOUT_MS / 1000,
				    (PEERCRED_TIMEOUT_MS % 1000) * 1000 };
	int			 fd, rc;

	memset(&msg, 0, sizeof(msg));
	msg.nlh.nlmsg_len = sizeof(msg);
	msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.nlh.nlmsg_flags = NLM_F_REQUEST;	/* one socket, no dump */
	msg.nlh.nlmsg_seq = 1;
	msg.req.sdiag_family = (uint8_t)local->family;
	msg.req.sdiag_protocol = IPPROTO_TCP;
	msg.req.idiag_states = ~0U;
	msg.req.id.idiag_sport = remote->port;
	msg.req.id.idiag_dport = local->port;
	memcpy(msg.req.id.idiag_src, remote->addr, remote->alen);
	memcpy(msg.req.id.idiag_dst, local->addr, local->alen);
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
	rc = pc_diag_read(fd, local, remote, uid, why, whylen);
	close(fd);
	return rc;
}

/* The one answer to pc_diag_ask (within PEERCRED_TIMEOUT_MS): 0, or -1. */
static int
pc_diag_read(int fd, const struct pc_end *local, const struct pc_end *remote,
    uid_t *uid, char *why, size_t whylen)
{
	uint32_t		 buf[PC_ANSWER / sizeof(uint32_t)];
	struct nlmsghdr		*h = (struct nlmsghdr *)buf;
	struct nlmsgerr		*e;
	struct inet_diag_msg	*d;
	ssize_t			 n;
	int			 err, tries = 0;

	/* A signal (SIGCHLD) may cut the wait short: a few more tries. */
	while ((n = recv(fd, buf, sizeof(buf), MSG_TRUNC)) == -1 &&
	    errno == EINTR && tries++ < PC_EINTR_TRIES)
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
		return -1;
	}
	d = NLMSG_DATA(h);
	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*d)) ||
	    !pc_diag_match(d, local, remote)) {
		snprintf(why, whylen, "the peer's socket: the kernel answered "
		    "with another one");
		return -1;
	}
	/*
	 * A socket no process holds (closed, time-wait) says uid 0, which
	 * is nobody's word: only a live one is believed.
	 */
	if (d->idiag_inode == 0 || d->idiag_state == TCP_TIME_WAIT ||
	    d->idiag_state == TCP_SYN_RECV) {
		snprintf(why, whylen, "the peer's socket is no longer held "
		    "by a process (state %u)", d->idiag_state);
		return -1;
	}
	*uid = d->idiag_uid;
	return 0;
}

/* Whether d is the socket asked for: the peer's end first, then ours. */
static int
pc_diag_match(const struct inet_diag_msg *d, const struct pc_end *local,
    const struct pc_end *remote)
{
	return d->idiag_family == local->family &&
	    d->id.idiag_sport == remote->port &&
	    d->id.idiag_dport == local->port &&
	    memcmp(d->id.idiag_src, remote->addr, remote->alen) == 0 &&
	    memcmp(d->id.idiag_dst, local->addr, local->alen) == 0;
}

static int
pc_allowed(const struct options *opt, const struct pc_peer *p, char *why,
    size_t whylen)
{
	struct passwd	*pw;
	const char	*name;
	size_t		 i;
	gid_t		 gid;

	if (p->uid == geteuid()) {
		snprintf(why, whylen, "uid %u: the broker's own user",
		    (unsigned)p->uid);
		return 1;
	}
	for (i = 0; i < opt->nallow_uid; i++)
		if (opt->allow_uid[i] == p->uid) {
			snprintf(why, whylen, "uid %u: --allow-user",
			    (unsigned)p->uid);
			return 1;
		}
	pw = getpwuid(p->uid);
	if (opt->nallow_gid > 0 && pc_in_groups(opt, p, pw, &gid)) {
		snprintf(why, whylen, "uid %u: in group %u, --allow-group",
		    (unsigned)p->uid, (unsigned)gid);
		return 1;
	}
	name = pw != NULL ? pw->pw_name : "no such user";
	snprintf(why, whylen, "uid %u (%s) is not the broker's user (uid %u) "
	    "and no --allow-user or --allow-group lets it in",
	    (unsigned)p->uid, name, (unsigned)geteuid());
	return 0;
}

/*
 * Whether the peer is in an --allow-group: its socket's gid (Unix), the
 * primary group of its passwd entry, or one of its supplementary groups
 * (getgrouplist).  The group found in *gid.
 */
static int
pc_in_groups(const struct options *opt, const struct pc_peer *p,
    const struct passwd *pw, gid_t *gid)
{
	gid_t	 first[PC_NGROUPS], *groups = first;
	int	 n = PC_NGROUPS, i, found = 0;

	if (p->gid != (gid_t)-1 && pc_gid_allowed(opt, p->gid)) {
		*gid = p->gid;
		return 1;
	}
	if (pw == NULL)
		return 0;
	if (pc_gid_allowed(opt, pw->pw_gid)) {
		*gid = pw->pw_gid;
		return 1;
	}
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) == -1) {
		/* n is now the number needed: one more try, that size. */
		if ((groups = calloc((size_t)n, sizeof(*groups))) == NULL ||
		    getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) == -1)
			n = 0;
	}
	for (i = 0; i < n && !found; i++)
		if ((found = pc_gid_allowed(opt, groups[i])))
			*gid = groups[i];
	if (groups != first)
		free(groups);
	return found;
}

static int
pc_gid_allowed(const struct options *opt, gid_t gid)
{
	size_t	i;

	for (i = 0; i < opt->nallow_gid; i++)
		if (opt->allow_gid[i] == gid)
			return 1;
	return 0;
}
