/* SPDX-License-Identifier: ISC */
/* Flags: defaults, values, errors, --help, and the man page's list. */
#include "config.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "../../src/daemon/daemon.h"
#include "ckrun.h"
#include "log.h"

static struct options	opt;
static char		err[512];

#define PARSE(...) parse((char *[]){ "cmdgated", __VA_ARGS__, NULL })

static enum opt_result
parse(char **argv)
{
	int	argc = 0;
	FILE	*out = fopen("/dev/null", "w");
	enum opt_result r;

	while (argv[argc] != NULL)
		argc++;
	options_free(&opt);
	err[0] = '\0';
	r = options_parse(&opt, argc, argv, out, err, sizeof(err));
	fclose(out);
	return r;
}

static void
setup(void)
{
	unsetenv("CMDGATE_PORT");
	unsetenv("STATE_DIRECTORY");
	unsetenv("CMDGATE_STATE_DIR");
	memset(&opt, 0, sizeof(opt));
}

static void
teardown(void)
{
	options_free(&opt);
}

START_TEST(defaults)
{
	ck_assert_int_eq(parse((char *[]){ "cmdgated", NULL }), OPT_RUN);
	ck_assert_uint_eq(opt.nlisten, 1);
	ck_assert_str_eq(opt.listen[0], "127.0.0.1:8700");
	ck_assert_ptr_null(opt.socket_path);
	ck_assert_ptr_null(opt.tools_file);
	ck_assert_ptr_null(opt.token_file);
	ck_assert_uint_eq(opt.max_message, 1048576);
	ck_assert_uint_eq(opt.max_batch, 25);
	ck_assert_uint_eq(opt.max_workers, 16);
	ck_assert_uint_eq(opt.max_queued, 10000);
	ck_assert_uint_eq(opt.result_ttl, 300);
	ck_assert_uint_eq(opt.kill_grace, 5);
	ck_assert_uint_eq(opt.output_cap, 65536);
	ck_assert_uint_eq(opt.call_timeout, 60);
	ck_assert_int_eq(opt.sync, SYNC_FULL);
	ck_assert_int_eq(opt.log_level, LOG_LVL_INFO);
	ck_assert_int_eq(opt.check_config, 0);
	ck_assert_ptr_nonnull(opt.state_dir);
	if (geteuid() == 0)
		ck_assert_str_eq(opt.state_dir, "/var/lib/cmdgate");
}
END_TEST

/*
 * Listener faces: FACE@ADDR:PORT kept as written; cmdgate's own default
 * is added when only faces are named, and a face on it is refused.
 */
START_TEST(listen_faces)
{
	ck_assert_int_eq(PARSE("--listen", "uloop@127.0.0.1:8711", "--listen",
	    "unity-mcp@[::1]:6411"), OPT_RUN);
	ck_assert_uint_eq(opt.nlisten, 3);
	ck_assert_str_eq(opt.listen[0], "uloop@127.0.0.1:8711");
	ck_assert_str_eq(opt.listen[1], "unity-mcp@[::1]:6411");
	ck_assert_str_eq(opt.listen[2], "127.0.0.1:8700");
	ck_assert_int_eq(PARSE("--listen", "uloop@127.0.0.1:8711", "--listen",
	    "127.0.0.1:9000"), OPT_RUN);
	ck_assert_uint_eq(opt.nlisten, 2);
	ck_assert_int_eq(PARSE("--listen", "uloop@127.0.0.1:8700"), OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "cmdgate's own default address"));
	ck_assert_int_eq(PARSE("--listen", "uloop@127.0.0.1:8700", "--listen",
	    "127.0.0.1:8701"), OPT_RUN);
	/* A face's address is loopback or not like any other. */
	ck_assert_int_eq(PARSE("--no-auth", "--listen", "127.0.0.1:1",
	    "--listen", "uloop@10.1.2.3:2"), OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "uloop@10.1.2.3:2 is not a "
	    "loopback"));
	ck_assert_int_eq(PARSE("--no-auth", "--listen", "127.0.0.1:1",
	    "--listen", "uloop@127.0.0.2:2"), OPT_RUN);
}
END_TEST

