/* SPDX-License-Identifier: ISC */
/*
 * The unity-mcp face (issue 17): its status file on its own (digest.c,
 * unitystatus.c), then through a real cmdgated to tests/fake_unity with
 * MCP for Unity's client written here from /work/shared/BRIDGES.md and
 * the facts of its Python server (Server/src/transport/legacy/): status
 * file discovery in UNITY_MCP_STATUS_DIR, WELCOME within 0.3 s, the
 * framed ping probe, a command sent again (up to 6 times, each on a new
 * connection) on an outer error or a timeout.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <dirent.h>

#include <errno.h>
#include <poll.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "faces.h"
#include "fakeutil.h"
#include "jobsutil.h"
#include "jstrict.h"
#include "mfu.h"
#include "options.h"
#include "digest.h"
#include "testnet.h"

static char	 tmp[512];	/* a mkdtemp name: room for what follows */
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
	unsigned char	d[DIGEST_SHA1_LEN];
	char		hex[9], want[64];
	FILE		*p;

	digest_sha1("abc", 3, d);
	ck_assert_int_eq(d[0], 0xa9);
	ck_assert_int_eq(d[19], 0x9d);
	digest_sha1_hex8("", hex);
	ck_assert_str_eq(hex, "da39a3ee");
	digest_sha1_hex8("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	    hex);
	ck_assert_str_eq(hex, "84983e44");
	ck_assert_ptr_nonnull(p = popen("printf %s '/home/u/My Game/Assets' | "
	    "sha1sum", "r"));
	ck_assert_ptr_nonnull(fgets(want, sizeof(want), p));
	pclose(p);
	want[8] = '\0';
	digest_sha1_hex8("/home/u/My Game/Assets", hex);
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
	int			 fd;

	put("Game/ProjectSettings/ProjectVersion.txt",
	    "m_EditorVersion: 6000.0.23f1\nm_EditorVersionWithRevision: x\n");
	memset(&opt, 0, sizeof(opt));
	snprintf(root, sizeof(root), "%s/Game", tmp);
	opt.unity_project = root;
	snprintf(dir, sizeof(dir), "%s/face", tmp);
	opt.unity_status_dir = dir;
	ck_assert_int_ge(fd = unitystatus_open_dir(&opt, name, sizeof(name)),
	    0);
	us = unitystatus_new(NULL, &opt, fd, 6411, 6400);
	ck_assert_ptr_nonnull(realpath(root, assets));
	strcat(assets, "/Assets");
	digest_sha1_hex8(assets, hash);
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
	int			 fd;

	put(".unity-mcp/unity-mcp-status-0badcafe.json", bridge);
	memset(&opt, 0, sizeof(opt));
	snprintf(dir, sizeof(dir), "%s/face", tmp);
	opt.unity_status_dir = dir;
	/* Found in ~/.unity-mcp by the table's bridge port, not another. */
	ck_assert_int_eq(unitystatus_identify(&opt, 6400, &id), -1);
	ck_assert_int_eq(unitystatus_identify(&opt, 6499, &id), 0);
	ck_assert_str_eq(id.name, "unity-mcp-status-0badcafe.json");
	json_object_put(id.fields);
	ck_assert_int_ge(fd = unitystatus_open_dir(&opt, file, sizeof(file)),
	    0);
	us = unitystatus_new(NULL, &opt, fd, 6411, 6499);
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
	int			 fd;

	memset(&opt, 0, sizeof(opt));
	snprintf(dir, sizeof(dir), "%s/.unity-mcp", tmp);
	opt.unity_status_dir = dir;
	ck_assert_int_eq(unitystatus_open_dir(&opt, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "editor's bridge"));
	snprintf(dir, sizeof(dir), "%s/face", tmp);
	ck_assert_int_ge(fd = unitystatus_open_dir(&opt, err, sizeof(err)), 0);
	/* No project at all: nothing written until one is known. */
	us = unitystatus_new(NULL, &opt, fd, 1, 0);
	ck_assert_int_eq(unitystatus_write(us), 1);
	unitystatus_free(us);
}
END_TEST

