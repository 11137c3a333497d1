/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net.h"
#include "options.h"
#include "peeruid.h"

#define PC_NGROUPS	64	/* supplementary groups tried first */

/* Who the kernel says the peer is. */
struct pc_peer {
	uid_t	 uid;
	gid_t	 gid;		/* the socket's (Unix); (gid_t)-1 if unknown */
};

static int	pc_unix(int, struct pc_peer *, char *, size_t);
static int	pc_tcp(int, struct pc_peer *, char *, size_t);
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
	struct peeruid_conn	 pc;
	char			 addr[PEERUID_ADDRSTRLEN];
	int			 rc;

	if ((rc = peeruid_ends(fd, &pc, why, whylen)) != 1) {
		if (rc == 0)
			snprintf(why, whylen, "peer credentials only on "
			    "loopback TCP and Unix sockets");
		return rc;
	}
	if (!peeruid_loopback(&pc)) {
		peeruid_remote_str(&pc, addr, sizeof(addr));
		snprintf(why, whylen, "peer %s: peer credentials only on "
		    "loopback and Unix sockets", addr);
		return 0;
	}
	return peeruid_ask(&pc, &p->uid, why, whylen) == 1 ? 1 : -1;
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
