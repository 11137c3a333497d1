/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FACE_H
#define CMDGATE_FACE_H

#include <stddef.h>

/*
 * The faces a listener speaks (cmdgated(8), --listen FACE@ADDR:PORT):
 * cmdgate's own JSON-RPC and MCP, uLoopMCP's editor side, MCP for
 * Unity's editor bridge, or MCP for Unity's server to its plugin (the
 * hub of its HTTP mode).
 */
enum face {
	FACE_CMDGATE,
	FACE_ULOOP,
	FACE_UNITY,
	FACE_HUB,
	FACE_COUNT
};

/*
 * Split "FACE@ADDR:PORT" or "ADDR:PORT": *face and *addr (pointing into
 * spec); 0, or -1 when FACE is none of "uloop", "unity-mcp" and
 * "unity-hub".
 */
int		 face_parse(const char *spec, enum face *face,
		    const char **addr);
/* "cmdgate", "uloop" or "unity-mcp".  Static. */
const char	*face_name(enum face);

#endif
