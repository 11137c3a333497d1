/* SPDX-License-Identifier: ISC */
/* A tool's title, annotations and output_schema: MCP's view of it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "schema.h"
#include "toolmeta.h"
#include "tools.h"
#include "util.h"

/* MCP's ToolAnnotations: title a string, the hints booleans. */
static const char *hint_keys[] = {
	"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint",
	NULL,
};

static int
meta_title(json_object *v, char *err, size_t errlen)
{
	if (!json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0 ||
	    json_object_get_string_len(v) > TOOL_TITLE_MAX) {
		snprintf(err, errlen, "must be a string of 1 to %d bytes",
		    TOOL_TITLE_MAX);
		return -1;
	}
	return 0;
}

static int
meta_hint(const char *key)
{
	size_t	i;

	for (i = 0; hint_keys[i] != NULL; i++)
		if (strcmp(key, hint_keys[i]) == 0)
			return 1;
	return 0;
}

static int
meta_annotations(json_object *o, char *err, size_t errlen)
{
	char	sub[256];

	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "must be an object of MCP tool "
		    "annotations");
		return -1;
	}
	json_object_object_foreach(o, key, val) {
		if (strcmp(key, "title") == 0) {
			if (meta_title(val, sub, sizeof(sub)) == -1) {
				snprintf(err, errlen, "title: %s", sub);
				return -1;
			}
		} else if (!meta_hint(key)) {
			snprintf(err, errlen, "unknown member '%.64s' (MCP "
			    "knows title, readOnlyHint, destructiveHint, "
			    "idempotentHint and openWorldHint)", key);
			return -1;
		} else if (!json_object_is_type(val, json_type_boolean)) {
			snprintf(err, errlen, "%s: must be true or false",
			    key);
			return -1;
		}
	}
	return 0;
}

int
toolmeta_parse(json_object *o, struct tool *t, const char **field,
    char *err, size_t errlen)
{
	json_object	*v;

	if (json_object_object_get_ex(o, *field = "title", &v)) {
		if (meta_title(v, err, errlen) == -1)
			return -1;
		t->title = xstrdup(json_object_get_string(v));
	}
	if (json_object_object_get_ex(o, *field = "annotations", &v)) {
		if (meta_annotations(v, err, errlen) == -1)
			return -1;
		t->annotations = json_object_get(v);
	}
	if (json_object_object_get_ex(o, *field = "output_schema", &v)) {
		if (schema_check_output(v, err, errlen) == -1)
			return -1;
		t->output_schema = json_object_get(v);
	}
	return 0;
}

/* Whether every tier t may take is instant. */
static int
meta_instant(const struct tool *t)
{
	size_t	i;

	if (t->tier != TIER_INSTANT)
		return 0;
	for (i = 0; i < t->nrules; i++)
		if (t->rules[i].tier != TIER_INSTANT)
			return 0;
	return 1;
}

json_object *
toolmeta_annotations(const struct tool *t)
{
	json_object	*a = json_object_new_object();
	int		 reload = t->reload_always || t->nreload > 0;

	if (t->title != NULL)
		json_object_object_add(a, "title",
		    json_object_new_string(t->title));
	json_object_object_add(a, "readOnlyHint",
	    json_object_new_boolean(!reload && meta_instant(t)));
	if (reload)
		json_object_object_add(a, "destructiveHint",
		    json_object_new_boolean(1));
	if (t->annotations != NULL) {
		json_object_object_foreach(t->annotations, key, val)
			json_object_object_add(a, key, json_object_get(val));
	}
	return a;
}
