/* SPDX-License-Identifier: ISC */
/* What the cmdgate mcp suites share: see mcputil.c. */
#ifndef CMDGATE_MCPUTIL_H
#define CMDGATE_MCPUTIL_H

#include <sys/types.h>

#include <json-c/json.h>

/* The client's initialize and notifications/initialized. */
#define INIT	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"," \
		"\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":" \
		"{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n" \
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"

/*
 * cmdgate ARGS mcp in the background (ARGS NULL-ended; NULL: --socket,
 * the broker's).  stdin, stdout and stderr piped unless *infd or
 * *outfd is already an fd (>= 0), which it gets instead.
 */
pid_t		 spawn_mcp(const char **args, int *infd, int *outfd,
		    int *errfd);
void		 send_line(int fd, const char *line);
/* How many times needle is in hay. */
int		 count_of(const char *hay, const char *needle);
/* The line of cli_out that holds want, parsed, or NULL; caller puts. */
json_object	*out_line(const char *want);
/* Wait for pid (its stderr errfd ends when it exits): its exit status. */
int		 reap(pid_t pid, int errfd);
/* The table: one reload tool, rebuild. */
void		 mcp_tools_reload(void);
/* editor-state --tests-running holding reloads until *wfd is closed. */
pid_t		 mcp_hold(int *hfd, int *wfd);
/* Wait, on the broker's status notifications, until ticket exists. */
void		 await_stored(const char *ticket);

#endif
