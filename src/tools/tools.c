/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tools.h"
#include "util.h"

#define TABLE_FILE_MAX	(16 * 1024 * 1024)

/* Where an error is: the file, then the tool being read. */
struct tctx {
	const char	*source;
	char		 tool[TOOL_NAME_MAX + 16];
	char		*err;
	size_t		 errlen;
};

static const char *tier_names[] = { "instant", "smooth", "heavy" };
static const char *busy_names[] = { NULL, "tests_running", "compiling" };

static const char *tool_keys[] = {
	"name", "description", "tier", "tier_rules", "reload", "busy", "exec",
	"forward", "enabled", "timeout_s", "params", "cwd", "allow_dash",
	"title", "annotations", "output_schema", "content", "image", "task",
	NULL,
};

/* MCP's tools/list offers these job methods as tools too. */
static const char *reserved_names[] = {
	"poll_job", "wait_job", "cancel_job", "queue_status", NULL,
};

static int	tctx_fail(struct tctx *, const char *, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
static int	tool_parse(struct tctx *, json_object *, struct tool *);
static int	tool_parse_cond(struct tctx *, const char *, json_object *,
		    struct tool_cond *);
static int	tool_parse_rules(struct tctx *, json_object *, struct tool *);
static int	tool_parse_reload(struct tctx *, json_object *, struct tool *);
static int	tool_parse_exec(struct tctx *, json_object *, struct tool *);
static int	tool_parse_forward(struct tctx *, json_object *, struct tool *);
static int	tool_parse_cwd(struct tctx *, json_object *, struct tool *);
static int	tool_parse_dash(struct tctx *, json_object *, struct tool *);
static int	tool_parse_params(struct tctx *, json_object *, struct tool *);
static void	tool_free(struct tool *);
static void	cond_free(struct tool_cond *);

const char *
tier_name(enum tier t)
{
	return tier_names[t];
}

const char *
busy_name(enum busy b)
{
	return busy_names[b];
}

static int
tctx_fail(struct tctx *c, const char *field, const char *fmt, ...)
{
	char	msg[512];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (field != NULL)
		snprintf(c->err, c->errlen, "%s: %s: field '%s': %s",
		    c->source, c->tool, field, msg);
	else
		snprintf(c->err, c->errlen, "%s: %s: %s", c->source, c->tool,
		    msg);
	return -1;
}

static int
tool_name_ok(const char *s)
{
	size_t	n = strlen(s), i;

	if (n == 0 || n > TOOL_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return 0;
	return 1;
}

int
tier_parse(const char *s, enum tier *t)
{
	size_t	i;

	for (i = 0; i < 3; i++)
		if (strcmp(s, tier_names[i]) == 0) {
			*t = (enum tier)i;
			return 0;
		}
	return -1;
}

static int
tool_parse_cond(struct tctx *c, const char *field, json_object *o,
    struct tool_cond *cond)
{
	json_object	*p, *list;
	int		 has_in, has_not;
	size_t		 i, n;

	memset(cond, 0, sizeof(*cond));
	if (!json_object_is_type(o, json_type_object))
		return tctx_fail(c, field, "a condition must be an object "
		    "{\"param\": P, \"in\" or \"not_in\": [...]}");
	has_in = json_object_object_get_ex(o, "in", NULL);
	has_not = json_object_object_get_ex(o, "not_in", NULL);
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (strcmp(key, "param") != 0 && strcmp(key, "in") != 0 &&
		    strcmp(key, "not_in") != 0 && strcmp(key, "tier") != 0)
			return tctx_fail(c, field, "unknown member '%s' in "
			    "a condition", key);
	}
	if (!json_object_object_get_ex(o, "param", &p) ||
	    !json_object_is_type(p, json_type_string) ||
	    json_object_get_string_len(p) == 0)
		return tctx_fail(c, field, "a condition needs \"param\": "
		    "a parameter name");
	if (has_in == has_not)
		return tctx_fail(c, field, "a condition needs exactly one of "
		    "\"in\" and \"not_in\"");
	json_object_object_get_ex(o, has_in ? "in" : "not_in", &list);
	if (!json_object_is_type(list, json_type_array))
		return tctx_fail(c, field, "\"%s\" must be a list of strings",
		    has_in ? "in" : "not_in");
	n = json_object_array_length(list);
	cond->param = xstrdup(json_object_get_string(p));
	cond->not_in = has_not;
	cond->values = xcalloc(n, sizeof(char *));
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(list, i);

		if (!json_object_is_type(e, json_type_string))
			return tctx_fail(c, field, "\"%s\" must be a list of "
			    "strings", has_in ? "in" : "not_in");
		cond->values[cond->nvalues++] =
		    xstrdup(json_object_get_string(e));
	}
	return 0;
}

