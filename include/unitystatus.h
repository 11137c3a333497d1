/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_UNITYSTATUS_H
#define CMDGATE_UNITYSTATUS_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * The unity-mcp face's status file (cmdgated(8), --unity-status-dir):
 * DIR/unity-mcp-status-<hash>.json with the fields of the status
 * ("heartbeat") file MCP for Unity's editor bridge writes, rewritten every
 * UNITYSTATUS_EVERY_MS, so that an unmodified mcp-for-unity server started
 * with UNITY_MCP_STATUS_DIR=DIR finds the face as it finds an editor.
 *
 * Which project it names, first found wins, looked at again at each
 * write until one is found: the bridge's own status file
 * (--unity-bridge-status FILE; else the file in ~/.unity-mcp whose
 * unity_port is the bridge's port in the tool table), whose name and
 * project fields are kept; else --unity-project DIR (the hash is the first
 * 8 hex digits of the SHA-1 of DIR/Assets, as the bridge computes it).
 */

#define UNITYSTATUS_EVERY_MS	500
#define UNITYSTATUS_EDITOR_DIR	".unity-mcp"	/* under $HOME */

struct event_base;
struct options;
struct unitystatus;

/*
 * What the file says of the project: name is its file name; fields are
 * project_path, project_name, unity_version and project_scoped_tools.
 */
struct unitystatus_id {
	char		 name[128];
	json_object	*fields;
};

/*
 * Open --unity-status-dir, made (mode 0700) if it is missing, and check
 * it: a directory, not a symlink, owned by the broker's user and closed
 * to group and others' writes (the state dir's rules), not the editor's
 * own.  Its descriptor, or -1 with err.
 */
int		 unitystatus_open_dir(const struct options *, char *err,
		    size_t errlen);
/*
 * Write the file for the face on port in the directory dirfd (from
 * unitystatus_open_dir(), taken) every UNITYSTATUS_EVERY_MS; the bridge's
 * port (0: unknown) finds its status file.  Caller frees.
 */
struct unitystatus *unitystatus_new(struct event_base *,
		    const struct options *, int dirfd, int port,
		    int bridge_port);
/* Stop writing and remove the file. */
void		 unitystatus_free(struct unitystatus *);
/* The editor behind reloads (1) or not: written at once. */
void		 unitystatus_set_reloading(struct unitystatus *, int);
/* Write the file now: 0, 1 when no project is known yet, or -1. */
int		 unitystatus_write(struct unitystatus *);
/* The project, as found now: 0, or -1 when none.  id->fields: caller puts. */
int		 unitystatus_identify(const struct options *, int bridge_port,
		    struct unitystatus_id *id);

#endif
