/* SPDX-License-Identifier: ISC */
/*
 * The broker, client and tool tables the jobs suites share (check_jobs,
 * check_guard, check_workers, check_forward).
 */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "jobsutil.h"
#include "testnet.h"

struct broker	 b;
struct client	*c;
char		 fifo[256], tools[256];
pid_t		 upstream = -1;
int		 upstream_port;

void
setup(void)
{
	broker_prepare(&b);
	snprintf(fifo, sizeof(fifo), "%s", broker_path(&b, "release"));
	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	c = NULL;
	upstream_port = 9;	/* discard: nobody listens */
}

void
teardown(void)
{
	client_close(c);
	if (upstream > 0) {
		kill(upstream, SIGKILL);
		waitpid(upstream, NULL, 0);
		upstream = -1;
	}
	broker_stop(&b);
}

/* The test table: {FIFO} and {PORT} are filled in. */
void
write_tools(const char *test_tier)
{
	char	json[4096];

	snprintf(json, sizeof(json), "{\"tools\":["
	    "{\"name\":\"run_tests\",\"tier\":\"%s\",\"busy\":\"tests_running\","
	    " \"exec\":[\"sh\",\"-c\",\"cat %s >/dev/null\"]},"
	    "{\"name\":\"stubborn\",\"tier\":\"smooth\",\"busy\":"
	    "\"tests_running\",\"exec\":[\"sh\",\"-c\",\"trap '' TERM; "
	    "touch %s.started; cat %s >/dev/null\"]},"
	    "{\"name\":\"refresh\",\"tier\":\"heavy\",\"busy\":\"compiling\","
	    " \"reload\":{\"param\":\"compile\",\"not_in\":[\"none\"]},"
	    " \"tier_rules\":[{\"param\":\"compile\",\"in\":[\"none\"],"
	    "\"tier\":\"smooth\"}],"
	    " \"exec\":[\"echo\",\"{\\\"refreshed\\\":\\\"{compile}\\\"}\"],"
	    " \"params\":{\"type\":\"object\",\"properties\":{\"compile\":"
	    "{\"type\":\"string\",\"default\":\"request\"}}}},"
	    "{\"name\":\"echo\",\"tier\":\"instant\",\"exec\":[\"echo\","
	    "\"{text}\"],\"params\":{\"type\":\"object\",\"required\":"
	    "[\"text\"],\"properties\":{\"text\":{\"type\":\"string\"},"
	    "\"n\":{\"type\":\"integer\"}}}},"
	    "{\"name\":\"fail\",\"exec\":[\"sh\",\"-c\",\"exit 3\"]},"
	    "{\"name\":\"missing\",\"exec\":[\"/nonexistent/tool\"]},"
	    "{\"name\":\"pipe\",\"exec\":[\"sh\",\"-c\",\"yes | head -n 1\"]},"
	    "{\"name\":\"crash\",\"exec\":[\"sh\",\"-c\",\"kill -SEGV $$\"]},"
	    "{\"name\":\"flood\",\"exec\":[\"head\",\"-c\",\"67108864\","
	    "\"/dev/zero\"]},"
	    "{\"name\":\"slow\",\"timeout_s\":1,\"exec\":[\"sleep\",\"30\"]},"
	    "{\"name\":\"env\",\"exec\":[\"env\"]},"
	    "{\"name\":\"locked\",\"enabled\":false,\"exec\":[\"true\"]},"
	    "{\"name\":\"answer\",\"forward\":\"127.0.0.1:%d\"},"
	    "{\"name\":\"oops\",\"forward\":\"127.0.0.1:%d\"},"
	    "{\"name\":\"hangup\",\"forward\":\"127.0.0.1:%d\"},"
	    "{\"name\":\"reset\",\"forward\":\"127.0.0.1:%d\"},"
	    "{\"name\":\"silent\",\"timeout_s\":1,\"forward\":\"127.0.0.1:%d\"},"
	    "{\"name\":\"refused\",\"forward\":\"127.0.0.1:1\"}"
	    "]}", test_tier, fifo, fifo, fifo, upstream_port, upstream_port,
	    upstream_port, upstream_port, upstream_port);
	write_file(tools, json, 0600);
}

/* The broker on the tools file, kill grace 1 s, and extra; c to it. */
void
start_tools(const char **extra)
{
	const char	*args[16] = { "--tools", tools, "--kill-grace", "1" };
	int		 n = 4;

	while (extra != NULL && *extra != NULL)
		args[n++] = *extra++;
	args[n] = NULL;
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	c = client_tcp(b.port);
}

