/* SPDX-License-Identifier: ISC */
/*
 * One command against its tool: the tier and reload its params call for,
 * the argv its templates expand to, and the tool as get_tool_details and
 * MCP's tools/list show it.  The table itself is tools.c's.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jtemplate.h"
#include "tools.h"
#include "util.h"

static int	cond_holds(const struct tool *, const struct tool_cond *,
		    json_object *);
static int	param_value(const struct tool *, json_object *, const char *,
		    json_object **);

/*
 * A condition looks at the string value of parameter P as the tool will
 * see it: the command's value, else the schema's default (absent params
 * count as {}).  A string as it is, any other value in its compact JSON
 * form; a parameter with neither is in no list.
 */
static int
cond_holds(const struct tool *t, const struct tool_cond *c,
    json_object *params)
{
	json_object	*v;
	const char	*s;
	size_t		 i;

	if (!param_value(t, params, c->param, &v))
		return c->not_in;
	s = json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) :
	    json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
	for (i = 0; i < c->nvalues; i++)
		if (strcmp(s, c->values[i]) == 0)
			return !c->not_in;
	return c->not_in;
}

enum tier
tool_command_tier(const struct tool *t, json_object *params)
{
	size_t	i;

	for (i = 0; i < t->nrules; i++)
		if (cond_holds(t, &t->rules[i].cond, params))
			return t->rules[i].tier;
	return t->tier;
}

int
tool_command_reload(const struct tool *t, json_object *params)
{
	size_t	i;

	if (t->reload_always)
		return 1;
	for (i = 0; i < t->nreload; i++)
		if (cond_holds(t, &t->reload[i], params))
			return 1;
	return 0;
}

json_object *
tool_input_schema(const struct tool *t)
{
	json_object	*s;

	if (t->params != NULL)
		return json_object_get(t->params);
	s = json_object_new_object();
	json_object_object_add(s, "type", json_object_new_string("object"));
	return s;
}

json_object *
tool_details(const struct tool *t)
{
	json_object	*d = json_object_new_object();

	json_object_object_add(d, "name", json_object_new_string(t->name));
	json_object_object_add(d, "description",
	    json_object_new_string(t->description));
	json_object_object_add(d, "tier",
	    json_object_new_string(tier_name(t->tier)));
	json_object_object_add(d, "reload", t->reload_json != NULL ?
	    json_object_get(t->reload_json) : json_object_new_boolean(0));
	json_object_object_add(d, "busy", t->busy == BUSY_NONE ? NULL :
	    json_object_new_string(busy_name(t->busy)));
	json_object_object_add(d, "enabled",
	    json_object_new_boolean(t->enabled));
	json_object_object_add(d, "timeout_s",
	    json_object_new_int64((int64_t)t->timeout_s));
	json_object_object_add(d, "params", tool_input_schema(t));
	if (t->forward_json != NULL)
		json_object_object_add(d, "forward",
		    json_object_get(t->forward_json));
	else if (t->forward != NULL)
		json_object_object_add(d, "forward",
		    json_object_new_string(t->forward));
	return d;
}

/*
 * The value of {name}: params.name, else the schema's default; 0 when
 * neither.  *v is borrowed, and NULL for a JSON null.
 */
static int
param_value(const struct tool *t, json_object *params, const char *name,
    json_object **v)
{
	json_object	*props, *prop;

	*v = NULL;
	if (json_object_is_type(params, json_type_object) &&
	    json_object_object_get_ex(params, name, v))
		return 1;
	return t->params != NULL &&
	    json_object_object_get_ex(t->params, "properties", &props) &&
	    json_object_object_get_ex(props, name, &prop) &&
	    json_object_object_get_ex(prop, "default", v);
}

static int
template_name_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    (!first && c >= '0' && c <= '9');
}

/* The text of a parameter's value in an argument; borrowed. */
static const char *
template_text(json_object *v)
{
	if (v == NULL)
		return "null";
	if (json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
}

/*
 * Expand one element; NULL with err when a parameter is missing.  dash
 * gets the name of the parameter whose value starts the element with
 * '-', else "".  Caller frees.
 */
static char *
template_expand(const struct tool *t, json_object *params, const char *s,
    char dash[TOOL_NAME_MAX + 1], char *err, size_t errlen)
{
	char		*out, name[TOOL_NAME_MAX + 1];
	const char	*p, *end, *val;
	size_t		 len = 0, cap = strlen(s) + 1, n;
	json_object	*v;

	dash[0] = '\0';
	out = xmalloc(cap);
	for (p = s; *p != '\0'; ) {
		val = NULL;
		n = 1;
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}'))
			n = 2;
		else if (p[0] == '{' && template_name_char(p[1], 1)) {
			for (end = p + 1; template_name_char(*end, 0); end++)
				;
			if (*end == '}' && (size_t)(end - p - 1) <
			    sizeof(name)) {
				memcpy(name, p + 1, (size_t)(end - p - 1));
				name[end - p - 1] = '\0';
				if (!param_value(t, params, name, &v)) {
					snprintf(err, errlen, "parameter \"%s\" "
					    "has no value and no default", name);
					free(out);
					return NULL;
				}
				val = template_text(v);
				if (len == 0 && val[0] == '-')
					memcpy(dash, name, sizeof(name));
				n = (size_t)(end - p) + 1;
			}
		}
		if (val == NULL)
			val = n == 2 ? (p[0] == '{' ? "{" : "}") : NULL;
		if (len + (val ? strlen(val) : 1) + 1 > cap) {
			cap = (len + (val ? strlen(val) : 1) + 1) * 2;
			out = xrealloc(out, cap);
		}
		if (val != NULL) {
			memcpy(out + len, val, strlen(val));
			len += strlen(val);
		} else
			out[len++] = *p;
		p += n;
	}
	out[len] = '\0';
	return out;
}

