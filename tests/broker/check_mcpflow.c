/* SPDX-License-Identifier: ISC */
/*
 * cmdgate mcp against the review of issue 18 (tests/RELIABILITY.md,
 * "Bridge review fixes (session 6)"), the flow of its messages: batches,
 * stdio that is a regular file, a paged tool list, and a client or a
 * broker that reads too little.
 */
#include "config.h"

#include <sys/wait.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "cliutil.h"
#include "mcputil.h"
#include "testnet.h"
#include "util.h"

/*
 * Review item 9: a batch is followed like one request.  Its tools/call,
 * whose job is held when the broker is killed, has a key of the
 * bridge's: the batch sent again after the restart finds that job
 * (deduplicated, no t-000001), and the client gets one array answer.
 * Before, a batch was passed on as it was: never sent again, never
 * answered, and its tools/calls had no key.
 */
START_TEST(mcp_batch)
{
	const char	*args[] = { "--tools", tools, NULL };
	pid_t		 pid, hold;
	int		 in = -1, out = -1, err, hfd, wfd, status;
	json_object	*r;

	mcp_tools_reload();
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	hold = mcp_hold(&hfd, &wfd);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	send_line(in, "[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"rebuild\"}},"
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}]\n");
	await_stored("t-000000");
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(await_err(err, "reconnecting"), "stderr: %s", cli_err);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_err(err, "reconnected after"), "stderr: %s",
	    cli_err);
	close(wfd);	/* the hold ends: the job runs, once */
	ck_assert_msg(await_out(out, "rebuilt"), "stdout: %s", cli_out);
	ck_assert_ptr_nonnull(r = out_line("rebuilt"));
	ck_assert(json_object_is_type(r, json_type_array));
	ck_assert_int_eq(json_object_array_length(r), 2);
	json_object_put(r);
	ck_assert_ptr_nonnull(strstr(cli_out, "deduplicated"));
	ck_assert_ptr_null(strstr(cli_out, "t-000001"));
	ck_assert_int_eq(waitpid(hold, &status, 0), hold);
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
	close(hfd);
}
END_TEST

/*
 * Review item 9: stdin and stdout that are regular files (and /dev/null)
 * cannot be polled; the bridge reads and writes them itself: every
 * request in the file is answered into the output file, and it exits 0.
 * Before, it could not start.
 */
START_TEST(mcp_file_stdio)
{
	char		 in_path[256], out_path[256];
	int		 in, out, err, dn;
	pid_t		 pid;

	start(NULL);
	snprintf(in_path, sizeof(in_path), "%s", broker_path(&b, "in.jsonl"));
	snprintf(out_path, sizeof(out_path), "%s",
	    broker_path(&b, "out.jsonl"));
	write_file(in_path, INIT "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
	    "{\"text\":\"from a file\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", 0600);
	ck_assert_int_ge(in = open(in_path, O_RDONLY | O_CLOEXEC), 0);
	ck_assert_int_ge(out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0600), 0);
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	ck_assert_int_eq(reap(pid, err), 0);
	close(in);
	close(out);
	close(err);
	ck_assert_int_ge(out = open(out_path, O_RDONLY | O_CLOEXEC), 0);
	fd_slurp(out, cli_out, OUT_MAX);
	ck_assert_msg(strstr(cli_out, "from a file") != NULL, "%s", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "\"id\":3"));
	ck_assert_int_eq(count_of(cli_out, "\n"), 3);
	/* < /dev/null > /dev/null: nothing to do, exit 0. */
	ck_assert_int_ge(dn = open("/dev/null", O_RDWR | O_CLOEXEC), 0);
	in = out = dn;
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	ck_assert_int_eq(reap(pid, err), 0);
	ck_assert_str_eq(cli_err, "");
	close(dn);
	close(err);
}
END_TEST

/*
 * The list_changed hash and paging: a tools/list with a cursor (a later
 * page) is not what the bridge compares with the list it fetches on
 * reconnecting, so an unchanged table sends no list_changed.  (The
 * broker does not page tools/list today: this holds with or without
 * the guard; it keeps it so.)
 */