/* The path of the one status file in dir (its name found there). */
static void
status_path(const char *dir, char *path, size_t len)
{
	DIR		*d = opendir(dir);
	struct dirent	*e;

	ck_assert_ptr_nonnull(d);
	path[0] = '\0';
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "unity-mcp-status-", 17) == 0 &&
		    strstr(e->d_name, ".tmp") == NULL)
			ck_assert_int_lt(snprintf(path, len, "%s/%s", dir,
			    e->d_name), (int)len);
	closedir(d);
	ck_assert_msg(path[0] != '\0', "no status file in %s", dir);
}

/* The text of the file at path, in buf. */
static const char *
text_of(const char *path, char *buf, size_t len)
{
	FILE	*f = fopen(path, "r");
	size_t	 n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Whether the directory dir is refused, err holding why. */
static void
dir_refused(struct options *opt, char *dir, const char *why)
{
	char	err[512];

	opt->unity_status_dir = dir;
	ck_assert_int_eq(unitystatus_open_dir(opt, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, why) != NULL, "%s: %s", dir, err);
}

/*
 * Issue 31.2: a root broker writes there, and agents go where the file
 * says: the state dir's rules (no other owner, no group or others'
 * writes, no symlink), and a link planted at the temporary name is
 * replaced, never written through.
 */
START_TEST(status_dir_rules)
{
	struct options		 opt;
	struct unitystatus	*us;
	struct stat		 st;
	char			 dir[PATH_MAX], link[PATH_MAX + 8],
				 victim[PATH_MAX], err[256], game[PATH_MAX],
				 file[PATH_MAX], buf[64];
	int			 fd;

	memset(&opt, 0, sizeof(opt));
	snprintf(dir, sizeof(dir), "%s/shared", tmp);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(chmod(dir, 01777), 0);
	dir_refused(&opt, dir, "lets group or others write in it");
	ck_assert_int_eq(chmod(dir, 0770), 0);
	dir_refused(&opt, dir, "lets group or others write in it");
	ck_assert_int_eq(chmod(dir, 0755), 0);
	snprintf(link, sizeof(link), "%s/link", tmp);
	ck_assert_int_eq(symlink(dir, link), 0);
	dir_refused(&opt, link, "a symlink");
	strcat(link, "/");
	dir_refused(&opt, link, "a symlink");
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(dir, 65534, 65534), 0);
		dir_refused(&opt, dir, "owned by uid 65534");
	} else
		dir_refused(&opt, strcpy(dir, "/"), "owned by uid 0");
	/* A private one: a link planted at the temporary name is no path
	 * to another file. */
	put("Game/Assets/.keep", "");
	put("victim", "precious\n");
	snprintf(victim, sizeof(victim), "%s/victim", tmp);
	snprintf(dir, sizeof(dir), "%s/face", tmp);
	snprintf(game, sizeof(game), "%s/Game", tmp);
	opt.unity_project = game;
	opt.unity_status_dir = dir;
	ck_assert_int_ge(fd = unitystatus_open_dir(&opt, err, sizeof(err)), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	us = unitystatus_new(NULL, &opt, fd, 6411, 0);
	status_path(dir, file, sizeof(file));
	snprintf(link, sizeof(link), "%s.tmp", file);
	ck_assert_int_eq(symlink(victim, link), 0);
	ck_assert_int_eq(unitystatus_write(us), 0);
	ck_assert_str_eq(text_of(victim, buf, sizeof(buf)), "precious\n");
	ck_assert_int_eq(lstat(file, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(lstat(link, &st), -1);
	unitystatus_free(us);
}
END_TEST

/* ---- Through cmdgated, with MCP for Unity's client (mfu.c) ---------- */

static struct fake	 fk;
static char		 facedir[PATH_MAX], editordir[PATH_MAX];
static const char	*idle;		/* --idle-timeout */
static const char	*maxmsg;	/* --max-message */

static void
it_setup(void)
{
	const char	*h = getenv("HOME");

	setup();
	fk.pid = -1;
	home_was = h != NULL ? strdup(h) : NULL;
	/* The broker finds the editor's status file in ~/.unity-mcp. */
	setenv("HOME", b.dir, 1);
	snprintf(editordir, sizeof(editordir), "%s/.unity-mcp", b.dir);
	ck_assert_int_eq(mkdir(editordir, 0700), 0);
	snprintf(facedir, sizeof(facedir), "%s/face", b.dir);
	idle = "600";
	maxmsg = "1048576";
}

static void
it_teardown(void)
{
	fake_stop(&fk);
	teardown();
	if (home_was != NULL)
		setenv("HOME", home_was, 1);
	free(home_was);
	home_was = NULL;
}

/* The name of the status file the fake editor wrote. */
static void
editor_status_name(char *name, size_t len)
{
	DIR		*d = opendir(editordir);
	struct dirent	*e;

	ck_assert_ptr_nonnull(d);
	name[0] = '\0';
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "unity-mcp-status-", 17) == 0 &&
		    strstr(e->d_name, ".tmp") == NULL)
			snprintf(name, len, "%s", e->d_name);
	closedir(d);
	ck_assert_msg(name[0] != '\0', "fake_unity wrote no status file");
}

