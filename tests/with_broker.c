/* SPDX-License-Identifier: ISC */
/*
 * with_broker [cmdgated flags] -- CMD [ARG ...]: start $CMDGATED on a free
 * loopback port with a temporary state dir, wait for its READY=1, run CMD
 * with CMDGATE_PORT set to that port and CMDGATE_STATE_DIR to that state
 * dir (so that cmdgate finds the token the broker made, as a user's
 * would), stop the broker, exit with CMD's status.  For shell-level tests
 * (tests/mcp-sdk.sh).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READY_MS	10000

int
main(int argc, char **argv)
{
	struct sockaddr_un	 sun;
	struct pollfd		 pfd;
	const char		*bin = getenv("CMDGATED");
	char			 dir[] = "/tmp/cmdgate-wb-XXXXXX", state[64];
	char			 msg[1024], *p, port[16] = "", rmcmd[128];
	char			*bargv[64];
	int			 fd, sep, i, n = 0, status, rc;
	pid_t			 broker, child;
	ssize_t			 len;

	for (sep = 1; sep < argc && strcmp(argv[sep], "--") != 0; sep++)
		;
	if (bin == NULL || sep + 1 >= argc || mkdtemp(dir) == NULL) {
		fprintf(stderr, "usage: CMDGATED=... with_broker [flags] -- "
		    "CMD [ARG ...]\n");
		return 64;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/notify", dir);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		return 71;
	snprintf(state, sizeof(state), "%s/state", dir);
	bargv[n++] = (char *)bin;
	bargv[n++] = "--listen";
	bargv[n++] = "127.0.0.1:0";
	bargv[n++] = "--state-dir";
	bargv[n++] = state;
	for (i = 1; i < sep && n < 62; i++)
		bargv[n++] = argv[i];
	bargv[n] = NULL;
	if ((broker = fork()) == 0) {
		setenv("NOTIFY_SOCKET", sun.sun_path, 1);
		execv(bin, bargv);
		_exit(127);
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (port[0] == '\0' && poll(&pfd, 1, READY_MS) == 1 &&
	    (len = recv(fd, msg, sizeof(msg) - 1, 0)) > 0) {
		msg[len] = '\0';
		if (strstr(msg, "READY=1") != NULL &&
		    (p = strstr(msg, "127.0.0.1:")) != NULL)
			snprintf(port, sizeof(port), "%d", atoi(p + 10));
	}
	rc = 70;
	if (port[0] != '\0') {
		if ((child = fork()) == 0) {
			setenv("CMDGATE_PORT", port, 1);
			setenv("CMDGATE_STATE_DIR", state, 1);
			execvp(argv[sep + 1], argv + sep + 1);
			_exit(127);
		}
		waitpid(child, &status, 0);
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 70;
	} else
		fprintf(stderr, "with_broker: cmdgated did not become ready\n");
	kill(broker, SIGTERM);
	waitpid(broker, &status, 0);
	snprintf(rmcmd, sizeof(rmcmd), "rm -rf '%s'", dir);
	if (system(rmcmd) != 0)
		fprintf(stderr, "with_broker: could not remove %s\n", dir);
	return rc;
}
