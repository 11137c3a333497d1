/* SPDX-License-Identifier: ISC */
/*
 * A fake of MCP for Unity's editor bridge (StdioBridgeHost), on the wire
 * as /work/shared/BRIDGES.md describes the real one, for the tests:
 *
 *	fake_unity [-n] [-p port] [-r ms] [-s status-dir] [-P project]
 *
 * It listens on 127.0.0.1 (any free port without -p) and prints
 * "port N" first.  Each connection gets the WELCOME line, then frames of
 * an 8-byte big-endian length and UTF-8 JSON; a frame "ping" gets the
 * compact pong; {"type", "params"} requests are answered in order.  One
 * client at a time: a new connection closes the others.  refresh_unity
 * with compile other than "none" and manage_editor play reload the
 * "editor": every connection is closed and connects are refused until
 * the control channel says reload-done (or -r ms pass); -n: such a
 * command gets no answer before the reload.  With -s the status file is
 * written there as the real bridge writes it.
 *
 * Control channel, lines on stdin (EOF ends the fake): end-tests
 * succeeded|failed|cancelled, start-tests-ui, compiling 1|0, reload,
 * reload-done, stall TYPE (the next TYPE command's answer waits, as a
 * read does while the editor's main thread is busy, and the frames
 * behind it on its connection wait for it), unstall (it goes),
 * quit.  Log on stdout, one event a line: port N, accept, cut N (clients
 * cut off by a newer one), close, recv TYPE PARAMS, recv ping, stalled
 * TYPE, tests start ID BY, tests end ID STATUS, reload start, reload end,
 * ctl LINE (once it took effect).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "digest.h"
#include "fakebridge.h"
#include "jstrict.h"

#define WELCOME		"WELCOME UNITY-MCP 1 FRAMING=1\n"
#define PONG		"{\"status\":\"success\",\"result\":{\"message\":\"pong\"}}"
#define HEARTBEAT_MS	500
#define MAX_JOBS	64
#define RETRY_AFTER_MS	5000

struct job {
	char	id[32];
	char	status[16];	/* running, succeeded, failed, cancelled */
	char	mode[16];
	char	by[16];		/* mcp, or editor (its own UI) */
	int64_t	started, finished;
};

static struct {
	int		 lfd;		/* -1 while reloading */
	int		 port;
	int		 no_reply;	/* -n */
	int		 reload_ms;	/* -r; 0: wait for reload-done */
	int64_t		 reload_end;	/* monotonic ms; 0: none */
	int		 reload_pending;
	int		 reloading;
	const char	*status_dir;	/* -s */
	char		 assets[512];	/* the project's Assets path */
	int		 seq;
	int64_t		 next_heartbeat;
	struct job	 jobs[MAX_JOBS];
	int		 njobs;
	struct job	*running;	/* the active run, or NULL */
	int		 compiling;
	int		 playing, paused;
	char		 stall[64];	/* the next such command waits */
	struct fb_conn	*stalled;	/* whose answer waits; NULL: gone */
	json_object	*stalled_ans;
	struct fb_conn	 conns[FB_MAXCONN];
} fu;

typedef json_object *(*cmd_fn)(json_object *params);

/* The heartbeat file, replaced whole (write, then rename). */
static void
status_write(const char *reason)
{
	char		 hash[9], path[1024], tmp[1100], when[32];
	json_object	*o;
	time_t		 t = time(NULL);
	FILE		*f;

	if (fu.status_dir == NULL)
		return;
	digest_sha1_hex8(fu.assets, hash);
	snprintf(path, sizeof(path), "%s/unity-mcp-status-%s.json",
	    fu.status_dir, hash);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	o = fb_jsonf("{\"unity_port\":%d,\"reloading\":%s,\"reason\":\"%s\","
	    "\"seq\":%d,\"project_path\":\"%s\",\"project_name\":"
	    "\"FakeProject\",\"unity_version\":\"6000.0.0f1\","
	    "\"last_heartbeat\":\"%s\"}", fu.port, fu.reloading ? "true" :
	    "false", reason, fu.seq, fu.assets, when);
	if ((f = fopen(tmp, "w")) == NULL ||
	    fputs(jstrict_to_string(o), f) == EOF || fclose(f) == EOF ||
	    rename(tmp, path) == -1)
		fb_fatal("status file %s: %s", path, strerror(errno));
	json_object_put(o);
	fu.next_heartbeat = fb_now_ms(CLOCK_MONOTONIC) + HEARTBEAT_MS;
}

