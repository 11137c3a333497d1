/* SPDX-License-Identifier: ISC */
/* Tool tables: good and bad tables, classification (schemas: check_schema). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "tools.h"

static char	err[1024];

static struct tooltab *
load(const char *json)
{
	struct tooltab	*tab = NULL;

	err[0] = '\0';
	if (tooltab_load_string(json, "t.json", &tab, err, sizeof(err)) == -1)
		return NULL;
	return tab;
}

static struct tooltab *
load_example(const char *name)
{
	struct tooltab	*tab = NULL;
	const char	*src = getenv("CMDGATE_SRCDIR");
	char		 path[1024];

	snprintf(path, sizeof(path), "%s/etc/tools/%s", src ? src : ".", name);
	ck_assert_msg(tooltab_load_file(path, &tab, err, sizeof(err)) == 0,
	    "%s", err);
	return tab;
}

START_TEST(embedded_default)
{
	struct tooltab		*tab = tooltab_default();
	const struct tool	*t;
	size_t			 i, j;

	ck_assert_str_eq(tab->source, "(embedded)");
	/* Nothing that runs a shell is enabled by default. */
	for (i = 0; i < tab->ntools; i++) {
		t = &tab->tools[i];
		for (j = 0; j < t->nexec; j++)
			if (strcmp(t->exec[j], "sh") == 0 ||
			    strcmp(t->exec[j], "bash") == 0 ||
			    strcmp(t->exec[j], "-c") == 0)
				ck_assert_msg(!t->enabled, "%s runs a shell",
				    t->name);
	}
	ck_assert_ptr_nonnull(tooltab_find(tab, "echo"));
	ck_assert_ptr_null(tooltab_find(tab, "nope"));
	tooltab_free(tab);
}
END_TEST

START_TEST(good_table_defaults)
{
	struct tooltab		*tab;
	const struct tool	*t;

	tab = load("{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\",\"{y}\"]},"
	    "{\"name\":\"b.c-d_e\",\"forward\":\"localhost:9\",\"tier\":"
	    "\"heavy\",\"enabled\":false,\"timeout_s\":5,\"busy\":"
	    "\"compiling\",\"reload\":true,\"description\":\"d\"}]}");
	ck_assert_msg(tab != NULL, "%s", err);
	t = tooltab_find(tab, "a");
	ck_assert_int_eq(t->tier, TIER_SMOOTH);
	ck_assert_int_eq(t->enabled, 1);
	ck_assert_uint_eq(t->timeout_s, TOOL_TIMEOUT_DEFAULT);
	ck_assert_int_eq(t->busy, BUSY_NONE);
	ck_assert_uint_eq(t->nexec, 2);
	ck_assert_ptr_null(t->exec[2]);
	ck_assert_int_eq(tool_command_reload(t, NULL), 0);
	t = tooltab_find(tab, "b.c-d_e");
	ck_assert_str_eq(t->forward, "localhost:9");
	ck_assert_int_eq(t->tier, TIER_HEAVY);
	ck_assert_int_eq(t->enabled, 0);
	ck_assert_uint_eq(t->timeout_s, 5);
	ck_assert_int_eq(t->busy, BUSY_COMPILING);
	ck_assert_int_eq(tool_command_reload(t, NULL), 1);
	tooltab_free(tab);
}
END_TEST