/*
 * A value that starts an argument with '-' would be read as an option:
 * allowed only for the parameters in allow_dash, or after a literal "--".
 */
static int
template_dash_ok(const struct tool *t, size_t i, const char *dash)
{
	size_t	k;

	if (dash[0] == '\0')
		return 1;
	for (k = 1; k < i; k++)
		if (strcmp(t->exec[k], "--") == 0)
			return 1;
	for (k = 0; k < t->nallow_dash; k++)
		if (strcmp(t->allow_dash[k], dash) == 0)
			return 1;
	return 0;
}

int
tool_expand_argv(const struct tool *t, json_object *params,
    json_object **argv, char *err, size_t errlen)
{
	json_object	*a = json_object_new_array();
	char		*s, dash[TOOL_NAME_MAX + 1];
	size_t		 i;

	for (i = 0; i < t->nexec; i++) {
		if ((s = template_expand(t, params, t->exec[i], dash, err,
		    errlen)) == NULL) {
			json_object_put(a);
			return -1;
		}
		if (!template_dash_ok(t, i, dash)) {
			snprintf(err, errlen, "parameter \"%s\" starts with "
			    "'-', which the tool would read as an option: give "
			    "a value that does not start with '-' (the tool "
			    "table allows one only for the parameters in the "
			    "tool's allow_dash, or after \"--\")", dash);
			free(s);
			json_object_put(a);
			return -1;
		}
		json_object_array_add(a, json_object_new_string(s));
		free(s);
	}
	*argv = a;
	return 0;
}

/* params with the schema's defaults for what they leave out; caller puts. */
static json_object *
params_with_defaults(const struct tool *t, json_object *params)
{
	json_object	*ctx = NULL, *props, *def;

	if (params != NULL && json_object_deep_copy(params, &ctx, NULL) != 0)
		abort();
	if (ctx == NULL)
		ctx = json_object_new_object();
	if (t->params == NULL ||
	    !json_object_object_get_ex(t->params, "properties", &props) ||
	    !json_object_is_type(props, json_type_object))
		return ctx;
	json_object_object_foreach(props, name, prop) {
		if (!json_object_object_get_ex(ctx, name, NULL) &&
		    json_object_is_type(prop, json_type_object) &&
		    json_object_object_get_ex(prop, "default", &def))
			json_object_object_add(ctx, name, json_object_get(def));
	}
	return ctx;
}

/* Copy member key of from, when there, into to. */
static void
member_copy(json_object *to, json_object *from, const char *key)
{
	json_object	*v;

	if (json_object_object_get_ex(from, key, &v))
		json_object_object_add(to, key, json_object_get(v));
}

int
tool_forward_command(const struct tool *t, json_object *params,
    json_object **fwd, char *err, size_t errlen)
{
	json_object	*o = t->forward_json, *f, *v, *ctx, *p;

	if (o == NULL) {
		*fwd = json_object_new_string(t->forward);
		return 0;
	}
	f = json_object_new_object();
	member_copy(f, o, "to");
	json_object_object_add(f, "dialect", json_object_object_get_ex(o,
	    "dialect", &v) ? json_object_get(v) :
	    json_object_new_string("jsonrpc"));
	json_object_object_add(f, "method", json_object_object_get_ex(o,
	    "method", &v) ? json_object_get(v) :
	    json_object_new_string(t->name));
	if (json_object_object_get_ex(o, "params", &v)) {
		ctx = params_with_defaults(t, params);
		p = jtemplate_expand(v, ctx, err, errlen);
		json_object_put(ctx);
		if (p == NULL) {
			json_object_put(f);
			return -1;
		}
		json_object_object_add(f, "params", p);
	}
	json_object_object_add(f, "connect_timeout_s",
	    json_object_object_get_ex(o, "connect_timeout_s", &v) ?
	    json_object_get(v) :
	    json_object_new_int(FWD_CONNECT_TIMEOUT_DEFAULT));
	member_copy(f, o, "idempotent");
	member_copy(f, o, "ready");
	member_copy(f, o, "await");
	member_copy(f, o, "cancel");
	*fwd = f;
	return 0;
}