/* Close c; an answer waiting for it is dropped with it, and the main
 * thread goes on. */
static void
conn_close(struct fb_conn *c)
{
	if (fu.stalled == c) {
		fu.stalled = NULL;
		json_object_put(fu.stalled_ans);
		fu.stalled_ans = NULL;
	}
	fb_conn_close(c);
}

/* Whether the client already closed c (its EOF is waiting). */
static int
peer_closed(struct fb_conn *c)
{
	char	ch;

	return recv(c->fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/*
 * Close every connection but keep.  "cut N" logs how many of them were
 * still open at the client's end: a client cut off in mid-exchange, as
 * the real bridge does to the older clients when a new one connects.
 */
static void
close_all(struct fb_conn *keep)
{
	int	i, n = 0;

	for (i = 0; i < FB_MAXCONN; i++)
		if (fu.conns[i].fd != -1 && &fu.conns[i] != keep) {
			if (!peer_closed(&fu.conns[i]))
				n++;
			conn_close(&fu.conns[i]);
		}
	if (n > 0 && keep != NULL)
		fb_log("cut %d", n);
}

static void
reload_start(void)
{
	if (fu.reloading)
		return;
	close_all(NULL);
	close(fu.lfd);
	fu.lfd = -1;
	fu.reloading = 1;
	fu.reload_end = fu.reload_ms > 0 ?
	    fb_now_ms(CLOCK_MONOTONIC) + fu.reload_ms : 0;
	fu.seq++;
	status_write("reloading");
	fb_log("reload start");
}

static void
reload_finish(void)
{
	if (!fu.reloading)
		return;
	fu.lfd = fb_listen(fu.port);
	fu.reloading = 0;
	fu.reload_end = 0;
	fu.compiling = 0;
	fu.seq++;
	status_write("ready");
	fb_log("reload end");
}

/* {"status":"success","result":result}. */
static json_object *
envelope(json_object *result)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string("success"));
	json_object_object_add(o, "result", result);
	return o;
}

/* A tool's success, as SuccessResponse. */
static json_object *
success(const char *message, json_object *data)
{
	json_object	*r = json_object_new_object();

	json_object_object_add(r, "success", json_object_new_boolean(1));
	json_object_object_add(r, "message", json_object_new_string(message));
	if (data != NULL)
		json_object_object_add(r, "data", data);
	return envelope(r);
}

/* A tool's own failure, as ErrorResponse: still status success. */
static json_object *
failure(const char *code, json_object *data)
{
	json_object	*r = json_object_new_object();

	json_object_object_add(r, "success", json_object_new_boolean(0));
	json_object_object_add(r, "code", json_object_new_string(code));
	json_object_object_add(r, "error", json_object_new_string(code));
	if (data != NULL)
		json_object_object_add(r, "data", data);
	return envelope(r);
}

static json_object *
busy_tests(void)
{
	return failure("tests_running", fb_jsonf("{\"reason\":"
	    "\"tests_running\",\"retry_after_ms\":%d}", RETRY_AFTER_MS));
}

/* params.name as a string, or def. */
static const char *
param(json_object *params, const char *name, const char *def)
{
	json_object	*v;

	if (params == NULL || !json_object_object_get_ex(params, name, &v) ||
	    !json_object_is_type(v, json_type_string))
		return def;
	return json_object_get_string(v);
}

static void
job_start(const char *by, const char *mode)
{
	struct job	*j;

	if (fu.njobs == MAX_JOBS)
		fb_fatal("too many test runs");
	j = &fu.jobs[fu.njobs++];
	snprintf(j->id, sizeof(j->id), "job-%d", fu.njobs);
	snprintf(j->status, sizeof(j->status), "running");
	snprintf(j->mode, sizeof(j->mode), "%s", mode);
	snprintf(j->by, sizeof(j->by), "%s", by);
	j->started = fb_now_ms(CLOCK_REALTIME);
	fu.running = j;
	fb_log("tests start %s %s", j->id, by);
}

