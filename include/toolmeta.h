/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_TOOLMETA_H
#define CMDGATE_TOOLMETA_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * What a tool of cmdgate.tools(5) tells MCP clients about itself: title,
 * annotations and output_schema.
 */

#define TOOL_TITLE_MAX	128	/* bytes */

struct toolmeta {
	char		*title;		/* or NULL */
	json_object	*annotations;	/* MCP's, as written, or NULL */
	json_object	*output_schema;	/* or NULL */
};

/*
 * Read the tool object o's title, annotations and output_schema into m;
 * 0, or -1 with *field the field at fault and err the reason.  What was
 * read is freed by toolmeta_free() either way.
 */
int	toolmeta_parse(json_object *o, struct toolmeta *m,
	    const char **field, char *err, size_t errlen);
void	toolmeta_free(struct toolmeta *m);

#endif
