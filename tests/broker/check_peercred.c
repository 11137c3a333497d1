/* SPDX-License-Identifier: ISC */
/*
 * The peer check (issue 17 item 6): who the kernel says is at the other
 * end of a loopback TCP connection (sock_diag) or a Unix socket
 * (SO_PEERCRED), --allow-user and --allow-group, and --peer-auth through
 * the real cmdgated.  A client of another user runs in a forked child
 * that becomes nobody: those cases need root, and say so when skipped.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <net/if.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <ifaddrs.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "net.h"
#include "options.h"
#include "testnet.h"

#define WAIT_MS		TN_TIMEOUT_MS
#define PING		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
#define NOBODY_ID	65534

/* A client socket in a child, held until released. */
struct peer {
	pid_t	 pid;
	int	 release;	/* closing it ends the child */
};

enum peer_how {
	PEER_HOLD,	/* keep the socket open until released */
	PEER_CLOSE,	/* close it as soon as it is connected */
};

static struct options	 opt;
static struct broker	 b;
static char		 why[512];
static uid_t		 nobody_uid = NOBODY_ID;
static gid_t		 nobody_gid = NOBODY_ID;

static void
setup(void)
{
	struct passwd	*pw;

	memset(&opt, 0, sizeof(opt));
	why[0] = '\0';
	if ((pw = getpwnam("nobody")) != NULL) {
		nobody_uid = pw->pw_uid;
		nobody_gid = pw->pw_gid;
	}
	memset(&b, 0, sizeof(b));
	b.pid = -1;
}

static void
teardown(void)
{
	if (b.dir[0] != '\0')
		broker_stop(&b);
}

/* Whether the test may run a client as another user; else say so. */
static int
need_root(const char *test)
{
	if (geteuid() == 0)
		return 1;
	fprintf(stderr, "check_peercred: %s: the case of another user is "
	    "skipped: running a client as nobody needs root\n", test);
	return 0;
}

static socklen_t
addr_of(struct sockaddr_storage *ss, int family, const char *host, int port)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	ss->ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		ck_assert_int_eq(inet_pton(AF_INET, host, &sin->sin_addr), 1);
		sin->sin_port = htons((uint16_t)port);
		return sizeof(*sin);
	}
	ck_assert_int_eq(inet_pton(AF_INET6, host, &sin6->sin6_addr), 1);
	sin6->sin6_port = htons((uint16_t)port);
	return sizeof(*sin6);
}

/* An abstract Unix socket address, unique to this process and n. */
static socklen_t
addr_unix(struct sockaddr_storage *ss, int n)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)ss;
	int			 len;

	memset(ss, 0, sizeof(*ss));
	sun->sun_family = AF_UNIX;
	len = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
	    "cmdgate-peercred-%ld-%d", (long)getpid(), n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    (size_t)len);
}

/*
 * Listen on ss (port 0: the kernel's pick, written back into ss); the
 * socket, or -1 with errno when the address cannot be bound here.
 */
static int
listen_on(struct sockaddr_storage *ss, socklen_t *len)
{
	int	fd, saved;

	if ((fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)ss, *len) == -1 ||
	    listen(fd, 8) == -1 ||
	    getsockname(fd, (struct sockaddr *)ss, len) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* The next connection on lfd, within WAIT_MS. */
static int
accept_within(int lfd)
{
	struct pollfd	pfd = { lfd, POLLIN, 0 };
	int		fd;

	ck_assert_int_eq(poll(&pfd, 1, WAIT_MS), 1);
	ck_assert_int_ne(fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), -1);
	return fd;
}

/* A connection to ss from this process (and user); its client end. */
static int
dial(const struct sockaddr_storage *ss, socklen_t len)
{
	int	fd;

	ck_assert_int_ne(fd = socket(ss->ss_family, SOCK_STREAM |
	    SOCK_CLOEXEC, 0), -1);
	ck_assert_int_eq(connect(fd, (const struct sockaddr *)ss, len), 0);
	return fd;
}

