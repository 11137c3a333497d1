/* SPDX-License-Identifier: ISC */
/*
 * with_broker [cmdgated flags] -- CMD [ARG ...]: start $CMDGATED on a free
 * loopback port with a temporary state dir, wait for its READY=1, run CMD
 * with CMDGATE_PORT set to that port and CMDGATE_STATE_DIR to that state
 * dir (so that cmdgate finds the token the broker made, as a user's
 * would), and CMDGATE_HTTP_URL to the URL of its --http endpoint when it
 * has one (its "http@ADDR:PORT" in the STATUS= line), stop the broker, exit with CMD's
 * status.  For shell-level tests
 * (tests/mcp-sdk.sh).
 */
#include "config.h"

#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker.h"

/* Run argv with the broker's port and state dir; its exit status. */
static int
run_cmd(struct broker *b, char **argv)
{
	char	port[16], buf[300], *url;
	int	status;
	pid_t	child;

	snprintf(port, sizeof(port), "%d", b->port);
	if ((child = fork()) == 0) {
		if ((url = strstr(b->status, "http@")) != NULL) {
			snprintf(buf, sizeof(buf), "http://%.*s/mcp",
			    (int)strcspn(url + 5, " ;"), url + 5);
			setenv("CMDGATE_HTTP_URL", buf, 1);
		}
		setenv("CMDGATE_PORT", port, 1);
		setenv("CMDGATE_STATE_DIR", broker_path(b, "state"), 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (child == -1 || waitpid(child, &status, 0) != child)
		return 70;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 70;
}

int
main(int argc, char **argv)
{
	struct broker_how	 how = { 1, NULL, 0, 0, 0 };
	struct broker		 b;
	const char		*bargs[64];
	int			 sep, n = 0, rc = 70;

	for (sep = 1; sep < argc && strcmp(argv[sep], "--") != 0; sep++)
		if (n < 63)
			bargs[n++] = argv[sep];
	bargs[n] = NULL;
	if (getenv("CMDGATED") == NULL || sep + 1 >= argc) {
		fprintf(stderr, "usage: CMDGATED=... with_broker [flags] -- "
		    "CMD [ARG ...]\n");
		return 64;
	}
	if (broker_mkdir(&b) == -1)
		return 71;
	b.auth = 1;	/* as a user's broker: cmdgate reads its token */
	if (broker_spawn(&b, bargs, &how) == -1 || broker_ready(&b) == -1)
		fprintf(stderr, "with_broker: cmdgated did not become ready\n");
	else
		rc = run_cmd(&b, argv + sep + 1);
	if (b.pid > 0)
		broker_kill(&b, SIGTERM);
	broker_rmdir(&b);
	return rc;
}