START_TEST(values)
{
	ck_assert_int_eq(PARSE("--listen", "127.0.0.1:1", "--listen",
	    "[::1]:2", "--socket", "/tmp/s", "--state-dir", "/tmp/d",
	    "--tools", "t.json", "--token-file", "tok", "--max-message",
	    "2048", "--max-batch", "100", "--max-workers", "3",
	    "--max-queued", "9", "--max-clients", "10", "--result-ttl", "1",
	    "--kill-grace", "0", "--output-cap", "0", "--call-timeout", "7",
	    "--sync", "group", "--map-size", "1048576", "--log-level",
	    "debug", "-n"), OPT_RUN);
	ck_assert_uint_eq(opt.nlisten, 2);
	ck_assert_str_eq(opt.listen[1], "[::1]:2");
	ck_assert_str_eq(opt.socket_path, "/tmp/s");
	ck_assert_str_eq(opt.state_dir, "/tmp/d");
	ck_assert_str_eq(opt.tools_file, "t.json");
	ck_assert_str_eq(opt.token_file, "tok");
	ck_assert_uint_eq(opt.max_message, 2048);
	ck_assert_uint_eq(opt.max_batch, 100);
	ck_assert_uint_eq(opt.max_workers, 3);
	ck_assert_uint_eq(opt.max_queued, 9);
	ck_assert_uint_eq(opt.max_clients, 10);
	ck_assert_uint_eq(opt.result_ttl, 1);
	ck_assert_uint_eq(opt.kill_grace, 0);
	ck_assert_uint_eq(opt.output_cap, 0);
	ck_assert_uint_eq(opt.call_timeout, 7);
	ck_assert_int_eq(opt.sync, SYNC_GROUP);
	ck_assert_uint_eq(opt.map_size, 1048576);
	ck_assert_int_eq(opt.log_level, LOG_LVL_DEBUG);
	ck_assert_int_eq(opt.check_config, 1);
	ck_assert_int_eq(PARSE("--sync=none"), OPT_RUN);
	ck_assert_int_eq(opt.sync, SYNC_NONE);
}
END_TEST

static const struct {
	const char	*flag;
	const char	*value;
	const char	*want;
} bad_values[] = {
	{ "--listen", "localhost", "--listen: 'localhost'" },
	{ "--listen", "127.0.0.1:65536", "--listen" },
	{ "--listen", "1.2.3:80", "--listen" },
	{ "--listen", "[::1:80", "--listen" },
	{ "--listen", "uLoop@127.0.0.1:1", "--listen: 'uLoop' is no face" },
	{ "--listen", "uloop@127.0.0.1", "--listen: 'uloop@127.0.0.1' is not "
	  "uloop@ADDR:PORT" },
	{ "--max-message", "12", "--max-message: '12'" },
	{ "--max-message", "1k", "--max-message: '1k'" },
	{ "--max-batch", "0", "--max-batch" },
	{ "--max-batch", "101", "--max-batch" },
	{ "--max-workers", "-1", "--max-workers" },
	{ "--max-queued", "", "--max-queued" },
	{ "--max-clients", "0", "--max-clients" },
	{ "--result-ttl", "0", "--result-ttl" },
	{ "--kill-grace", "3601", "--kill-grace" },
	{ "--call-timeout", "0", "--call-timeout" },
	{ "--output-cap", "99999999999", "--output-cap" },
	{ "--map-size", "1024", "--map-size" },
	{ "--sync", "sometimes", "--sync: 'sometimes'" },
	{ "--log-level", "loud", "--log-level: 'loud'" },
	{ "--state-dir", "", "--state-dir" },
	{ "--socket", "", "--socket" },
	{ "--max-batch", "18446744073709551616", "--max-batch" },
};

START_TEST(bad_value)
{
	ck_assert_int_eq(PARSE((char *)bad_values[_i].flag,
	    (char *)bad_values[_i].value), OPT_USAGE);
	ck_assert_msg(strstr(err, bad_values[_i].want) != NULL,
	    "'%s' lacks '%s'", err, bad_values[_i].want);
}
END_TEST

START_TEST(bad_usage)
{
	ck_assert_int_eq(PARSE("--frobnicate"), OPT_USAGE);
	ck_assert_str_eq(err, "unknown flag '--frobnicate'");
	ck_assert_int_eq(PARSE("--tools"), OPT_USAGE);
	ck_assert_str_eq(err, "flag '--tools' needs a value");
	ck_assert_int_eq(PARSE("extra"), OPT_USAGE);
	ck_assert_str_eq(err, "unexpected argument 'extra'");
	ck_assert_int_eq(PARSE("-x"), OPT_USAGE);
}
END_TEST

