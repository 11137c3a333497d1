/* SPDX-License-Identifier: ISC */
/*
 * The JSON Schema subset of tool tables (src/tools/schema.c): what a table may
 * say, and values checked against it, through $ref to $defs too.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "tools.h"

static char	err[1024];

static json_object *
P(const char *json)
{
	return json_tokener_parse(json);
}

/* A table of one tool "a" whose params are {PARAMS}. */
#define P_(params)	"{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"]," \
			"\"params\":{" params "}}]}"

/* Tables refused, each with what its error must say. */
static const struct {
	const char	*json;
	const char	*want;
} bad_tables[] = {
	{ P_("\"properties\":{\"a\":{\"$ref\":\"#/$defs/nope\"}}"),
	  "field 'params': params.a.$ref: no definition 'nope' in $defs" },
	{ P_("\"$defs\":{\"b\":{}},\"properties\":{\"a\":{\"$ref\":"
	  "\"https://example.com/s.json#/$defs/b\"}}"),
	  "field 'params': params.a.$ref: "
	  "'https://example.com/s.json#/$defs/b': only local references "
	  "\"#/$defs/NAME\" are supported" },
	{ P_("\"$defs\":{\"b\":{}},\"properties\":{\"a\":{\"$ref\":"
	  "\"#/properties/b\"}}"), "params.a.$ref: '#/properties/b': only "
	  "local references" },
	{ P_("\"$defs\":{\"b\":{}},\"properties\":{\"a\":{\"$ref\":"
	  "\"#/$defs/b/properties/c\"}}"), "params.a.$ref: "
	  "'#/$defs/b/properties/c': only local references" },
	{ P_("\"$defs\":{\"b~1c\":{}},\"properties\":{\"a\":{\"$ref\":"
	  "\"#/$defs/b~1c\"}}"), "params.a.$ref: '#/$defs/b~1c': only local" },
	{ P_("\"$defs\":{\"b\":{}},\"properties\":{\"a\":{\"$ref\":"
	  "\"#/$defs/\"}}"), "params.a.$ref: '#/$defs/': only local" },
	{ P_("\"properties\":{\"a\":{\"$ref\":1}}"),
	  "field 'params': params.a.$ref: must be a string" },
	{ P_("\"$schema\":\"http://json-schema.org/draft-04/schema#\""),
	  "field 'params': params.$schema: must be \"https://json-schema.org/"
	  "draft/2020-12/schema\" or "
	  "\"http://json-schema.org/draft-07/schema#\"" },
	{ P_("\"$schema\":\"https://json-schema.org/draft/2020-12/schema##\""),
	  "field 'params': params.$schema: must be" },
	{ P_("\"$schema\":7"), "field 'params': params.$schema: must be" },
	{ P_("\"properties\":{\"a\":{\"$schema\":"
	  "\"https://json-schema.org/draft/2020-12/schema\"}}"),
	  "field 'params': params.a.$schema: only at the top of the schema" },
	{ P_("\"$defs\":[]"),
	  "field 'params': params.$defs: must be an object of named schemas" },
	{ P_("\"properties\":{\"a\":{\"$ref\":\"#/$defs/b\"}},\"$defs\":7"),
	  "field 'params': params.$defs: must be an object of named schemas" },
	{ P_("\"properties\":{\"a\":{\"$defs\":{}}}"),
	  "field 'params': params.a.$defs: only at the top of the schema" },
	{ P_("\"$defs\":{\"b\":{\"minimum\":1}}"), "field 'params': "
	  "params.$defs.b: unsupported schema keyword 'minimum'" },
	{ P_("\"$defs\":{\"b\":{\"$defs\":{}}}"),
	  "field 'params': params.$defs.b.$defs: only at the top" },
	{ P_("\"$defs\":{\"a\":{\"$ref\":\"#/$defs/a\"}}"), "field 'params': "
	  "params.$defs.a.$ref: the references go round with no property or "
	  "item between (a -> a)" },
	{ P_("\"$defs\":{\"a\":{\"type\":\"object\",\"$ref\":\"#/$defs/b\"},"
	  "\"b\":{\"$ref\":\"#/$defs/a\"}}"), "field 'params': "
	  "params.$defs.a.$ref: the references go round with no property or "
	  "item between (a -> b -> a)" },
	{ P_("\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},"
	  "\"b\":{\"$ref\":\"#/$defs/c\"},\"c\":{\"$ref\":\"#/$defs/b\"}}"),
	  "params.$defs.a.$ref: the references go round with no property or "
	  "item between (a -> b -> c -> b)" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"output_schema\":"
	  "{\"type\":\"object\",\"properties\":{\"o\":{\"$ref\":\"#/$defs/o\"}}"
	  "}}]}", "field 'output_schema': output_schema.o.$ref: no definition "
	  "'o' in $defs" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"output_schema\":"
	  "{\"type\":\"object\",\"$defs\":{\"o\":{\"$ref\":\"#/$defs/o\"}}}}]}",
	  "field 'output_schema': output_schema.$defs.o.$ref: the references "
	  "go round" },
};