static struct job *
job_find(const char *id)
{
	int	i;

	for (i = 0; i < fu.njobs; i++)
		if (strcmp(fu.jobs[i].id, id) == 0)
			return &fu.jobs[i];
	return NULL;
}

static json_object *
job_json(const struct job *j)
{
	int	done = strcmp(j->status, "running") != 0;
	int	failed = strcmp(j->status, "failed") == 0;
	char	summary[128] = "null";

	if (done)
		snprintf(summary, sizeof(summary), "{\"summary\":{\"total\":3,"
		    "\"passed\":%d,\"failed\":%d,\"skipped\":0}}",
		    3 - failed, failed);
	return fb_jsonf("{\"job_id\":\"%s\",\"status\":\"%s\",\"mode\":"
	    "\"%s\",\"started_unix_ms\":%lld,\"finished_unix_ms\":%lld,"
	    "\"progress\":{\"completed\":%d,\"total\":3},\"error\":null,"
	    "\"result\":%s}", j->id, j->status, j->mode,
	    (long long)j->started, (long long)j->finished, done ? 3 : 1,
	    summary);
}

static json_object *
cmd_run_tests(json_object *params)
{
	const char	*mode = param(params, "mode", "EditMode");

	if (fu.running != NULL)
		return busy_tests();
	if (strcmp(mode, "EditMode") != 0 && strcmp(mode, "PlayMode") != 0)
		return failure("Unknown test mode; use EditMode or PlayMode",
		    NULL);
	job_start("mcp", mode);
	return success("Test job started.", fb_jsonf("{\"job_id\":\"%s\","
	    "\"status\":\"running\",\"mode\":\"%s\"}", fu.running->id,
	    mode));
}

static json_object *
cmd_get_test_job(json_object *params)
{
	const char	*id = param(params, "job_id",
			    param(params, "jobId", NULL));
	struct job	*j;

	if (id == NULL || *id == '\0')
		return failure("Missing required parameter 'job_id'.", NULL);
	if ((j = job_find(id)) == NULL)
		return failure("Unknown job_id.", NULL);
	return success("Test job status retrieved.", job_json(j));
}

/* A command that reloads the editor: answered (unless -n), then reload. */
static json_object *
reloads(const char *message, json_object *data)
{
	fu.reload_pending = 1;
	fu.compiling = 1;
	if (fu.no_reply) {
		json_object_put(data);
		return NULL;
	}
	return success(message, data);
}

static json_object *
cmd_refresh_unity(json_object *params)
{
	const char	*compile = param(params, "compile", "none");
	int		 request = strcmp(compile, "none") != 0;
	json_object	*d;

	if (fu.running != NULL)
		return busy_tests();
	d = fb_jsonf("{\"refresh_triggered\":true,\"compile_requested\":%s,"
	    "\"resulting_state\":\"%s\"}", request ? "true" : "false",
	    request ? "compiling" : "idle");
	if (request)
		return reloads("Refresh requested.", d);
	return success("Refresh requested.", d);
}

static json_object *
cmd_manage_editor(json_object *params)
{
	const char	*action = param(params, "action", "");

	if (strcmp(action, "play") == 0) {
		fu.playing = 1;
		return reloads("Entered play mode.", NULL);
	}
	if (strcmp(action, "stop") == 0) {
		fu.playing = fu.paused = 0;
		return success("Exited play mode.", NULL);
	}
	if (strcmp(action, "pause") == 0) {
		fu.paused = !fu.paused;
		return success(fu.paused ? "Game paused." : "Game resumed.",
		    NULL);
	}
	return failure("Unknown action for manage_editor.", NULL);
}

static const char *
boolstr(int b)
{
	return b ? "true" : "false";
}

/* activity.phase, in the real bridge's order of precedence. */
static const char *
phase(void)
{
	if (fu.running != NULL)
		return "running_tests";
	if (fu.compiling)
		return "compiling";
	return fu.playing ? "playmode_transition" : "idle";
}

