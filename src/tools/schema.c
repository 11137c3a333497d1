/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "tools.h"

#define SCHEMA_REF_PREFIX	"#/$defs/"
#define SCHEMA_REF_PREFIX_LEN	(sizeof(SCHEMA_REF_PREFIX) - 1)

/* Where a schema is being checked or applied. */
struct sctx {
	json_object	*defs;		/* the root's $defs, or NULL */
	char		*err;
	size_t		 errlen;
};

static const char *schema_types[] = {
	"object", "array", "string", "integer", "number", "boolean", "null",
};
#define NTYPES	(sizeof(schema_types) / sizeof(schema_types[0]))

/* The meta-schemas $schema may name, each with or without a final '#'. */
static const char *schema_dialects[] = {
	"https://json-schema.org/draft/2020-12/schema",
	"http://json-schema.org/draft-07/schema",
};
#define NDIALECTS	(sizeof(schema_dialects) / sizeof(schema_dialects[0]))

static int	schema_check_at(struct sctx *, json_object *, const char *,
		    int);
static int	schema_fail(struct sctx *, const char *, ...)
		    __attribute__((__format__(__printf__, 2, 3)));
static int	schema_validate_at(struct sctx *, json_object *, json_object *,
		    const char *, int);

static int
schema_fail(struct sctx *x, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(x->err, x->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int
schema_known_type(const char *t)
{
	size_t	i;

	for (i = 0; i < NTYPES; i++)
		if (strcmp(t, schema_types[i]) == 0)
			return 1;
	return 0;
}

static int
schema_check_type(struct sctx *x, json_object *t, const char *path)
{
	size_t	i, n;

	if (json_object_is_type(t, json_type_string)) {
		if (schema_known_type(json_object_get_string(t)))
			return 0;
	} else if (json_object_is_type(t, json_type_array) &&
	    (n = json_object_array_length(t)) > 0) {
		for (i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(t, i);

			if (!json_object_is_type(e, json_type_string) ||
			    !schema_known_type(json_object_get_string(e)))
				goto bad;
		}
		return 0;
	}
bad:
	return schema_fail(x, "%s.type: must be one of object, array, string, "
	    "integer, number, boolean, null, or a list of them", path);
}

static int
schema_check_props(struct sctx *x, json_object *val, const char *path,
    int depth)
{
	char	sub[256];

	if (!json_object_is_type(val, json_type_object))
		return schema_fail(x, "%s.properties: must be an object", path);
	json_object_object_foreach(val, pk, pv) {
		snprintf(sub, sizeof(sub), "%s.%s", path, pk);
		if (schema_check_at(x, pv, sub, depth + 1) == -1)
			return -1;
	}
	return 0;
}

/* required (a list of names) or enum (a list of anything). */
static int
schema_check_list(struct sctx *x, const char *key, json_object *val,
    const char *path)
{
	size_t	i;

	if (!json_object_is_type(val, json_type_array))
		goto notarray;
	if (key[0] == 'e')
		return 0;
	for (i = 0; i < json_object_array_length(val); i++)
		if (!json_object_is_type(json_object_array_get_idx(val, i),
		    json_type_string))
			goto notarray;
	return 0;
notarray:
	return schema_fail(x, "%s.%s: must be a list%s", path, key,
	    key[0] == 'r' ? " of property names" : "");
}

/* $schema: an annotation, but only naming a dialect the subset fits. */
static int
schema_check_dialect(struct sctx *x, json_object *val, const char *path,
    int depth)
{
	const char	*s = json_object_get_string(val);
	size_t		 i, n;

	if (depth > 0)
		return schema_fail(x, "%s.$schema: only at the top of the "
		    "schema", path);
	if (json_object_is_type(val, json_type_string))
		for (i = 0; i < NDIALECTS; i++) {
			n = strlen(schema_dialects[i]);
			if (strncmp(s, schema_dialects[i], n) == 0 &&
			    (s[n] == '\0' || strcmp(s + n, "#") == 0))
				return 0;
		}
	return schema_fail(x, "%s.$schema: must be \"%s\" or \"%s#\"", path,
	    schema_dialects[0], schema_dialects[1]);
}

static int
schema_check_defs(struct sctx *x, json_object *val, const char *path,
    int depth)
{
	char	sub[256];

	if (depth > 0)
		return schema_fail(x, "%s.$defs: only at the top of the schema",
		    path);
	if (!json_object_is_type(val, json_type_object))
		return schema_fail(x, "%s.$defs: must be an object of named "
		    "schemas", path);
	json_object_object_foreach(val, name, def) {
		snprintf(sub, sizeof(sub), "%s.$defs.%s", path, name);
		if (schema_check_at(x, def, sub, depth + 1) == -1)
			return -1;
	}
	return 0;
}

/* The NAME of "#/$defs/NAME", or NULL for any other reference. */
static const char *
schema_ref_name(json_object *ref)
{
	const char	*r = json_object_get_string(ref);

	if (!json_object_is_type(ref, json_type_string) ||
	    strncmp(r, SCHEMA_REF_PREFIX, SCHEMA_REF_PREFIX_LEN) != 0)
		return NULL;
	r += SCHEMA_REF_PREFIX_LEN;
	if (r[0] == '\0' || strpbrk(r, "/~%#") != NULL)
		return NULL;
	return r;
}

/* The definition ref names, or NULL.  Borrowed from x->defs. */
static json_object *
schema_ref_target(struct sctx *x, json_object *ref)
{
	const char	*name = schema_ref_name(ref);
	json_object	*d;

	if (name == NULL || x->defs == NULL ||
	    !json_object_object_get_ex(x->defs, name, &d))
		return NULL;
	return d;
}

static int
schema_check_ref(struct sctx *x, json_object *val, const char *path)
{
	if (!json_object_is_type(val, json_type_string))
		return schema_fail(x, "%s.$ref: must be a string", path);
	if (schema_ref_name(val) == NULL)
		return schema_fail(x, "%s.$ref: '%s': only local references "
		    "\"" SCHEMA_REF_PREFIX "NAME\" are supported", path,
		    json_object_get_string(val));
	if (schema_ref_target(x, val) == NULL)
		return schema_fail(x, "%s.$ref: no definition '%s' in $defs",
		    path, schema_ref_name(val));
	return 0;
}

static int
schema_check_key(struct sctx *x, const char *key, json_object *val,
    const char *path, int depth)
{
	char	sub[256];

	if (strcmp(key, "type") == 0)
		return schema_check_type(x, val, path);
	if (strcmp(key, "properties") == 0)
		return schema_check_props(x, val, path, depth);
	if (strcmp(key, "required") == 0 || strcmp(key, "enum") == 0)
		return schema_check_list(x, key, val, path);
	if (strcmp(key, "items") == 0) {
		snprintf(sub, sizeof(sub), "%s.items", path);
		return schema_check_at(x, val, sub, depth + 1);
	}
	if (strcmp(key, "additionalProperties") == 0)
		return json_object_is_type(val, json_type_boolean) ? 0 :
		    schema_fail(x, "%s.additionalProperties: must be true or "
		    "false", path);
	if (strcmp(key, "description") == 0 || strcmp(key, "title") == 0)
		return json_object_is_type(val, json_type_string) ? 0 :
		    schema_fail(x, "%s.%s: must be a string", path, key);
	if (strcmp(key, "$schema") == 0)
		return schema_check_dialect(x, val, path, depth);
	if (strcmp(key, "$defs") == 0)
		return schema_check_defs(x, val, path, depth);
	if (strcmp(key, "$ref") == 0)
		return schema_check_ref(x, val, path);
	if (strcmp(key, "default") == 0)
		return 0;
	return schema_fail(x, "%s: unsupported schema keyword '%s'", path,
	    key);
}

static int
schema_check_at(struct sctx *x, json_object *s, const char *path, int depth)
{
	if (depth > SCHEMA_MAX_DEPTH)
		return schema_fail(x, "%s: schemas nested deeper than %d "
		    "levels", path, SCHEMA_MAX_DEPTH);
	if (!json_object_is_type(s, json_type_object))
		return schema_fail(x, "%s: a schema must be an object", path);
	json_object_object_foreach(s, key, val) {
		if (schema_check_key(x, key, val, path, depth) == -1)
			return -1;
	}
	return 0;
}

/* Whether target is one of the schemas from s through hops references. */
static int
schema_ref_seen(struct sctx *x, json_object *s, size_t hops,
    json_object *target)
{
	json_object	*ref;

	for (; s != target && hops > 0; hops--) {
		json_object_object_get_ex(s, "$ref", &ref);
		s = schema_ref_target(x, ref);
	}
	return s == target;
}

/*
 * A definition whose references lead, through references alone, back to
 * one on the way would send validation round without reaching a deeper
 * value.  Each hop goes to another definition, so the walk is bounded.
 */
static int
schema_check_cycles(struct sctx *x, const char *path)
{
	json_object	*s, *ref, *next;
	char		 chain[256];
	size_t		 hops, len;

	if (x->defs == NULL)
		return 0;
	json_object_object_foreach(x->defs, start, def) {
		snprintf(chain, sizeof(chain), "%s", start);
		for (s = def, hops = 0; json_object_object_get_ex(s, "$ref",
		    &ref); s = next, hops++) {
			next = schema_ref_target(x, ref);
			len = strlen(chain);
			snprintf(chain + len, sizeof(chain) - len, " -> %s",
			    schema_ref_name(ref));
			if (schema_ref_seen(x, def, hops, next))
				return schema_fail(x, "%s.$defs.%s.$ref: the "
				    "references go round with no property or "
				    "item between (%s)", path, start, chain);
		}
	}
	return 0;
}

/* The whole schema: $defs first, so that references can be resolved. */
static int
schema_check_root(struct sctx *x, json_object *s, const char *path)
{
	json_object	*d;

	x->defs = NULL;
	if (json_object_is_type(s, json_type_object) &&
	    json_object_object_get_ex(s, "$defs", &d)) {
		if (!json_object_is_type(d, json_type_object))
			return schema_fail(x, "%s.$defs: must be an object of "
			    "named schemas", path);
		x->defs = d;
	}
	if (schema_check_at(x, s, path, 0) == -1)
		return -1;
	return schema_check_cycles(x, path);
}

int
schema_check(json_object *schema, char *err, size_t errlen)
{
	struct sctx	 x = { NULL, err, errlen };
	json_object	*t;

	if (schema_check_root(&x, schema, "params") == -1)
		return -1;
	if (json_object_object_get_ex(schema, "type", &t) &&
	    (!json_object_is_type(t, json_type_string) ||
	    strcmp(json_object_get_string(t), "object") != 0))
		return schema_fail(&x, "params.type: the parameters of a tool "
		    "must be of type \"object\"");
	return 0;
}

int
schema_check_output(json_object *schema, char *err, size_t errlen)
{
	struct sctx	 x = { NULL, err, errlen };
	json_object	*t;

	if (schema_check_root(&x, schema, "output_schema") == -1)
		return -1;
	if (!json_object_object_get_ex(schema, "type", &t) ||
	    !json_object_is_type(t, json_type_string) ||
	    strcmp(json_object_get_string(t), "object") != 0)
		return schema_fail(&x, "output_schema.type: must be \"object\" "
		    "(MCP's structured content is a JSON object)");
	return 0;
}

static int
schema_type_ok(const char *t, json_object *v)
{
	enum json_type	jt = json_object_get_type(v);

	if (strcmp(t, "object") == 0)
		return jt == json_type_object;
	if (strcmp(t, "array") == 0)
		return jt == json_type_array;
	if (strcmp(t, "string") == 0)
		return jt == json_type_string;
	if (strcmp(t, "integer") == 0)
		return jt == json_type_int;
	if (strcmp(t, "number") == 0)
		return jt == json_type_int || jt == json_type_double;
	if (strcmp(t, "boolean") == 0)
		return jt == json_type_boolean;
	return jt == json_type_null;
}

static int
schema_validate_type(struct sctx *x, json_object *t, json_object *v,
    const char *path)
{
	size_t	i;
	int	ok = 0;

	if (json_object_is_type(t, json_type_string))
		ok = schema_type_ok(json_object_get_string(t), v);
	else
		for (i = 0; i < json_object_array_length(t); i++)
			ok |= schema_type_ok(json_object_get_string(
			    json_object_array_get_idx(t, i)), v);
	if (ok)
		return 0;
	if (json_object_is_type(t, json_type_string))
		return schema_fail(x, "%s must be %s", path,
		    json_object_get_string(t));
	return schema_fail(x, "%s must be one of %s", path,
	    json_object_to_json_string_ext(t, JSON_C_TO_STRING_PLAIN));
}

static int
schema_validate_enum(struct sctx *x, json_object *e, json_object *v,
    const char *path)
{
	size_t	i, n = json_object_array_length(e);

	for (i = 0; i < n; i++)
		if (json_object_equal(v, json_object_array_get_idx(e, i)))
			return 0;
	return schema_fail(x, "%s must be one of %s", path,
	    json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN));
}

static int
schema_validate_required(struct sctx *x, json_object *s, json_object *v,
    const char *path)
{
	json_object	*req;
	const char	*r;
	size_t		 i;

	if (!json_object_object_get_ex(s, "required", &req))
		return 0;
	for (i = 0; i < json_object_array_length(req); i++) {
		r = json_object_get_string(json_object_array_get_idx(req, i));
		if (!json_object_object_get_ex(v, r, NULL))
			return schema_fail(x, "%s.%s is required", path, r);
	}
	return 0;
}

static int
schema_validate_object(struct sctx *x, json_object *s, json_object *v,
    const char *path, int depth)
{
	json_object	*props = NULL, *ps, *ap;
	char		 sub[256];

	if (schema_validate_required(x, s, v, path) == -1)
		return -1;
	json_object_object_get_ex(s, "properties", &props);
	json_object_object_foreach(v, key, val) {
		snprintf(sub, sizeof(sub), "%s.%s", path, key);
		if (props != NULL &&
		    json_object_object_get_ex(props, key, &ps)) {
			if (schema_validate_at(x, ps, val, sub, depth + 1) ==
			    -1)
				return -1;
		} else if (json_object_object_get_ex(s,
		    "additionalProperties", &ap) &&
		    !json_object_get_boolean(ap))
			return schema_fail(x, "%s is not a known %s", sub,
			    strncmp(path, "params", 6) == 0 ? "parameter" :
			    "member");
	}
	return 0;
}

static int
schema_validate_items(struct sctx *x, json_object *items, json_object *v,
    const char *path, int depth)
{
	char	sub[256];
	size_t	i;

	for (i = 0; i < json_object_array_length(v); i++) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (schema_validate_at(x, items,
		    json_object_array_get_idx(v, i), sub, depth + 1) == -1)
			return -1;
	}
	return 0;
}