START_TEST(port_env)
{
	setenv("CMDGATE_PORT", "9123", 1);
	ck_assert_int_eq(parse((char *[]){ "cmdgated", NULL }), OPT_RUN);
	ck_assert_str_eq(opt.listen[0], "127.0.0.1:9123");
	/* --listen overrides the environment. */
	ck_assert_int_eq(PARSE("--listen", "127.0.0.1:5"), OPT_RUN);
	ck_assert_uint_eq(opt.nlisten, 1);
	ck_assert_str_eq(opt.listen[0], "127.0.0.1:5");
	setenv("CMDGATE_PORT", "0x10", 1);
	ck_assert_int_eq(parse((char *[]){ "cmdgated", NULL }), OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "CMDGATE_PORT"));
}
END_TEST

START_TEST(state_dir_env)
{
	setenv("STATE_DIRECTORY", "/var/lib/a:/var/lib/b", 1);
	ck_assert_int_eq(parse((char *[]){ "cmdgated", NULL }), OPT_RUN);
	ck_assert_str_eq(opt.state_dir, "/var/lib/a");
	ck_assert_int_eq(PARSE("--state-dir", "/x"), OPT_RUN);
	ck_assert_str_eq(opt.state_dir, "/x");
	/* CMDGATE_STATE_DIR, shared with cmdgate(1), comes first. */
	setenv("CMDGATE_STATE_DIR", "/srv/cg", 1);
	ck_assert_int_eq(parse((char *[]){ "cmdgated", NULL }), OPT_RUN);
	ck_assert_str_eq(opt.state_dir, "/srv/cg");
	unsetenv("CMDGATE_STATE_DIR");
}
END_TEST

/* --no-auth: loopback addresses only, and not with a token file. */
START_TEST(no_auth)
{
	ck_assert_int_eq(parse((char *[]){ "cmdgated", NULL }), OPT_RUN);
	ck_assert_int_eq(opt.no_auth, 0);
	ck_assert_int_eq(PARSE("--no-auth"), OPT_RUN);
	ck_assert_int_eq(opt.no_auth, 1);
	ck_assert_int_eq(PARSE("--no-auth", "--listen", "127.0.0.9:1",
	    "--listen", "[::1]:2", "--listen", "[::ffff:127.0.0.1]:3"),
	    OPT_RUN);
	ck_assert_int_eq(PARSE("--no-auth", "--listen", "127.0.0.1:1",
	    "--listen", "192.168.1.2:2"), OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "--listen 192.168.1.2:2 is not a "
	    "loopback address"));
	ck_assert_int_eq(PARSE("--no-auth", "--listen", "[::]:1"), OPT_USAGE);
	ck_assert_int_eq(PARSE("--no-auth", "--listen", "[::ffff:10.0.0.1]:1"),
	    OPT_USAGE);
	ck_assert_int_eq(PARSE("--no-auth", "--token-file", "t"), OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "--token-file"));
	/* Without --no-auth any address may be named. */
	ck_assert_int_eq(PARSE("--listen", "0.0.0.0:1"), OPT_RUN);
	ck_assert_int_eq(PARSE("--reset-store", "--map-size-max", "2097152"),
	    OPT_RUN);
	ck_assert_int_eq(opt.reset_store, 1);
	ck_assert_uint_eq(opt.map_size_max, 2097152);
}
END_TEST

/* The unity-mcp face's flags: its status file needs the face. */
START_TEST(http_flags)
{
	ck_assert_int_eq(PARSE("--http", "127.0.0.1:8701", "--http-origin",
	    "a.example", "--http-origin", "b.example", "--http-poll", "2"),
	    OPT_RUN);
	ck_assert_str_eq(opt.http, "127.0.0.1:8701");
	ck_assert_uint_eq(opt.nhttp_origin, 2);
	ck_assert_str_eq(opt.http_origin[1], "b.example");
	ck_assert_uint_eq(opt.http_poll, 2);
	ck_assert_int_eq(PARSE("--http", "localhost:8701"), OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "--http: 'localhost:8701'"));
	ck_assert_int_eq(PARSE("--http-origin", "evil.example/x"), OPT_USAGE);
	ck_assert_int_eq(PARSE("--http-poll", "3601"), OPT_USAGE);
	ck_assert_int_eq(PARSE("--no-auth", "--http", "[::1]:8701"), OPT_RUN);
	ck_assert_int_eq(PARSE("--no-auth", "--http", "0.0.0.0:8701"),
	    OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "--http 0.0.0.0:8701 is not a "
	    "loopback address"));
	ck_assert_int_eq(PARSE("--http", "0.0.0.0:8701"), OPT_RUN);
}
END_TEST