static json_object *
cmd_get_editor_state(json_object *params)
{
	char	job[48] = "null", by[32] = "null";

	(void)params;
	if (fu.running != NULL) {
		snprintf(job, sizeof(job), "\"%s\"", fu.running->id);
		snprintf(by, sizeof(by), "\"%s\"", fu.running->by);
	}
	return success("Retrieved editor state.", fb_jsonf(
	    "{\"observed_at_unix_ms\":%lld,\"sequence\":%d,"
	    "\"activity\":{\"phase\":\"%s\"},"
	    "\"editor\":{\"play_mode\":{\"is_playing\":%s,\"is_paused\":%s}},"
	    "\"compilation\":{\"is_compiling\":%s,"
	    "\"is_domain_reload_pending\":false},"
	    "\"assets\":{\"is_updating\":false,"
	    "\"refresh\":{\"is_refresh_in_progress\":false}},"
	    "\"tests\":{\"is_running\":%s,\"current_job_id\":%s,"
	    "\"started_by\":%s}}", (long long)fb_now_ms(CLOCK_REALTIME),
	    fu.seq, phase(), boolstr(fu.playing), boolstr(fu.paused), boolstr(fu.compiling),
	    boolstr(fu.running != NULL), job, by));
}

static json_object *
cmd_read_console(json_object *params)
{
	const char	*action = param(params, "action", "get");

	if (strcmp(action, "clear") == 0)
		return success("Console cleared.", NULL);
	if (strcmp(action, "get") != 0)
		return failure("Unknown action for read_console.", NULL);
	return success("Retrieved 1 log entries.", fb_jsonf("[{\"type\":"
	    "\"Log\",\"message\":\"fake editor started\"}]"));
}

static json_object *
cmd_get_project_info(json_object *params)
{
	(void)params;
	return success("Retrieved project info.", fb_jsonf("{\"projectName\":"
	    "\"FakeProject\",\"assetsPath\":\"%s\",\"unityVersion\":"
	    "\"6000.0.0f1\"}", fu.assets));
}

static json_object *
cmd_manage_scene(json_object *params)
{
	const char	*action = param(params, "action", "");

	if (strcmp(action, "get_active") == 0)
		return success("Retrieved active scene.", fb_jsonf("{\"name\":"
		    "\"Main\",\"path\":\"Assets/Scenes/Main.unity\"}"));
	if (strcmp(action, "get_hierarchy") == 0)
		return success("Retrieved scene hierarchy.", fb_jsonf("[]"));
	return failure("Unknown action for manage_scene.", NULL);
}

/*
 * manage_camera's screenshot as MCP for Unity 10.x answers it (written to
 * a file, asynchronously; with includeImage, the PNG inline as base64,
 * shrunk to maxResolution): a 1x1 PNG.
 */
#define FAKE_PNG	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4" \
			"nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg=="

static json_object *
cmd_manage_camera(json_object *params)
{
	const char	*action = param(params, "action", "");
	json_object	*inc;

	if (strcmp(action, "list_cameras") == 0)
		return success("Found 1 camera.", fb_jsonf("{\"cameras\":"
		    "[{\"name\":\"Main Camera\"}]}"));
	if (strcmp(action, "screenshot") != 0)
		return failure("Unknown action for manage_camera.", NULL);
	if (json_object_object_get_ex(params, "includeImage", &inc) &&
	    json_object_get_boolean(inc))
		return success("Screenshot captured.", fb_jsonf("{\"path\":"
		    "\"Assets/Screenshots/shot.png\",\"fullPath\":"
		    "\"%s/Screenshots/shot.png\",\"superSize\":1,\"isAsync\":"
		    "false,\"imageBase64\":\"" FAKE_PNG "\",\"imageWidth\":1,"
		    "\"imageHeight\":1}", fu.assets));
	return success("Screenshot requested.", fb_jsonf("{\"path\":"
	    "\"Assets/Screenshots/shot.png\",\"fullPath\":"
	    "\"%s/Screenshots/shot.png\",\"superSize\":1,\"isAsync\":"
	    "true}", fu.assets));
}

static const struct {
	const char	*type;
	cmd_fn		 fn;
} commands[] = {
	{ "run_tests", cmd_run_tests },
	{ "get_test_job", cmd_get_test_job },
	{ "refresh_unity", cmd_refresh_unity },
	{ "manage_editor", cmd_manage_editor },
	{ "get_editor_state", cmd_get_editor_state },
	{ "read_console", cmd_read_console },
	{ "get_project_info", cmd_get_project_info },
	{ "manage_scene", cmd_manage_scene },
	{ "manage_camera", cmd_manage_camera },
};