/* In the child: become uid (no supplementary groups), connect, wait. */
static void
peer_child(uid_t uid, gid_t gid, const struct sockaddr_storage *ss,
    socklen_t len, enum peer_how how, int done, int rel)
{
	char	c;
	int	fd;

	if (setgroups(0, NULL) == -1 || setgid(gid) == -1 ||
	    setuid(uid) == -1)
		_exit(2);
	if ((fd = socket(ss->ss_family, SOCK_STREAM, 0)) == -1)
		_exit(3);
	if (connect(fd, (const struct sockaddr *)ss, len) == -1)
		_exit(4);
	if (how == PEER_CLOSE)
		close(fd);
	if (write(done, "c", 1) != 1)
		_exit(5);
	(void)read(rel, &c, 1);		/* EOF: released */
	_exit(0);
}

/* A client of ss as uid:gid in a child, connected when this returns. */
static void
peer_start(struct peer *p, uid_t uid, gid_t gid,
    const struct sockaddr_storage *ss, socklen_t len, enum peer_how how)
{
	struct pollfd	pfd;
	int		rel[2], done[2], status;
	char		c;

	ck_assert_int_eq(pipe(rel), 0);
	ck_assert_int_eq(pipe(done), 0);
	if ((p->pid = fork()) == 0) {
		close(rel[1]);
		close(done[0]);
		peer_child(uid, gid, ss, len, how, done[1], rel[0]);
	}
	ck_assert_int_gt(p->pid, 0);
	close(rel[0]);
	close(done[1]);
	pfd.fd = done[0];
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, WAIT_MS), 1);
	if (read(done[0], &c, 1) != 1) {
		ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
		ck_abort_msg("the client as uid %u did not connect: exit %d",
		    (unsigned)uid, WEXITSTATUS(status));
	}
	close(done[0]);
	p->release = rel[1];
}

static void
peer_end(struct peer *p)
{
	int	status;

	close(p->release);
	ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The check of fd, with why in the failure message. */
static int
check(int fd)
{
	why[0] = '\0';
	return peercred_check(&opt, fd, why, sizeof(why));
}

#define ASSERT_CHECK(fd, want, text) do {				\
	ck_assert_msg(check(fd) == (want), "want %d: %s", (want), why);	\
	ck_assert_msg(strstr(why, (text)) != NULL, "%s", why);		\
} while (0)

/*
 * A connection from this process to a listener on ss (from an IPv4
 * socket when v4 is set): allowed.  Skipped, saying so, when ss cannot
 * be bound here.
 */
static void
same_user(struct sockaddr_storage *ss, socklen_t len, int v4)
{
	struct sockaddr_storage	 to;
	socklen_t		 tolen;
	int			 lfd, cfd, fd;

	if ((lfd = listen_on(ss, &len)) == -1) {
		fprintf(stderr, "check_peercred: cannot listen on an address "
		    "of family %d here (%s), case skipped\n", ss->ss_family,
		    strerror(errno));
		return;
	}
	to = *ss;
	tolen = len;
	if (v4)
		tolen = addr_of(&to, AF_INET, "127.0.0.1",
		    ntohs(((struct sockaddr_in6 *)ss)->sin6_port));
	cfd = dial(&to, tolen);
	fd = accept_within(lfd);
	ASSERT_CHECK(fd, 1, "the broker's own user");
	close(fd);
	close(cfd);
	close(lfd);
}

START_TEST(tcp4_same_user)
{
	struct sockaddr_storage	ss;

	same_user(&ss, addr_of(&ss, AF_INET, "127.0.0.1", 0), 0);
	same_user(&ss, addr_of(&ss, AF_INET, "127.0.0.2", 0), 0);
}
END_TEST

START_TEST(tcp6_same_user)
{
	struct sockaddr_storage	ss;

	same_user(&ss, addr_of(&ss, AF_INET6, "::1", 0), 0);
}
END_TEST

/* An IPv4 client of an IPv6 listener: its peer is ::ffff:127.0.0.1. */
START_TEST(tcp_v4_mapped)
{
	struct sockaddr_storage	ss;

	same_user(&ss, addr_of(&ss, AF_INET6, "::ffff:127.0.0.1", 0), 1);
}
END_TEST