/*
 * depth counts the schemas entered (a property, an item, a reference):
 * values are at most JSTRICT_MAX_DEPTH deep and reference chains end
 * (schema_check_cycles), but the cap holds whatever the caller parsed.
 */
static int
schema_validate_at(struct sctx *x, json_object *s, json_object *v,
    const char *path, int depth)
{
	json_object	*k, *d;

	if (depth > SCHEMA_MAX_DEPTH)
		return schema_fail(x, "%s: nested deeper than %d schemas "
		    "(properties, items and references)", path,
		    SCHEMA_MAX_DEPTH);
	if (json_object_object_get_ex(s, "$ref", &k)) {
		if ((d = schema_ref_target(x, k)) == NULL)
			return schema_fail(x, "%s: the schema's $ref '%s' "
			    "names no definition", path,
			    json_object_get_string(k));
		if (schema_validate_at(x, d, v, path, depth + 1) == -1)
			return -1;
	}
	if (json_object_object_get_ex(s, "type", &k) &&
	    schema_validate_type(x, k, v, path) == -1)
		return -1;
	if (json_object_object_get_ex(s, "enum", &k) &&
	    schema_validate_enum(x, k, v, path) == -1)
		return -1;
	if (json_object_is_type(v, json_type_object))
		return schema_validate_object(x, s, v, path, depth);
	if (json_object_is_type(v, json_type_array) &&
	    json_object_object_get_ex(s, "items", &k))
		return schema_validate_items(x, k, v, path, depth);
	return 0;
}

/* The $defs of a checked schema, or NULL. */
static json_object *
schema_defs(json_object *schema)
{
	json_object	*d;

	if (json_object_is_type(schema, json_type_object) &&
	    json_object_object_get_ex(schema, "$defs", &d) &&
	    json_object_is_type(d, json_type_object))
		return d;
	return NULL;
}

int
schema_validate(json_object *schema, json_object *value, char *err,
    size_t errlen)
{
	struct sctx	x = { schema_defs(schema), err, errlen };

	return schema_validate_at(&x, schema, value, "params", 0);
}

int
schema_validate_output(json_object *schema, json_object *value, char *err,
    size_t errlen)
{
	struct sctx	x = { schema_defs(schema), err, errlen };

	return schema_validate_at(&x, schema, value, "output", 0);
}