START_TEST(mcp_tools_paged)
{
	const char	*args[] = { "--tools", tools, NULL };
	pid_t		 pid;
	int		 in = -1, out = -1, err;

	start(NULL);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/list\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"tools/list\",\"params\":{\"cursor\":\"2\"}}\n");
	ck_assert_msg(await_out(out, "\"id\":3"), "stdout: %s", cli_out);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(await_err(err, "reconnecting"), "stderr: %s", cli_err);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_err(err, "reconnected"), "stderr: %s", cli_err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":4"), "stdout: %s", cli_out);
	ck_assert_ptr_null(strstr(cli_out, "list_changed"));
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
}
END_TEST

/*
 * A client that reads nothing of its stdout: once 16 MiB of answers wait
 * for it, the bridge reads neither the broker nor stdin until they are
 * read (the broker then stops reading it in turn), so its memory stays
 * bounded, and says so on stderr; every answer comes once the client
 * reads.  100 tools/list of 200 KB each fill it; pings of 10 KB sent
 * after that block (no room in stdin for 3 s) before 200 are written.
 * Before, the bridge read on and held every answer.
 */
START_TEST(mcp_stdout_unread)
{
	const char	*args[] = { "--tools", tools, NULL };
	static char	 big[200100], req[10200], buf[65536];
	struct pollfd	 pfd;
	size_t		 off = 0, len = 0;
	ssize_t		 w;
	int		 i = 0, in = -1, out = -1, err, blocked = 0, lines = 0;
	pid_t		 pid;

	memset(big, 0, sizeof(big));
	snprintf(big, sizeof(big), "{\"tools\":[{\"name\":\"big\","
	    "\"description\":\"");
	memset(big + strlen(big), 'd', 200000);
	strcat(big, "\",\"exec\":[\"true\"]}]}");
	write_file(tools, big, 0600);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	for (i = 0; i < 100; i++) {
		snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"tools/list\"}\n", 100 + i);
		send_line(in, req);
	}
	ck_assert_msg(await_err(err, "answers unread"), "stderr: %s", cli_err);
	ck_assert_int_eq(fcntl(in, F_SETFL, O_NONBLOCK), 0);
	for (i = 0; i < 200 && !blocked; ) {
		if (off == len) {
			len = (size_t)snprintf(req, sizeof(req), "{\"jsonrpc\":"
			    "\"2.0\",\"id\":%d,\"method\":\"ping\","
			    "\"params\":{\"_pad\":\"%010000d\"}}\n", 1000 + i, 0);
			off = 0;
			i++;
		}
		if ((w = write(in, req + off, len - off)) > 0) {
			off += (size_t)w;
			continue;
		}
		pfd.fd = in;
		pfd.events = POLLOUT;
		blocked = poll(&pfd, 1, 3000) == 0;
	}
	ck_assert_msg(blocked, "%d requests of 10 KB written, stdin never "
	    "blocked", i);
	/* Now read: every whole request is answered, and the bridge ends. */
	close(in);
	pfd.fd = out;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, TN_TIMEOUT_MS) == 1 &&
	    (w = read(out, buf, sizeof(buf))) > 0)
		while (w > 0)
			lines += buf[--w] == '\n';
	ck_assert_int_eq(reap(pid, err), 0);
	/* One answer a whole request, and one (an error) for a part of one. */
	ck_assert_int_eq(lines, 100 + (off == len ? i : off > 0 ? i : i - 1));
	close(out);
	close(err);
}
END_TEST

/*
 * A broker that reads nothing (SIGSTOP) while the client sends on: past
 * 16 MiB unread by the broker the bridge reads no more of its stdin, so
 * that notifications (which it does not hold) cannot grow it either:
 * 10 KB notifications block stdin (no room for 3 s) before 40 MB are
 * written.  Once the broker goes on (SIGCONT) the bridge ends normally.
 */