/* SIGKILL the broker, then start it again on its state; c to it. */
void
crash_restart(void)
{
	broker_kill(&b, SIGKILL);
	start_tools(NULL);
}

void
start_with(const char *test_tier, const char **extra)
{
	write_tools(test_tier);
	start_tools(extra);
}

json_object *
callf(const char *fmt, ...)
{
	char	line[8192];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return client_call(c, line);
}

const char *
str(json_object *o, const char *path)
{
	json_object	*v = jpath(o, path);

	ck_assert_msg(v != NULL, "no %s in %.300s", path,
	    json_object_to_json_string(o));
	return json_object_get_string(v);
}

/* Submit asynchronously; the ticket (static buffer per call site). */
void
submit(char ticket[32], const char *commands, const char *more)
{
	json_object	*r;

	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":%s,\"async\":true%s%s}}", commands,
	    more != NULL ? "," : "", more != NULL ? more : "");
	ck_assert_msg(jpath(r, "result.ticket") != NULL, "submit: %.300s",
	    json_object_to_json_string(r));
	snprintf(ticket, 32, "%s", str(r, "result.ticket"));
	json_object_put(r);
}

json_object *
poll_job(const char *ticket)
{
	return callf("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"poll_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", ticket);
}

/* wait_job until it ends (bounded); the job object.  Caller puts. */
json_object *
wait_done(const char *ticket)
{
	json_object	*r = callf("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"%s\",\"timeout_s\":20}}",
	    ticket);
	json_object	*job = json_object_get(jpath(r, "result"));

	ck_assert_msg(job != NULL, "wait_job: %.300s",
	    json_object_to_json_string(r));
	json_object_put(r);
	return job;
}

/* wait_done, and the job ended as status. */
void
wait_end(const char *ticket, const char *status)
{
	json_object	*r = wait_done(ticket);

	ck_assert_msg(strcmp(str(r, "status"), status) == 0,
	    "%s ended %s, not %s", ticket, str(r, "status"), status);
	json_object_put(r);
}

/* Read notifications until ticket reaches status. */
void
await_status(const char *ticket, const char *status)
{
	json_object	*n;
	int		 ok = 0;

	while (!ok && (n = client_wait_method(c, "notifications/job")) != NULL) {
		ok = strcmp(str(n, "params.ticket"), ticket) == 0 &&
		    strcmp(str(n, "params.status"), status) == 0;
		json_object_put(n);
	}
	ck_assert_msg(ok, "%s never became %s", ticket, status);
}

/* Let every tool blocked on the FIFO finish. */
void
release(void)
{
	int	fd = open(fifo, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	close(fd);
}

void
assert_error(json_object *r, int code, const char *type)
{
	ck_assert_msg(jpath(r, "error.code") != NULL, "not an error: %.300s",
	    json_object_to_json_string(r));
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), code);
	ck_assert_str_eq(str(r, "error.data.type"), type);
	ck_assert(json_object_object_get_ex(jpath(r, "error.data"), "command",
	    NULL));
	json_object_put(r);
}

/*
 * Whether pid is a fork server: its command line, fixed from its exec
 * on, is "cmdgate-worker --forker" (its comm is renamed only once it
 * runs, and the workers it forks blank the argument once they run).
 */
static int
is_fork_server(pid_t pid)
{
	char	path[64], buf[4096];
	FILE	*f;
	size_t	n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strlen(buf) + 1 < n && strcmp(buf + strlen(buf) + 1,
	    "--forker") == 0;
}

int
broker_workers(pid_t *pids, int max, pid_t *forker)
{
	char	path[64];
	FILE	*f;
	int	n = 0, pid, fk = -1;

	if (forker != NULL)
		*forker = -1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", b.pid,
	    b.pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	/*
	 * A worker the fork server has just cloned has its command line
	 * until it runs: the first such child is the fork server (the
	 * kernel lists children in the order they became ours, and the
	 * fork server's come after it).
	 */
	while (fscanf(f, "%d", &pid) == 1)
		if (fk == -1 && is_fork_server(pid)) {
			fk = pid;
			if (forker != NULL)
				*forker = pid;
		} else if (n < max)
			pids[n++] = pid;
	fclose(f);
	return n;
}

pid_t
worker_pid(void)
{
	pid_t	pid;

	return broker_workers(&pid, 1, NULL) == 1 ? pid : -1;
}

/* ---- tools and workers (h3) ------------------------------------------ */

/*
 * The table of this block: %1$s is the temp dir, %2$s the FIFO, %3$d an
 * IPv4 upstream's port, %4$d an IPv6 one's.
 */
