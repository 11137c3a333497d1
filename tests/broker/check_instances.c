/* SPDX-License-Identifier: ISC */
/*
 * Issue 18.4: finding a broker by its instance file.  Two brokers named
 * a and b, on free ports and state dirs of their own, publish in one
 * runtime dir (CMDGATE_RUNTIME_DIR): cmdgate --instance (and
 * CMDGATE_INSTANCE) reaches each, cmdgate instances lists them, a killed
 * one shows stale (and --prune removes it), a stopped one's file is gone,
 * and with one live the default finds it.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

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

static struct broker	 a, b;
static char		 rundir[128], out[65536];

static void
setup(void)
{
	broker_prepare(&a);
	broker_prepare(&b);
	snprintf(rundir, sizeof(rundir), "%s", broker_path(&a, "run"));
	setenv("CMDGATE_RUNTIME_DIR", rundir, 1);
	setenv("CMDGATE_TEST_RUNTIME_DIR", rundir, 1);	/* the brokers' */
}

static void
teardown(void)
{
	broker_stop(&b);
	broker_stop(&a);
}

/* Run cmdgate with args (NULL-ended), env CMDGATE_INSTANCE inst (or
 * none); its exit status, its stdout in out. */
static int
cli(const char *inst, const char *first, ...)
{
	const char	*argv[32];
	va_list		 ap;
	int		 o[2], status;
	pid_t		 pid;

	argv[0] = getenv("CMDGATE");
	ck_assert_ptr_nonnull(argv[0]);
	va_start(ap, first);
	args_collect(argv, 1, 32, first, ap);
	va_end(ap);
	ck_assert_int_eq(pipe(o), 0);
	if ((pid = fork()) == 0) {
		dup2(o[1], 1);
		close(o[0]);
		unsetenv("CMDGATE_PORT");
		unsetenv("CMDGATE_SOCKET");
		unsetenv("CMDGATE_TOKEN_FILE");
		if (inst != NULL)
			setenv("CMDGATE_INSTANCE", inst, 1);
		else
			unsetenv("CMDGATE_INSTANCE");
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(o[1]);
	fd_slurp(o[0], out, sizeof(out));
	close(o[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The pid of the broker cmdgate reaches with args (then "status"). */
static long
reached(const char *inst, const char *flag, const char *name)
{
	json_object	*o;
	long		 pid;

	ck_assert_int_eq(flag != NULL ? cli(inst, flag, name, "--json",
	    "status", NULL) : cli(inst, "--json", "status", NULL), 0);
	ck_assert_ptr_nonnull(o = json_tokener_parse(out));
	pid = (long)json_object_get_int64(jpath(o, "server.pid"));
	json_object_put(o);
	return pid;
}

/* cmdgate instances --json: the state of row i, checked to be name. */
static void
assert_row(json_object *o, size_t i, const char *name, const char *state)
{
	json_object	*row;

	row = json_object_array_get_idx(jpath(o, "instances"), i);
	ck_assert_ptr_nonnull(row);
	ck_assert_str_eq(json_object_get_string(jpath(row, "instance")), name);
	ck_assert_str_eq(json_object_get_string(jpath(row, "state")), state);
}

static json_object *
instances(const char *more)
{
	json_object	*o;

	ck_assert_int_eq(more != NULL ? cli(NULL, "--json", "instances", more,
	    NULL) : cli(NULL, "--json", "instances", NULL), 0);
	ck_assert_ptr_nonnull(o = json_tokener_parse(out));
	return o;
}

START_TEST(two_instances)
{
	const char	*aa[] = { "--instance", "a", NULL };
	const char	*ba[] = { "--instance", "b", NULL };
	char		 path[256];
	struct stat	 st;
	json_object	*o;

	b.auth = 1;		/* its token file named in its instance file */
	ck_assert_int_eq(broker_start(&a, aa, 0), 0);
	ck_assert_int_eq(broker_start(&b, ba, 0), 0);
	ck_assert_int_eq(reached(NULL, "--instance", "a"), a.pid);
	ck_assert_int_eq(reached(NULL, "--instance", "b"), b.pid);
	ck_assert_int_eq(reached("b", NULL, NULL), b.pid);
	ck_assert_int_eq(cli(NULL, "--instance", "a", "ping", NULL), 0);
	o = instances(NULL);
	ck_assert_uint_eq(json_object_array_length(jpath(o, "instances")), 2);
	assert_row(o, 0, "a", "live");
	assert_row(o, 1, "b", "live");
	json_object_put(o);
	/* A killed broker leaves its file: stale; the one live is found. */
	broker_kill(&b, SIGKILL);
	b.pid = 0;
	o = instances(NULL);
	assert_row(o, 0, "a", "live");
	assert_row(o, 1, "b", "stale");
	json_object_put(o);
	ck_assert_int_eq(reached(NULL, NULL, NULL), a.pid);
	snprintf(path, sizeof(path), "%s/b.json", rundir);
	ck_assert_int_eq(stat(path, &st), 0);
	o = instances("--prune");
	json_object_put(o);
	ck_assert_int_eq(stat(path, &st), -1);
	/* A stopped broker removes its file. */
	snprintf(path, sizeof(path), "%s/a.json", rundir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(broker_kill(&a, SIGTERM), 0);
	a.pid = 0;
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_int_eq(cli(NULL, "--instance", "a", "ping", NULL), 64);
	/* One others could have planted is not followed. */
	ck_assert_int_eq(broker_start(&a, aa, 0), 0);
	ck_assert_int_eq(chmod(rundir, 0777), 0);
	ck_assert_int_eq(cli(NULL, "--instance", "a", "ping", NULL), 64);
	ck_assert_int_eq(chmod(rundir, 0700), 0);
	ck_assert_int_eq(cli(NULL, "--instance", "a", "ping", NULL), 0);
}
END_TEST

/*
 * An instance file whose token file belongs to another user: the token
 * is not read (nor sent); and --prune keeps the file of a broker that is
 * alive but does not answer.
 */
START_TEST(foreign_token)
{
	const char	*ba[] = { "--instance", "b", NULL };
	char		 path[256], fake[256], tok[256], cmd[1024];
	json_object	*o;
	struct stat	 st;

	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: foreign_token needs root (chown)\n");
		return;
	}
	b.auth = 1;
	ck_assert_int_eq(broker_start(&b, ba, 0), 0);
	snprintf(path, sizeof(path), "%s/b.json", rundir);
	ck_assert_ptr_nonnull(o = json_object_from_file(path));
	/* root's tokens: a copy of b's, and b's state dir's. */
	snprintf(tok, sizeof(tok), "%s", broker_path(&b, "root-token"));
	snprintf(cmd, sizeof(cmd), "cp %s %s",
	    json_object_get_string(jpath(o, "token_file")), tok);
	ck_assert_int_eq(system(cmd), 0);
	json_object_object_add(o, "token_file", json_object_new_string(tok));
	json_object_object_del(o, "socket");	/* over TCP: a token is due */
	snprintf(fake, sizeof(fake), "%s/fake.json", rundir);
	ck_assert_int_eq(json_object_to_file(fake, o), 0);
	json_object_put(o);
	ck_assert_int_eq(chmod(fake, 0644), 0);
	ck_assert_int_eq(cli(NULL, "--instance", "fake", "ping", NULL), 0);
	/* Written by another user (a unit's, whose tools run as it): root's
	 * tokens it names are not read, so not sent. */
	ck_assert_int_eq(chown(fake, 65534, 65534), 0);
	ck_assert_int_eq(cli(NULL, "--instance", "fake", "ping", NULL), 77);
	/* Stopped, not dead: --prune keeps its file. */
	ck_assert_int_eq(kill(b.pid, SIGSTOP), 0);
	json_object_put(instances("--prune"));
	ck_assert_int_eq(kill(b.pid, SIGCONT), 0);
	ck_assert_int_eq(stat(path, &st), 0);
}
END_TEST

/*
 * A system unit's own directory (RuntimeDirectory=cmdgate/NAME, its
 * CMDGATE_RUNTIME_DIR): RUNDIR/NAME/NAME.json is found and listed too,
 * and not followed when RUNDIR is writable by others.
 */
START_TEST(unit_layout)
{
	const char	*ba[] = { "--instance", "b", NULL };
	char		 dir[256];
	json_object	*o;

	ck_assert_int_eq(mkdir(rundir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/b", rundir);
	setenv("CMDGATE_TEST_RUNTIME_DIR", dir, 1);
	ck_assert_int_eq(broker_start(&b, ba, 0), 0);
	setenv("CMDGATE_TEST_RUNTIME_DIR", rundir, 1);
	ck_assert_int_eq(reached(NULL, "--instance", "b"), b.pid);
	o = instances(NULL);
	ck_assert_uint_eq(json_object_array_length(jpath(o, "instances")), 1);
	assert_row(o, 0, "b", "live");
	json_object_put(o);
	ck_assert_int_eq(chmod(rundir, 0777), 0);
	ck_assert_int_eq(cli(NULL, "--instance", "b", "ping", NULL), 64);
	ck_assert_int_eq(chmod(rundir, 0700), 0);
	ck_assert_int_eq(cli(NULL, "--instance", "b", "ping", NULL), 0);
}
END_TEST

START_TEST(bad_names)
{
	const char	*bad[] = { "--instance", "../x", NULL };

	ck_assert_int_eq(broker_run(&a, bad), 64);
	ck_assert_int_eq(cli(NULL, "--instance", "../x", "ping", NULL), 64);
	ck_assert_int_eq(cli("a/b", "ping", NULL), 64);
}
END_TEST

/*
 * Issue 35.10: a second broker of a live broker's name is refused,
 * naming it, and the live one stays listed; once it stops, the name is
 * free again.  A stale file of the name, whose pid another process has
 * now and whose state dir nobody locks, does not hold it.
 */
START_TEST(same_name)
{
	const char	*aa[] = { "--instance", "a", NULL };
	char		 path[256], json[512], want[128];
	struct stat	 st;

	ck_assert_int_eq(broker_start(&a, aa, 0), 0);
	ck_assert_int_eq(broker_run(&b, aa), 75);
	snprintf(want, sizeof(want), "--instance a: a live broker has that "
	    "name (pid %ld, 127.0.0.1:%d", (long)a.pid, a.port);
	ck_assert_int_eq(broker_log_count(&b, want), 1);
	ck_assert_int_eq(reached(NULL, "--instance", "a"), a.pid);
	ck_assert_int_eq(broker_kill(&a, SIGTERM), 0);
	a.pid = 0;
	snprintf(path, sizeof(path), "%s/a.json", rundir);
	ck_assert_int_eq(stat(path, &st), -1);
	snprintf(json, sizeof(json), "{\"instance\":\"a\",\"pid\":1,"
	    "\"listen\":[],\"token_file\":null,\"state_dir\":\"%s\"}",
	    broker_path(&a, "state"));
	write_file(path, json, 0644);
	ck_assert_int_eq(broker_start(&b, aa, 0), 0);
	ck_assert_int_eq(reached(NULL, "--instance", "a"), b.pid);
	ck_assert_int_eq(broker_kill(&b, SIGTERM), 0);
	b.pid = 0;
	ck_assert_int_eq(stat(path, &st), -1);
}
END_TEST

/* mcp-config names the instance in the stdio entry's args. */
START_TEST(mcp_config_instance)
{
	const char	*aa[] = { "--instance", "proj-1", NULL };

	ck_assert_int_eq(broker_start(&a, aa, 0), 0);
	ck_assert_int_eq(cli("proj-1", "mcp-config", "--client", "generic",
	    NULL), 0);
	ck_assert_msg(strstr(out, "\"--instance\"") != NULL &&
	    strstr(out, "\"proj-1\"") != NULL, "%s", out);
}
END_TEST

/*
 * Review item 7: a stale file whose pid another process has now (pid 1,
 * as after a reboot) and whose endpoint is gone does not hide the one
 * live broker from the default: only a broker that answers counts.
 */
START_TEST(stale_pid_reused)
{
	const char	*aa[] = { "--instance", "a", NULL };
	char		 path[256], json[512];

	ck_assert_int_eq(broker_start(&a, aa, 0), 0);
	snprintf(path, sizeof(path), "%s/old.json", rundir);
	snprintf(json, sizeof(json), "{\"instance\":\"old\",\"pid\":1,"
	    "\"listen\":[],\"socket\":\"%s\",\"token_file\":null}",
	    broker_path(&a, "gone.sock"));
	write_file(path, json, 0644);
	ck_assert_int_eq(reached(NULL, NULL, NULL), a.pid);
}
END_TEST

/*
 * Review item 9: cmdgate instances shows a file's strings with their
 * controls escaped, and lists no file whose name --instance would
 * refuse (a name may hold controls too).
 */
START_TEST(instances_sanitised)
{
	const char	*aa[] = { "--instance", "a", NULL };
	char		 path[256];
	json_object	*o;

	ck_assert_int_eq(broker_start(&a, aa, 0), 0);
	snprintf(path, sizeof(path), "%s/evil\033[2J.json", rundir);
	write_file(path, "{\"instance\":\"evil\",\"pid\":1,\"listen\":[]}",
	    0644);
	snprintf(path, sizeof(path), "%s/odd.json", rundir);
	write_file(path, "{\"instance\":\"odd\",\"pid\":1,\"listen\":[],"
	    "\"socket\":\"/nowhere/\\u001b[31mred\",\"started_at\":"
	    "\"\\u001b]0;title\\u0007\\u009bx\"}", 0644);
	ck_assert_int_eq(cli(NULL, "instances", NULL), 0);
	ck_assert_msg(strchr(out, '\033') == NULL && strchr(out, '\007') ==
	    NULL && strstr(out, "\302\233") == NULL, "%s", out);
	ck_assert_msg(strstr(out, "/nowhere/\\x1b[31mred") != NULL &&
	    strstr(out, "\\x1b]0;title\\x07\\u009bx") != NULL, "%s", out);
	ck_assert_ptr_null(strstr(out, "evil"));
	o = instances(NULL);
	ck_assert_uint_eq(json_object_array_length(jpath(o, "instances")), 2);
	assert_row(o, 0, "a", "live");
	assert_row(o, 1, "odd", "stale");
	json_object_put(o);
}
END_TEST

/* Review item 9: a file without "instance" gets mcp-config's
 * --instance as it was found, not null. */
START_TEST(mcp_config_unnamed)
{
	const char	*aa[] = { "--instance", "a", NULL };
	char		 path[256];
	json_object	*o;

	ck_assert_int_eq(broker_start(&a, aa, 0), 0);
	snprintf(path, sizeof(path), "%s/a.json", rundir);
	ck_assert_ptr_nonnull(o = json_object_from_file(path));
	json_object_object_del(o, "instance");
	snprintf(path, sizeof(path), "%s/plain.json", rundir);
	write_file(path, json_object_to_json_string(o), 0644);
	json_object_put(o);
	ck_assert_int_eq(cli("plain", "mcp-config", "--client", "generic",
	    NULL), 0);
	ck_assert_msg(strstr(out, "\"--instance\"") != NULL &&
	    strstr(out, "\"plain\"") != NULL && strstr(out, "null") == NULL,
	    "%s", out);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("instances");
	TCase	*tc = tcase_create("instances");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, two_instances);
	tcase_add_test(tc, unit_layout);
	tcase_add_test(tc, foreign_token);
	tcase_add_test(tc, bad_names);
	tcase_add_test(tc, same_name);
	tcase_add_test(tc, mcp_config_instance);
	tcase_add_test(tc, stale_pid_reused);
	tcase_add_test(tc, instances_sanitised);
	tcase_add_test(tc, mcp_config_unnamed);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
