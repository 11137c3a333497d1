/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_MFU_H
#define CMDGATE_MFU_H

#include <limits.h>

#include <json-c/json.h>

/*
 * MCP for Unity's Python server (mcpforunityserver, v10.1.0), as much of
 * it as a bridge sees, written here from /work/shared/BRIDGES.md and the
 * facts of its Server/src/transport/legacy/port_discovery.py and
 * unity_connection.py (none of its code is copied):
 * - it finds bridges only through unity-mcp-status-*.json files in
 *   $UNITY_MCP_STATUS_DIR, newest first, and probes each listed port:
 *   connect, the WELCOME line with FRAMING=1 within 0.3 s, a framed
 *   "ping" whose answer holds "message":"pong" within 0.3 s;
 * - its own connection requires FRAMING=1 within 1 s;
 * - it sends a command {"type", "params"} and waits for one framed answer;
 *   an outer {"status":"error"} or no answer within its timeout closes the
 *   connection and sends the command again on a new one, 6 tries in all;
 * - zero-length frames from the bridge are heartbeats, skipped.
 */

#define MFU_TRIES		6	/* max(max_retries 5, 5) + 1 */
#define MFU_PROBE_MS		300	/* CONNECT_TIMEOUT */
#define MFU_HANDSHAKE_MS	1000	/* handshake_timeout */

struct mfu {
	char	 dir[PATH_MAX];		/* UNITY_MCP_STATUS_DIR */
	char	 status[PATH_MAX];	/* the status file it chose */
	int	 port;			/* its unity_port */
	int	 fd;			/* the connection, or -1 */
	int	 timeout_ms;		/* per try (30 s in the real one) */
	int	 tries;			/* tries of the last command */
	int	 probes;		/* probe connections made */
};

/* A server for the bridges in dir, each try timing out after ms. */
void		 mfu_init(struct mfu *, const char *dir, int timeout_ms);
/* Find a bridge (newest status file whose port answers the probe):
 * 0, or -1 when none does. */
int		 mfu_discover(struct mfu *);
/* The probe alone: 1 when port is a bridge. */
int		 mfu_probe(struct mfu *, int port);
/* Whether the status file it found says reloading. */
int		 mfu_reloading(struct mfu *);
/*
 * Send type with params (JSON text) as the server does, tries and all:
 * the last answer (caller puts), or NULL when no try got one.
 */
json_object	*mfu_send(struct mfu *, const char *type, const char *params);
/* Close its connection. */
void		 mfu_close(struct mfu *);

#endif
