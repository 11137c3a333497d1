/* SPDX-License-Identifier: ISC */
/* What the cmdgate mcp suites share: the bridge run on the test broker. */
#include "config.h"

#include <sys/wait.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "cliutil.h"
#include "mcputil.h"
#include "testnet.h"

/*
 * cmdgate ARGS mcp in the background (ARGS NULL-ended; NULL: --socket,
 * the broker's).  stdin, stdout and stderr piped unless *infd or
 * *outfd is already an fd (>= 0), which it gets instead.
 */
pid_t
spawn_mcp(const char **args, int *infd, int *outfd, int *errfd)
{
	const char	*argv[16] = { getenv("CMDGATE") };
	int		 i[2] = { -1, -1 }, o[2] = { -1, -1 }, e[2], n = 1;
	pid_t		 pid;

	if (args == NULL) {
		argv[n++] = "--socket";
		argv[n++] = b.sock;
	}
	while (args != NULL && *args != NULL)
		argv[n++] = *args++;
	argv[n++] = "mcp";
	argv[n] = NULL;
	/* Close-on-exec: no broker started meanwhile may hold them. */
	if (*infd < 0)
		ck_assert_int_eq(pipe2(i, O_CLOEXEC), 0);
	if (*outfd < 0)
		ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(e, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		unsetenv("CMDGATE_SOCKET");
		unsetenv("CMDGATE_TOKEN_FILE");
		unsetenv("CMDGATE_INSTANCE");
		dup2(*infd >= 0 ? *infd : i[0], 0);
		dup2(*outfd >= 0 ? *outfd : o[1], 1);
		dup2(e[1], 2);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	if (*infd < 0) {
		close(i[0]);
		*infd = i[1];
	}
	if (*outfd < 0) {
		close(o[1]);
		*outfd = o[0];
	}
	close(e[1]);
	*errfd = e[0];
	return pid;
}

void
send_line(int fd, const char *line)
{
	ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
}

int
count_of(const char *hay, const char *needle)
{
	int	n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay++;
	}
	return n;
}

/* The line of cli_out that holds want, or NULL. */
json_object *
out_line(const char *want)
{
	const char	*p = strstr(cli_out, want), *s, *e;
	json_object	*o;
	char		*line;

	if (p == NULL)
		return NULL;
	for (s = p; s > cli_out && s[-1] != '\n'; s--)
		;
	e = strchr(p, '\n');
	line = strndup(s, e != NULL ? (size_t)(e - s) : strlen(s));
	o = json_tokener_parse(line);
	free(line);
	return o;
}

/* Wait for pid (its stderr errfd ends when it exits): its exit status. */
int
reap(pid_t pid, int errfd)
{
	int	status;

	await_err(errfd, "\x01never");	/* bounded: until EOF */
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

void
mcp_tools_reload(void)
{
	write_file(tools, "{\"tools\":[{\"name\":\"rebuild\",\"tier\":"
	    "\"heavy\",\"reload\":true,\"exec\":[\"echo\",\"rebuilt\"]}]}",
	    0600);
}

/* editor-state --tests-running holding reloads until *wfd is closed. */
pid_t
mcp_hold(int *hfd, int *wfd)
{
	const char	*cli[] = { "editor-state", "--tests-running", "--",
			    "sh", "-c", NULL, NULL };
	static char	 cmd[512];
	pid_t		 hold;

	snprintf(cmd, sizeof(cmd), "cat %s >/dev/null", fifo);
	cli[5] = cmd;
	hold = spawn_cli(hfd, cli);
	ck_assert_int_ge(*wfd = open(fifo, O_WRONLY | O_CLOEXEC), 0);
	return hold;
}

/* The status of ticket once it ends; caller frees. */
/* Wait, on the broker's status notifications, until ticket exists. */
void
await_stored(const char *ticket)
{
	struct client	*c = client_unix(b.sock);
	json_object	*r;
	char		 line[256];
	int		 i, found = 0;

	json_object_put(client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"subscribe_status\",\"params\":{}}"));
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"poll_job\",\"params\":{\"ticket\":\"%s\"}}",
	    ticket);
	for (i = 0; i < 20 && !found; i++) {
		r = client_call(c, line);
		found = jpath(r, "result") != NULL;
		json_object_put(r);
		if (!found)
			json_object_put(client_wait_method(c,
			    "notifications/status"));
	}
	client_close(c);
	ck_assert_msg(found, "%s never stored", ticket);
}