START_TEST(unity_face_flags)
{
	ck_assert_int_eq(parse((char *[]){ "cmdgated", NULL }), OPT_RUN);
	ck_assert_uint_eq(opt.unity_hold, 20);
	ck_assert_ptr_null(opt.unity_status_dir);
	ck_assert_int_eq(PARSE("--unity-hold", "0"), OPT_USAGE);
	ck_assert_int_eq(PARSE("--unity-project", "/p"), OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "--unity-status-dir"));
	ck_assert_int_eq(PARSE("--unity-bridge-status", "/f"), OPT_USAGE);
	ck_assert_int_eq(PARSE("--unity-status-dir", "/d"), OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "--listen unity-mcp@"));
}
END_TEST

/*
 * A unity-hub face and its server come together; the server's URL is
 * http:// or ws:// with a loopback address and no path, kept as
 * HOST:PORT.
 */
START_TEST(unity_hub_flags)
{
	ck_assert_int_eq(PARSE("--listen", "unity-hub@127.0.0.1:8080",
	    "--unity-hub-server", "http://127.0.0.1:8081/"), OPT_RUN);
	ck_assert_str_eq(opt.unity_hub_server, "127.0.0.1:8081");
	ck_assert_int_eq(PARSE("--listen", "unity-hub@127.0.0.1:8080",
	    "--unity-hub-server", "ws://[::1]:8081"), OPT_RUN);
	ck_assert_str_eq(opt.unity_hub_server, "[::1]:8081");
	ck_assert_int_eq(PARSE("--listen", "unity-hub@127.0.0.1:8080"),
	    OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "give --unity-hub-server URL"));
	ck_assert_int_eq(PARSE("--unity-hub-server", "http://127.0.0.1:8081"),
	    OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "add --listen unity-hub@"));
	ck_assert_int_eq(PARSE("--listen", "unity-hub@127.0.0.1:8080",
	    "--unity-hub-server", "http://127.0.0.1:8081/x"), OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "no path"));
	ck_assert_int_eq(PARSE("--listen", "unity-hub@127.0.0.1:8080",
	    "--unity-hub-server", "http://10.0.0.1:8081"), OPT_USAGE);
	ck_assert_int_eq(PARSE("--listen", "unity-hub@127.0.0.1:8080",
	    "--unity-hub-server", "https://127.0.0.1:8081"), OPT_USAGE);
	ck_assert_int_eq(PARSE("--listen", "unity-hubx@127.0.0.1:8080"),
	    OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "unity-hub@ADDR:PORT"));
}
END_TEST

/*
 * The peer check's flags: names and numbers resolved at start, an unknown
 * name refused naming it, at most OPT_MAX_ALLOW, none with --no-auth.
 */