START_TEST(unix_same_user)
{
	struct sockaddr_storage	ss;
	int			sv[2];

	same_user(&ss, addr_unix(&ss, 1), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ASSERT_CHECK(sv[0], 1, "the broker's own user");
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* A local address that is not loopback, or 0 when there is none. */
static int
local_address(struct sockaddr_storage *ss)
{
	struct ifaddrs	*ifa, *i;
	int		 found = 0;

	ck_assert_int_eq(getifaddrs(&ifa), 0);
	for (i = ifa; i != NULL && !found; i = i->ifa_next)
		if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
		    (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK)) {
			memcpy(ss, i->ifa_addr, sizeof(struct sockaddr_in));
			found = 1;
		}
	freeifaddrs(ifa);
	return found;
}

/*
 * A client whose address is not loopback, though it reaches a loopback
 * listener (its source bound to another local address), is refused: the
 * owner of such a socket is not the kernel's to tell.
 */
START_TEST(not_loopback_refused)
{
	struct sockaddr_storage	 ss, src;
	socklen_t		 len = addr_of(&ss, AF_INET, "127.0.0.1", 0);
	int			 lfd, cfd, fd, p[2];

	if (!local_address(&src)) {
		fprintf(stderr, "check_peercred: not_loopback_refused: no "
		    "local address but loopback ones, skipped\n");
		return;
	}
	ck_assert_int_ne(lfd = listen_on(&ss, &len), -1);
	ck_assert_int_ne(cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0),
	    -1);
	((struct sockaddr_in *)&src)->sin_port = 0;
	ck_assert_int_eq(bind(cfd, (struct sockaddr *)&src,
	    sizeof(struct sockaddr_in)), 0);
	ck_assert_int_eq(connect(cfd, (struct sockaddr *)&ss, len), 0);
	fd = accept_within(lfd);
	ASSERT_CHECK(fd, 0, "only on loopback and Unix sockets");
	close(fd);
	close(cfd);
	close(lfd);
	/* Not a socket at all: it cannot tell. */
	ck_assert_int_eq(pipe(p), 0);
	ASSERT_CHECK(p[0], -1, "getsockname");
	close(p[0]);
	close(p[1]);
}
END_TEST

/*
 * A client of a listener on ss as nobody: refused, then let in by each
 * allow flag.  Skipped, saying so, when ss cannot be bound here.
 */
static void
other_user(struct sockaddr_storage *ss, socklen_t len)
{
	struct peer	p;
	int		lfd, fd;
	char		who[32];

	if ((lfd = listen_on(ss, &len)) == -1) {
		fprintf(stderr, "check_peercred: other_user_refused: cannot "
		    "listen on an address of family %d here (%s), case "
		    "skipped\n", ss->ss_family, strerror(errno));
		return;
	}
	snprintf(who, sizeof(who), "uid %u (", (unsigned)nobody_uid);
	peer_start(&p, nobody_uid, nobody_gid, ss, len, PEER_HOLD);
	fd = accept_within(lfd);
	memset(&opt, 0, sizeof(opt));
	ASSERT_CHECK(fd, 0, "is not the broker's user");
	ck_assert_msg(strstr(why, who) != NULL, "%s", why);
	opt.allow_uid[opt.nallow_uid++] = 4242;
	opt.allow_gid[opt.nallow_gid++] = 4242;
	ASSERT_CHECK(fd, 0, "no --allow-user or --allow-group");
	opt.allow_uid[opt.nallow_uid++] = nobody_uid;
	ASSERT_CHECK(fd, 1, "--allow-user");
	memset(&opt, 0, sizeof(opt));
	opt.allow_gid[opt.nallow_gid++] = nobody_gid;
	ASSERT_CHECK(fd, 1, "--allow-group");
	close(fd);
	peer_end(&p);
	close(lfd);
}

START_TEST(other_user_refused)
{
	struct sockaddr_storage	ss;

	if (!need_root("other_user_refused"))
		return;
	other_user(&ss, addr_of(&ss, AF_INET, "127.0.0.1", 0));
	other_user(&ss, addr_unix(&ss, 2));
	other_user(&ss, addr_of(&ss, AF_INET6, "::1", 0));
}
END_TEST

/*
 * A user other than root listed as a supplementary member of a group that
 * is not its primary one; 0 when the group database has none.
 */
