/* SPDX-License-Identifier: ISC */
/*
 * cmdgate top (cmdgate(1)): --once draws the view (cli_top.c) once to
 * stdout; without it, the live screen.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "cli_top.h"
#include "cli_toplive.h"
#include "client.h"

#define TOP_NAME	"cmdgate-top"

static int
top_once(struct cli *cl)
{
	struct top_view	 v;
	int		 rc, rows, width;

	if ((rc = top_fetch(cl, &v)) != 0)
		return rc;
	width = top_width(STDOUT_FILENO, 0, &rows);
	top_draw(stdout, &v, width, -1, 0);
	top_view_free(&v);
	return 0;
}

/* Name the connection, so that top shows itself as such. */
static int
top_name(struct cli *cl)
{
	json_object	*p = json_object_new_object(), *r;
	int		 rc = 0;

	json_object_object_add(p, "name", json_object_new_string(TOP_NAME));
	if ((r = cli_call(cl, "set_client_name", p, &rc)) == NULL)
		return rc;
	json_object_put(r);
	return 0;
}

int
cmd_top(struct cli *cl, int argc, char **argv)
{
	int	rc;

	if ((argc == 1 || (argc == 2 && strcmp(argv[1], "--once") == 0)) &&
	    (rc = top_name(cl)) != 0)
		return rc;
	if (argc == 2 && strcmp(argv[1], "--once") == 0)
		return top_once(cl);
	if (argc != 1)
		return cli_usage_error("top takes only --once, not '%s'",
		    argv[1]);
	return top_once(cl);
}
