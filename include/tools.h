/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_TOOLS_H
#define CMDGATE_TOOLS_H

/*
 * The tool table (src/tools/).
 */

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* schema.c */

/*
 * The subset of JSON Schema that tool tables use for parameters:
 * type (one name or a list), properties, required, default, enum, items,
 * additionalProperties (boolean), the annotations description and title,
 * and at the top only $schema (the 2020-12 or draft-07 meta-schema) and
 * $defs, which $ref ("#/$defs/NAME", nothing else) names anywhere.  Any
 * other keyword is refused when the table is loaded, so that a typo
 * cannot silently disable a check; so is a $ref to no definition, and
 * definitions whose references go round with no property or item
 * between.  See cmdgate.tools(5).
 */

/* Schemas entered (properties, items, references) before a value is refused. */
#define SCHEMA_MAX_DEPTH	256

/* Check that schema uses only the subset; 0, or -1 with err naming where. */
int	schema_check(json_object *schema, char *err, size_t errlen);

/* Validate value against schema; 0, or -1 with err naming the member. */
int	schema_validate(json_object *schema, json_object *value,
	    char *err, size_t errlen);

/*
 * The same for a tool's output_schema, whose top must say "type":
 * "object", and its output: err names "output_schema..." or "output...".
 */
int	schema_check_output(json_object *schema, char *err, size_t errlen);
int	schema_validate_output(json_object *schema, json_object *value,
	    char *err, size_t errlen);

/* toolmeta.c */

/*
 * What a tool of cmdgate.tools(5) tells MCP clients about itself: title,
 * annotations and output_schema.
 */

#define TOOL_TITLE_MAX	128	/* bytes */

struct toolmeta {
	char		*title;		/* or NULL */
	json_object	*annotations;	/* MCP's, as written, or NULL */
	json_object	*output_schema;	/* or NULL */
	int		 content_mcp;	/* "content": "mcp": its standard
					   output is an MCP tool result */
	char		*image_at;	/* "image": where its result holds a
					   picture (a JSON pointer), or NULL */
	char		*image_mime;	/* and of which type */
	enum tool_task {
		TOOL_TASK_OPTIONAL,	/* "task": a task when it waits */
		TOOL_TASK_REQUIRED,	/* only as a task */
		TOOL_TASK_FORBIDDEN,	/* never a task */
	}		 task;
};

/* "optional", "required" or "forbidden": MCP's taskSupport of t. */
const char	*toolmeta_task_name(enum tool_task t);
/*
 * Read the tool object o's title, annotations, output_schema, content,
 * image and task into m;
 * 0, or -1 with *field the field at fault and err the reason.  What was
 * read is freed by toolmeta_free() either way.
 */
int	toolmeta_parse(json_object *o, struct toolmeta *m,
	    const char **field, char *err, size_t errlen);
void	toolmeta_free(struct toolmeta *m);

/* tools.c */

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

/* toolcmd.c */

/*
 * One command against its tool (cmdgate.tools(5)): the tier and reload
 * its params call for, the argv its templates expand to, and the tool as
 * get_tool_details and MCP's tools/list show it.
 */

/*
 * Classification of one command.  params is the command's params member,
 * NULL when it is absent or null (then no condition holds).
 */
enum tier		 tool_command_tier(const struct tool *, json_object *);
int			 tool_command_reload(const struct tool *,
			    json_object *);

/*
 * Expand the tool's exec templates with a command's params (NULL: absent):
 * 0 and *argv (a JSON array of strings; caller puts), or -1 with err
 * naming the parameter that has neither a value nor a default.
 */
int			 tool_expand_argv(const struct tool *, json_object *,
			    json_object **argv, char *err, size_t errlen);

/*
 * The forward member of a command's record (cmdgate.tools(5)): the
 * shorthand as a string, or the object form filled in (dialect, method
 * and connect_timeout_s defaulted, params expanded over the command's
 * params with the schema's defaults).  0 and *fwd (caller puts), or -1
 * with err naming the template's path that has no value.
 */
int			 tool_forward_command(const struct tool *,
			    json_object *params, json_object **fwd,
			    char *err, size_t errlen);

/* get_tool_details shape; caller puts. */
json_object		*tool_details(const struct tool *);
/* The tool's parameter schema, {"type":"object"} when none; caller puts. */
json_object		*tool_input_schema(const struct tool *);

/* toolfwd.c */

/*
 * The upstream members of cmdgate.tools(5): a tool's "forward" in its
 * object form and the table's "editor" probe.  Checked here, strictly;
 * the worker acts on them.  Library-like: nothing here exits or logs.
 */

#define FWD_CONNECT_TIMEOUT_DEFAULT	30	/* seconds */
#define FWD_CONNECT_TIMEOUT_MAX		3600
#define FWD_EVERY_MS_DEFAULT		1000
#define FWD_EVERY_MS_MIN		50
#define FWD_EVERY_MS_MAX		60000

/* Where a check failed: the member ("forward.await.until") and why. */
struct fwd_error {
	char	field[96];
	char	msg[448];
};

/*
 * Check the object form of forward, o, for a tool whose params schema is
 * schema (NULL: none): 0, or -1 with e filled.
 */
int	toolfwd_check(json_object *o, json_object *schema,
	    struct fwd_error *e);
/* Check the table's "editor" probe object: 0, or -1 with e filled. */
int	toolfwd_check_editor(json_object *o, struct fwd_error *e);

/*
 * Split a forward address, HOST:PORT or [IPV6]:PORT, into host (without
 * brackets) and port: 0, or -1 when it is neither.
 */
int	tool_forward_split(const char *, char *host, size_t hostlen,
	    char *port, size_t portlen);

#endif
