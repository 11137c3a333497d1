/* SPDX-License-Identifier: ISC */
/* What the cmdgate(1) suites share: a broker, and cmdgate run on it. */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "testnet.h"
#include "cliutil.h"

struct broker	b;
char		tools[256], fifo[256], port[16];
char		cli_out[OUT_MAX], cli_err[OUT_MAX];

void
setup(void)
{
	broker_prepare(&b);
	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
	snprintf(fifo, sizeof(fifo), "%s", broker_path(&b, "release"));
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
}

void
teardown(void)
{
	broker_stop(&b);
}

void
start(const char **extra)
{
	const char	*args[16] = { "--tools", tools };
	char		 json[2048];
	int		 n = 2;

	snprintf(json, sizeof(json), "{\"tools\":["
	    "{\"name\":\"echo\",\"tier\":\"instant\",\"exec\":[\"echo\","
	    "\"{text}\"],\"params\":{\"type\":\"object\",\"properties\":"
	    "{\"text\":{\"type\":\"string\",\"default\":\"\"},\"n\":"
	    "{\"type\":\"integer\"}}}},"
	    "{\"name\":\"count\",\"exec\":[\"echo\",\"{n}\"],\"params\":"
	    "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
	    "\"integer\"}},\"required\":[\"n\"]}},"
	    "{\"name\":\"fail\",\"exec\":[\"sh\",\"-c\",\"exit 3\"]},"
	    "{\"name\":\"block\",\"busy\":\"tests_running\",\"exec\":[\"sh\","
	    "\"-c\",\"cat %s >/dev/null\"]},"
	    "{\"name\":\"locked\",\"enabled\":false,\"exec\":[\"true\"]}"
	    "]}", fifo);
	write_file(tools, json, 0600);
	while (extra != NULL && *extra != NULL)
		args[n++] = *extra++;
	args[n] = NULL;
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	snprintf(port, sizeof(port), "%d", b.port);
}

/*
 * Run cmdgate with args (NULL-ended) and input on stdin; its exit status,
 * stdout in cli_out, stderr in cli_err.
 */
int
run(const char *input, const char *first, ...)
{
	const char	*argv[64];
	const char	*bin = getenv("CMDGATE");
	va_list		 ap;
	int		 in[2], o[2], e[2], status;
	pid_t		 pid;

	ck_assert_ptr_nonnull(bin);
	argv[0] = bin;
	va_start(ap, first);
	args_collect(argv, 1, 64, first, ap);
	va_end(ap);
	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(o), 0);
	ck_assert_int_eq(pipe(e), 0);
	if ((pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(o[1], 1);
		dup2(e[1], 2);
		close(in[1]);
		close(o[0]);
		close(e[0]);
		setenv("CMDGATE_PORT", port, 1);
		unsetenv("CMDGATE_SOCKET");
		unsetenv("CMDGATE_TOKEN_FILE");
		execv(bin, (char **)argv);
		_exit(127);
	}
	close(in[0]);
	close(o[1]);
	close(e[1]);
	if (input != NULL)
		ck_assert_int_eq(write(in[1], input, strlen(input)),
		    (ssize_t)strlen(input));
	close(in[1]);
	fd_slurp(o[0], cli_out, OUT_MAX);
	fd_slurp(e[0], cli_err, OUT_MAX);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

json_object *
out_json(void)
{
	json_object	*o = json_tokener_parse(cli_out);

	ck_assert_msg(o != NULL, "not JSON: %.300s", cli_out);
	return o;
}
