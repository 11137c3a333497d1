/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_SCHEMA_H
#define CMDGATE_SCHEMA_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * The subset of JSON Schema that tool tables use for parameters:
 * type (one name or a list), properties, required, default, enum, items,
 * additionalProperties (boolean), the annotations description and title,
 * and at the top only $schema (the 2020-12 or draft-07 meta-schema) and
 * $defs, which $ref ("#/$defs/NAME", nothing else) names anywhere.  Any
 * other keyword is refused when the table is loaded, so that a typo
 * cannot silently disable a check; so is a $ref to no definition, and
 * definitions whose references go round with no property or item
 * between.  See cmdgate.tools(5).
 */

/* Schemas entered (properties, items, references) before a value is refused. */
#define SCHEMA_MAX_DEPTH	256

/* Check that schema uses only the subset; 0, or -1 with err naming where. */
int	schema_check(json_object *schema, char *err, size_t errlen);

/* Validate value against schema; 0, or -1 with err naming the member. */
int	schema_validate(json_object *schema, json_object *value,
	    char *err, size_t errlen);

/*
 * The same for a tool's output_schema, whose top must say "type":
 * "object", and its output: err names "output_schema..." or "output...".
 */
int	schema_check_output(json_object *schema, char *err, size_t errlen);
int	schema_validate_output(json_object *schema, json_object *value,
	    char *err, size_t errlen);

#endif