static int
find_member(uid_t *uid, gid_t *pgid, gid_t *sgid)
{
	struct group	*gr;
	struct passwd	*pw;
	char		**m;
	int		 found = 0;

	setgrent();
	while (!found && (gr = getgrent()) != NULL)
		for (m = gr->gr_mem; *m != NULL && !found; m++)
			if ((pw = getpwnam(*m)) != NULL && pw->pw_uid != 0 &&
			    pw->pw_gid != gr->gr_gid) {
				*uid = pw->pw_uid;
				*pgid = pw->pw_gid;
				*sgid = gr->gr_gid;
				found = 1;
			}
	endgrent();
	return found;
}

/*
 * --allow-group counts supplementary members from the group database,
 * even when the client process dropped its supplementary groups.
 */
START_TEST(supplementary_group)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = addr_of(&ss, AF_INET, "127.0.0.1", 0);
	struct peer		 p;
	uid_t			 uid;
	gid_t			 pgid, sgid;
	int			 lfd, fd;

	if (!need_root("supplementary_group"))
		return;
	if (!find_member(&uid, &pgid, &sgid)) {
		fprintf(stderr, "check_peercred: supplementary_group: no user "
		    "is a supplementary member of a group here, skipped\n");
		return;
	}
	ck_assert_int_ne(lfd = listen_on(&ss, &len), -1);
	peer_start(&p, uid, pgid, &ss, len, PEER_HOLD);
	fd = accept_within(lfd);
	ASSERT_CHECK(fd, 0, "is not the broker's user");
	opt.allow_gid[opt.nallow_gid++] = sgid;
	ASSERT_CHECK(fd, 1, "--allow-group");
	close(fd);
	peer_end(&p);
	close(lfd);
}
END_TEST

/*
 * A client that closed its socket before the check leaves one held by no
 * process, which the kernel soon reports as uid 0 (time-wait): that is
 * no one's word, and must never pass for root's.  So no closed socket is
 * believed, not even an allowed user's (without the rule, this one is
 * let in).
 */
START_TEST(closed_peer_not_believed)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = addr_of(&ss, AF_INET, "127.0.0.1", 0);
	struct peer		 p;
	int			 lfd, fd;

	ck_assert_int_ne(lfd = listen_on(&ss, &len), -1);
	if (geteuid() == 0)
		peer_start(&p, nobody_uid, nobody_gid, &ss, len, PEER_CLOSE);
	else
		peer_start(&p, geteuid(), getegid(), &ss, len, PEER_CLOSE);
	fd = accept_within(lfd);
	opt.allow_uid[opt.nallow_uid++] = nobody_uid;
	ck_assert_msg(check(fd) == -1, "%s", why);
	ck_assert_msg(strstr(why, "no longer held") != NULL ||
	    strstr(why, "none found") != NULL, "%s", why);
	close(fd);
	peer_end(&p);
	close(lfd);
}
END_TEST

/* An unknown --allow-user name stops the broker: exit 64, naming it. */
START_TEST(unknown_user_exit_64)
{
	const char	*bad[] = { "--allow-user", "no-such-user-p17", NULL };

	broker_prepare(&b);
	ck_assert_int_eq(broker_run(&b, bad), 64);
	ck_assert_int_eq(broker_log_count(&b, "--allow-user: no user "
	    "'no-such-user-p17'"), 1);
}
END_TEST

