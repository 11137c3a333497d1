/* SPDX-License-Identifier: ISC */
/*
 * JSON templates: {PATH} in strings, looked up in a context object.  See
 * include/jtemplate.h and cmdgate.tools(5), forward.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jstrict.h"
#include "jtemplate.h"

#define PATH_MAXLEN	256	/* the longest {PATH} */

/* How a string of a template reads: literal text, or exactly "{PATH}". */
struct tstr {
	char	*text;		/* expanded, when not whole */
	char	 whole[PATH_MAXLEN + 1];	/* the PATH of "{PATH}", or "" */
};

static void
jt_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	ap;

	if (errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int
path_char(int c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.';
}

/* Whether p[0..n) is names joined by single dots. */
static int
path_ok(const char *p, size_t n)
{
	size_t	i;

	if (n == 0 || n > PATH_MAXLEN || p[0] == '.' || p[n - 1] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!path_char(p[i]) || (p[i] == '.' && p[i + 1] == '.'))
			return 0;
	return 1;
}

/* A segment that is all digits, as an index: 0, or -1. */
static int
seg_index(const char *s, size_t n, size_t *idx)
{
	size_t	i, v = 0;

	if (n == 0 || n > 9)
		return -1;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (size_t)(s[i] - '0');
	}
	*idx = v;
	return 0;
}

json_object *
jpath_get(json_object *root, const char *path)
{
	json_object	*v = root;
	const char	*s = path, *dot;
	char		 name[PATH_MAXLEN + 1];
	size_t		 n, idx;

	while (v != NULL && *s != '\0') {
		dot = strchr(s, '.');
		n = dot != NULL ? (size_t)(dot - s) : strlen(s);
		if (n == 0 || n > PATH_MAXLEN)
			return NULL;
		if (json_object_is_type(v, json_type_array)) {
			if (seg_index(s, n, &idx) == -1 ||
			    idx >= json_object_array_length(v))
				return NULL;
			v = json_object_array_get_idx(v, idx);
		} else if (json_object_is_type(v, json_type_object)) {
			memcpy(name, s, n);
			name[n] = '\0';
			if (!json_object_object_get_ex(v, name, &v))
				return NULL;
		} else
			return NULL;
		s += n + (dot != NULL);
		if (dot != NULL && *s == '\0')
			return NULL;
	}
	return v;	/* NULL also for a JSON null: json-c's null */
}

/*
 * The {PATH} at s (s[0] == '{'): its length up to and including '}' in
 * *end and the path copied to path; 0, -1 when s is not one, -2 when
 * it looks like one but its path is malformed ("{a..b}").
 */
static int
ref_at(const char *s, char *path, size_t *end)
{
	const char	*close = s + 1;

	while (*close != '\0' && path_char(*close))
		close++;
	if (*close != '}' || close == s + 1)
		return -1;
	if (!path_ok(s + 1, (size_t)(close - s - 1)))
		return -2;
	memcpy(path, s + 1, (size_t)(close - s - 1));
	path[close - s - 1] = '\0';
	*end = (size_t)(close - s) + 1;
	return 0;
}

/* Append the text of v (strings as they are) to the buffer b. */
static void
text_of(json_object *v, char **b, size_t *len)
{
	const char	*t;
	char		*nb;
	size_t		 n;

	if (json_object_is_type(v, json_type_string))
		t = json_object_get_string(v);
	else
		t = jstrict_to_string(v);
	n = strlen(t);
	if ((nb = realloc(*b, *len + n + 1)) == NULL)
		abort();
	memcpy(nb + *len, t, n + 1);
	*b = nb;
	*len += n;
}

static void
text_add(const char *s, size_t n, char **b, size_t *len)
{
	char	*nb;

	if ((nb = realloc(*b, *len + n + 1)) == NULL)
		abort();
	memcpy(nb + *len, s, n);
	nb[*len + n] = '\0';
	*b = nb;
	*len += n;
}

/*
 * Read template string s: when it is exactly "{PATH}", t->whole; else
 * t->text, expanded over ctx (or, with ctx NULL, only checked).  Each
 * PATH is also given to check (when not NULL).  0, or -1 with err.
 */
