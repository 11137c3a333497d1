/* SPDX-License-Identifier: ISC */
/*
 * The unity-mcp face (issue 17): its status file on its own (sha1.c,
 * unitystatus.c), then through a real cmdgated to tests/fake_unity with
 * MCP for Unity's client written here from /work/shared/BRIDGES.md and
 * the facts of its Python server (Server/src/transport/legacy/): status
 * file discovery in UNITY_MCP_STATUS_DIR, WELCOME within 0.3 s, the
 * framed ping probe, a command sent again (up to 6 times, each on a new
 * connection) on an outer error or a timeout.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "jstrict.h"
#include "options.h"
#include "sha1.h"
#include "unitystatus.h"
#include "ckrun.h"

static char	 tmp[PATH_MAX];
static char	*home_was;

static void
st_setup(void)
{
	const char	*h = getenv("HOME");

	snprintf(tmp, sizeof(tmp), "%s/cgunity.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	home_was = h != NULL ? strdup(h) : NULL;
	setenv("HOME", tmp, 1);
}

static void
st_teardown(void)
{
	char	cmd[PATH_MAX + 16];

	if (home_was != NULL)
		setenv("HOME", home_was, 1);
	free(home_was);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

/* Write text to tmp/rel, making its directory. */
static void
put(const char *rel, const char *text)
{
	char	 path[PATH_MAX], *slash;
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	/* Each directory on the way, from the first below tmp. */
	for (slash = path + strlen(tmp) + 1; (slash = strchr(slash, '/')) !=
	    NULL; *slash++ = '/') {
		*slash = '\0';
		ck_assert(mkdir(path, 0700) == 0 || errno == EEXIST);
	}
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* The JSON of tmp/rel, or NULL when there is none.  Caller puts. */
static json_object *
get(const char *rel)
{
	char		 path[PATH_MAX], buf[4096];
	json_object	*o = NULL;
	FILE		*f;
	size_t		 n;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ck_assert_int_eq(jstrict_parse(buf, n, &o), 0);
	return o;
}

static const char *
field(json_object *o, const char *k)
{
	json_object	*v;

	ck_assert_msg(json_object_object_get_ex(o, k, &v), "no %s", k);
	return json_object_get_string(v);
}

/* RFC 3174's vectors, and the bridge's hash as sha1sum(1) makes it. */
START_TEST(sha1_vectors)
{
	unsigned char	d[SHA1_LEN];
	char		hex[9], want[64];
	FILE		*p;

	sha1("abc", 3, d);
	ck_assert_int_eq(d[0], 0xa9);
	ck_assert_int_eq(d[19], 0x9d);
	sha1_hex8("", hex);
	ck_assert_str_eq(hex, "da39a3ee");
	sha1_hex8("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	    hex);
	ck_assert_str_eq(hex, "84983e44");
	ck_assert_ptr_nonnull(p = popen("printf %s '/home/u/My Game/Assets' | "
	    "sha1sum", "r"));
	ck_assert_ptr_nonnull(fgets(want, sizeof(want), p));
	pclose(p);
	want[8] = '\0';
	sha1_hex8("/home/u/My Game/Assets", hex);
	ck_assert_str_eq(hex, want);
}
END_TEST

/* Without a bridge status file: the project's hash, name and version. */
START_TEST(status_from_project)
{
	struct options		 opt;
	struct unitystatus	*us;
	json_object		*o;
	char			 root[PATH_MAX], assets[PATH_MAX + 8], name[64],
				 hash[9], dir[PATH_MAX];

	put("Game/ProjectSettings/ProjectVersion.txt",
	    "m_EditorVersion: 6000.0.23f1\nm_EditorVersionWithRevision: x\n");
	memset(&opt, 0, sizeof(opt));
	snprintf(root, sizeof(root), "%s/Game", tmp);
	opt.unity_project = root;
	snprintf(dir, sizeof(dir), "%s/face", tmp);
	opt.unity_status_dir = dir;
	ck_assert_int_eq(unitystatus_check(&opt, name, sizeof(name)), 0);
	us = unitystatus_new(NULL, &opt, 6411, 6400);
	ck_assert_ptr_nonnull(realpath(root, assets));
	strcat(assets, "/Assets");
	sha1_hex8(assets, hash);
	snprintf(name, sizeof(name), "face/unity-mcp-status-%s.json", hash);
	ck_assert_ptr_nonnull(o = get(name));
	ck_assert_str_eq(field(o, "unity_port"), "6411");
	ck_assert_str_eq(field(o, "reloading"), "false");
	ck_assert_str_eq(field(o, "reason"), "ready");
	ck_assert_str_eq(field(o, "seq"), "1");
	ck_assert_str_eq(field(o, "project_path"), assets);
	ck_assert_str_eq(field(o, "project_name"), "Game");
	ck_assert_str_eq(field(o, "unity_version"), "6000.0.23f1");
	/* ISO 8601 UTC, as Python's fromisoformat takes it. */
	ck_assert_int_eq(strlen(field(o, "last_heartbeat")), 24);
	ck_assert_int_eq(field(o, "last_heartbeat")[23], 'Z');
	json_object_put(o);
	/* The editor behind reloads: said at once, as the bridge says it. */
	unitystatus_set_reloading(us, 1);
	ck_assert_ptr_nonnull(o = get(name));
	ck_assert_str_eq(field(o, "reloading"), "true");
	ck_assert_str_eq(field(o, "reason"), "reloading");
	ck_assert_str_eq(field(o, "seq"), "2");
	json_object_put(o);
	unitystatus_free(us);
	ck_assert_ptr_null(get(name));
}
END_TEST

/* The bridge's own file, named or found by its port: its name and
 * project kept, the face's port and state written. */
START_TEST(status_from_bridge)
{
	static const char	*bridge = "{\"unity_port\":6499,\"reloading\":"
	    "false,\"reason\":\"ready\",\"seq\":7,\"project_path\":"
	    "\"/p/Real/Assets\",\"project_name\":\"Real\",\"unity_version\":"
	    "\"6000.1.0f1\",\"last_heartbeat\":\"2026-11-23T17:00:00.0000000Z\","
	    "\"project_scoped_tools\":true}";
	struct options		 opt;
	struct unitystatus	*us;
	struct unitystatus_id	 id;
	json_object		*o;
	char			 dir[PATH_MAX], file[PATH_MAX + 64];

	put(".unity-mcp/unity-mcp-status-0badcafe.json", bridge);
	memset(&opt, 0, sizeof(opt));
	snprintf(dir, sizeof(dir), "%s/face", tmp);
	opt.unity_status_dir = dir;
	/* Found in ~/.unity-mcp by the table's bridge port, not another. */
	ck_assert_int_eq(unitystatus_identify(&opt, 6400, &id), -1);
	ck_assert_int_eq(unitystatus_identify(&opt, 6499, &id), 0);
	ck_assert_str_eq(id.name, "unity-mcp-status-0badcafe.json");
	json_object_put(id.fields);
	ck_assert_int_eq(unitystatus_check(&opt, file, sizeof(file)), 0);
	us = unitystatus_new(NULL, &opt, 6411, 6499);
	ck_assert_ptr_nonnull(o = get("face/unity-mcp-status-0badcafe.json"));
	ck_assert_str_eq(field(o, "unity_port"), "6411");
	ck_assert_str_eq(field(o, "seq"), "1");
	ck_assert_str_eq(field(o, "project_path"), "/p/Real/Assets");
	ck_assert_str_eq(field(o, "project_name"), "Real");
	ck_assert_str_eq(field(o, "unity_version"), "6000.1.0f1");
	ck_assert_str_eq(field(o, "project_scoped_tools"), "true");
	json_object_put(o);
	unitystatus_free(us);
	/* Named by --unity-bridge-status, wherever it is. */
	put("elsewhere/unity-mcp-status-12345678.json", bridge);
	snprintf(file, sizeof(file),
	    "%s/elsewhere/unity-mcp-status-12345678.json", tmp);
	opt.unity_bridge_status = file;
	ck_assert_int_eq(unitystatus_identify(&opt, 0, &id), 0);
	ck_assert_str_eq(id.name, "unity-mcp-status-12345678.json");
	json_object_put(id.fields);
}
END_TEST

/* The editor's own directory is refused: the names would collide. */
START_TEST(status_dir_refused)
{
	struct options		 opt;
	struct unitystatus	*us;
	char			 dir[PATH_MAX], err[256];

	memset(&opt, 0, sizeof(opt));
	snprintf(dir, sizeof(dir), "%s/.unity-mcp", tmp);
	opt.unity_status_dir = dir;
	ck_assert_int_eq(unitystatus_check(&opt, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "editor's bridge"));
	snprintf(dir, sizeof(dir), "%s/face", tmp);
	ck_assert_int_eq(unitystatus_check(&opt, err, sizeof(err)), 0);
	/* No project at all: nothing written until one is known. */
	us = unitystatus_new(NULL, &opt, 1, 0);
	ck_assert_int_eq(unitystatus_write(us), 1);
	unitystatus_free(us);
}
END_TEST

static Suite *
unity_suite(void)
{
	Suite	*s = suite_create("unity_face");
	TCase	*tc = tcase_create("status");

	tcase_add_checked_fixture(tc, st_setup, st_teardown);
	tcase_add_test(tc, sha1_vectors);
	tcase_add_test(tc, status_from_project);
	tcase_add_test(tc, status_from_bridge);
	tcase_add_test(tc, status_dir_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(unity_suite());
}
