/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_OPTIONS_H
#define CMDGATE_OPTIONS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/*
 * The broker's configuration, as its command line set it: every layer
 * reads it.  The parser is the daemon's (src/daemon/options.c, one table
 * that feeds getopt_long, --help and the checks); cmdgated(8) documents
 * the same entries.
 */

#define OPT_DEFAULT_PORT	8700
#define OPT_MAX_LISTEN		16
#define OPT_MAX_ALLOW		16	/* --allow-user, and --allow-group */

enum sync_mode {
	SYNC_FULL,
	SYNC_GROUP,
	SYNC_NONE,
};

struct options {
	char		*listen[OPT_MAX_LISTEN];	/* "ADDR:PORT" */
	size_t		 nlisten;
	char		*socket_path;
	char		*state_dir;
	char		*instance;	/* --instance, its file's name */
	char		*tools_file;
	char		*token_file;
	int		 no_auth;
	uid_t		 allow_uid[OPT_MAX_ALLOW];	/* --allow-user */
	size_t		 nallow_uid;
	gid_t		 allow_gid[OPT_MAX_ALLOW];	/* --allow-group */
	size_t		 nallow_gid;
	int		 peer_auth;	/* allowed peers need no token */
	char		*http;		/* --http ADDR:PORT, or NULL */
	char		*http_origin[OPT_MAX_ALLOW];	/* more hosts */
	size_t		 nhttp_origin;
	uint64_t	 http_poll;	/* seconds; 0: never */
	uint64_t	 max_message;
	uint64_t	 max_batch;
	uint64_t	 max_workers;
	uint64_t	 max_queued;
	uint64_t	 max_clients;
	uint64_t	 max_rpc_batch;		/* requests in one JSON-RPC batch */
	uint64_t	 max_waits;		/* answers outstanding per client */
	uint64_t	 max_waits_total;	/* and for all clients */
	uint64_t	 max_partial;		/* bytes of unread input, in all */
	uint64_t	 auth_timeout;		/* seconds to authenticate */
	uint64_t	 idle_timeout;		/* seconds without a request; 0 */
	uint64_t	 result_ttl;
	uint64_t	 kill_grace;
	uint64_t	 editor_grace;	/* after a restart, for editor flags */
	uint64_t	 output_cap;
	uint64_t	 call_timeout;
	uint64_t	 uloop_hold;	/* seconds, before "held"; 0: never */
	uint64_t	 unity_hold;	/* seconds before a "held" answer */
	char		*unity_status_dir;	/* the face's status file */
	char		*unity_bridge_status;	/* the editor's status file */
	char		*unity_project;		/* the Unity project dir */
	char		*unity_hub_server;	/* HOST:PORT, once checked */
	enum sync_mode	 sync;
	uint64_t	 map_size;
	uint64_t	 map_size_max;
	int		 reset_store;
	int		 log_level;
	int		 check_config;
};

#endif
