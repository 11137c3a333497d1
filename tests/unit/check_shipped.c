/* SPDX-License-Identifier: ISC */
/*
 * The shipped Unity tables (etc/tools/unity-mcp.json, unity-hub.json,
 * uloop.json): every command the agents' own servers send is in them,
 * classified for the reload guard.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "tools.h"

static struct tooltab *
load_example(const char *name)
{
	struct tooltab	*tab = NULL;
	const char	*src = getenv("CMDGATE_SRCDIR");
	char		 path[1024], err[1024];

	snprintf(path, sizeof(path), "%s/etc/tools/%s", src ? src : ".", name);
	ck_assert_msg(tooltab_load_file(path, &tab, err, sizeof(err)) == 0,
	    "%s", err);
	return tab;
}

static json_object *
P(const char *json)
{
	return json_tokener_parse(json);
}

/*
 * Every command type MCP for Unity's Python server (v10.1.0, Server/src)
 * sends to the editor's bridge: the C# side's [McpForUnityTool] and
 * [McpForUnityResource] names.  A command not in the table cannot be used
 * through a unity-mcp@ listener.
 */
static const char *unity_commands[] = {
	"batch_execute", "execute_code", "execute_menu_item",
	"find_gameobjects", "generate_audio", "generate_image",
	"generate_model", "get_active_tool", "get_cameras",
	"get_editor_state", "get_gameobject", "get_gameobject_component",
	"get_gameobject_components", "get_layers", "get_menu_items",
	"get_prefab_stage", "get_project_info", "get_renderer_features",
	"get_rendering_stats", "get_selection", "get_tags", "get_test_job",
	"get_tests", "get_tests_for_mode", "get_tool_states", "get_volumes",
	"get_windows", "import_model", "import_model_file",
	"manage_animation", "manage_asset", "manage_build", "manage_camera",
	"manage_components", "manage_editor", "manage_gameobject",
	"manage_graphics", "manage_material", "manage_packages",
	"manage_physics", "manage_prefabs", "manage_probuilder",
	"manage_profiler", "manage_scene", "manage_script",
	"manage_scriptable_object", "manage_shader", "manage_texture",
	"manage_ui", "manage_vfx", "read_console", "refresh_unity",
	"run_tests", "unity_reflect",
};

/*
 * Every tool uLoopMCP's editor (v2.1.1, Editor/Api/McpTools) serves, less
 * ping, set-client-name and get-tool-details, which the uloop@ face
 * answers itself.
 */
static const char *uloop_commands[] = {
	"clear-console", "compile", "control-play-mode", "debug-sleep",
	"execute-dynamic-code", "find-game-objects", "focus-window",
	"get-hierarchy", "get-logs", "get-version", "record-input",
	"replay-input", "run-tests", "screenshot", "simulate-keyboard",
	"simulate-mouse-input", "simulate-mouse-ui",
};

START_TEST(shipped_tables_complete)
{
	struct tooltab	*tab;
	size_t		 i;

	tab = load_example("unity-mcp.json");
	for (i = 0; i < sizeof(unity_commands) / sizeof(*unity_commands); i++)
		ck_assert_msg(tooltab_find(tab, unity_commands[i]) != NULL,
		    "unity-mcp.json lacks %s", unity_commands[i]);
	ck_assert_uint_eq(tab->ntools,
	    sizeof(unity_commands) / sizeof(*unity_commands));
	tooltab_free(tab);
	tab = load_example("uloop.json");
	for (i = 0; i < sizeof(uloop_commands) / sizeof(*uloop_commands); i++)
		ck_assert_msg(tooltab_find(tab, uloop_commands[i]) != NULL,
		    "uloop.json lacks %s", uloop_commands[i]);
	ck_assert_uint_eq(tab->ntools,
	    sizeof(uloop_commands) / sizeof(*uloop_commands));
	tooltab_free(tab);
}
END_TEST