static const struct {
	const char	*json;
	const char	*want;	/* a part of the error message */
} bad_tables[] = {
	{ "", "t.json: not valid JSON" },
	{ "{\"tools\":[}", "t.json: not valid JSON" },
	{ "[]", "must be {\"tools\": [...]}" },
	{ "{\"tools\":{}}", "must be {\"tools\": [...]}" },
	{ "{\"tools\":[],\"x\":1}", "table: field 'x': unknown field" },
	{ "{\"tools\":[1]}", "tool #0: a tool must be an object" },
	{ "{\"tools\":[{\"exec\":[\"x\"]}]}", "tool #0: field 'name'" },
	{ "{\"tools\":[{\"name\":\"a b\",\"exec\":[\"x\"]}]}",
	  "tool #0: field 'name'" },
	{ "{\"tools\":[{\"name\":\"a\"}]}",
	  "tool 'a': needs exactly one of \"exec\" and \"forward\"" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"forward\":\"h:1\"}]}",
	  "tool 'a': needs exactly one" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[]}]}",
	  "tool 'a': field 'exec'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\",3]}]}",
	  "tool 'a': field 'exec': element 1" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":\"x\"}]}",
	  "tool 'a': field 'exec'" },
	{ "{\"tools\":[{\"name\":\"a\",\"forward\":\"nohost\"}]}",
	  "tool 'a': field 'forward'" },
	{ "{\"tools\":[{\"name\":\"a\",\"forward\":\"h:70000\"}]}",
	  "tool 'a': field 'forward'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"tier\":\"fast\"}]}",
	  "tool 'a': field 'tier'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"busy\":\"yes\"}]}",
	  "tool 'a': field 'busy'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"enabled\":1}]}",
	  "tool 'a': field 'enabled'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"timeout_s\":0}]}",
	  "tool 'a': field 'timeout_s'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"timeout_s\":\"9\"}]}",
	  "tool 'a': field 'timeout_s'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"tiers\":1}]}",
	  "tool 'a': field 'tiers': unknown field" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"reload\":\"yes\"}]}",
	  "tool 'a': field 'reload'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"reload\":"
	  "{\"param\":\"p\"}}]}", "exactly one of \"in\" and \"not_in\"" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"reload\":"
	  "{\"param\":\"p\",\"in\":[1]}}]}", "must be a list of strings" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"reload\":"
	  "[{\"in\":[\"x\"]}]}]}", "needs \"param\"" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"tier_rules\":"
	  "[{\"param\":\"p\",\"in\":[\"x\"]}]}]}",
	  "field 'tier_rules': rule 0 needs \"tier\"" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"tier_rules\":"
	  "[{\"param\":\"p\",\"in\":[\"x\"],\"tier\":\"slow\"}]}]}",
	  "field 'tier_rules'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"params\":"
	  "{\"type\":\"string\"}}]}", "field 'params': params.type" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"params\":"
	  "{\"type\":\"object\",\"properties\":{\"d\":{\"type\":\"text\"}}}}]}",
	  "field 'params': params.d.type" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"params\":"
	  "{\"type\":\"object\",\"patternProperties\":{}}}]}",
	  "unsupported schema keyword 'patternProperties'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"params\":"
	  "{\"required\":[1]}}]}", "params.required" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"]},"
	  "{\"name\":\"a\",\"exec\":[\"y\"]}]}",
	  "tool 'a': field 'name': a tool of this name comes earlier" },
	/* Forward addresses: IPv6 only in brackets, and a real one. */
	{ "{\"tools\":[{\"name\":\"a\",\"forward\":\"::1:8700\"}]}",
	  "an IPv6 address goes in brackets" },
	{ "{\"tools\":[{\"name\":\"a\",\"forward\":\"[::1]\"}]}",
	  "tool 'a': field 'forward'" },
	{ "{\"tools\":[{\"name\":\"a\",\"forward\":\"[::g]:1\"}]}",
	  "tool 'a': field 'forward'" },
	{ "{\"tools\":[{\"name\":\"a\",\"forward\":\"[]:1\"}]}",
	  "tool 'a': field 'forward'" },
	{ "{\"tools\":[{\"name\":\"a\",\"forward\":\"[::1]:0\"}]}",
	  "tool 'a': field 'forward'" },
	{ "{\"tools\":[{\"name\":\"a\",\"forward\":\"[::1]x:1\"}]}",
	  "tool 'a': field 'forward'" },
	/* cwd: absolute, an existing directory, exec tools only. */
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"cwd\":\"tmp\"}]}",
	  "tool 'a': field 'cwd': must be an absolute path" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"cwd\":"
	  "\"/nonexistent/dir\"}]}", "field 'cwd': /nonexistent/dir: No such" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"cwd\":"
	  "\"/dev/null\"}]}", "field 'cwd': /dev/null: not a directory" },
	{ "{\"tools\":[{\"name\":\"a\",\"forward\":\"h:1\",\"cwd\":\"/\"}]}",
	  "field 'cwd': only exec tools" },
	/* allow_dash names parameters that exec templates use. */
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\",\"{p}\"],"
	  "\"allow_dash\":[\"q\"]}]}", "field 'allow_dash': no exec element "
	  "uses {q}" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\",\"{p}\"],"
	  "\"allow_dash\":true}]}", "field 'allow_dash': must be a list" },
	{ "{\"tools\":[{\"name\":\"a\",\"forward\":\"h:1\","
	  "\"allow_dash\":[]}]}", "field 'allow_dash': only exec tools" },
	{ "{\"tools\":[{\"name\":\"poll_job\",\"exec\":[\"x\"]}]}",
	  "tool 'poll_job': field 'name'" },
};