static int
tstr_read(const char *s, json_object *ctx, int (*check)(const char *,
    const void *, char *, size_t), const void *carg, struct tstr *t,
    char *err, size_t errlen)
{
	char		 path[PATH_MAXLEN + 1];
	size_t		 end, len = 0;
	json_object	*v;
	int		 r = -1;

	memset(t, 0, sizeof(*t));
	if (s[0] == '{' && ref_at(s, path, &end) == 0 && s[end] == '\0') {
		snprintf(t->whole, sizeof(t->whole), "%s", path);
		return check != NULL ? check(path, carg, err, errlen) : 0;
	}
	text_add("", 0, &t->text, &len);
	while (*s != '\0') {
		if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
			text_add(s, 1, &t->text, &len);
			s += 2;
		} else if (s[0] == '{' && (r = ref_at(s, path, &end)) == -2) {
			jt_err(err, errlen, "%.*s: not a path (names of letters, "
			    "digits and _ joined by single dots)",
			    (int)strcspn(s, "}") + 1, s);
			goto fail;
		} else if (s[0] == '{' && r == 0) {
			if (check != NULL && check(path, carg, err, errlen) == -1)
				goto fail;
			if (ctx != NULL && (v = jpath_get(ctx, path)) == NULL) {
				jt_err(err, errlen, "{%s}: no such value", path);
				goto fail;
			}
			if (ctx != NULL)
				text_of(v, &t->text, &len);
			s += end;
		} else
			text_add(s++, 1, &t->text, &len);
	}
	return 0;
fail:
	free(t->text);
	t->text = NULL;
	return -1;
}

/*
 * Expand v; *out the expansion (caller puts) or NULL when it is a whole
 * {PATH} that is absent (the holder leaves it out).  0, or -1 with err.
 */
static int
expand(json_object *v, json_object *ctx, json_object **out, char *err,
    size_t errlen)
{
	struct tstr	 t;
	json_object	*e, *r;
	size_t		 i, n;

	*out = NULL;
	switch (json_object_get_type(v)) {
	case json_type_string:
		if (tstr_read(json_object_get_string(v), ctx, NULL, NULL, &t,
		    err, errlen) == -1)
			return -1;
		if (t.whole[0] != '\0') {
			if ((e = jpath_get(ctx, t.whole)) != NULL)
				*out = json_object_get(e);
			return 0;
		}
		*out = json_object_new_string(t.text);
		free(t.text);
		return 0;
	case json_type_array:
		r = json_object_new_array();
		n = json_object_array_length(v);
		for (i = 0; i < n; i++) {
			if (expand(json_object_array_get_idx(v, i), ctx, &e,
			    err, errlen) == -1) {
				json_object_put(r);
				return -1;
			}
			if (e != NULL)
				json_object_array_add(r, e);
		}
		*out = r;
		return 0;
	case json_type_object:
		r = json_object_new_object();
		json_object_object_foreach(v, key, val) {
			if (expand(val, ctx, &e, err, errlen) == -1) {
				json_object_put(r);
				return -1;
			}
			if (e != NULL)
				json_object_object_add(r, key, e);
		}
		*out = r;
		return 0;
	default:
		*out = json_object_get(v);
		return 0;
	}
}

json_object *
jtemplate_expand(json_object *tmpl, json_object *ctx, char *err,
    size_t errlen)
{
	json_object	*out;

	if (expand(tmpl, ctx, &out, err, errlen) == -1)
		return NULL;
	/* The template is one absent {PATH}: nothing holds it. */
	if (out == NULL)
		jt_err(err, errlen, "%s: no such value", tmpl != NULL ?
		    json_object_get_string(tmpl) : "null");
	return out;
}

/* tstr_read's check for jtemplate_check: the first name in a list. */
static int
check_first(const char *path, const void *arg, char *err, size_t errlen)
{
	const char *const	*first = arg;
	size_t			 n = strcspn(path, ".");

	if (first == NULL)
		return 0;
	for (; *first != NULL; first++)
		if (strlen(*first) == n && strncmp(*first, path, n) == 0)
			return 0;
	jt_err(err, errlen, "{%s}: \"%.*s\" is none of the names a template "
	    "may use here", path, (int)n, path);
	return -1;
}

int
jtemplate_check(json_object *tmpl, const char *const *first, char *err,
    size_t errlen)
{
	struct tstr	t;
	size_t		i, n;

	switch (json_object_get_type(tmpl)) {
	case json_type_string:
		if (tstr_read(json_object_get_string(tmpl), NULL, check_first,
		    first, &t, err, errlen) == -1)
			return -1;
		free(t.text);
		return 0;
	case json_type_array:
		n = json_object_array_length(tmpl);
		for (i = 0; i < n; i++)
			if (jtemplate_check(json_object_array_get_idx(tmpl, i),
			    first, err, errlen) == -1)
				return -1;
		return 0;
	case json_type_object: {
		/* A block: the foreach declares, which a label may not head. */
		json_object_object_foreach(tmpl, key, val) {
			(void)key;
			if (jtemplate_check(val, first, err, errlen) == -1)
				return -1;
		}
		return 0;
	}
	default:
		return 0;
	}
}
