/* SPDX-License-Identifier: ISC */
/* A tool's title, annotations and output_schema: MCP's view of it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

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

static const char *task_names[] = { "optional", "required", "forbidden" };

const char *
toolmeta_task_name(enum tool_task t)
{
	return task_names[t];
}

/* "task": whether its calls may, must or must not become MCP tasks. */
static int
meta_task(json_object *v, struct toolmeta *m, char *err, size_t errlen)
{
	size_t	i;

	for (i = 0; i < sizeof(task_names) / sizeof(task_names[0]); i++)
		if (json_object_is_type(v, json_type_string) &&
		    strcmp(json_object_get_string(v), task_names[i]) == 0) {
			m->task = (enum tool_task)i;
			return 0;
		}
	snprintf(err, errlen, "must be optional, required or forbidden");
	return -1;
}

/* "image": {"at": JSON pointer, "mime_type": "image/..."} */
static int
meta_image(json_object *o, struct toolmeta *m, char *err, size_t errlen)
{
	json_object	*at, *mime = NULL;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "at", &at) ||
	    !json_object_is_type(at, json_type_string) ||
	    *json_object_get_string(at) != '/' ||
	    (json_object_object_get_ex(o, "mime_type", &mime) &&
	    (!json_object_is_type(mime, json_type_string) ||
	    strncmp(json_object_get_string(mime), "image/", 6) != 0)) ||
	    json_object_object_length(o) != (mime != NULL ? 2 : 1)) {
		snprintf(err, errlen, "must be {\"at\": \"/JSON/pointer\"} "
		    "and may name a \"mime_type\" image/... (image/png)");
		return -1;
	}
	m->image_at = xstrdup(json_object_get_string(at));
	m->image_mime = xstrdup(mime != NULL ? json_object_get_string(mime) :
	    "image/png");
	return 0;
}

int
toolmeta_parse(json_object *o, struct toolmeta *m, const char **field,
    char *err, size_t errlen)
{
	json_object	*v;

	*field = "title";
	if (json_object_object_get_ex(o, "title", &v)) {
		if (meta_title(v, err, errlen) == -1)
			return -1;
		m->title = xstrdup(json_object_get_string(v));
	}
	*field = "annotations";
	if (json_object_object_get_ex(o, "annotations", &v)) {
		if (meta_annotations(v, err, errlen) == -1)
			return -1;
		m->annotations = json_object_get(v);
	}
	*field = "output_schema";
	if (json_object_object_get_ex(o, "output_schema", &v)) {
		if (schema_check_output(v, err, errlen) == -1)
			return -1;
		m->output_schema = json_object_get(v);
	}
	*field = "content";
	if (json_object_object_get_ex(o, "content", &v)) {
		if (!json_object_is_type(v, json_type_string) ||
		    (strcmp(json_object_get_string(v), "mcp") != 0 &&
		    strcmp(json_object_get_string(v), "text") != 0) ||
		    !json_object_object_get_ex(o, "exec", NULL)) {
			snprintf(err, errlen, "an exec tool's \"text\" (its "
			    "output as text, the default) or \"mcp\" (its "
			    "output is an MCP tool result)");
			return -1;
		}
		m->content_mcp = strcmp(json_object_get_string(v), "mcp") == 0;
	}
	*field = "image";
	if (json_object_object_get_ex(o, "image", &v) &&
	    meta_image(v, m, err, errlen) == -1)
		return -1;
	*field = "task";
	if (json_object_object_get_ex(o, "task", &v) &&
	    meta_task(v, m, err, errlen) == -1)
		return -1;
	return 0;
}

void
toolmeta_free(struct toolmeta *m)
{
	free(m->title);
	json_object_put(m->annotations);
	json_object_put(m->output_schema);
	free(m->image_at);
	free(m->image_mime);
}