START_TEST(bad_table)
{
	struct tooltab	*tab = load(bad_tables[_i].json);

	ck_assert_msg(tab == NULL, "table %d accepted", _i);
	ck_assert_msg(strstr(err, bad_tables[_i].want) != NULL,
	    "table %d: error '%s' lacks '%s'", _i, err, bad_tables[_i].want);
	ck_assert_msg(strncmp(err, "t.json: ", 8) == 0,
	    "error '%s' does not name the file", err);
}
END_TEST

START_TEST(file_errors)
{
	struct tooltab	*tab = NULL;

	ck_assert_int_eq(tooltab_load_file("/nonexistent/tools.json", &tab,
	    err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/tools.json: cannot "
	    "open"));
}
END_TEST

START_TEST(same_and_changed)
{
	struct tooltab	*a = load("{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"]}]}");
	struct tooltab	*b = load("{ \"tools\" : [ {\"name\":\"a\", "
	    "\"exec\":[\"x\"]} ] }\n");
	struct tooltab	*c = load("{\"tools\":[{\"name\":\"a\",\"exec\":[\"y\"]}]}");

	ck_assert(tooltab_same(a, b));
	ck_assert(!tooltab_same(a, c));
	tooltab_free(a);
	tooltab_free(b);
	tooltab_free(c);
}
END_TEST

static json_object *
P(const char *json)
{
	return json_tokener_parse(json);
}

/* Classification of the example Unity table (cmdgate.tools(5)). */
START_TEST(classify_unity)
{
	struct tooltab		*tab = load_example("unity-mcp.json");
	const struct tool	*refresh = tooltab_find(tab, "refresh_unity");
	const struct tool	*editor = tooltab_find(tab, "manage_editor");
	const struct tool	*scene = tooltab_find(tab, "manage_scene");
	const struct tool	*tests = tooltab_find(tab, "run_tests");
	const struct tool	*script = tooltab_find(tab, "manage_script");
	json_object		*p;

	p = P("{\"compile\":\"request\"}");
	ck_assert(tool_command_reload(refresh, p));
	json_object_put(p);
	p = P("{\"compile\":\"none\"}");
	ck_assert(!tool_command_reload(refresh, p));
	ck_assert_int_eq(tool_command_tier(refresh, p), TIER_SMOOTH);
	json_object_put(p);
	p = P("{\"mode\":\"force\"}");	/* no compile key: not_in holds */
	ck_assert(tool_command_reload(refresh, p));
	ck_assert_int_eq(tool_command_tier(refresh, p), TIER_HEAVY);
	json_object_put(p);
	p = P("{}");
	ck_assert(tool_command_reload(refresh, p));
	json_object_put(p);
	/* No params at all: the same as {} (issue 19.3). */
	ck_assert(tool_command_reload(refresh, NULL));
	ck_assert_int_eq(tool_command_tier(refresh, NULL), TIER_HEAVY);
	p = P("{\"action\":\"play\"}");
	ck_assert(tool_command_reload(editor, p));
	ck_assert_int_eq(tool_command_tier(editor, p), TIER_HEAVY);
	json_object_put(p);
	p = P("{\"action\":\"stop\"}");
	ck_assert(!tool_command_reload(editor, p));
	json_object_put(p);
	p = P("{}");
	ck_assert(!tool_command_reload(tests, p));
	ck_assert_int_eq(tool_command_tier(tests, p), TIER_HEAVY);
	ck_assert_int_eq(tests->busy, BUSY_TESTS_RUNNING);
	json_object_put(p);
	/* A script write asks the editor to compile it: a reload. */
	p = P("{\"action\":\"create\",\"name\":\"A\"}");
	ck_assert(tool_command_reload(script, p));
	ck_assert_int_eq(tool_command_tier(script, p), TIER_HEAVY);
	json_object_put(p);
	p = P("{\"action\":\"read\",\"name\":\"A\"}");
	ck_assert(!tool_command_reload(script, p));
	ck_assert_int_eq(tool_command_tier(script, p), TIER_INSTANT);
	json_object_put(p);
	p = P("{\"action\":\"load\"}");
	ck_assert(!tool_command_reload(scene, p));
	ck_assert_int_eq(tool_command_tier(scene, p), TIER_HEAVY);
	json_object_put(p);
	p = P("{\"action\":\"get_hierarchy\"}");
	ck_assert_int_eq(tool_command_tier(scene, p), TIER_INSTANT);
	json_object_put(p);
	ck_assert_int_eq(tooltab_find(tab, "read_console")->tier, TIER_INSTANT);
	ck_assert_int_eq(tooltab_find(tab, "find_gameobjects")->tier,
	    TIER_INSTANT);
	tooltab_free(tab);
}
END_TEST

