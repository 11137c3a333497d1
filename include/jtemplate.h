/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JTEMPLATE_H
#define CMDGATE_JTEMPLATE_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * JSON templates of cmdgate.tools(5): a forward tool's upstream params,
 * its await and cancel calls.  A template is any JSON value; in its
 * strings, {PATH} names a value of the context (PATH: one or more names
 * of letters, digits and '_' joined by '.', a name that is all digits
 * indexing an array), {{ and }} are literal braces, and any other brace
 * is taken literally.
 *
 * - A string that is exactly "{PATH}" becomes the value at PATH with its
 *   own JSON type; when PATH is absent (or null), the member (or array
 *   element) holding it is left out; a template that is only such a
 *   string is an error.
 * - Otherwise each {PATH} is replaced by the value's text: strings as
 *   they are, anything else as compact JSON; an absent (or null) PATH is
 *   an error.
 * - "{a..b}" (brace, path characters, brace, but no path) is an error.
 * - Member names are not expanded.
 *
 * Library-like: nothing here exits or logs.  Shared by the broker (a
 * call's params at submit) and the worker (await and cancel calls).
 */

/* The value at dotted path in root: borrowed, or NULL when absent. */
json_object	*jpath_get(json_object *root, const char *path);

/*
 * Expand tmpl over ctx: the new value (caller puts), or NULL with err
 * naming the path that is missing.  tmpl and ctx are borrowed.
 */
json_object	*jtemplate_expand(json_object *tmpl, json_object *ctx,
		    char *err, size_t errlen);

/*
 * Whether every {PATH} in tmpl is well formed and, when first is not
 * NULL, begins with one of the NULL-terminated names in first (any name
 * when first is NULL): 0, or -1 with err naming the bad path.
 */
int		 jtemplate_check(json_object *tmpl, const char *const *first,
		    char *err, size_t errlen);

#endif
