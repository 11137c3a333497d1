/* SPDX-License-Identifier: ISC */
/*
 * The table the broker uses without --tools.  Nothing here runs a shell
 * unless the admin enables it; cmdgate.tools(5) lists these tools.
 */
#include "config.h"

#include "tools.h"

const char tooltab_default_json[] =
"{\"tools\": [\n"
"  {\"name\": \"echo\", \"tier\": \"instant\",\n"
"   \"description\": \"Print a text (a harmless first call)\",\n"
"   \"exec\": [\"echo\", \"{text}\"],\n"
"   \"params\": {\"type\": \"object\", \"properties\":\n"
"     {\"text\": {\"type\": \"string\", \"default\": \"\"}}}},\n"
"  {\"name\": \"sleep\", \"tier\": \"smooth\",\n"
"   \"description\": \"Wait a number of seconds\",\n"
"   \"exec\": [\"sleep\", \"{seconds}\"],\n"
"   \"params\": {\"type\": \"object\", \"properties\":\n"
"     {\"seconds\": {\"type\": \"integer\", \"default\": 1}}}},\n"
"  {\"name\": \"shell\", \"tier\": \"heavy\", \"enabled\": false,\n"
"   \"description\": \"Run a shell script (disabled: enable it in your own "
"table)\",\n"
"   \"exec\": [\"sh\", \"-c\", \"{script}\"],\n"
"   \"params\": {\"type\": \"object\", \"required\": [\"script\"],\n"
"     \"properties\": {\"script\": {\"type\": \"string\"}}}}\n"
"]}\n";