/* The token of the broker b started with auth.  Static. */
static const char *
token_of(void)
{
	static char	tok[128];
	ssize_t		n;
	int		fd;

	ck_assert_int_ne(fd = open(broker_path(&b, "state/token"),
	    O_RDONLY), -1);
	n = read(fd, tok, sizeof(tok) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	tok[n] = '\0';
	tok[strcspn(tok, "\n")] = '\0';
	return tok;
}

/* A new TCP client's answer to a ping, said without any token. */
static int
ping_error(void)
{
	struct client	*c = client_tcp(b.port);
	json_object	*r = client_call(c, PING);
	int		 code = json_object_get_int(jpath(r, "error.code"));

	ck_assert_ptr_nonnull(r);
	json_object_put(r);
	client_close(c);
	return code;
}

/* The token is the default; --peer-auth lets this process's user in. */
START_TEST(peer_auth_serves)
{
	const char	*args[] = { "--peer-auth", NULL };

	broker_prepare(&b);
	b.auth = 1;
	ck_assert_int_eq(broker_start(&b, NULL, 0), 0);
	ck_assert_int_eq(ping_error(), -32005);
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_int_eq(ping_error(), 0);
}
END_TEST

/* In a child: send line, read one answer line into buf; 0, or -1. */
static int
raw_call(int fd, const char *line, char *buf, size_t size)
{
	struct pollfd	pfd = { fd, POLLIN, 0 };
	size_t		off = 0, len = strlen(line);
	ssize_t		n;

	if (write(fd, line, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		return -1;
	while (off < size - 1) {
		if (poll(&pfd, 1, WAIT_MS) != 1 ||
		    (n = read(fd, buf + off, size - 1 - off)) <= 0)
			return -1;
		off += (size_t)n;
		buf[off] = '\0';
		if (strchr(buf, '\n') != NULL)
			return 0;
	}
	return -1;
}

/*
 * As nobody, ping b without a token: exit 0 when served; 1 when refused
 * with the peer check named, then served after authenticating with tok;
 * other statuses name the step that failed.
 */
static void
nobody_child(int port, const char *tok)
{
	char	buf[4096], line[256];
	int	fd;

	if (setgroups(0, NULL) == -1 || setgid(nobody_gid) == -1 ||
	    setuid(nobody_uid) == -1)
		_exit(10);
	if ((fd = broker_dial(port)) == -1)
		_exit(11);
	if (raw_call(fd, PING, buf, sizeof(buf)) == -1)
		_exit(12);
	if (strstr(buf, "\"result\"") != NULL)
		_exit(0);
	if (strstr(buf, "-32005") == NULL || strstr(buf, "peer check") == NULL)
		_exit(13);
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"authenticate\",\"params\":{\"token\":\"%s\"}}",
	    tok);
	if (raw_call(fd, line, buf, sizeof(buf)) == -1 ||
	    strstr(buf, "\"authenticated\":true") == NULL)
		_exit(14);
	if (raw_call(fd, PING, buf, sizeof(buf)) == -1 ||
	    strstr(buf, "\"result\"") == NULL)
		_exit(15);
	_exit(1);
}

static int
nobody_ping(void)
{
	const char	*tok = token_of();
	pid_t		 pid;
	int		 status;

	if ((pid = fork()) == 0)
		nobody_child(b.port, tok);
	ck_assert_int_gt(pid, 0);
	/* Bounded: each of the child's reads waits WAIT_MS at most. */
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/*
 * Another user is not let in by --peer-auth alone, and is told so; the
 * token still works for it; --allow-user lets it in without one.
 */
START_TEST(peer_auth_other_user)
{
	const char	*args[] = { "--peer-auth", NULL };
	const char	*allow[] = { "--peer-auth", "--allow-user", "nobody",
			    NULL };

	if (!need_root("peer_auth_other_user"))
		return;
	broker_prepare(&b);
	b.auth = 1;
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_int_eq(nobody_ping(), 1);
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	if (getpwnam("nobody") == NULL) {
		fprintf(stderr, "check_peercred: peer_auth_other_user: no "
		    "user named nobody, --allow-user case skipped\n");
		return;
	}
	ck_assert_int_eq(broker_start(&b, allow, 0), 0);
	ck_assert_int_eq(nobody_ping(), 0);
}
END_TEST

static Suite *
peercred_suite(void)
{
	Suite	*s = suite_create("peercred");
	TCase	*tc = tcase_create("peercred");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tcp4_same_user);
	tcase_add_test(tc, tcp6_same_user);
	tcase_add_test(tc, tcp_v4_mapped);
	tcase_add_test(tc, unix_same_user);
	tcase_add_test(tc, not_loopback_refused);
	tcase_add_test(tc, other_user_refused);
	tcase_add_test(tc, supplementary_group);
	tcase_add_test(tc, closed_peer_not_believed);
	tcase_add_test(tc, unknown_user_exit_64);
	tcase_add_test(tc, peer_auth_serves);
	tcase_add_test(tc, peer_auth_other_user);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(peercred_suite());
}