static int
tool_parse_rules(struct tctx *c, json_object *o, struct tool *t)
{
	json_object	*tier;
	size_t		 i, n;

	if (!json_object_is_type(o, json_type_array))
		return tctx_fail(c, "tier_rules", "must be a list of "
		    "conditions with a \"tier\"");
	n = json_object_array_length(o);
	t->rules = xcalloc(n, sizeof(*t->rules));
	for (i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(o, i);

		if (tool_parse_cond(c, "tier_rules", r,
		    &t->rules[i].cond) == -1) {
			t->nrules = i + 1;
			return -1;
		}
		t->nrules = i + 1;
		if (!json_object_object_get_ex(r, "tier", &tier) ||
		    !json_object_is_type(tier, json_type_string) ||
		    tier_parse(json_object_get_string(tier),
		    &t->rules[i].tier) == -1)
			return tctx_fail(c, "tier_rules", "rule %zu needs "
			    "\"tier\": instant, smooth or heavy", i);
	}
	return 0;
}

static int
tool_parse_reload(struct tctx *c, json_object *o, struct tool *t)
{
	size_t	i, n;

	if (json_object_is_type(o, json_type_boolean)) {
		t->reload_always = json_object_get_boolean(o);
		if (t->reload_always)
			t->reload_json = json_object_get(o);
		return 0;
	}
	if (json_object_is_type(o, json_type_object)) {
		if (json_object_object_get_ex(o, "tier", NULL))
			return tctx_fail(c, "reload", "a reload condition "
			    "has no \"tier\"");
		t->reload = xcalloc(1, sizeof(*t->reload));
		t->nreload = 1;
		if (tool_parse_cond(c, "reload", o, t->reload) == -1)
			return -1;
		t->reload_json = json_object_get(o);
		return 0;
	}
	if (!json_object_is_type(o, json_type_array))
		return tctx_fail(c, "reload", "must be true, false, a "
		    "condition or a list of conditions");
	n = json_object_array_length(o);
	t->reload = xcalloc(n, sizeof(*t->reload));
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i);

		t->nreload = i + 1;
		if (json_object_is_type(e, json_type_object) &&
		    json_object_object_get_ex(e, "tier", NULL))
			return tctx_fail(c, "reload", "a reload condition "
			    "has no \"tier\"");
		if (tool_parse_cond(c, "reload", e, &t->reload[i]) == -1)
			return -1;
	}
	if (n > 0)
		t->reload_json = json_object_get(o);
	return 0;
}

static int
tool_parse_exec(struct tctx *c, json_object *o, struct tool *t)
{
	size_t	i, n;

	if (!json_object_is_type(o, json_type_array) ||
	    (n = json_object_array_length(o)) == 0)
		return tctx_fail(c, "exec", "must be a non-empty list of "
		    "strings (argv; no shell is involved)");
	t->exec = xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i);

		if (!json_object_is_type(e, json_type_string))
			return tctx_fail(c, "exec", "element %zu is not a "
			    "string", i);
		t->exec[i] = xstrdup(json_object_get_string(e));
		t->nexec = i + 1;
	}
	if (t->exec[0][0] == '\0')
		return tctx_fail(c, "exec", "the program name is empty");
	return 0;
}

static int
tool_parse_forward(struct tctx *c, json_object *o, struct tool *t)
{
	struct fwd_error	 e;
	const char		*s;
	char			 host[256], port[8];

	if (json_object_is_type(o, json_type_object)) {
		if (toolfwd_check(o, t->params, &e) == -1)
			return tctx_fail(c, e.field, "%s", e.msg);
		t->forward = xstrdup(json_object_get_string(
		    json_object_object_get(o, "to")));
		t->forward_json = json_object_get(o);
		return 0;
	}
	if (!json_object_is_type(o, json_type_string))
		return tctx_fail(c, "forward", "must be \"HOST:PORT\" or an "
		    "object {\"to\", \"dialect\", ...}");
	s = json_object_get_string(o);
	if (tool_forward_split(s, host, sizeof(host), port,
	    sizeof(port)) == -1)
		return tctx_fail(c, "forward", "'%s' is not HOST:PORT or "
		    "[IPV6]:PORT with a port from 1 to 65535 (an IPv6 "
		    "address goes in brackets)", s);
	t->forward = xstrdup(s);
	return 0;
}