#define ECHO_TOOL "{\"name\":\"echo\",\"exec\":[\"echo\",\"{text}\"]}"

/*
 * fake_unity (fake_flag, if any) with its status file in ~/.unity-mcp,
 * cmdgated with a unity-mcp face (--unity-hold hold) in front of it, and
 * m, an agent's server, finding the face as it finds an editor.
 */
static void
face_start(struct mfu *m, int timeout_ms, const char *hold,
    const char *fake_flag)
{
	const char	*extra[] = { "--listen", "unity-mcp@127.0.0.1:0",
			    "--unity-status-dir", facedir, "--unity-hold",
			    hold, "--idle-timeout", idle, "--max-message",
			    maxmsg, NULL };
	char		 name[128], path[PATH_MAX + 128];

	fake_start(&fk, "FAKE_UNITY", "-s", editordir, fake_flag, NULL);
	table_for(tools, "unity-mcp.json", fk.port, "\"tools\": [",
	    "\"tools\": [" ECHO_TOOL ",");
	start_tools(extra);
	editor_status_name(name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", facedir, name);
	ck_assert_msg(wait_for_file(path) == 0, "no face status file %s",
	    path);
	mfu_init(m, facedir, timeout_ms);
	ck_assert_msg(mfu_discover(m) == 0, "the face was not found");
	ck_assert_int_ne(m->port, fk.port);
}

/* The result of a command the client got answered at its first try. */
static json_object *
send1(struct mfu *m, const char *type, const char *params)
{
	json_object	*r = mfu_send(m, type, params);
	ck_assert_msg(r != NULL, "%s: no answer", type);
	ck_assert_str_eq(str(r, "status"), "success");
	ck_assert_int_eq(m->tries, 1);
	return r;
}

/* The status file the face wrote, parsed.  Caller puts. */
static json_object *
face_status(struct mfu *m)
{
	json_object	*o = NULL;
	FILE		*f = fopen(m->status, "r");
	char		 buf[4096];
	size_t		 n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ck_assert_int_eq(jstrict_parse(buf, n, &o), 0);
	return o;
}

/* Send raw bytes, read one frame: its payload exactly.  Caller frees. */
static char *
raw_call(struct client *u, const void *bytes, size_t n)
{
	char		*s;
	uint64_t	 len = 0;
	int		 i;

	ck_assert_int_eq(write(u->fd, bytes, n), (ssize_t)n);
	ck_assert_ptr_nonnull(s = client_read(u, 8));
	for (i = 0; i < 8; i++)
		len = len << 8 | (unsigned char)s[i];
	free(s);
	ck_assert_ptr_nonnull(s = client_read(u, len));
	return s;
}

/*
 * The bridge's wire: found through the status file (port, project from
 * the editor's own file), WELCOME, the exact compact pong, commands passed
 * to the editor with the bridge's parameter names, an unknown command the
 * only outer error (sent again 6 times, each on a new connection, and
 * never reaching the editor), a zero-length frame refused, and many
 * clients at once.
 */
START_TEST(unity_face_wire)
{
	struct mfu	 m;
	struct client	*u[5];
	json_object	*r, *st;
	char		*s, abs[PATH_MAX];
	pid_t		 pid;
	int		 i, out;

	face_start(&m, 5000, "1", NULL);
	st = face_status(&m);
	ck_assert_int_eq(json_object_get_int(jpath(st, "unity_port")),
	    m.port);
	ck_assert_str_eq(str(st, "project_name"), "FakeProject");
	ck_assert(!json_object_get_boolean(jpath(st, "reloading")));
	json_object_put(st);
	r = send1(&m, "get_project_info", "{}");
	ck_assert_str_eq(str(r, "result.data.projectName"), "FakeProject");
	json_object_put(r);
	/* An exec tool beside the editor's: its output, not "reloaded". */
	r = send1(&m, "echo", "{\"text\":\"a\"}");
	ck_assert_str_eq(str(r, "result.stdout"), "a\n");
	json_object_put(r);
	/* cmdgate mcp-config puts the face's directory in the entry. */
	ck_assert_ptr_nonnull(realpath(facedir, abs));
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"server_status\"}");
	ck_assert_str_eq(str(r, "result.unity_status_dir"), abs);
	json_object_put(r);
	pid = cli_spawn(b.port, &out, "mcp-config", "--client", "claude", NULL);
	r = cli_end(pid, out, 0);
	ck_assert_str_eq(str(r, "mcpServers.unityMCP.env.UNITY_MCP_STATUS_DIR"),
	    abs);
	json_object_put(r);
	/* Parameters as the Python server sends them reach the editor. */
	r = send1(&m, "read_console", "{\"action\":\"get\",\"count\":5,"
	    "\"filterText\":\"boom\",\"includeStacktrace\":false}");
	json_object_put(r);
	fake_await(&fk, "recv read_console ");
	fake_ctl(&fk, "sync");
	ck_assert_ptr_nonnull(strstr(fk.log, "\"filterText\":\"boom\""));
	/* Refused by cmdgate: a tool-level failure, never an outer error. */
	r = send1(&m, "manage_scene", "{\"action\":\"explode\"}");
	ck_assert(!json_object_get_boolean(jpath(r, "result.success")));
	ck_assert_str_eq(str(r, "result.code"), "refused");
	ck_assert_str_eq(str(r, "result.data.error_type"), "invalid_params");
	ck_assert_ptr_nonnull(strstr(str(r, "result.message"), "action"));
	json_object_put(r);
	r = mfu_send(&m, "no_such_tool", "{}");
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(str(r, "status"), "error");
	ck_assert_ptr_nonnull(strstr(str(r, "error"), "no_such_tool"));
	ck_assert_int_eq(m.tries, MFU_TRIES);
	json_object_put(r);
	ck_assert_int_eq(fake_count(&fk, "recv no_such_tool"), 0);
	for (i = 0; i < 5; i++)
		u[i] = unity_open(m.port);
	for (i = 0; i < 5; i++) {
		s = raw_call(u[i], "\0\0\0\0\0\0\0\4ping", 12);
		ck_assert_str_eq(s, "{\"status\":\"success\",\"result\":"
		    "{\"message\":\"pong\"}}");
		free(s);
	}
	ck_assert_int_eq(write(u[0]->fd, "\0\0\0\0\0\0\0\0", 8), 8);
	ck_assert(client_eof(u[0]));
	for (i = 1; i < 5; i++) {
		s = raw_call(u[i], "\0\0\0\0\0\0\0\4ping", 12);
		free(s);
	}
	for (i = 0; i < 5; i++)
		client_close(u[i]);
	mfu_close(&m);
	/* The broker stops: its status file goes, the editor's stays. */
	ck_assert_int_eq(access(m.status, F_OK), 0);
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	ck_assert_int_eq(access(m.status, F_OK), -1);
	ck_assert_int_eq(errno, ENOENT);
	editor_status_name(abs, sizeof(abs));
}
END_TEST