/* How the guard must see the commands that matter to it. */
static const struct {
	const char	*table;
	const char	*tool;
	const char	*params;	/* NULL: none */
	int		 reload;
	enum tier	 tier;
} guard_cases[] = {
	{ "unity-mcp.json", "refresh_unity", NULL, 1, TIER_HEAVY },
	{ "unity-mcp.json", "refresh_unity", "{\"compile\":\"request\"}",
	    1, TIER_HEAVY },
	{ "unity-mcp.json", "manage_editor", "{\"action\":\"play\"}",
	    1, TIER_HEAVY },
	{ "unity-mcp.json", "manage_editor", "{\"action\":\"deploy_package\"}",
	    1, TIER_HEAVY },
	{ "unity-mcp.json", "manage_editor", "{\"action\":\"pause\"}",
	    0, TIER_SMOOTH },
	{ "unity-mcp.json", "manage_script", "{\"action\":\"update\"}",
	    1, TIER_HEAVY },
	{ "unity-mcp.json", "manage_script",
	    "{\"action\":\"apply_text_edits\"}", 1, TIER_HEAVY },
	{ "unity-mcp.json", "manage_script", "{\"action\":\"delete\"}",
	    1, TIER_HEAVY },
	{ "unity-mcp.json", "manage_script", NULL, 1, TIER_HEAVY },
	{ "unity-mcp.json", "manage_script", "{\"action\":\"get_sha\"}",
	    0, TIER_INSTANT },
	{ "unity-mcp.json", "manage_packages",
	    "{\"action\":\"add_package\"}", 1, TIER_HEAVY },
	{ "unity-mcp.json", "manage_packages",
	    "{\"action\":\"remove_package\"}", 1, TIER_HEAVY },
	{ "unity-mcp.json", "manage_packages",
	    "{\"action\":\"list_packages\"}", 0, TIER_INSTANT },
	{ "unity-mcp.json", "manage_build", "{\"action\":\"platform\"}",
	    1, TIER_HEAVY },
	{ "unity-mcp.json", "manage_build", "{\"action\":\"settings\"}",
	    1, TIER_HEAVY },
	{ "unity-mcp.json", "manage_build", "{\"action\":\"build\"}",
	    0, TIER_HEAVY },
	{ "unity-mcp.json", "manage_build", "{\"action\":\"status\"}",
	    0, TIER_INSTANT },
	{ "unity-mcp.json", "batch_execute", "{\"commands\":[]}",
	    1, TIER_HEAVY },
	{ "unity-mcp.json", "execute_menu_item", "{\"menuPath\":\"A/B\"}",
	    1, TIER_HEAVY },
	{ "unity-mcp.json", "run_tests", "{\"mode\":\"PlayMode\"}",
	    0, TIER_HEAVY },
	{ "unity-mcp.json", "manage_scene", "{\"action\":\"load\"}",
	    0, TIER_HEAVY },
	{ "unity-mcp.json", "manage_scene", "{\"action\":\"get_active\"}",
	    0, TIER_INSTANT },
	{ "unity-mcp.json", "manage_gameobject", "{\"action\":\"create\"}",
	    0, TIER_SMOOTH },
	{ "unity-mcp.json", "manage_shader", "{\"action\":\"read\"}",
	    0, TIER_INSTANT },
	{ "unity-mcp.json", "manage_vfx", "{\"action\":\"particle_get_info\"}",
	    0, TIER_INSTANT },
	{ "unity-mcp.json", "manage_animation",
	    "{\"action\":\"controller_get_info\"}", 0, TIER_INSTANT },
	{ "uloop.json", "compile", NULL, 1, TIER_HEAVY },
	{ "uloop.json", "control-play-mode", NULL, 1, TIER_HEAVY },
	{ "uloop.json", "control-play-mode", "{\"Action\":\"Play\"}",
	    1, TIER_HEAVY },
	{ "uloop.json", "control-play-mode", "{\"Action\":\"Stop\"}",
	    0, TIER_SMOOTH },
	{ "uloop.json", "run-tests", NULL, 0, TIER_HEAVY },
	{ "uloop.json", "execute-dynamic-code", "{\"Code\":\"\"}",
	    0, TIER_HEAVY },
	{ "uloop.json", "execute-dynamic-code", "{\"CompileOnly\":true}",
	    0, TIER_SMOOTH },
	{ "uloop.json", "replay-input", "{\"Action\":\"Status\"}",
	    0, TIER_INSTANT },
	{ "uloop.json", "simulate-keyboard", "{\"Key\":\"W\"}",
	    0, TIER_SMOOTH },
};

START_TEST(shipped_guard_cases)
{
	struct tooltab		*tab = load_example(guard_cases[_i].table);
	const struct tool	*t = tooltab_find(tab, guard_cases[_i].tool);
	json_object		*p = guard_cases[_i].params != NULL ?
				    P(guard_cases[_i].params) : NULL;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(tool_command_reload(t, p), guard_cases[_i].reload);
	ck_assert_int_eq(tool_command_tier(t, p), guard_cases[_i].tier);
	json_object_put(p);
	tooltab_free(tab);
}
END_TEST