static int
tool_parse_cwd(struct tctx *c, json_object *o, struct tool *t)
{
	struct stat	 st;
	const char	*s;

	if (!json_object_is_type(o, json_type_string) ||
	    (s = json_object_get_string(o))[0] != '/')
		return tctx_fail(c, "cwd", "must be an absolute path");
	if (stat(s, &st) == -1)
		return tctx_fail(c, "cwd", "%s: %s", s, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return tctx_fail(c, "cwd", "%s: not a directory", s);
	t->cwd = xstrdup(s);
	return 0;
}

/* Whether exec element s has the template {name}. */
static int
tool_template_uses(const char *s, const char *name)
{
	size_t		 n = strlen(name);
	const char	*p;

	for (p = s; (p = strchr(p, '{')) != NULL; p++)
		if (strncmp(p + 1, name, n) == 0 && p[n + 1] == '}' &&
		    (p == s || p[-1] != '{'))
			return 1;
	return 0;
}

/* allow_dash: the parameters whose values may start with '-'. */
static int
tool_parse_dash(struct tctx *c, json_object *o, struct tool *t)
{
	size_t	i, j, n;

	if (!json_object_is_type(o, json_type_array))
		return tctx_fail(c, "allow_dash", "must be a list of "
		    "parameter names");
	n = json_object_array_length(o);
	t->allow_dash = xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i);

		if (!json_object_is_type(e, json_type_string))
			return tctx_fail(c, "allow_dash", "element %zu is not "
			    "a string", i);
		t->allow_dash[i] = xstrdup(json_object_get_string(e));
		t->nallow_dash = i + 1;
		for (j = 0; j < t->nexec; j++)
			if (tool_template_uses(t->exec[j], t->allow_dash[i]))
				break;
		if (j == t->nexec)
			return tctx_fail(c, "allow_dash", "no exec element "
			    "uses {%s}", t->allow_dash[i]);
	}
	return 0;
}

/*
 * The schema as MCP publishes it: without a "type" it is given
 * "type": "object" (schema_check refuses any other type at the top).
 */
static int
tool_parse_params(struct tctx *c, json_object *v, struct tool *t)
{
	char	serr[384];

	if (schema_check(v, serr, sizeof(serr)) == -1)
		return tctx_fail(c, "params", "%s", serr);
	if (!json_object_object_get_ex(v, "type", NULL))
		json_object_object_add(v, "type",
		    json_object_new_string("object"));
	t->params = json_object_get(v);
	return 0;
}

static int
tool_parse_known(struct tctx *c, json_object *o)
{
	size_t	i;

	json_object_object_foreach(o, key, val) {
		(void)val;
		for (i = 0; tool_keys[i] != NULL; i++)
			if (strcmp(key, tool_keys[i]) == 0)
				break;
		if (tool_keys[i] == NULL)
			return tctx_fail(c, key, "unknown field");
	}
	return 0;
}

