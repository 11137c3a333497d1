/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "schema.h"

static const char *schema_types[] = {
	"object", "array", "string", "integer", "number", "boolean", "null",
};
#define NTYPES	(sizeof(schema_types) / sizeof(schema_types[0]))

static int	schema_check_at(json_object *, const char *, char *, size_t);
static int	schema_check_type(json_object *, const char *, char *, size_t);
static int	schema_validate_at(json_object *, json_object *, const char *,
		    char *, size_t);
static int	schema_type_ok(const char *, json_object *);

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
schema_check_type(json_object *t, const char *path, char *err, size_t errlen)
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
	snprintf(err, errlen, "%s.type: must be one of object, array, string, "
	    "integer, number, boolean, null, or a list of them", path);
	return -1;
}

static int
schema_check_at(json_object *s, const char *path, char *err, size_t errlen)
{
	char	sub[256];
	size_t	i;

	if (!json_object_is_type(s, json_type_object)) {
		snprintf(err, errlen, "%s: a schema must be an object", path);
		return -1;
	}
	json_object_object_foreach(s, key, val) {
		if (strcmp(key, "type") == 0) {
			if (schema_check_type(val, path, err, errlen) == -1)
				return -1;
		} else if (strcmp(key, "properties") == 0) {
			if (!json_object_is_type(val, json_type_object)) {
				snprintf(err, errlen, "%s.properties: must be "
				    "an object", path);
				return -1;
			}
			json_object_object_foreach(val, pk, pv) {
				snprintf(sub, sizeof(sub), "%s.%s", path, pk);
				if (schema_check_at(pv, sub, err, errlen) == -1)
					return -1;
			}
		} else if (strcmp(key, "required") == 0 ||
		    strcmp(key, "enum") == 0) {
			if (!json_object_is_type(val, json_type_array))
				goto notarray;
			if (key[0] == 'e')
				continue;
			for (i = 0; i < json_object_array_length(val); i++)
				if (!json_object_is_type(
				    json_object_array_get_idx(val, i),
				    json_type_string))
					goto notarray;
		} else if (strcmp(key, "items") == 0) {
			snprintf(sub, sizeof(sub), "%s.items", path);
			if (schema_check_at(val, sub, err, errlen) == -1)
				return -1;
		} else if (strcmp(key, "additionalProperties") == 0) {
			if (!json_object_is_type(val, json_type_boolean)) {
				snprintf(err, errlen, "%s.additionalProperties:"
				    " must be true or false", path);
				return -1;
			}
		} else if (strcmp(key, "description") == 0 ||
		    strcmp(key, "title") == 0) {
			if (!json_object_is_type(val, json_type_string)) {
				snprintf(err, errlen, "%s.%s: must be a string",
				    path, key);
				return -1;
			}
		} else if (strcmp(key, "default") != 0) {
			snprintf(err, errlen, "%s: unsupported schema keyword "
			    "'%s'", path, key);
			return -1;
		}
		continue;
notarray:
		snprintf(err, errlen, "%s.%s: must be a list%s", path, key,
		    key[0] == 'r' ? " of property names" : "");
		return -1;
	}
	return 0;
}

int
schema_check(json_object *schema, char *err, size_t errlen)
{
	json_object	*t;

	if (schema_check_at(schema, "params", err, errlen) == -1)
		return -1;
	if (json_object_object_get_ex(schema, "type", &t) &&
	    (!json_object_is_type(t, json_type_string) ||
	    strcmp(json_object_get_string(t), "object") != 0)) {
		snprintf(err, errlen, "params.type: the parameters of a tool "
		    "must be of type \"object\"");
		return -1;
	}
	return 0;
}

int
schema_check_output(json_object *schema, char *err, size_t errlen)
{
	json_object	*t;

	if (schema_check_at(schema, "output_schema", err, errlen) == -1)
		return -1;
	if (!json_object_object_get_ex(schema, "type", &t) ||
	    !json_object_is_type(t, json_type_string) ||
	    strcmp(json_object_get_string(t), "object") != 0) {
		snprintf(err, errlen, "output_schema.type: must be \"object\" "
		    "(MCP's structured content is a JSON object)");
		return -1;
	}
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

static const char *
schema_type_desc(json_object *t, char *buf, size_t len)
{
	if (json_object_is_type(t, json_type_string))
		return json_object_get_string(t);
	snprintf(buf, len, "one of %s",
	    json_object_to_json_string_ext(t, JSON_C_TO_STRING_PLAIN));
	return buf;
}

static int
schema_validate_at(json_object *s, json_object *v, const char *path,
    char *err, size_t errlen)
{
	json_object	*t, *x;
	char		 sub[256], tbuf[128];
	size_t		 i, n;
	int		 ok;

	if (json_object_object_get_ex(s, "type", &t)) {
		ok = 0;
		if (json_object_is_type(t, json_type_string))
			ok = schema_type_ok(json_object_get_string(t), v);
		else
			for (i = 0; i < json_object_array_length(t); i++)
				ok |= schema_type_ok(json_object_get_string(
				    json_object_array_get_idx(t, i)), v);
		if (!ok) {
			snprintf(err, errlen, "%s must be %s", path,
			    schema_type_desc(t, tbuf, sizeof(tbuf)));
			return -1;
		}
	}
	if (json_object_object_get_ex(s, "enum", &x)) {
		n = json_object_array_length(x);
		for (ok = 0, i = 0; i < n && !ok; i++)
			ok = json_object_equal(v,
			    json_object_array_get_idx(x, i));
		if (!ok) {
			snprintf(err, errlen, "%s must be one of %s", path,
			    json_object_to_json_string_ext(x,
			    JSON_C_TO_STRING_PLAIN));
			return -1;
		}
	}
	if (json_object_is_type(v, json_type_object)) {
		json_object	*props = NULL, *ap;

		json_object_object_get_ex(s, "properties", &props);
		if (json_object_object_get_ex(s, "required", &x))
			for (i = 0; i < json_object_array_length(x); i++) {
				const char *r = json_object_get_string(
				    json_object_array_get_idx(x, i));

				if (!json_object_object_get_ex(v, r, NULL)) {
					snprintf(err, errlen, "%s.%s is "
					    "required", path, r);
					return -1;
				}
			}
		json_object_object_foreach(v, key, val) {
			json_object *ps;

			snprintf(sub, sizeof(sub), "%s.%s", path, key);
			if (props != NULL &&
			    json_object_object_get_ex(props, key, &ps)) {
				if (schema_validate_at(ps, val, sub, err,
				    errlen) == -1)
					return -1;
			} else if (json_object_object_get_ex(s,
			    "additionalProperties", &ap) &&
			    !json_object_get_boolean(ap)) {
				snprintf(err, errlen, "%s is not a known "
				    "%s", sub, strncmp(path, "params", 6) == 0 ?
				    "parameter" : "member");
				return -1;
			}
		}
	}
	if (json_object_is_type(v, json_type_array) &&
	    json_object_object_get_ex(s, "items", &x))
		for (i = 0; i < json_object_array_length(v); i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			if (schema_validate_at(x,
			    json_object_array_get_idx(v, i), sub, err,
			    errlen) == -1)
				return -1;
		}
	return 0;
}

int
schema_validate(json_object *schema, json_object *value, char *err,
    size_t errlen)
{
	return schema_validate_at(schema, value, "params", err, errlen);
}

int
schema_validate_output(json_object *schema, json_object *value, char *err,
    size_t errlen)
{
	return schema_validate_at(schema, value, "output", err, errlen);
}