/* A status dir others may write in stops the broker at start (exit 78). */
START_TEST(unity_status_dir_refused_at_start)
{
	const char	*args[] = { "--tools", tools, "--listen",
			    "unity-mcp@127.0.0.1:0", "--unity-status-dir",
			    facedir, NULL };

	ck_assert_int_eq(mkdir(facedir, 0700), 0);
	ck_assert_int_eq(chmod(facedir, 0777), 0);
	write_tools("heavy");
	ck_assert_int_eq(broker_start(&b, args, 0), 78);
	ck_assert_int_eq(broker_log_count(&b, "--unity-status-dir"), 1);
	ck_assert_int_eq(broker_log_count(&b, "lets group or others write"),
	    1);
}
END_TEST

/* Whether u's connection ends (within the timeout) with nothing sent. */
static int
eof_without_data(struct client *u)
{
	struct pollfd	p = { u->fd, POLLIN, 0 };
	char		ch;

	return u->jl.len == 0 && poll(&p, 1, TN_TIMEOUT_MS) == 1 &&
	    recv(u->fd, &ch, 1, 0) == 0;
}

/*
 * An idle client is closed without a word, as the bridge closes it: an
 * error frame nobody asked for would be taken for the answer to the
 * client's next command.
 */
START_TEST(unity_idle_silent)
{
	struct mfu	 m;
	struct client	*u;
	json_object	*r;

	idle = "1";
	face_start(&m, 5000, "1", NULL);
	u = unity_open(m.port);
	ck_assert(eof_without_data(u));
	client_close(u);
	/* A client whose connection went idle gets its next answer. */
	json_object_put(send1(&m, "get_project_info", "{}"));
	ck_assert(eof_without_data(&(struct client){ .fd = m.fd }));
	r = mfu_send(&m, "get_project_info", "{}");
	ck_assert_str_eq(str(r, "status"), "success");
	ck_assert_int_eq(m.tries, 2);
	json_object_put(r);
	mfu_close(&m);
}
END_TEST