/* The tools that run tests or compile hold the guard while they run. */
START_TEST(shipped_busy)
{
	static const struct {
		const char	*table, *tool;
		enum busy	 busy;
	} want[] = {
		{ "unity-mcp.json", "run_tests", BUSY_TESTS_RUNNING },
		{ "unity-mcp.json", "refresh_unity", BUSY_COMPILING },
		{ "unity-mcp.json", "manage_build", BUSY_COMPILING },
		{ "uloop.json", "run-tests", BUSY_TESTS_RUNNING },
		{ "uloop.json", "compile", BUSY_COMPILING },
	};
	struct tooltab	*tab;
	size_t		 i;

	for (i = 0; i < sizeof(want) / sizeof(*want); i++) {
		tab = load_example(want[i].table);
		ck_assert_msg(tooltab_find(tab, want[i].tool)->busy ==
		    want[i].busy, "%s", want[i].tool);
		tooltab_free(tab);
	}
}
END_TEST

static int
fwd_idempotent(const struct tool *t)
{
	json_object	*v;

	return t->forward_json != NULL &&
	    json_object_object_get_ex(t->forward_json, "idempotent", &v) &&
	    json_object_get_boolean(v);
}

/*
 * Reads are instant and idempotent, and only reads are idempotent: a tool
 * sent again after a lost connection must be one whose every command is
 * an instant read (clear-console, which does what it did, is the one
 * exception).  A reload tool is never idempotent.
 */
START_TEST(shipped_reads_idempotent)
{
	static const char	*names[] = { "unity-mcp.json", "unity-hub.json",
				    "uloop.json" };
	struct tooltab		*tab;
	const struct tool	*t;
	size_t			 i, k;
	int			 reads;

	for (k = 0; k < sizeof(names) / sizeof(*names); k++) {
		tab = load_example(names[k]);
		for (i = 0; i < tab->ntools; i++) {
			t = &tab->tools[i];
			reads = t->tier == TIER_INSTANT && t->nrules == 0 &&
			    !t->reload_always && t->nreload == 0 &&
			    t->busy == BUSY_NONE;
			if (strcmp(t->name, "clear-console") == 0)
				reads = 1;
			ck_assert_msg(fwd_idempotent(t) == reads,
			    "%s: %s idempotent %d, read %d", names[k],
			    t->name, fwd_idempotent(t), reads);
		}
		tooltab_free(tab);
	}
}
END_TEST

/*
 * unity-hub.json is unity-mcp.json over the unity-hub dialect (the same
 * commands, the server's own ping besides): every tool classified alike,
 * each guard case judged the same, every forward and the probe over the
 * hub.
 */
START_TEST(hub_table_mirrors)
{
	struct tooltab		*mcp = load_example("unity-mcp.json");
	struct tooltab		*hub = load_example("unity-hub.json");
	const struct tool	*a, *b;
	json_object		*p, *d;
	size_t			 i;

	ck_assert_uint_eq(hub->ntools, mcp->ntools + 1);
	ck_assert_ptr_nonnull(tooltab_find(hub, "ping"));
	for (i = 0; i < mcp->ntools; i++) {
		a = &mcp->tools[i];
		ck_assert_msg((b = tooltab_find(hub, a->name)) != NULL,
		    "unity-hub.json lacks %s", a->name);
		ck_assert_int_eq(a->tier, b->tier);
		ck_assert_int_eq(a->busy, b->busy);
		ck_assert_int_eq(a->reload_always, b->reload_always);
		ck_assert_uint_eq(a->nreload, b->nreload);
		ck_assert_uint_eq(a->nrules, b->nrules);
		ck_assert_int_eq(fwd_idempotent(a), fwd_idempotent(b));
		ck_assert(json_object_object_get_ex(b->forward_json,
		    "dialect", &d));
		ck_assert_str_eq(json_object_get_string(d), "unity-hub");
	}
	for (i = 0; i < sizeof(guard_cases) / sizeof(*guard_cases); i++) {
		if (strcmp(guard_cases[i].table, "unity-mcp.json") != 0)
			continue;
		b = tooltab_find(hub, guard_cases[i].tool);
		p = guard_cases[i].params != NULL ? P(guard_cases[i].params) :
		    NULL;
		ck_assert_int_eq(tool_command_reload(b, p),
		    guard_cases[i].reload);
		ck_assert_int_eq(tool_command_tier(b, p), guard_cases[i].tier);
		json_object_put(p);
	}
	tooltab_free(mcp);
	tooltab_free(hub);
}
END_TEST

/*
 * The unity-mcp@ face hands a table tool the params the Python server put
 * on the wire (testNames, searchTerm, ...), so unity-mcp.json's schemas
 * use those names and send them on as they are: a forward.params mapping
 * from other names would drop every one of them.
 */