static int
tool_parse(struct tctx *c, json_object *o, struct tool *t)
{
	json_object	*v;
	const char	*field;
	char		 msg[384];
	uint64_t	 n;
	size_t		 i;

	t->tier = TIER_SMOOTH;
	t->enabled = 1;
	t->timeout_s = TOOL_TIMEOUT_DEFAULT;
	if (!json_object_is_type(o, json_type_object))
		return tctx_fail(c, NULL, "a tool must be an object");
	if (!json_object_object_get_ex(o, "name", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    !tool_name_ok(json_object_get_string(v)))
		return tctx_fail(c, "name", "needs 1-%d letters, digits, "
		    "'_', '-' or '.'", TOOL_NAME_MAX);
	t->name = xstrdup(json_object_get_string(v));
	snprintf(c->tool, sizeof(c->tool), "tool '%s'", t->name);
	for (i = 0; reserved_names[i] != NULL; i++)
		if (strcmp(t->name, reserved_names[i]) == 0)
			return tctx_fail(c, "name", "'%s' is the name of a "
			    "job method", t->name);
	if (tool_parse_known(c, o) == -1)
		return -1;
	if (json_object_object_get_ex(o, "description", &v)) {
		if (!json_object_is_type(v, json_type_string))
			return tctx_fail(c, "description", "must be a string");
		t->description = xstrdup(json_object_get_string(v));
	} else
		t->description = xstrdup("");
	if (toolmeta_parse(o, &t->meta, &field, msg, sizeof(msg)) == -1)
		return tctx_fail(c, field, "%s", msg);
	if (json_object_object_get_ex(o, "tier", &v) &&
	    (!json_object_is_type(v, json_type_string) ||
	    tier_parse(json_object_get_string(v), &t->tier) == -1))
		return tctx_fail(c, "tier", "must be instant, smooth or "
		    "heavy");
	if (json_object_object_get_ex(o, "tier_rules", &v) &&
	    tool_parse_rules(c, v, t) == -1)
		return -1;
	if (json_object_object_get_ex(o, "reload", &v) &&
	    tool_parse_reload(c, v, t) == -1)
		return -1;
	if (json_object_object_get_ex(o, "busy", &v)) {
		const char *b = json_object_get_string(v);

		if (!json_object_is_type(v, json_type_string) ||
		    (strcmp(b, "tests_running") != 0 &&
		    strcmp(b, "compiling") != 0))
			return tctx_fail(c, "busy", "must be tests_running "
			    "or compiling");
		t->busy = b[0] == 't' ? BUSY_TESTS_RUNNING : BUSY_COMPILING;
	}
	/* First: forward's templates are checked against it. */
	if (json_object_object_get_ex(o, "params", &v) &&
	    tool_parse_params(c, v, t) == -1)
		return -1;
	if (json_object_object_get_ex(o, "exec", &v) &&
	    tool_parse_exec(c, v, t) == -1)
		return -1;
	if (json_object_object_get_ex(o, "forward", &v) &&
	    tool_parse_forward(c, v, t) == -1)
		return -1;
	if ((t->exec == NULL) == (t->forward == NULL))
		return tctx_fail(c, NULL, "needs exactly one of \"exec\" "
		    "and \"forward\"");
	if (json_object_object_get_ex(o, "enabled", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return tctx_fail(c, "enabled", "must be true or "
			    "false");
		t->enabled = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(o, "timeout_s", &v)) {
		n = (uint64_t)json_object_get_int64(v);
		if (!json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 1 || n > TOOL_TIMEOUT_MAX)
			return tctx_fail(c, "timeout_s", "must be a whole "
			    "number of seconds from 1 to %d",
			    TOOL_TIMEOUT_MAX);
		t->timeout_s = n;
	}
	if (json_object_object_get_ex(o, "cwd", &v) &&
	    tool_parse_cwd(c, v, t) == -1)
		return -1;
	if (json_object_object_get_ex(o, "allow_dash", &v)) {
		if (t->exec == NULL)
			return tctx_fail(c, "allow_dash", "only exec tools "
			    "have arguments");
		if (tool_parse_dash(c, v, t) == -1)
			return -1;
	}
	if (t->cwd != NULL && t->exec == NULL)
		return tctx_fail(c, "cwd", "only exec tools run in a "
		    "directory");
	return 0;
}

/* The top of a table: {"tools": [...], "editor"?: {...}}; *list set. */
static int
tooltab_root(struct tctx *c, json_object *root, json_object **list)
{
	struct fwd_error	e;
	json_object		*v;

	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "tools", list) ||
	    !json_object_is_type(*list, json_type_array))
		return tctx_fail(c, NULL, "must be {\"tools\": [...]} (and "
		    "an optional \"editor\" probe)");
	json_object_object_foreach(root, key, val) {
		(void)val;
		if (strcmp(key, "tools") != 0 && strcmp(key, "editor") != 0)
			return tctx_fail(c, key, "unknown field");
	}
	if (json_object_object_get_ex(root, "editor", &v) &&
	    toolfwd_check_editor(v, &e) == -1)
		return tctx_fail(c, e.field, "%s", e.msg);
	return 0;
}

int
tooltab_load_string(const char *json, const char *source,
    struct tooltab **out, char *err, size_t errlen)
{
	struct tctx		 c = { source, "table", err, errlen };
	struct json_tokener	*tok;
	struct tooltab		*tab;
	json_object		*root, *list;
	size_t			 i, j, n;
	enum json_tokener_error	 jerr;