START_TEST(mcp_broker_stopped)
{
	static char	 req[10200];
	struct pollfd	 pfd;
	size_t		 off = 0, len = 0;
	ssize_t		 w;
	int		 i, in = -1, out = -1, err, blocked = 0;
	pid_t		 pid;

	start(NULL);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	ck_assert_int_eq(kill(b.pid, SIGSTOP), 0);
	ck_assert_int_eq(fcntl(in, F_SETFL, O_NONBLOCK), 0);
	len = (size_t)snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/pad\",\"params\":{\"_pad\":"
	    "\"%010000d\"}}\n", 0);
	for (i = 0; i < 4000 && !blocked; ) {
		if ((w = write(in, req + off, len - off)) > 0) {
			if ((off += (size_t)w) == len) {
				off = 0;
				i++;
			}
			continue;
		}
		pfd.fd = in;
		pfd.events = POLLOUT;
		blocked = poll(&pfd, 1, 3000) == 0;
	}
	ck_assert_int_eq(kill(b.pid, SIGCONT), 0);
	ck_assert_msg(blocked, "%d notifications of 10 KB written to a "
	    "stopped broker, stdin never blocked", i);
	ck_assert_int_eq(fcntl(in, F_SETFL, 0), 0);
	ck_assert_int_eq(write(in, req + off, len - off), (ssize_t)(len - off));
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
}
END_TEST

/*
 * A line longer than 64 MiB is not held whole: the bridge drops it as it
 * comes, answers one message_too_large with a null id, and reads on
 * after its end (a ping behind it is answered); the broker never sees it
 * (no outage).  Before, it was read whole and sent, and the broker
 * closed the connection.
 */
START_TEST(mcp_long_line)
{
	size_t		 n = 65 * 1024 * 1024;
	char		*line;
	json_object	*r;
	pid_t		 pid;
	int		 in = -1, out = -1, err;

	start(NULL);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	ck_assert_ptr_nonnull(line = malloc(n + 2));
	memset(line, 'x', n);
	strcpy(line + n, "\n");
	send_line(in, line);
	free(line);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":2"), "stdout: %.300s", cli_out);
	ck_assert_ptr_nonnull(r = out_line("\"id\":null"));
	ck_assert_str_eq(json_object_get_string(jpath(r, "error.data.type")),
	    "message_too_large");
	ck_assert_ptr_nonnull(strstr(json_object_get_string(jpath(r,
	    "error.data.reason")), "64 MiB"));
	json_object_put(r);
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	ck_assert_ptr_null(strstr(cli_err, "broker lost"));
	close(out);
	close(err);
}
END_TEST

/*
 * Ids the bridge cannot follow (true, 1.5, an object) are not held: the
 * broker answers them with id null.  A batch whose answer starts with
 * such an error is found by its other ids: answered once, not sent
 * again after a restart.  Before, both were held for ever (1,024 of
 * them refused every request with bridge_full) and the batch was
 * answered again after each restart.
 */
START_TEST(mcp_odd_ids)
{
	const char	*args[] = { "--tools", tools, NULL };
	static char	 many[1100 * 48];
	pid_t		 pid;
	int		 in = -1, out = -1, err, i;
	size_t		 n = 0;

	mcp_tools_reload();
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":"
	    "\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},"
	    "\"method\":\"ping\"}\n");
	for (i = 0; i < 1100; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n,
		    "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}\n");
	send_line(in, many);
	send_line(in, "[{\"jsonrpc\":\"2.0\",\"id\":false,\"method\":"
	    "\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":"
	    "\"ping\"}]\n{\"jsonrpc\":\"2.0\",\"id\":78,\"method\":"
	    "\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":78"), "stdout: %s", cli_out);
	ck_assert_ptr_null(strstr(cli_out, "bridge_full"));
	ck_assert_int_eq(count_of(cli_out, "\"id\":77"), 1);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(await_err(err, "reconnecting"), "stderr: %s", cli_err);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_err(err, "reconnected after"), "stderr: %s",
	    cli_err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":79,\"method\":"
	    "\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":79"), "stdout: %s", cli_out);
	ck_assert_int_eq(count_of(cli_out, "\"id\":77"), 1);
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("mcpflow");
	TCase	*tc = tcase_create("mcpflow");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mcp_batch);
	tcase_add_test(tc, mcp_file_stdio);
	tcase_add_test(tc, mcp_tools_paged);
	tcase_add_test(tc, mcp_stdout_unread);
	tcase_add_test(tc, mcp_broker_stopped);
	tcase_add_test(tc, mcp_long_line);
	tcase_add_test(tc, mcp_odd_ids);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