START_TEST(classify_make)
{
	struct tooltab		*tab = load_example("make.json");
	const struct tool	*t;

	t = tooltab_find(tab, "run_tests");
	ck_assert_int_eq(t->busy, BUSY_TESTS_RUNNING);
	ck_assert(!tool_command_reload(t, NULL));
	t = tooltab_find(tab, "build");
	ck_assert_int_eq(t->busy, BUSY_COMPILING);
	ck_assert(tool_command_reload(t, NULL));
	ck_assert(!tooltab_find(tab, "shell")->enabled);
	tooltab_free(tab);
	/* The README's walk-through table. */
	tab = load_example("demo.json");
	ck_assert_int_eq(tooltab_find(tab, "run_tests")->busy,
	    BUSY_TESTS_RUNNING);
	ck_assert(tool_command_reload(tooltab_find(tab, "rebuild"), NULL));
	tooltab_free(tab);
}
END_TEST

/* Conditions compare the JSON form of values that are not strings. */
START_TEST(classify_non_string)
{
	struct tooltab	*tab = load("{\"tools\":[{\"name\":\"a\",\"exec\":"
	    "[\"x\"],\"reload\":[{\"param\":\"n\",\"in\":[\"3\"]},{\"param\":"
	    "\"b\",\"in\":[\"true\"]}]}]}");
	json_object	*p;

	ck_assert_msg(tab != NULL, "%s", err);
	p = P("{\"n\":3}");
	ck_assert(tool_command_reload(&tab->tools[0], p));
	json_object_put(p);
	p = P("{\"b\":true}");
	ck_assert(tool_command_reload(&tab->tools[0], p));
	json_object_put(p);
	p = P("{\"n\":4,\"b\":false}");
	ck_assert(!tool_command_reload(&tab->tools[0], p));
	json_object_put(p);
	tooltab_free(tab);
}
END_TEST


START_TEST(details_shape)
{
	struct tooltab	*tab = load_example("unity-mcp.json");
	json_object	*d = tool_details(tooltab_find(tab, "manage_editor"));
	json_object	*v;

	ck_assert(json_object_object_get_ex(d, "reload", &v));
	ck_assert(json_object_is_type(v, json_type_object));
	ck_assert(json_object_object_get_ex(d, "busy", &v));
	ck_assert_ptr_null(v);
	ck_assert(json_object_object_get_ex(d, "params", &v));
	ck_assert(json_object_object_get_ex(v, "properties", NULL));
	json_object_put(d);
	tooltab_free(tab);
}
END_TEST