START_TEST(bad_table)
{
	struct tooltab	*tab = NULL;

	err[0] = '\0';
	ck_assert_msg(tooltab_load_string(bad_tables[_i].json, "t.json", &tab,
	    err, sizeof(err)) == -1, "table %d accepted", _i);
	ck_assert_msg(strstr(err, bad_tables[_i].want) != NULL,
	    "table %d: error '%s' lacks '%s'", _i, err, bad_tables[_i].want);
	ck_assert_msg(strncmp(err, "t.json: tool 'a': ", 18) == 0,
	    "error '%s' does not name the file and the tool", err);
}
END_TEST

/* The inputSchema of MCP's json-schema-2020-12 conformance scenario. */
#define ADDR_SCHEMA	"{\"$schema\":\"https://json-schema.org/draft/" \
	"2020-12/schema\",\"type\":\"object\",\"$defs\":{\"address\":" \
	"{\"type\":\"object\",\"properties\":{\"street\":{\"type\":" \
	"\"string\"},\"city\":{\"type\":\"string\"}}}},\"properties\":" \
	"{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":" \
	"\"#/$defs/address\"}},\"additionalProperties\":false}"
/* A recursive definition: each step of it goes one value deeper. */
#define LIST_SCHEMA	"{\"$defs\":{\"node\":{\"type\":\"object\"," \
	"\"properties\":{\"v\":{\"type\":\"integer\"},\"next\":{\"$ref\":" \
	"\"#/$defs/node\"}}}},\"properties\":{\"head\":{\"$ref\":" \
	"\"#/$defs/node\"},\"all\":{\"type\":\"array\",\"items\":{\"$ref\":" \
	"\"#/$defs/node\"}}}}"