/*
 * Issue 31.9: a frame is bounded by --max-message, as every listener's
 * messages are (the bridge's 64 MiB only when that is larger): one at the
 * limit runs, one over it is refused in the bridge's shape, as soon as its
 * length is read, and the connection closes.
 */
START_TEST(unity_frame_max_message)
{
	struct mfu	 m;
	struct client	*u;
	json_object	*r;
	char		*cmd, *s;
	size_t		 n = 65536;
	const char	*pre = "{\"type\":\"echo\",\"params\":{\"text\":\"";

	maxmsg = "65536";
	face_start(&m, 5000, "1", NULL);
	cmd = malloc(n + 1);
	ck_assert_ptr_nonnull(cmd);
	memset(cmd, 'x', n);
	memcpy(cmd, pre, strlen(pre));
	memcpy(cmd + n - 3, "\"}}", 4);
	u = unity_open(m.port);
	r = unity_call(u, cmd);
	ck_assert_str_eq(str(r, "status"), "success");
	/* The text and echo's newline. */
	ck_assert_int_eq(strlen(str(r, "result.stdout")),
	    n - strlen(pre) - 3 + 1);
	json_object_put(r);
	free(cmd);
	s = raw_call(u, "\0\0\0\0\0\1\0\1", 8);
	ck_assert_str_eq(s, "{\"status\":\"error\",\"error\":\"cmdgate: "
	    "message_too_large: a message may hold at most 65536 bytes "
	    "(--max-message)\"}");
	free(s);
	ck_assert(client_eof(u));
	client_close(u);
	/* Others are served on. */
	json_object_put(send1(&m, "get_project_info", "{}"));
	mfu_close(&m);
}
END_TEST

/*
 * An outer error quoting an unknown type cut inside a character (at the
 * 100th byte here) is still the bridge's JSON: the cut byte is U+FFFD.
 */
START_TEST(unity_error_utf8)
{
	struct mfu	 m;
	struct client	*u;
	json_object	*r;
	char		 frame[8 + 160], *s;
	int		 n;

	face_start(&m, 5000, "1", NULL);
	n = snprintf(frame + 8, sizeof(frame) - 8, "{\"type\":\"%099d"
	    "\xc3\xa9\"}", 0);
	memset(frame, 0, 8);
	frame[7] = (char)n;
	u = unity_open(m.port);
	s = raw_call(u, frame, (size_t)n + 8);
	ck_assert_int_eq(jstrict_parse(s, strlen(s), &r), 0);
	ck_assert_str_eq(str(r, "status"), "error");
	ck_assert_ptr_nonnull(strstr(str(r, "error"), "0\xef\xbf\xbd (not "
	    "in cmdgate's tool table)"));
	json_object_put(r);
	free(s);
	client_close(u);
	mfu_close(&m);
}
END_TEST

