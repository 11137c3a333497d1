/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_RUNFILE_H
#define CMDGATE_RUNFILE_H

#include <json-c/json.h>

#define RUNFILE_NAME_MAX	64

/*
 * The state dir when --state-dir is not given: $CMDGATE_STATE_DIR, else
 * systemd's $STATE_DIRECTORY, else /var/lib/cmdgate for root, else
 * $XDG_STATE_HOME/cmdgate or ~/.local/state/cmdgate.  cmdgate(1) looks
 * for the broker's token there.  Caller frees.
 */
char	*runfile_state_dir(void);
/* 1 when name is 1 to 64 of [A-Za-z0-9._-] and not "." or "..". */
int	 runfile_name_ok(const char *name);
/*
 * The directory of the instance files: $CMDGATE_RUNTIME_DIR, else
 * /run/cmdgate for root, else
 * $XDG_RUNTIME_DIR/cmdgate, else STATE_DIR/run (state_dir NULL: the
 * default one).  Caller frees.
 */
char	*runfile_dir(const char *state_dir);
/* DIR/NAME.json.  Caller frees. */
char	*runfile_path(const char *state_dir, const char *name);
/* Write o to path atomically (a temp file renamed): 0, or -1 and errno. */
int	 runfile_write(const char *path, json_object *o);
/* The instance file at path, or NULL (errno set).  Caller puts. */
json_object	*runfile_read(const char *path);

#endif