/* A table with them loads; the schema is kept as written. */
START_TEST(good_table)
{
	struct tooltab	*tab = NULL;
	json_object	*want = P(ADDR_SCHEMA);
	char		 json[2048];

	snprintf(json, sizeof(json), "{\"tools\":["
	    "{\"name\":\"a\",\"exec\":[\"x\"],\"params\":%s},"
	    "{\"name\":\"b\",\"exec\":[\"x\"],\"params\":%s},"
	    "{\"name\":\"c\",\"exec\":[\"x\"],\"output_schema\":%s}]}",
	    ADDR_SCHEMA, LIST_SCHEMA, ADDR_SCHEMA);
	ck_assert_msg(tooltab_load_string(json, "t.json", &tab, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert(json_object_equal(tab->tools[0].params, want));
	json_object_put(want);
	tooltab_free(tab);
}
END_TEST

static const struct {
	const char	*schema;
	const char	*value;
	const char	*want;	/* NULL: valid; else a part of the error */
} schema_cases[] = {
	{ "{\"type\":\"object\"}", "{}", NULL },
	{ "{\"type\":\"object\",\"required\":[\"a\"]}", "{}",
	  "params.a is required" },
	{ "{\"properties\":{\"a\":{\"type\":\"integer\"}}}", "{\"a\":1}",
	  NULL },
	{ "{\"properties\":{\"a\":{\"type\":\"integer\"}}}", "{\"a\":1.5}",
	  "params.a must be integer" },
	{ "{\"properties\":{\"a\":{\"type\":\"number\"}}}", "{\"a\":1.5}",
	  NULL },
	{ "{\"properties\":{\"a\":{\"type\":\"string\"}}}", "{\"a\":1}",
	  "params.a must be string" },
	{ "{\"properties\":{\"a\":{\"type\":[\"string\",\"null\"]}}}",
	  "{\"a\":null}", NULL },
	{ "{\"properties\":{\"a\":{\"type\":\"boolean\"}}}", "{\"a\":\"x\"}",
	  "params.a must be boolean" },
	{ "{\"properties\":{\"a\":{\"enum\":[\"x\",\"y\"]}}}", "{\"a\":\"z\"}",
	  "params.a must be one of [\"x\",\"y\"]" },
	{ "{\"properties\":{\"a\":{\"enum\":[\"x\",\"y\"]}}}", "{\"a\":\"y\"}",
	  NULL },
	{ "{\"properties\":{\"a\":{\"type\":\"array\",\"items\":{\"type\":"
	  "\"string\"}}}}", "{\"a\":[\"x\",2]}", "params.a[1] must be string" },
	{ "{\"additionalProperties\":false,\"properties\":{\"a\":{}}}",
	  "{\"b\":1}", "params.b is not a known parameter" },
	{ "{\"properties\":{\"a\":{}}}", "{\"b\":1}", NULL },
	{ "{\"properties\":{\"o\":{\"type\":\"object\",\"required\":[\"x\"]}}}",
	  "{\"o\":{}}", "params.o.x is required" },
	{ "{\"type\":\"object\"}", "[]", "params must be object" },
	/* Through $ref to $defs (the MCP 2020-12 conformance schema). */
	{ ADDR_SCHEMA, "{\"name\":\"n\",\"address\":{\"street\":\"s\","
	  "\"city\":\"c\"}}", NULL },
	{ ADDR_SCHEMA, "{\"address\":{\"street\":1}}",
	  "params.address.street must be string" },
	{ ADDR_SCHEMA, "{\"address\":\"here\"}",
	  "params.address must be object" },
	{ ADDR_SCHEMA, "{\"name\":\"n\",\"phone\":1}",
	  "params.phone is not a known parameter" },
	{ LIST_SCHEMA, "{\"head\":{\"v\":1,\"next\":{\"next\":{\"v\":2}}}}",
	  NULL },
	{ LIST_SCHEMA, "{\"head\":{\"next\":{\"next\":{\"v\":\"x\"}}}}",
	  "params.head.next.next.v must be integer" },
	{ LIST_SCHEMA, "{\"all\":[{\"v\":1},{\"next\":{\"v\":[]}}]}",
	  "params.all[1].next.v must be integer" },
	/* A $ref's siblings apply too; a chain of references ends. */
	{ "{\"$defs\":{\"s\":{\"$ref\":\"#/$defs/t\"},\"t\":{\"type\":"
	  "\"string\"}},\"properties\":{\"a\":{\"$ref\":\"#/$defs/s\","
	  "\"enum\":[\"x\"]}}}", "{\"a\":\"y\"}", "params.a must be one of "
	  "[\"x\"]" },
	{ "{\"$defs\":{\"s\":{\"$ref\":\"#/$defs/t\"},\"t\":{\"type\":"
	  "\"string\"}},\"properties\":{\"a\":{\"$ref\":\"#/$defs/s\","
	  "\"enum\":[\"x\",1]}}}", "{\"a\":1}", "params.a must be string" },
	/* $schema is an annotation: either dialect, with or without '#'. */
	{ "{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
	  "\"properties\":{\"a\":{}}}", "{\"a\":1}", NULL },
	{ "{\"$schema\":\"http://json-schema.org/draft-07/schema\"}", "{}",
	  NULL },
	{ "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema#\"}",
	  "{}", NULL },
};

START_TEST(schema_validation)
{
	json_object	*s = P(schema_cases[_i].schema);
	json_object	*v = P(schema_cases[_i].value);
	int		 rc;

	ck_assert_msg(schema_check(s, err, sizeof(err)) == 0, "case %d: %s",
	    _i, err);
	rc = schema_validate(s, v, err, sizeof(err));
	if (schema_cases[_i].want == NULL)
		ck_assert_msg(rc == 0, "case %d: %s", _i, err);
	else {
		ck_assert_msg(rc == -1, "case %d accepted", _i);
		ck_assert_msg(strstr(err, schema_cases[_i].want) != NULL,
		    "case %d: '%s' lacks '%s'", _i, err, schema_cases[_i].want);
	}
	json_object_put(s);
	json_object_put(v);
}
END_TEST

/* {"next": ...} n deep, built by hand: no parser depth limit in the way. */
static json_object *
deep_list(int n)
{
	json_object	*v = json_object_new_object(), *o;

	while (n-- > 0) {
		o = json_object_new_object();
		json_object_object_add(o, "next", v);
		v = o;
	}
	o = json_object_new_object();
	json_object_object_add(o, "head", v);
	return o;
}

/*
 * A recursive $ref goes as deep as the value, up to SCHEMA_MAX_DEPTH
 * schemas entered: each "next" is a property and a reference.
 */
START_TEST(depth_cap)
{
	json_object	*s = P(LIST_SCHEMA), *v;

	ck_assert_int_eq(schema_check(s, err, sizeof(err)), 0);
	v = deep_list(SCHEMA_MAX_DEPTH / 2 - 1);
	ck_assert_msg(schema_validate(s, v, err, sizeof(err)) == 0, "%s", err);
	json_object_put(v);
	v = deep_list(SCHEMA_MAX_DEPTH / 2);
	ck_assert_int_eq(schema_validate(s, v, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ": nested deeper than 256 schemas "
	    "(properties, items and references)") != NULL, "%s", err);
	ck_assert_msg(strncmp(err, "params.head.next.next.", 22) == 0, "%s",
	    err);
	json_object_put(v);
	json_object_put(s);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("schema");
	TCase	*tc = tcase_create("schema");

	tcase_add_loop_test(tc, bad_table, 0,
	    sizeof(bad_tables) / sizeof(bad_tables[0]));
	tcase_add_test(tc, good_table);
	tcase_add_loop_test(tc, schema_validation, 0,
	    sizeof(schema_cases) / sizeof(schema_cases[0]));
	tcase_add_test(tc, depth_cap);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
