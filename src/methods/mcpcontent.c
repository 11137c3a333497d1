/* SPDX-License-Identifier: ISC */
/*
 * A tool's result as the tool made it (cmdgate.tools(5), content and
 * image): an exec tool whose standard output is an MCP tool result
 * ("content": "mcp") gives its content blocks as they are, images,
 * audio and resources too; a forward tool whose upstream answers with a
 * picture in its result ("image") gives it as an image block, beside the
 * rest of its result as text.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <json-c/json_pointer.h>

#include "jstrict.h"
#include "log.h"
#include "methods.h"
#include "tools.h"
#include "util.h"

/* A text content item. */
static void
mc_text(json_object *content, const char *text)
{
	json_object	*t = json_object_new_object();

	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(text));
	json_object_array_add(content, t);
}

json_object *
mcpcontent_result(const struct tool *t, const char *out)
{
	json_object	*r, *c;
	char		*why;

	if (jstrict_parse_str(out, &r) == 0 &&
	    json_object_is_type(r, json_type_object) &&
	    json_object_object_get_ex(r, "content", &c) &&
	    json_object_is_type(c, json_type_array))
		return r;
	json_object_put(r);
	why = xasprintf("tool '%s' says its output is an MCP tool result "
	    "(\"content\": \"mcp\"), but it is not a JSON object with a "
	    "\"content\" list", t->name);
	r = json_object_new_object();
	c = json_object_new_array();
	mc_text(c, why);
	free(why);
	json_object_object_add(r, "content", c);
	json_object_object_add(r, "isError", json_object_new_boolean(1));
	return r;
}

/*
 * The last member of JSON pointer at, unescaped (~1 is '/', ~0 '~'),
 * and *parent its parent's pointer ("" for the root).  Caller frees both.
 */
static char *
mc_split(const char *at, char **parent)
{
	const char	*slash = strrchr(at, '/');
	char		*key, *o;
	const char	*i;

	*parent = xstrdup(at);
	(*parent)[slash - at] = '\0';
	key = o = xstrdup(slash + 1);
	for (i = slash + 1; *i != '\0'; i++, o++) {
		if (i[0] == '~' && (i[1] == '0' || i[1] == '1')) {
			*o = i[1] == '0' ? '~' : '/';
			i++;
		} else
			*o = *i;
	}
	*o = '\0';
	return key;
}

int
mcpcontent_image(json_object *content, const struct tool *t,
    json_object *result)
{
	json_object	*img, *rest, *parent, *item;
	char		*key, *up;

	if (t->meta.image_at == NULL ||
	    json_pointer_get(result, t->meta.image_at, &img) != 0 ||
	    !json_object_is_type(img, json_type_string) ||
	    json_object_get_string_len(img) == 0)
		return 0;
	/* The rest of the result, without the picture, as text. */
	rest = NULL;
	if (json_object_deep_copy(result, &rest, NULL) != 0)
		fatalx("json_object_deep_copy");
	key = mc_split(t->meta.image_at, &up);
	if (json_pointer_get(rest, up, &parent) == 0 &&
	    json_object_is_type(parent, json_type_object))
		json_object_object_del(parent, key);
	free(key);
	free(up);
	mc_text(content, json_object_to_json_string_ext(rest,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(rest);
	item = json_object_new_object();
	json_object_object_add(item, "type", json_object_new_string("image"));
	json_object_object_add(item, "data", json_object_get(img));
	json_object_object_add(item, "mimeType",
	    json_object_new_string(t->meta.image_mime));
	json_object_array_add(content, item);
	return 1;
}
