/* SPDX-License-Identifier: ISC */
/*
 * Safe by default: the token the broker makes and keeps, the rules a token
 * file and a state dir must pass, --no-auth kept to loopback, cmdgate(1)
 * finding the token by itself, and one broker per state dir.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "testnet.h"

#define PING	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
#define NOBODY	65534

static struct broker	b;
static char		state[256], token[sizeof(state) + sizeof("/token")];
static char		err[65536];

static void
setup(void)
{
	broker_prepare(&b);
	snprintf(state, sizeof(state), "%s", broker_path(&b, "state"));
	snprintf(token, sizeof(token), "%s/token", state);
}

static void
teardown(void)
{
	broker_stop(&b);
}

/* The whole of a small file, or "" when it cannot be read.  Static. */
static const char *
slurp_file(const char *path)
{
	static char	buf[8192];
	ssize_t		n;
	int		fd = open(path, O_RDONLY);

	buf[0] = '\0';
	if (fd == -1)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

static int
err_code(json_object *r)
{
	return json_object_get_int(jpath(r, "error.code"));
}

/*
 * Run cmdgate with env ("NAME=value" or "NAME" to unset, NULL-ended list
 * first) and args; as uid when uid > 0.  Its exit status; stderr in err.
 */
static int
run_cli(uid_t uid, const char **env, const char *first, ...)
{
	const char	*argv[32], *bin = getenv("CMDGATE");
	char		 port[16];
	va_list		 ap;
	int		 e[2], status;
	pid_t		 pid;

	ck_assert_ptr_nonnull(bin);
	argv[0] = bin;
	va_start(ap, first);
	args_collect(argv, 1, 32, first, ap);
	va_end(ap);
	snprintf(port, sizeof(port), "%d", b.port);
	ck_assert_int_eq(pipe(e), 0);
	if ((pid = fork()) == 0) {
		dup2(e[1], 2);
		close(e[0]);
		setenv("CMDGATE_PORT", port, 1);
		unsetenv("CMDGATE_SOCKET");
		unsetenv("CMDGATE_TOKEN_FILE");
		unsetenv("CMDGATE_STATE_DIR");
		for (; env != NULL && *env != NULL; env++)
			if (strchr(*env, '=') != NULL)
				putenv((char *)*env);
			else
				unsetenv(*env);
		if (uid > 0 && (setgid(uid) == -1 || setuid(uid) == -1))
			_exit(126);
		execv(bin, (char **)argv);
		_exit(127);
	}
	close(e[1]);
	fd_slurp(e[0], err, sizeof(err));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/*
 * Whether uid may run the CLI: not when the tree is under a directory
 * closed to others (a clone in a mktemp -d).
 */
static int
cli_runs_as(uid_t uid)
{
	const char	*bin = getenv("CMDGATE");
	int		 status;
	pid_t		 pid;

	if ((pid = fork()) == 0)
		_exit(setgid(uid) == 0 && setuid(uid) == 0 &&
		    access(bin, X_OK) == 0 ? 0 : 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * Run a broker (no --no-auth) with the test's state dir and args, as the
 * broker on (its log and pid there; not b while b runs).
 */
static int
run_broker_on(struct broker *on, const char *first, ...)
{
	const char	*argv[16] = { "--listen", "127.0.0.1:0", "--state-dir",
			    state };
	va_list		 ap;

	va_start(ap, first);
	args_collect(argv, 4, 16, first, ap);
	va_end(ap);
	return broker_run(on, argv);
}

#define run_broker(...)	run_broker_on(&b, __VA_ARGS__)

START_TEST(token_made_and_kept)
{
	struct client	*c;
	json_object	*r;
	struct stat	 st;
	char		 first[128];
	size_t		 i;

	b.auth = 1;
	ck_assert_int_eq(broker_start(&b, NULL, 0), 0);
	ck_assert_int_eq(lstat(token, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	snprintf(first, sizeof(first), "%s", slurp_file(token));
	ck_assert_int_eq(strlen(first), 65);
	for (i = 0; i < 64; i++)
		ck_assert(isxdigit((unsigned char)first[i]));
	ck_assert_int_eq(first[64], '\n');
	first[64] = '\0';
	ck_assert_int_eq(broker_log_count(&b, first), 0);
	/* A TCP client without it gets nothing but unauthorized. */
	c = client_tcp(b.port);
	r = client_call(c, PING);
	ck_assert_int_eq(err_code(r), -32005);
	json_object_put(r);
	r = client_auth(c, "0123");
	ck_assert_int_eq(err_code(r), -32005);
	json_object_put(r);
	r = client_auth(c, first);
	ck_assert(json_object_get_boolean(jpath(r, "result.authenticated")));
	json_object_put(r);
	r = client_call(c, PING);
	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
	client_close(c);
	/* A restart keeps the token. */
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	ck_assert_int_eq(broker_start(&b, NULL, 0), 0);
	ck_assert_int_eq(strncmp(slurp_file(token), first, 64), 0);
	c = client_tcp(b.port);
	r = client_auth(c, first);
	ck_assert(json_object_get_boolean(jpath(r, "result.authenticated")));
	json_object_put(r);
	client_close(c);
}
END_TEST

START_TEST(cli_finds_token)
{
	char		 envdir[300], empty[300];
	const char	*with[] = { envdir, NULL };

	snprintf(envdir, sizeof(envdir), "CMDGATE_STATE_DIR=%s", state);
	snprintf(empty, sizeof(empty), "%s", broker_path(&b, "empty"));
	ck_assert_int_eq(mkdir(empty, 0700), 0);
	b.auth = 1;
	ck_assert_int_eq(broker_start(&b, NULL, 0), 0);
	/* No flag: the token is found through the state dir. */
	ck_assert_int_eq(run_cli(0, with, "ping", NULL), 0);
	ck_assert_int_eq(run_cli(0, NULL, "--state-dir", state, "ping", NULL),
	    0);
	ck_assert_int_eq(run_cli(0, NULL, "--token-file", token, "ping", NULL),
	    0);
	ck_assert_int_eq(run_cli(0, with, "tools", NULL), 0);
	/* A state dir without a token: none sent, the broker refuses. */
	ck_assert_int_eq(run_cli(0, NULL, "--state-dir", empty, "ping", NULL),
	    77);
	ck_assert_ptr_nonnull(strstr(err, "authenticate"));
	/* A token the user cannot read: said so, exit 77. */
	if (geteuid() == 0 && !cli_runs_as(NOBODY))
		printf("cli_finds_token: an unreadable token not tried: uid "
		    "%d cannot run %s\n", NOBODY, getenv("CMDGATE"));
	else if (geteuid() == 0) {
		ck_assert_int_eq(chmod(b.dir, 0755), 0);
		ck_assert_int_eq(run_cli(NOBODY, with, "ping", NULL), 77);
		ck_assert_msg(strstr(err, "cannot read the broker's token") !=
		    NULL, "stderr: %s", err);
		ck_assert_ptr_nonnull(strstr(err, token));
	}
}
END_TEST

START_TEST(mcp_bridge_finds_token)
{
	char		 envdir[300];
	int		 in[2], o[2], status;
	char		 buf[4096], port[16];
	const char	*bin = getenv("CMDGATE");
	pid_t		 pid;
	const char	*req = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
			    "\"initialize\",\"params\":{\"protocolVersion\":"
			    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":"
			    "{\"name\":\"t\",\"version\":\"1\"}}}\n";

	snprintf(envdir, sizeof(envdir), "%s", state);
	b.auth = 1;
	ck_assert_int_eq(broker_start(&b, NULL, 0), 0);
	snprintf(port, sizeof(port), "%d", b.port);
	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(o), 0);
	if ((pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(o[1], 1);
		close(in[1]);
		close(o[0]);
		setenv("CMDGATE_STATE_DIR", envdir, 1);
		setenv("CMDGATE_PORT", port, 1);
		unsetenv("CMDGATE_TOKEN_FILE");
		unsetenv("CMDGATE_SOCKET");
		execl(bin, bin, "mcp", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(o[1]);
	ck_assert_int_eq(write(in[1], req, strlen(req)), (ssize_t)strlen(req));
	close(in[1]);
	fd_slurp(o[0], buf, sizeof(buf));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(strstr(buf, "\"protocolVersion\"") != NULL,
	    "answer: %s", buf);
	ck_assert_ptr_null(strstr(buf, "-32005"));
}
END_TEST

START_TEST(token_file_rules)
{
	char	fifo[256], link[256], shared[256];

	ck_assert_int_eq(mkdir(state, 0700), 0);
	snprintf(fifo, sizeof(fifo), "%s", broker_path(&b, "fifo"));
	snprintf(link, sizeof(link), "%s", broker_path(&b, "link"));
	snprintf(shared, sizeof(shared), "%s", broker_path(&b, "shared"));
	write_file(shared, "sesame\n", 0640);
	ck_assert_int_eq(run_broker("--token-file", shared, NULL), 78);
	ck_assert_int_eq(broker_log_count(&b, "lets group or others read"),
	    1);
	write_file(shared, "sesame\n", 0600);
	ck_assert_int_eq(symlink(shared, link), 0);
	ck_assert_int_eq(run_broker("--token-file", link, NULL), 78);
	ck_assert_int_eq(broker_log_count(&b, "a symlink"), 1);
	/* A FIFO nobody writes to: refused at once, never waited on. */
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(run_broker("--token-file", fifo, NULL), 78);
	ck_assert_int_eq(broker_log_count(&b, "not a regular file"), 1);
	/* The default token is held to the same rules. */
	ck_assert_int_eq(mkfifo(token, 0600), 0);
	ck_assert_int_eq(run_broker(NULL), 78);
	ck_assert_int_eq(broker_log_count(&b, "not a regular file"), 2);
	unlink(token);
	ck_assert_int_eq(symlink(shared, token), 0);
	ck_assert_int_eq(run_broker(NULL), 78);
	ck_assert_int_eq(broker_log_count(&b, "a symlink"), 2);
	unlink(token);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(shared, NOBODY, NOBODY), 0);
		ck_assert_int_eq(run_broker("--token-file", shared, NULL), 78);
		ck_assert_int_eq(broker_log_count(&b, "owned by uid 65534"),
		    1);
	}
	/* -n checks but makes nothing. */
	ck_assert_int_eq(run_broker("-n", NULL), 0);
	ck_assert_int_eq(access(token, F_OK), -1);
}
END_TEST

START_TEST(state_dir_rules)
{
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_int_eq(chmod(state, 0777), 0);
	ck_assert_int_eq(run_broker(NULL), 78);
	ck_assert_int_eq(broker_log_count(&b, "lets group or others write"),
	    1);
	ck_assert_int_eq(chmod(state, 0770), 0);
	ck_assert_int_eq(run_broker(NULL), 78);
	ck_assert_int_eq(broker_log_count(&b, "lets group or others write"),
	    2);
	ck_assert_int_eq(access(token, F_OK), -1);
	if (geteuid() == 0) {
		ck_assert_int_eq(chmod(state, 0700), 0);
		ck_assert_int_eq(chown(state, NOBODY, NOBODY), 0);
		ck_assert_int_eq(run_broker(NULL), 78);
		ck_assert_int_eq(broker_log_count(&b, "owned by uid 65534"),
		    1);
	}
	/* Only readable by others: made private, as before. */
	ck_assert_int_eq(chown(state, geteuid(), getegid()), 0);
	ck_assert_int_eq(chmod(state, 0755), 0);
	ck_assert_int_eq(run_broker("-n", NULL), 0);
}
END_TEST

START_TEST(no_auth_loopback_only)
{
	ck_assert_int_eq(run_broker("--no-auth", "--listen", "0.0.0.0:0",
	    NULL), 64);
	ck_assert_int_eq(broker_log_count(&b, "--listen 0.0.0.0:0 is not a "
	    "loopback address"), 1);
	ck_assert_int_eq(run_broker("--no-auth", "--listen", "[::]:0", NULL),
	    64);
	ck_assert_int_eq(broker_log_count(&b, "--listen [::]:0 is not"), 1);
	ck_assert_int_eq(run_broker("--no-auth", "--token-file", token, NULL),
	    64);
	/* No token is made, and loopback is let in without one. */
	ck_assert_int_eq(broker_start(&b, NULL, 0), 0);
	ck_assert_int_eq(access(broker_path(&b, "state/token"), F_OK), -1);
}
END_TEST

/* A tool that marks its start in the test dir, then runs on. */
static void
start_holding(const char **extra)
{
	const char	*args[8] = { "--tools", NULL, NULL };
	char		 tools[256], json[512];
	struct client	*c;
	json_object	*r;
	int		 n = 2;

	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
	snprintf(json, sizeof(json), "{\"tools\":[{\"name\":\"hold\","
	    "\"exec\":[\"sh\",\"-c\",\"touch %s; exec sleep 60\"]}]}",
	    broker_path(&b, "running"));
	write_file(tools, json, 0600);
	args[1] = tools;
	while (extra != NULL && *extra != NULL && n < 7)
		args[n++] = *extra++;
	args[n] = NULL;
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	c = client_tcp(b.port);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"hold\"}]}}");
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.ticket")),
	    "t-000000");
	json_object_put(r);
	client_close(c);
	ck_assert_int_eq(wait_for_file(broker_path(&b, "running")), 0);
}

static const char *
job_status(void)
{
	static char	 st[32];
	struct client	*c = client_tcp(b.port);
	json_object	*r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,"
			    "\"method\":\"poll_job\",\"params\":{\"ticket\":"
			    "\"t-000000\"}}");

	snprintf(st, sizeof(st), "%s",
	    json_object_get_string(jpath(r, "result.status")));
	json_object_put(r);
	client_close(c);
	return st;
}

/*
 * A second broker on the same state dir stops at the lock, naming the
 * first one's pid, and touches nothing: the first one's job runs on.
 */
START_TEST(second_broker_refused)
{
	struct broker	b2;
	char		pid[64];

	start_holding(NULL);
	snprintf(pid, sizeof(pid), "pid %d holds", (int)b.pid);
	ck_assert_str_eq(job_status(), "running");
	broker_prepare(&b2);
	ck_assert_int_eq(run_broker_on(&b2, "--no-auth", NULL), 75);
	ck_assert_int_eq(broker_log_count(&b2, pid), 1);
	/* It never reached the store, nor the listeners. */
	ck_assert_int_eq(broker_log_count(&b2, "store"), 0);
	broker_stop(&b2);
	ck_assert_str_eq(job_status(), "running");
	ck_assert_int_eq(strtol(slurp_file(broker_path(&b, "state/lock")),
	    NULL, 10), b.pid);
}
END_TEST

/*
 * The listeners are bound before recovery: a broker whose port is taken
 * exits 69 and leaves the store as it found it, the job of the broker
 * killed before it still recorded as running.
 */
START_TEST(bind_before_recovery)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	char			 taken[64];
	int			 fd;

	start_holding(NULL);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(fd, 1), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	snprintf(taken, sizeof(taken), "127.0.0.1:%d", ntohs(sin.sin_port));
	ck_assert_int_eq(run_broker("--no-auth", "--listen", taken, NULL), 69);
	close(fd);
	ck_assert_int_eq(broker_log_count(&b, "by the restart"), 1);
	ck_assert_int_eq(broker_log_count(&b, "still alive"), 0);
	/* The next start recovers it. */
	ck_assert_int_eq(broker_start(&b, NULL, 0), 0);
	ck_assert_str_eq(job_status(), "failed");
	ck_assert_int_eq(broker_log_count(&b, "1 interrupted by the restart"),
	    1);
}
END_TEST

static Suite *
auth_suite(void)
{
	Suite	*s = suite_create("auth");
	TCase	*tc = tcase_create("auth");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, token_made_and_kept);
	tcase_add_test(tc, cli_finds_token);
	tcase_add_test(tc, mcp_bridge_finds_token);
	tcase_add_test(tc, token_file_rules);
	tcase_add_test(tc, state_dir_rules);
	tcase_add_test(tc, no_auth_loopback_only);
	tcase_add_test(tc, second_broker_refused);
	tcase_add_test(tc, bind_before_recovery);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(auth_suite());
}