static int
send_frame(int fd, const char *s, size_t n)
{
	unsigned char	hdr[8];
	int		i;

	for (i = 0; i < 8; i++)
		hdr[i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
	if (fb_write(fd, hdr, sizeof(hdr)) == -1)
		return -1;
	return fb_write(fd, s, n);
}

static json_object *
outer_error(const char *fmt, const char *arg)
{
	json_object	*o = json_object_new_object();
	char		 msg[256];

	snprintf(msg, sizeof(msg), fmt, arg);
	json_object_object_add(o, "status", json_object_new_string("error"));
	json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

/* The answer to one request (NULL: none). */
static json_object *
dispatch(const char *payload, size_t n)
{
	json_object	*req, *params = NULL, *ans = NULL;
	const char	*type;
	size_t		 i;

	if (jstrict_parse(payload, n, &req) != 0)
		return outer_error("Invalid JSON format%s", "");
	type = param(req, "type", NULL);
	if (!json_object_object_get_ex(req, "params", &params) ||
	    !json_object_is_type(params, json_type_object))
		params = NULL;
	fb_log_recv(type != NULL ? type : "(none)", params);
	for (i = 0; type != NULL && i < sizeof(commands) / sizeof(*commands);
	    i++)
		if (strcmp(commands[i].type, type) == 0) {
			ans = commands[i].fn(params);
			json_object_put(req);
			return ans;
		}
	ans = outer_error("Unknown or unsupported command type: %s",
	    type != NULL ? type : "(none)");
	json_object_put(req);
	return ans;
}

static void	serve_frames(struct fb_conn *);

/* Whether ans (taken), the answer to a command of type, must wait. */
static int
stall(struct fb_conn *c, const char *type, json_object *ans)
{
	if (fu.stall[0] == '\0' || type == NULL || strcmp(type, fu.stall) != 0)
		return 0;
	fu.stall[0] = '\0';
	fu.stalled = c;
	fu.stalled_ans = ans;
	fb_log("stalled %s", type);
	return 1;
}

/* The answer that waited goes, if its client is still there. */
static void
unstall(void)
{
	struct fb_conn	*c = fu.stalled;
	const char	*s;

	if (fu.stalled_ans == NULL)
		return;
	s = jstrict_to_string(fu.stalled_ans);
	if (c != NULL)
		send_frame(c->fd, s, strlen(s));
	json_object_put(fu.stalled_ans);
	fu.stalled_ans = NULL;
	fu.stalled = NULL;
	if (c != NULL)
		serve_frames(c);	/* what came behind it */
}

static void
frame(struct fb_conn *c, const char *payload, size_t n)
{
	json_object	*ans, *req = NULL;
	const char	*s;

	if (n == 4 && memcmp(payload, "ping", 4) == 0) {
		fb_log("recv ping");
		send_frame(c->fd, PONG, strlen(PONG));
		return;
	}
	ans = dispatch(payload, n);
	if (ans != NULL && jstrict_parse(payload, n, &req) == 0 &&
	    stall(c, param(req, "type", NULL), ans))
		ans = NULL;
	json_object_put(req);
	if (ans != NULL) {
		s = jstrict_to_string(ans);
		send_frame(c->fd, s, strlen(s));
		json_object_put(ans);
	}
	if (fu.reload_pending) {
		fu.reload_pending = 0;
		reload_start();
	}
}

/*
 * Whole frames from c; a zero or oversized length closes it.  The
 * editor's main thread answers one command after another: behind a
 * stalled answer, the frames wait (in order, as the real bridge reads).
 */
static void
serve_frames(struct fb_conn *c)
{
	uint64_t	 n;
	char		*payload;
	int		 i;

	while (c->fd != -1 && c->len >= 8 && fu.stalled_ans == NULL) {
		for (n = 0, i = 0; i < 8; i++)
			n = n << 8 | (unsigned char)c->buf[i];
		if (n == 0 || n > FB_MAX_MSG) {
			fb_log("bad frame length %llu", (unsigned long long)n);
			conn_close(c);
			return;
		}
		if (c->len < 8 + n)
			return;
		if ((payload = malloc(n + 1)) == NULL)
			fb_fatal("out of memory");
		memcpy(payload, c->buf + 8, n);
		payload[n] = '\0';
		fb_conn_consume(c, 8 + n);
		frame(c, payload, n);
		free(payload);
	}
}

static void
serve(struct fb_conn *c)
{
	if (!fb_conn_read(c)) {
		fb_log("close");
		conn_close(c);
		return;
	}
	serve_frames(c);
}

static void
accept_one(void)
{
	struct fb_conn	*c;
	int		 fd;

	if ((fd = accept4(fu.lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return;
	if (fb_write(fd, WELCOME, strlen(WELCOME)) == -1 ||
	    (c = fb_conn_add(fu.conns, fd)) == NULL) {
		close(fd);
		return;
	}
	fb_log("accept");
	/* "A new connection means the old one is dead." */
	close_all(c);
}

static void
control(char *line)
{
	if (strncmp(line, "end-tests ", 10) == 0 && fu.running != NULL) {
		snprintf(fu.running->status, sizeof(fu.running->status), "%s",
		    line + 10);
		fu.running->finished = fb_now_ms(CLOCK_REALTIME);
		fb_log("tests end %s %s", fu.running->id, fu.running->status);
		fu.running = NULL;
	} else if (strcmp(line, "start-tests-ui") == 0 && fu.running == NULL)
		job_start("editor", "EditMode");
	else if (strncmp(line, "compiling ", 10) == 0)
		fu.compiling = atoi(line + 10) != 0;
	else if (strcmp(line, "reload") == 0)
		reload_start();
	else if (strcmp(line, "reload-done") == 0)
		reload_finish();
	else if (strncmp(line, "stall ", 6) == 0)
		snprintf(fu.stall, sizeof(fu.stall), "%s", line + 6);
	else if (strcmp(line, "unstall") == 0)
		unstall();
	else if (strcmp(line, "quit") == 0)
		exit(0);
	else
		fb_log("ctl-refused %s", line);
}

static int
next_timeout(void)
{
	int64_t	now = fb_now_ms(CLOCK_MONOTONIC), t = -1;

	if (fu.status_dir != NULL)
		t = fu.next_heartbeat - now;
	if (fu.reload_end != 0 && (t < 0 || fu.reload_end - now < t))
		t = fu.reload_end - now;
	return t < 0 && (fu.status_dir != NULL || fu.reload_end != 0) ? 0 :
	    (int)t;
}

static void
timers(void)
{
	int64_t	now = fb_now_ms(CLOCK_MONOTONIC);

	if (fu.reload_end != 0 && now >= fu.reload_end)
		reload_finish();
	if (fu.status_dir != NULL && now >= fu.next_heartbeat)
		status_write(fu.reloading ? "reloading" : "ready");
}

static void
loop(void)
{
	static const struct fb_loop l = { &fu.lfd, fu.conns, control,
	    accept_one, serve, next_timeout, timers };

	fb_loop(&l);
}

int
main(int argc, char *argv[])
{
	const char	*project = "/tmp/FakeProject";
	int		 ch, i;

	fu.lfd = -1;
	while ((ch = getopt(argc, argv, "np:r:s:P:")) != -1) {
		switch (ch) {
		case 'n':
			fu.no_reply = 1;
			break;
		case 'p':
			fu.port = atoi(optarg);
			break;
		case 'r':
			fu.reload_ms = atoi(optarg);
			break;
		case 's':
			fu.status_dir = optarg;
			break;
		case 'P':
			project = optarg;
			break;
		default:
			fprintf(stderr, "usage: fake_unity [-n] [-p port] "
			    "[-r ms] [-s status-dir] [-P project]\n");
			return 64;
		}
	}
	for (i = 0; i < FB_MAXCONN; i++)
		fu.conns[i].fd = -1;
	snprintf(fu.assets, sizeof(fu.assets), "%s/Assets", project);
	fu.lfd = fb_listen(fu.port);
	fu.port = fb_port(fu.lfd);
	status_write("ready");
	fb_log("port %d", fu.port);
	loop();
}