static const char h3_table[] = "{\"tools\":["
    "{\"name\":\"echo\",\"tier\":\"instant\",\"exec\":[\"echo\",\"{text}\"],"
    " \"params\":{\"properties\":{\"text\":{\"type\":\"string\"}}}},"
    "{\"name\":\"echo_dash\",\"tier\":\"instant\",\"allow_dash\":[\"text\"],"
    " \"exec\":[\"echo\",\"{text}\"]},"
    "{\"name\":\"where\",\"tier\":\"instant\",\"exec\":[\"pwd\"]},"
    "{\"name\":\"where_cwd\",\"tier\":\"instant\",\"cwd\":\"%1$s\","
    " \"exec\":[\"pwd\"]},"
    "{\"name\":\"where_gone\",\"tier\":\"instant\",\"cwd\":\"%1$s/gone\","
    " \"exec\":[\"pwd\"]},"
    "{\"name\":\"nofile\",\"tier\":\"instant\",\"exec\":[\"sh\",\"-c\","
    " \"ulimit -n\"]},"
    "{\"name\":\"stubborn\",\"tier\":\"smooth\",\"exec\":[\"sh\",\"-c\","
    " \"trap '' TERM; echo $$ >%1$s/t.tmp; mv %1$s/t.tmp %1$s/tool.pid; "
    "cat %2$s >/dev/null\"]},"
    "{\"name\":\"leaver\",\"tier\":\"smooth\",\"exec\":[\"sh\",\"-c\","
    " \"(setsid sh -c 'echo $$ >%1$s/l.tmp; mv %1$s/l.tmp %1$s/left.pid; "
    "exec sleep 60' &); until [ -e %1$s/left.pid ]; do sleep 0.01; done; "
    "[ -z \\\"$1\\\" ] || cat %2$s\", \"sh\", \"{block}\"],"
    " \"params\":{\"properties\":{\"block\":{\"default\":\"\"}}}},"
    "{\"name\":\"big_params\",\"tier\":\"instant\",\"exec\":[\"sh\",\"-c\","
    " \"test -z \\\"$CMDGATE_PARAMS\\\" && wc -c <\\\"$CMDGATE_PARAMS_FILE\\\"\"]},"
    "{\"name\":\"small_params\",\"tier\":\"instant\",\"exec\":[\"sh\",\"-c\","
    " \"echo \\\"$CMDGATE_PARAMS\\\"; cat \\\"$CMDGATE_PARAMS_FILE\\\"\"]},"
    "{\"name\":\"cat_bad\",\"tier\":\"instant\",\"exec\":[\"cat\","
    " \"%1$s/bad.json\"]},"
    "{\"name\":\"ignore\",\"tier\":\"instant\",\"exec\":[\"true\"]},"
    "{\"name\":\"print\",\"tier\":\"instant\",\"exec\":[\"printf\",\"%%s\","
    " \"{out}\"],\"allow_dash\":[\"out\"]},"
    "{\"name\":\"ctl\",\"tier\":\"instant\",\"exec\":[\"sh\",\"-c\","
    " \"printf '{\\\"a\\\":\\\"'; head -c 179990 /dev/zero | tr '\\\\0' "
    "'\\\\1'; printf '\\\"}'; head -c 179990 /dev/zero | tr '\\\\0' "
    "'\\\\1' >&2\"]},"
    "{\"name\":\"blocker\",\"tier\":\"heavy\",\"exec\":[\"cat\",\"%2$s\"]},"
    "{\"name\":\"victim\",\"tier\":\"heavy\",\"enabled\":%5$s,"
    " \"exec\":[\"true\"]},"
    "{\"name\":\"fwd\",\"forward\":\"127.0.0.1:%3$d\"},"
    "{\"name\":\"fwd6\",\"forward\":\"[::1]:%4$d\"}"
    "]}";

void
h3_write_tools(int port4, int port6, int victim)
{
	char	json[8192];

	mkdir(broker_path(&b, "gone"), 0700);
	snprintf(json, sizeof(json), h3_table, b.dir, fifo, port4, port6,
	    victim ? "true" : "false");
	write_file(tools, json, 0600);
}

void
h3_start(const char **extra, int port4, int port6)
{
	h3_write_tools(port4, port6, 1);
	start_tools(extra);
}

/* Submit and wait for the end; the job object (caller puts). */
json_object *
h3_run(const char *commands)
{
	char	t[32];

	submit(t, commands, NULL);
	return wait_done(t);
}