/* get_test_job's status for job, as the client polls it. */
static char *
test_status(struct mfu *m, const char *job)
{
	char		 p[128], *st;
	json_object	*r;

	snprintf(p, sizeof(p), "{\"job_id\":\"%s\"}", job);
	r = send1(m, "get_test_job", p);
	st = strdup(str(r, "result.data.status"));
	json_object_put(r);
	return st;
}

/*
 * An agent that runs the same tests again after the first run ended (or
 * while its job still polls) starts a new run: the first answer given
 * ends the repeat window of the job it came from.
 */
START_TEST(unity_tests_twice)
{
	struct mfu	 m;
	json_object	*r;
	char		 job[64], *st;

	face_start(&m, 5000, "1", NULL);
	r = send1(&m, "run_tests", "{\"mode\":\"EditMode\"}");
	snprintf(job, sizeof(job), "%s", str(r, "result.data.job_id"));
	json_object_put(r);
	fake_ctl(&fk, "end-tests succeeded");
	st = test_status(&m, job);
	ck_assert_str_eq(st, "succeeded");
	free(st);
	/* Once the first job saw the run end, the same command is a new
	 * run, not the old one's result. */
	json_object_put(wait_done("t-000000"));
	r = send1(&m, "run_tests", "{\"mode\":\"EditMode\"}");
	ck_assert(json_object_get_boolean(jpath(r, "result.success")));
	ck_assert_str_ne(str(r, "result.data.job_id"), job);
	json_object_put(r);
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "recv run_tests "), 2);
	mfu_close(&m);
	/* Stopped with the second run's job and its window's repeat. */
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
}
END_TEST

/*
 * Issue 17's scenario: two agents' servers at once through the face.
 * A runs tests (answered with the editor's job id at once, the job
 * holding tests_running); B's compile is held and answered "held" in time
 * (not sent again); A polls the run to its end; the compile then reaches
 * the editor, once, after the run; during the reload the status file
 * says so and the editor's state comes from the last answer; B's repeat
 * joins the compile's job and gets its result; nobody was cut off.
 */
