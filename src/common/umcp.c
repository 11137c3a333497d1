/* SPDX-License-Identifier: ISC */
/* MCP for Unity's bridge protocol, client side, without the I/O. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "jstrict.h"
#include "umcp.h"

/* Whether line holds the word tok, space-separated. */
static int
umcp_has_token(const char *line, const char *tok)
{
	size_t		 n = strlen(tok);
	const char	*p = line;

	while ((p = strstr(p, tok)) != NULL) {
		if ((p == line || p[-1] == ' ') && (p[n] == '\0' ||
		    p[n] == ' '))
			return 1;
		p += n;
	}
	return 0;
}

int
umcp_welcome(const char *line, char *err, size_t errlen)
{
	if (strncmp(line, "WELCOME UNITY-MCP", 17) != 0) {
		snprintf(err, errlen, "expected \"WELCOME UNITY-MCP ... "
		    "FRAMING=1\", got \"%.200s\"", line);
		return -1;
	}
	if (!umcp_has_token(line, "FRAMING=1")) {
		snprintf(err, errlen, "unknown framing in \"%.200s\" (only "
		    "FRAMING=1 is spoken)", line);
		return -1;
	}
	return 0;
}

enum up_status
umcp_frame_len(const unsigned char hdr[UMCP_HDR], size_t *n, char *err,
    size_t errlen)
{
	uint64_t	v = 0;
	int		i;

	for (i = 0; i < UMCP_HDR; i++)
		v = v << 8 | hdr[i];
	if (v == 0) {
		snprintf(err, errlen, "sent a frame of length 0");
		return UP_PROTOCOL;
	}
	if (v > UMCP_MAX) {
		snprintf(err, errlen, "sent a frame longer than 64 MiB");
		return UP_TOO_LONG;
	}
	*n = (size_t)v;
	return UP_OK;
}

void
umcp_frame_hdr(size_t n, unsigned char hdr[UMCP_HDR])
{
	uint64_t	v = n;
	int		i;

	for (i = UMCP_HDR - 1; i >= 0; i--, v >>= 8)
		hdr[i] = (unsigned char)(v & 0xff);
}

json_object *
umcp_request(const char *method, json_object *params)
{
	json_object	*req = json_object_new_object();

	json_object_object_add(req, "type", json_object_new_string(method));
	json_object_object_add(req, "params", params != NULL ?
	    json_object_get(params) : json_object_new_object());
	return req;
}

/* The status envelope msg (an object). */
enum up_status
umcp_envelope(json_object *msg, json_object **out, char *err, size_t errlen)
{
	json_object	*v, *e;
	const char	*status;

	if (!json_object_object_get_ex(msg, "status", &v) ||
	    (status = json_object_get_string(v)) == NULL) {
		snprintf(err, errlen, "sent an answer without \"status\"");
		return UP_PROTOCOL;
	}
	/* Whole, as the bridge's own client compares it: no NUL inside. */
	if (jstrict_is(v, "success")) {
		*out = json_object_get(json_object_object_get(msg, "result"));
		return UP_OK;
	}
	if (!jstrict_is(v, "error")) {
		snprintf(err, errlen, "sent an answer with status \"%.100s\"",
		    status);
		return UP_PROTOCOL;
	}
	if (!json_object_object_get_ex(msg, "error", &e) &&
	    !json_object_object_get_ex(msg, "message", &e))
		e = NULL;
	snprintf(err, errlen, "upstream error: %.400s", e == NULL ?
	    "(no message)" : json_object_is_type(e, json_type_string) ?
	    json_object_get_string(e) : jstrict_to_string(e));
	*out = json_object_get(msg);
	return UP_ERROR;
}

enum up_status
umcp_answer(const char *buf, size_t n, int ping, json_object **out,
    char *err, size_t errlen)
{
	json_object	*msg = NULL;
	enum up_status	 st;
	int		 rc;

	*out = NULL;
	if (ping && n == 4 && memcmp(buf, UMCP_PONG, 4) == 0)
		return UP_OK;
	rc = jstrict_parse(buf, n, &msg);
	if (rc != 0 || !json_object_is_type(msg, json_type_object)) {
		json_object_put(msg);
		if (ping)
			snprintf(err, errlen, "answered ping with something "
			    "that is not pong");
		else if (rc != 0)
			snprintf(err, errlen, "sent something that is not "
			    "JSON (%s)", jstrict_strerror(rc));
		else
			snprintf(err, errlen, "sent JSON that is not an "
			    "object");
		return UP_PROTOCOL;
	}
	st = umcp_envelope(msg, out, err, errlen);
	json_object_put(msg);
	return st;
}

int
umcp_dialect(const char *dialect)
{
	return dialect != NULL && (strcmp(dialect, "unity-mcp") == 0 ||
	    strcmp(dialect, "unity-hub") == 0);
}