static const struct {
	const char	*exec;		/* one element */
	const char	*params;	/* NULL: absent */
	const char	*want;		/* NULL: missing parameter */
} templates[] = {
	{ "{dir}", "{\"dir\":\"a b; rm -rf /\"}", "a b; rm -rf /" },
	{ "-C{dir}/x", "{\"dir\":\"p\"}", "-Cp/x" },
	{ "{n}:{b}:{z}", "{\"n\":3,\"b\":true,\"z\":null}", "3:true:null" },
	{ "{o}", "{\"o\":{\"k\":[1,2]}}", "{\"k\":[1,2]}" },
	{ "{{dir}}", "{}", "{dir}" },
	{ "{ dir } {1x} {", "{}", "{ dir } {1x} {" },
	{ "a}b", "{}", "a}b" },
	{ "{dir}", NULL, "." },
	{ "{dir}", "{}", "." },
	{ "{missing}", "{}", NULL },
	{ "$(echo {dir})", "{\"dir\":\"`id`\"}", "$(echo `id`)" },
};

START_TEST(argv_templates)
{
	char		 json[1024];
	struct tooltab	*tab;
	json_object	*p = templates[_i].params ? P(templates[_i].params) :
			    NULL, *argv = NULL;
	int		 rc;

	/* The table text needs its quotes escaped once more. */
	{
		char esc[200], *o = esc;
		const char *q = templates[_i].exec;

		for (; *q; q++) {
			if (*q == '"')
				*o++ = '\\';
			*o++ = *q;
		}
		*o = '\0';
		snprintf(json, sizeof(json), "{\"tools\":[{\"name\":\"t\","
		    "\"exec\":[\"prog\",\"%s\"],\"params\":{\"properties\":"
		    "{\"dir\":{\"default\":\".\"}}}}]}", esc);
	}
	tab = load(json);
	ck_assert_msg(tab != NULL, "%s", err);
	rc = tool_expand_argv(&tab->tools[0], p, &argv, err, sizeof(err));
	if (templates[_i].want == NULL) {
		ck_assert_int_eq(rc, -1);
		ck_assert_ptr_nonnull(strstr(err, "\"missing\""));
	} else {
		ck_assert_int_eq(rc, 0);
		/* One element in, one argument out: never split. */
		ck_assert_uint_eq(json_object_array_length(argv), 2);
		ck_assert_str_eq(json_object_get_string(
		    json_object_array_get_idx(argv, 1)), templates[_i].want);
	}
	json_object_put(argv);
	json_object_put(p);
	tooltab_free(tab);
}
END_TEST

/* ---- tools and workers (h3) ------------------------------------------ */

/*
 * Issue 19.3: conditions see the params as the tool will, schema defaults
 * applied, also when the command has no params member at all.
 */
START_TEST(classify_with_defaults)
{
	struct tooltab		*tab;
	const struct tool	*req, *none;
	json_object		*p;

	tab = load("{\"tools\":["
	    "{\"name\":\"req\",\"exec\":[\"x\"],\"tier\":\"heavy\","
	    "\"reload\":{\"param\":\"compile\",\"in\":[\"request\"]},"
	    "\"tier_rules\":[{\"param\":\"compile\",\"in\":[\"none\"],"
	    "\"tier\":\"instant\"}],"
	    "\"params\":{\"properties\":{\"compile\":{\"type\":\"string\","
	    "\"default\":\"request\"}}}},"
	    "{\"name\":\"none\",\"exec\":[\"x\"],\"tier\":\"heavy\","
	    "\"reload\":{\"param\":\"compile\",\"in\":[\"request\"]},"
	    "\"tier_rules\":[{\"param\":\"compile\",\"in\":[\"none\"],"
	    "\"tier\":\"instant\"}],"
	    "\"params\":{\"properties\":{\"compile\":{\"type\":\"string\","
	    "\"default\":\"none\"}}}}]}");
	ck_assert_msg(tab != NULL, "%s", err);
	req = tooltab_find(tab, "req");
	none = tooltab_find(tab, "none");
	/* The default makes it a reload: absent params and {} alike. */
	ck_assert(tool_command_reload(req, NULL));
	p = P("{}");
	ck_assert(tool_command_reload(req, p));
	ck_assert_int_eq(tool_command_tier(req, p), TIER_HEAVY);
	ck_assert(!tool_command_reload(none, p));
	ck_assert_int_eq(tool_command_tier(none, p), TIER_INSTANT);
	json_object_put(p);
	ck_assert(!tool_command_reload(none, NULL));
	ck_assert_int_eq(tool_command_tier(none, NULL), TIER_INSTANT);
	/* A value sent wins over the default. */
	p = P("{\"compile\":\"request\"}");
	ck_assert(tool_command_reload(none, p));
	json_object_put(p);
	p = P("{\"compile\":\"none\"}");
	ck_assert(!tool_command_reload(req, p));
	ck_assert_int_eq(tool_command_tier(req, p), TIER_INSTANT);
	json_object_put(p);
	tooltab_free(tab);
}
END_TEST