	tok = json_tokener_new();
	if (tok == NULL)
		return tctx_fail(&c, NULL, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, json, (int)strlen(json) + 1);
	jerr = json_tokener_get_error(tok);
	if (root == NULL || jerr != json_tokener_success) {
		snprintf(err, errlen, "%s: not valid JSON near byte %zu: %s",
		    source, json_tokener_get_parse_end(tok),
		    jerr == json_tokener_continue ? "unexpected end" :
		    json_tokener_error_desc(jerr));
		json_object_put(root);
		json_tokener_free(tok);
		return -1;
	}
	json_tokener_free(tok);
	if (tooltab_root(&c, root, &list) == -1) {
		json_object_put(root);
		return -1;
	}
	n = json_object_array_length(list);
	tab = xcalloc(1, sizeof(*tab));
	tab->source = xstrdup(source);
	if (json_object_object_get_ex(root, "editor", &tab->editor))
		json_object_get(tab->editor);
	tab->tools = xcalloc(n, sizeof(*tab->tools));
	for (i = 0; i < n; i++) {
		snprintf(c.tool, sizeof(c.tool), "tool #%zu", i);
		tab->ntools = i + 1;
		if (tool_parse(&c, json_object_array_get_idx(list, i),
		    &tab->tools[i]) == -1)
			goto fail;
		for (j = 0; j < i; j++)
			if (strcmp(tab->tools[j].name,
			    tab->tools[i].name) == 0) {
				tctx_fail(&c, "name", "a tool of this name "
				    "comes earlier in the table");
				goto fail;
			}
	}
	tab->canon = xstrdup(json_object_to_json_string_ext(root,
	    JSON_C_TO_STRING_PLAIN));
	json_object_put(root);
	*out = tab;
	return 0;
fail:
	json_object_put(root);
	tooltab_free(tab);
	return -1;
}

int
tooltab_load_file(const char *path, struct tooltab **out, char *err,
    size_t errlen)
{
	FILE	*f;
	char	*buf;
	size_t	 n;
	int	 rc;

	if ((f = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
		    strerror(errno));
		return -1;
	}
	buf = xmalloc(TABLE_FILE_MAX + 1);
	n = fread(buf, 1, TABLE_FILE_MAX + 1, f);
	if (ferror(f) || n > TABLE_FILE_MAX) {
		snprintf(err, errlen, "%s: %s", path, ferror(f) ?
		    "read error" : "larger than 16 MiB");
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	buf[n] = '\0';
	if (memchr(buf, '\0', n) != NULL) {
		snprintf(err, errlen, "%s: contains a NUL byte", path);
		free(buf);
		return -1;
	}
	rc = tooltab_load_string(buf, path, out, err, errlen);
	free(buf);
	return rc;
}

struct tooltab *
tooltab_default(void)
{
	struct tooltab	*tab;
	char		 err[512];

	if (tooltab_load_string(tooltab_default_json, "(embedded)", &tab,
	    err, sizeof(err)) == -1)
		abort();	/* a bug: the embedded table is tested */
	return tab;
}

static void
cond_free(struct tool_cond *c)
{
	size_t	i;

	for (i = 0; i < c->nvalues; i++)
		free(c->values[i]);
	free(c->values);
	free(c->param);
}

static void
tool_free(struct tool *t)
{
	size_t	i;

	free(t->name);
	free(t->description);
	for (i = 0; i < t->nrules; i++)
		cond_free(&t->rules[i].cond);
	free(t->rules);
	for (i = 0; i < t->nreload; i++)
		cond_free(&t->reload[i]);
	free(t->reload);
	json_object_put(t->reload_json);
	for (i = 0; i < t->nexec; i++)
		free(t->exec[i]);
	free(t->exec);
	free(t->forward);
	json_object_put(t->forward_json);
	free(t->cwd);
	for (i = 0; i < t->nallow_dash; i++)
		free(t->allow_dash[i]);
	free(t->allow_dash);
	json_object_put(t->params);
	toolmeta_free(&t->meta);
}

void
tooltab_free(struct tooltab *tab)
{
	size_t	i;

	if (tab == NULL)
		return;
	for (i = 0; i < tab->ntools; i++)
		tool_free(&tab->tools[i]);
	free(tab->tools);
	free(tab->source);
	free(tab->canon);
	json_object_put(tab->editor);
	free(tab);
}

const struct tool *
tooltab_find(const struct tooltab *tab, const char *name)
{
	size_t	i;

	for (i = 0; i < tab->ntools; i++)
		if (strcmp(tab->tools[i].name, name) == 0)
			return &tab->tools[i];
	return NULL;
}

int
tooltab_same(const struct tooltab *a, const struct tooltab *b)
{
	return strcmp(a->canon, b->canon) == 0;
}