START_TEST(unity_two_agents)
{
	static const char *compile = "{\"mode\":\"force\",\"scope\":\"all\","
	    "\"compile\":\"request\",\"wait_for_ready\":true}";
	struct mfu	 a, bm;
	json_object	*r, *st;
	char		 poll[128], ticket[32];
	int		 afd, bfd, i;

	face_start(&a, 5000, "1", "-n");
	mfu_init(&bm, facedir, 5000);
	ck_assert_int_eq(mfu_discover(&bm), 0);
	json_object_put(send1(&a, "get_editor_state", "{}"));
	afd = a.fd;
	r = send1(&a, "run_tests", "{\"mode\":\"EditMode\"}");
	snprintf(poll, sizeof(poll), "{\"job_id\":\"%s\"}",
	    str(r, "result.data.job_id"));
	json_object_put(r);
	fake_await(&fk, "recv run_tests ");
	r = send1(&bm, "refresh_unity", compile);
	bfd = bm.fd;
	ck_assert(!json_object_get_boolean(jpath(r, "result.success")));
	ck_assert_str_eq(str(r, "result.code"), "held");
	ck_assert_str_eq(str(r, "result.hint"), "retry");
	snprintf(ticket, sizeof(ticket), "%s", str(r, "result.data.ticket"));
	ck_assert_ptr_nonnull(strstr(str(r, "result.message"), ticket));
	ck_assert_ptr_nonnull(strstr(str(r, "result.message"),
	    "send the same command again"));
	json_object_put(r);
	r = send1(&a, "get_test_job", poll);
	ck_assert_str_eq(str(r, "result.data.status"), "running");
	json_object_put(r);
	fake_ctl(&fk, "end-tests succeeded");
	r = send1(&a, "get_test_job", poll);
	ck_assert_str_eq(str(r, "result.data.status"), "succeeded");
	json_object_put(r);
	fake_await(&fk, "tests end ");
	fake_await(&fk, "recv refresh_unity ");
	fake_await(&fk, "reload start");
	st = face_status(&a);
	ck_assert(json_object_get_boolean(jpath(st, "reloading")));
	json_object_put(st);
	r = send1(&a, "get_editor_state", "{}");
	ck_assert(json_object_get_boolean(jpath(r, "result.cached")));
	json_object_put(r);
	fake_ctl(&fk, "reload-done");
	/* B sends its compile again: it joins the job, which ran once. */
	for (i = 0; i < 10; i++) {
		r = send1(&bm, "refresh_unity", compile);
		if (json_object_get_boolean(jpath(r, "result.success")))
			break;
		ck_assert_str_eq(str(r, "result.data.ticket"), ticket);
		json_object_put(r);
		r = NULL;
	}
	ck_assert_ptr_nonnull(r);
	json_object_put(r);
	json_object_put(send1(&a, "get_project_info", "{}"));
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "recv run_tests "), 1);
	ck_assert_int_eq(fake_count(&fk, "recv refresh_unity "), 1);
	ck_assert_int_eq(fake_count(&fk, "cut "), 0);
	/* Neither agent lost its connection, however many probes came. */
	ck_assert_int_eq(a.fd, afd);
	ck_assert_int_eq(bm.fd, bfd);
	st = face_status(&a);
	ck_assert(!json_object_get_boolean(jpath(st, "reloading")));
	json_object_put(st);
	mfu_close(&a);
	mfu_close(&bm);
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
}
END_TEST

/*
 * A client that gives up before the face answers (its timeout under
 * --unity-hold) sends the compile again and again, each time on a new
 * connection: every repeat joins the one job, which reaches the editor
 * once, after the tests.
 */
START_TEST(unity_resend_on_timeout)
{
	struct mfu	 a, bm;
	json_object	*r = NULL;
	int		 i;

	face_start(&a, 5000, "20", NULL);
	mfu_init(&bm, facedir, 500);
	ck_assert_int_eq(mfu_discover(&bm), 0);
	json_object_put(send1(&a, "run_tests", "{\"mode\":\"EditMode\"}"));
	fake_await(&fk, "recv run_tests ");
	ck_assert_ptr_null(mfu_send(&bm, "refresh_unity",
	    "{\"compile\":\"request\"}"));
	ck_assert_int_eq(bm.tries, MFU_TRIES);
	ck_assert_int_eq(fake_count(&fk, "recv refresh_unity "), 0);
	fake_ctl(&fk, "end-tests succeeded");
	fake_await(&fk, "recv refresh_unity ");
	fake_await(&fk, "reload start");
	fake_ctl(&fk, "reload-done");
	bm.timeout_ms = 5000;
	for (i = 0; i < 5 && r == NULL; i++)
		r = mfu_send(&bm, "refresh_unity", "{\"compile\":\"request\"}");
	ck_assert_ptr_nonnull(r);
	ck_assert(json_object_get_boolean(jpath(r, "result.success")));
	json_object_put(r);
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "recv refresh_unity "), 1);
	ck_assert_int_eq(fake_count(&fk, "cut "), 0);
	mfu_close(&a);
	mfu_close(&bm);
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
	tcase_add_test(tc, status_dir_rules);
	suite_add_tcase(s, tc);
	tc = tcase_create("face");
	tcase_add_checked_fixture(tc, it_setup, it_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, unity_face_wire);
	tcase_add_test(tc, unity_status_dir_refused_at_start);
	tcase_add_test(tc, unity_two_agents);
	tcase_add_test(tc, unity_resend_on_timeout);
	tcase_add_test(tc, unity_idle_silent);
	tcase_add_test(tc, unity_frame_max_message);
	tcase_add_test(tc, unity_error_utf8);
	tcase_add_test(tc, unity_tests_twice);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(unity_suite());
}