/* Every shipped table classifies a command without params as with {}. */
START_TEST(shipped_tables_no_params)
{
	static const char	*names[] = { "unity-mcp.json", "uloop.json",
				    "mcp-http.json", "make.json", "demo.json" };
	struct tooltab		*tab;
	json_object		*empty = P("{}");
	size_t			 i, k;

	for (k = 0; k < sizeof(names) / sizeof(*names); k++) {
		tab = load_example(names[k]);
		for (i = 0; i < tab->ntools; i++) {
			ck_assert_int_eq(tool_command_reload(&tab->tools[i],
			    NULL), tool_command_reload(&tab->tools[i], empty));
			ck_assert_int_eq(tool_command_tier(&tab->tools[i],
			    NULL), tool_command_tier(&tab->tools[i], empty));
		}
		tooltab_free(tab);
	}
	json_object_put(empty);
}
END_TEST

static const struct {
	const char	*exec;		/* the elements after "prog" */
	const char	*allow;		/* allow_dash member, or NULL */
	const char	*params;
	const char	*refused;	/* the parameter named, or NULL */
} dash_cases[] = {
	{ "\"{a}\"", NULL, "{\"a\":\"--version\"}", "a" },
	{ "\"{a}\"", NULL, "{\"a\":\"-o/etc/x\"}", "a" },
	{ "\"{a}\"", NULL, "{\"a\":-5}", "a" },
	{ "\"{a}{b}\"", NULL, "{\"a\":\"\",\"b\":\"-x\"}", "b" },
	{ "\"{a}{b}\"", NULL, "{\"a\":\"x\",\"b\":\"-x\"}", NULL },
	{ "\"x{a}\"", NULL, "{\"a\":\"-x\"}", NULL },
	{ "\"-C{a}\"", NULL, "{\"a\":\"-x\"}", NULL },
	{ "\"{a}\"", NULL, "{\"a\":\"a-b\"}", NULL },
	{ "\"--\",\"{a}\"", NULL, "{\"a\":\"-x\"}", NULL },
	{ "\"{a}\",\"--\"", NULL, "{\"a\":\"-x\"}", "a" },
	{ "\"{a}\",\"{b}\"", "[\"a\"]", "{\"a\":\"-x\",\"b\":\"-y\"}", "b" },
	{ "\"{a}\",\"{b}\"", "[\"a\",\"b\"]", "{\"a\":\"-x\",\"b\":\"-y\"}",
	  NULL },
	{ "\"{d}\"", NULL, "{}", "d" },		/* the default counts too */
};

/* Issue 11 §1: a value that would become an option is refused. */
START_TEST(dash_arguments)
{
	char		 json[1024];
	struct tooltab	*tab;
	json_object	*p = P(dash_cases[_i].params), *argv = NULL;
	int		 rc;

	snprintf(json, sizeof(json), "{\"tools\":[{\"name\":\"t\",\"exec\":"
	    "[\"prog\",%s]%s%s,\"params\":{\"properties\":{\"d\":{\"default\":"
	    "\"-rf\"}}}}]}", dash_cases[_i].exec,
	    dash_cases[_i].allow ? ",\"allow_dash\":" : "",
	    dash_cases[_i].allow ? dash_cases[_i].allow : "");
	tab = load(json);
	ck_assert_msg(tab != NULL, "%s", err);
	rc = tool_expand_argv(&tab->tools[0], p, &argv, err, sizeof(err));
	if (dash_cases[_i].refused == NULL)
		ck_assert_msg(rc == 0, "case %d: %s", _i, err);
	else {
		char want[64];

		ck_assert_msg(rc == -1, "case %d accepted", _i);
		snprintf(want, sizeof(want), "parameter \"%s\" starts with '-'",
		    dash_cases[_i].refused);
		ck_assert_msg(strstr(err, want) != NULL, "case %d: %s", _i,
		    err);
	}
	json_object_put(argv);
	json_object_put(p);
	tooltab_free(tab);
}
END_TEST

