/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: the tool table parser, and for a table it accepts,
 * the classification, argument templates, forward templates and
 * parameter and output schemas of each tool with the table itself as
 * parameters (and output).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tools.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tooltab	*tab;
	json_object	*params, *argv;
	char		*text = malloc(size + 1), err[1024];
	size_t		 i;

	memcpy(text, data, size);
	text[size] = '\0';
	if (tooltab_load_string(text, "fuzz.json", &tab, err,
	    sizeof(err)) == 0) {
		params = json_tokener_parse(text);
		for (i = 0; i < tab->ntools; i++) {
			(void)tool_command_tier(&tab->tools[i], params);
			(void)tool_command_reload(&tab->tools[i], params);
			json_object_put(tool_details(&tab->tools[i]));
			if (tab->tools[i].params != NULL)
				(void)schema_validate(tab->tools[i].params,
				    params, err, sizeof(err));
			if (tab->tools[i].meta.output_schema != NULL)
				(void)schema_validate_output(
				    tab->tools[i].meta.output_schema, params,
				    err, sizeof(err));
			if (tab->tools[i].exec != NULL &&
			    tool_expand_argv(&tab->tools[i], params, &argv, err,
			    sizeof(err)) == 0)
				json_object_put(argv);
			if (tab->tools[i].forward != NULL &&
			    tool_forward_command(&tab->tools[i], params, &argv,
			    err, sizeof(err)) == 0)
				json_object_put(argv);
		}
		json_object_put(params);
		tooltab_free(tab);
	} else if (strncmp(err, "fuzz.json: ", 11) != 0)
		abort();	/* every error names the file */
	free(text);
	return 0;
}
