/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_TOOLS_H
#define CMDGATE_TOOLS_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "toolmeta.h"

/*
 * The tool table of cmdgate.tools(5).  Loading
 * never exits: errors come back as -1 with a message naming the file, the
 * tool and the field.
 */

enum tier {
	TIER_INSTANT,
	TIER_SMOOTH,
	TIER_HEAVY,
};

enum busy {
	BUSY_NONE,
	BUSY_TESTS_RUNNING,
	BUSY_COMPILING,
};

#define TOOL_NAME_MAX		64
#define TOOL_TIMEOUT_DEFAULT	600
#define TOOL_TIMEOUT_MAX	(7 * 86400)

/* {"param": P, "in": [...]} or {"param": P, "not_in": [...]} */
struct tool_cond {
	char		 *param;
	int		  not_in;
	char		**values;
	size_t		  nvalues;
};

struct tool_tier_rule {
	struct tool_cond	cond;
	enum tier		tier;
};

struct tool {
	char			 *name;
	char			 *description;
	enum tier		  tier;
	struct tool_tier_rule	 *rules;
	size_t			  nrules;
	int			  reload_always;
	struct tool_cond	 *reload;	/* any of these: reload */
	size_t			  nreload;
	json_object		 *reload_json;	/* as written; NULL = false */
	enum busy		  busy;
	char			**exec;		/* NULL-terminated, or NULL */
	size_t			  nexec;
	char			 *forward;	/* its upstream's "to", or NULL */
	json_object		 *forward_json;	/* object form; NULL: "HOST:PORT" */
	char			 *cwd;		/* absolute, or NULL */
	char			**allow_dash;	/* params that may start '-' */
	size_t			  nallow_dash;
	int			  enabled;
	uint64_t		  timeout_s;
	json_object		 *params;	/* schema, or NULL */
	struct toolmeta		  meta;		/* title, annotations, ... */
};

struct tooltab {
	struct tool	*tools;
	size_t		 ntools;
	char		*source;	/* file name or "(embedded)" */
	char		*canon;		/* canonical JSON, to detect change */
	json_object	*editor;	/* the editor probe as written, or NULL */
};

/* Load a table; 0 and *out (caller frees with tooltab_free), or -1. */
int			 tooltab_load_file(const char *path,
			    struct tooltab **out, char *err, size_t errlen);
int			 tooltab_load_string(const char *json,
			    const char *source, struct tooltab **out,
			    char *err, size_t errlen);
/* The embedded default table.  Caller frees. */
struct tooltab		*tooltab_default(void);
extern const char	 tooltab_default_json[];
void			 tooltab_free(struct tooltab *);
/* Borrowed until the table is freed. */
const struct tool	*tooltab_find(const struct tooltab *, const char *);
int			 tooltab_same(const struct tooltab *,
			    const struct tooltab *);

const char		*tier_name(enum tier);
/* "instant", "smooth" or "heavy" -> *t: 0, or -1 when s is none. */
int			 tier_parse(const char *s, enum tier *t);
const char		*busy_name(enum busy);

#endif