/* Bracketed IPv6 forward addresses split into host and port. */
START_TEST(forward_addresses)
{
	struct tooltab	*tab;
	char		 host[64], port[8];

	ck_assert_int_eq(tool_forward_split("[::1]:8700", host, sizeof(host),
	    port, sizeof(port)), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_str_eq(port, "8700");
	ck_assert_int_eq(tool_forward_split("127.0.0.1:6400", host,
	    sizeof(host), port, sizeof(port)), 0);
	ck_assert_str_eq(host, "127.0.0.1");
	ck_assert_str_eq(port, "6400");
	ck_assert_int_eq(tool_forward_split("[fe80::1%lo]:1", host,
	    sizeof(host), port, sizeof(port)), -1);
	ck_assert_int_eq(tool_forward_split("::1:8700", host, sizeof(host),
	    port, sizeof(port)), -1);
	tab = load("{\"tools\":[{\"name\":\"a\",\"forward\":\"[::1]:8700\"}]}");
	ck_assert_msg(tab != NULL, "%s", err);
	tooltab_free(tab);
}
END_TEST

/* Issue 19.13: MCP's inputSchema always has "type": "object". */
START_TEST(input_schema_object)
{
	struct tooltab	*tab = load("{\"tools\":["
	    "{\"name\":\"a\",\"exec\":[\"x\"],\"params\":{}},"
	    "{\"name\":\"b\",\"exec\":[\"x\"],\"params\":{\"properties\":"
	    "{\"p\":{\"type\":\"string\"}}}},"
	    "{\"name\":\"c\",\"exec\":[\"x\"]},"
	    "{\"name\":\"d\",\"exec\":[\"x\"],\"cwd\":\"/\"}]}");
	json_object	*s, *v;
	size_t		 i;

	ck_assert_msg(tab != NULL, "%s", err);
	for (i = 0; i < tab->ntools; i++) {
		s = tool_input_schema(&tab->tools[i]);
		ck_assert(json_object_object_get_ex(s, "type", &v));
		ck_assert_str_eq(json_object_get_string(v), "object");
		json_object_put(s);
	}
	s = tool_input_schema(tooltab_find(tab, "b"));
	ck_assert(json_object_object_get_ex(s, "properties", NULL));
	json_object_put(s);
	ck_assert_str_eq(tooltab_find(tab, "d")->cwd, "/");
	tooltab_free(tab);
}
END_TEST

static Suite *
tools_suite(void)
{
	Suite	*s = suite_create("tools");
	TCase	*tc = tcase_create("tools");

	tcase_add_test(tc, embedded_default);
	tcase_add_test(tc, good_table_defaults);
	tcase_add_loop_test(tc, bad_table, 0,
	    sizeof(bad_tables) / sizeof(bad_tables[0]));
	tcase_add_test(tc, file_errors);
	tcase_add_test(tc, same_and_changed);
	tcase_add_test(tc, classify_unity);
	tcase_add_test(tc, classify_make);
	tcase_add_test(tc, classify_non_string);
	tcase_add_test(tc, details_shape);
	tcase_add_loop_test(tc, argv_templates, 0,
	    sizeof(templates) / sizeof(templates[0]));
	/* tools and workers (h3) */
	tcase_add_test(tc, classify_with_defaults);
	tcase_add_test(tc, shipped_tables_no_params);
	tcase_add_loop_test(tc, dash_arguments, 0,
	    sizeof(dash_cases) / sizeof(dash_cases[0]));
	tcase_add_test(tc, forward_addresses);
	tcase_add_test(tc, input_schema_object);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(tools_suite());
}
