/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: the status file of MCP for Unity's bridge as the
 * unity-mcp face reads it (unitystatus.c), named by
 * --unity-bridge-status (first byte even) or found in ~/.unity-mcp by
 * its unity_port (odd); the rest is the file.  When the face takes it,
 * the file the face writes is strict JSON with its own port, reloading,
 * seq and heartbeat, and the bridge's project fields exactly as read;
 * it goes when the face stops.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "faces.h"
#include "fuzzutil.h"
#include "jstrict.h"
#include "log.h"
#include "options.h"

#define FACE_PORT	7777
#define NAME		"unity-mcp-status-0123abcd.json"

static struct options	opt;
static char		*bridge, *found, *outdir, *written;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char	*t = fuzz_tmpdir();
	char		*d;

	(void)argc;
	(void)argv;
	log_init(LOG_LVL_ERROR, "fuzz");
	if (asprintf(&bridge, "%s/%s", t, NAME) == -1 ||
	    asprintf(&d, "%s/.unity-mcp", t) == -1 ||
	    asprintf(&found, "%s/%s", d, NAME) == -1 ||
	    asprintf(&outdir, "%s/face", t) == -1 ||
	    asprintf(&written, "%s/%s", outdir, NAME) == -1 ||
	    mkdir(d, 0700) == -1 ||
	    mkdir(outdir, 0700) == -1)
		abort();
	free(d);
	setenv("HOME", t, 1);
	opt.unity_status_dir = outdir;
	return 0;
}

/* The file the face wrote, checked against what the bridge's says. */
static void
check_written(json_object *src, int reloading, int64_t seq)
{
	static const char	*keep[] = { "project_path", "project_name",
				    "unity_version", "project_scoped_tools" };
	json_object		*o, *v, *w;
	char			 buf[70000];
	FILE			*f;
	size_t			 n, i;

	if ((f = fopen(written, "r")) == NULL)
		fuzz_fail("the face wrote no %s", written);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	o = fuzz_json("the face's status file", buf, n);
	if (json_object_get_int64(json_object_object_get(o, "unity_port")) !=
	    FACE_PORT || json_object_get_boolean(json_object_object_get(o,
	    "reloading")) != reloading || json_object_get_int64(
	    json_object_object_get(o, "seq")) != seq ||
	    !json_object_is_type(json_object_object_get(o, "last_heartbeat"),
	    json_type_string))
		fuzz_fail("the face's own fields: %.*s", (int)n, buf);
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		v = json_object_object_get(src, keep[i]);
		w = json_object_object_get(o, keep[i]);
		if (json_object_object_get_ex(src, keep[i], NULL) !=
		    json_object_object_get_ex(o, keep[i], NULL) ||
		    !json_object_equal(v, w))
			fuzz_fail("%s not kept as read", keep[i]);
	}
	json_object_put(o);
}

/* The unity_port of the file's object, if it has one. */
static int
its_port(const uint8_t *data, size_t size)
{
	json_object	*o, *p;
	int		 port = 6400;

	if (jstrict_parse((const char *)data, size, &o) != 0)
		return port;
	if (json_object_object_get_ex(o, "unity_port", &p) &&
	    json_object_is_type(p, json_type_int))
		port = (int)json_object_get_int64(p);
	json_object_put(o);
	return port;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unitystatus_id	 id;
	struct unitystatus	*us;
	json_object		*src;
	char			 err[256];
	int			 port = 0, dirfd;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		opt.unity_bridge_status = NULL;
		fuzz_write_file(found, data + 1, size - 1);
		port = its_port(data + 1, size - 1);
	} else {
		opt.unity_bridge_status = bridge;
		fuzz_write_file(bridge, data + 1, size - 1);
	}
	if (unitystatus_identify(&opt, port, &id) == 0) {
		/* Taken: then it was a JSON object. */
		src = fuzz_json("a status file taken", (const char *)data + 1,
		    size - 1);
		if (strcmp(id.name, NAME) != 0)
			fuzz_fail("named %s", id.name);
		json_object_put(id.fields);
		if ((dirfd = unitystatus_open_dir(&opt, err,
		    sizeof(err))) == -1)
			fuzz_fail("%s", err);
		us = unitystatus_new(NULL, &opt, dirfd, FACE_PORT, port);
		check_written(src, 0, 1);
		unitystatus_set_reloading(us, 1);
		check_written(src, 1, 2);
		unitystatus_free(us);
		if (access(written, F_OK) == 0)
			fuzz_fail("the face's file left behind");
		json_object_put(src);
	}
	unlink(found);
	unlink(bridge);
	return 0;
}