START_TEST(shipped_unity_wire_names)
{
	struct tooltab		*tab = load_example("unity-mcp.json");
	const struct tool	*t;
	json_object		*props;
	size_t			 i;

	for (i = 0; i < tab->ntools; i++) {
		t = &tab->tools[i];
		ck_assert_msg(!json_object_object_get_ex(t->forward_json,
		    "params", NULL), "%s maps its params", t->name);
	}
	t = tooltab_find(tab, "run_tests");
	ck_assert(json_object_object_get_ex(t->params, "properties", &props));
	ck_assert(json_object_object_get_ex(props, "testNames", NULL));
	ck_assert(json_object_object_get_ex(props, "includeFailedTests", NULL));
	t = tooltab_find(tab, "find_gameobjects");
	ck_assert(json_object_object_get_ex(t->params, "properties", &props));
	ck_assert(json_object_object_get_ex(props, "searchTerm", NULL));
	tooltab_free(tab);
}
END_TEST

/* Commands as the clients put them on the wire pass the tables' schemas. */
static const struct {
	const char	*table, *tool, *params;
} wire_cases[] = {
	{ "unity-mcp.json", "run_tests", "{\"mode\":\"EditMode\","
	    "\"testNames\":[\"A.B\"],\"includeFailedTests\":true,"
	    "\"initTimeout\":120000}" },
	{ "unity-mcp.json", "get_test_job", "{\"job_id\":\"j1\","
	    "\"includeDetails\":true}" },
	{ "unity-mcp.json", "refresh_unity", "{\"mode\":\"force\","
	    "\"scope\":\"all\",\"compile\":\"request\","
	    "\"wait_for_ready\":true}" },
	{ "unity-mcp.json", "read_console", "{\"action\":\"get\","
	    "\"types\":[\"error\"],\"count\":null,\"format\":\"plain\","
	    "\"includeStacktrace\":false,\"pageSize\":50,\"cursor\":0}" },
	{ "unity-mcp.json", "find_gameobjects", "{\"searchMethod\":"
	    "\"by_name\",\"searchTerm\":\"Player\",\"includeInactive\":false,"
	    "\"pageSize\":50,\"cursor\":0}" },
	{ "unity-mcp.json", "manage_script", "{\"action\":\"apply_text_edits\","
	    "\"name\":\"A\",\"path\":\"Assets\",\"edits\":[],"
	    "\"options\":{\"refresh\":\"debounced\"}}" },
	{ "unity-mcp.json", "manage_editor", "{\"action\":\"add_tag\","
	    "\"tagName\":\"T\"}" },
	{ "unity-mcp.json", "get_gameobject_components", "{\"instanceID\":"
	    "-81840,\"pageSize\":25,\"cursor\":0,\"includeProperties\":true}" },
	{ "uloop.json", "get-logs", "{\"LogType\":\"Error\",\"MaxCount\":10,"
	    "\"SearchText\":\"\",\"UseRegex\":false}" },
	{ "uloop.json", "run-tests", "{\"TestMode\":\"PlayMode\","
	    "\"FilterType\":\"regex\",\"FilterValue\":\"^A\"}" },
	{ "uloop.json", "find-game-objects", "{\"SearchMode\":\"Selected\","
	    "\"MaxResults\":5}" },
	{ "uloop.json", "simulate-mouse-ui", "{\"Action\":\"Drag\",\"X\":1.5,"
	    "\"Y\":2,\"FromX\":0,\"FromY\":0}" },
};

START_TEST(shipped_wire_params)
{
	struct tooltab		*tab = load_example(wire_cases[_i].table);
	const struct tool	*t = tooltab_find(tab, wire_cases[_i].tool);
	json_object		*p = P(wire_cases[_i].params);
	char			 err[1024];

	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(p);
	ck_assert_msg(schema_validate(t->params, p, err, sizeof(err)) == 0,
	    "%s: %s", t->name, err);
	json_object_put(p);
	tooltab_free(tab);
}
END_TEST

static Suite *
shipped_suite(void)
{
	Suite	*s = suite_create("shipped");
	TCase	*tc = tcase_create("shipped");

	tcase_add_test(tc, shipped_tables_complete);
	tcase_add_loop_test(tc, shipped_guard_cases, 0,
	    sizeof(guard_cases) / sizeof(*guard_cases));
	tcase_add_test(tc, shipped_busy);
	tcase_add_test(tc, shipped_reads_idempotent);
	tcase_add_test(tc, hub_table_mirrors);
	tcase_add_test(tc, shipped_unity_wire_names);
	tcase_add_loop_test(tc, shipped_wire_params, 0,
	    sizeof(wire_cases) / sizeof(*wire_cases));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(shipped_suite());
}