START_TEST(allow_flags)
{
	struct passwd	*pw = getpwuid(geteuid());
	struct group	*gr = getgrgid(getegid());
	char		*many[2 * OPT_MAX_ALLOW + 4], user[64], group[64];
	int		 i;

	ck_assert_ptr_nonnull(pw);
	ck_assert_ptr_nonnull(gr);
	snprintf(user, sizeof(user), "%s", pw->pw_name);
	snprintf(group, sizeof(group), "%s", gr->gr_name);
	ck_assert_int_eq(PARSE("--allow-user", user, "--allow-group", group),
	    OPT_RUN);
	ck_assert_uint_eq(opt.nallow_uid, 1);
	ck_assert_uint_eq(opt.allow_uid[0], geteuid());
	ck_assert_uint_eq(opt.nallow_gid, 1);
	ck_assert_uint_eq(opt.allow_gid[0], getegid());
	ck_assert_int_eq(opt.peer_auth, 0);
	ck_assert_int_eq(PARSE("--allow-user", "4242", "--allow-group=4343",
	    "--peer-auth"), OPT_RUN);
	ck_assert_uint_eq(opt.allow_uid[0], 4242);
	ck_assert_uint_eq(opt.allow_gid[0], 4343);
	ck_assert_int_eq(opt.peer_auth, 1);
	ck_assert_int_eq(PARSE("--allow-user", "no-such-user-p17"), OPT_USAGE);
	ck_assert_str_eq(err, "--allow-user: no user 'no-such-user-p17' "
	    "(neither a name in the user database nor a number)");
	ck_assert_int_eq(PARSE("--allow-group", "no-such-group-p17"),
	    OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "no group 'no-such-group-p17'"));
	/* (uid_t)-1 is no one's. */
	ck_assert_int_eq(PARSE("--allow-user", "4294967295"), OPT_USAGE);
	ck_assert_int_eq(PARSE("--no-auth", "--peer-auth"), OPT_USAGE);
	ck_assert_int_eq(PARSE("--no-auth", "--allow-group", group),
	    OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "--no-auth lets every peer in"));
	many[0] = "cmdgated";
	for (i = 0; i <= OPT_MAX_ALLOW; i++) {
		many[2 * i + 1] = "--allow-user";
		many[2 * i + 2] = "7";
	}
	many[2 * i + 1] = NULL;
	ck_assert_int_eq(parse(many), OPT_USAGE);
	ck_assert_ptr_nonnull(strstr(err, "more than 16"));
	many[2 * OPT_MAX_ALLOW + 1] = NULL;
	ck_assert_int_eq(parse(many), OPT_RUN);
	ck_assert_uint_eq(opt.nallow_uid, OPT_MAX_ALLOW);
}
END_TEST

START_TEST(help_and_version)
{
	ck_assert_int_eq(PARSE("--help"), OPT_EXIT);
	ck_assert_int_eq(PARSE("-V"), OPT_EXIT);
	ck_assert_int_eq(PARSE("--version"), OPT_EXIT);
}
END_TEST

/* Every flag --help lists is documented in cmdgated(8), and back. */
START_TEST(man_page_lists_every_flag)
{
	const char	*src = getenv("CMDGATE_SRCDIR");
	char		 path[1024], *help = NULL, *man, *p, *e, name[64];
	char		 needle[96];
	size_t		 hlen = 0, mlen;
	FILE		*f;
	int		 nflags = 0;

	f = open_memstream(&help, &hlen);
	options_usage(f);
	fclose(f);
	/* A flag without a value prints no placeholder (it printed "(null)"). */
	ck_assert_msg(strstr(help, "(null)") == NULL, "%s", help);
	snprintf(path, sizeof(path), "%s/man/cmdgated.8", src ? src : ".");
	ck_assert_msg((f = fopen(path, "r")) != NULL, "%s", path);
	man = malloc(1 << 20);
	mlen = fread(man, 1, (1 << 20) - 1, f);
	man[mlen] = '\0';
	fclose(f);
	for (p = help; (p = strstr(p, "--")) != NULL; p = e) {
		p += 2;
		for (e = p; *e == '-' || (*e >= 'a' && *e <= 'z'); e++)
			;
		if (e == p || (size_t)(e - p) >= sizeof(name))
			continue;
		memcpy(name, p, (size_t)(e - p));
		name[e - p] = '\0';
		if (strcmp(name, "OPTION") == 0)
			continue;
		snprintf(needle, sizeof(needle), ".It Fl \\-%s", name);
		ck_assert_msg(strstr(man, needle) != NULL,
		    "cmdgated.8 lacks '%s'", needle);
		nflags++;
	}
	ck_assert_int_ge(nflags, 20);
	free(help);
	free(man);
}
END_TEST

static Suite *
options_suite(void)
{
	Suite	*s = suite_create("options");
	TCase	*tc = tcase_create("options");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, values);
	tcase_add_test(tc, listen_faces);
	tcase_add_loop_test(tc, bad_value, 0,
	    sizeof(bad_values) / sizeof(bad_values[0]));
	tcase_add_test(tc, bad_usage);
	tcase_add_test(tc, port_env);
	tcase_add_test(tc, state_dir_env);
	tcase_add_test(tc, no_auth);
	tcase_add_test(tc, http_flags);
	tcase_add_test(tc, unity_face_flags);
	tcase_add_test(tc, unity_hub_flags);
	tcase_add_test(tc, allow_flags);
	tcase_add_test(tc, help_and_version);
	tcase_add_test(tc, man_page_lists_every_flag);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(options_suite());
}
