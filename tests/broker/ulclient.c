/* SPDX-License-Identifier: ISC */
/*
 * A uLoopMCP client stand-in, written from shared/BRIDGES.md: its
 * TypeScript server sends one JSON message per line up to v0.26 and
 * Content-Length frames after, numeric ids (Date.now()) up to v0.28.3
 * and string ids (ts_<ms>_<pid>_<rand>_<nnnn>) after; the CLI counts
 * from 1.  Every wait is bounded by the testnet client's timeout.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "jobsutil.h"
#include "jstrict.h"
#include "testnet.h"
#include "ulclient.h"

void
ulc_open(struct ulc *u, int port, int lsp, int str_ids)
{
	memset(u, 0, sizeof(*u));
	u->cl = client_tcp(port);
	ck_assert_ptr_nonnull(u->cl);
	u->lsp = lsp;
	u->str_ids = str_ids;
	/* Date.now() ids are far above 2^32. */
	u->next = str_ids ? 1 : 1732400000000LL;
	u->notes = json_object_new_array();
}

void
ulc_close(struct ulc *u)
{
	client_close(u->cl);
	json_object_put(u->notes);
	u->cl = NULL;
	u->notes = NULL;
}

void
ulc_send(struct ulc *u, const char *body)
{
	char	*msg;
	int	 n;

	if (u->lsp)
		n = asprintf(&msg, "Content-Length: %zu\r\n\r\n%s",
		    strlen(body), body);
	else
		n = asprintf(&msg, "%s\n", body);
	ck_assert_int_ne(n, -1);
	client_send(u->cl, msg);
	free(msg);
}

/* The next message in u's framing, parsed (caller puts), or NULL. */
json_object *
ulc_read(struct ulc *u)
{
	char		*line, *s;
	size_t		 n = 0;
	json_object	*r;

	if (!u->lsp) {
		if ((s = client_line(u->cl)) == NULL)
			return NULL;
	} else {
		while ((line = client_line(u->cl)) != NULL &&
		    strcmp(line, "\r") != 0) {
			if (strncmp(line, "Content-Length: ", 16) == 0)
				n = strtoul(line + 16, NULL, 10);
			free(line);
		}
		if (line == NULL)
			return NULL;
		free(line);
		ck_assert_uint_gt(n, 0);
		s = client_read(u->cl, n);
		ck_assert_ptr_nonnull(s);
	}
	ck_assert_msg(jstrict_parse_str(s, &r) == 0, "not JSON: %s", s);
	free(s);
	return r;
}

/* The id u sends next, as JSON text. */
void
ulc_id(struct ulc *u, char *buf, size_t len)
{
	if (u->str_ids)
		snprintf(buf, len, "\"ts_1732400000000_%d_k3x9_%04lld\"",
		    (int)getpid(), u->next++);
	else
		snprintf(buf, len, "%lld", u->next++);
}

/*
 * Call method with params (JSON text) and return its answer (caller
 * puts), its id checked to be the one sent, of the same type.
 */
json_object *
ulc_call(struct ulc *u, const char *method, const char *params)
{
	char		 id[96], *body;
	json_object	*r, *rid;

	ulc_id(u, id, sizeof(id));
	ck_assert_int_ne(asprintf(&body, "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"method\":\"%s\",\"params\":%s}", id, method, params), -1);
	ulc_send(u, body);
	free(body);
	while ((r = ulc_read(u)) != NULL &&
	    !json_object_object_get_ex(r, "id", NULL))
		json_object_array_add(u->notes, r);
	ck_assert_msg(r != NULL, "no answer to %s", method);
	rid = jpath(r, "id");
	ck_assert_str_eq(json_object_to_json_string(rid), id);
	return r;
}

/*
 * The error of r: its code, a reason in message, and its type in
 * data.message, which the uloop CLI adds in parentheses (issue 35.5: the
 * reason twice read "X (X)").
 */
void
assert_ul_error(json_object *r, int code, const char *type)
{
	const char	*m;

	ck_assert_msg(jpath(r, "error") != NULL, "not an error: %s",
	    json_object_to_json_string(r));
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), code);
	ck_assert_str_eq(str(r, "error.data.type"), type);
	m = str(r, "error.message");
	ck_assert_uint_gt(strlen(m), 10);
	ck_assert_str_eq(str(r, "error.data.message"), type);
}

/* Send a call without reading its answer (ulc_answer reads it). */
void
ulc_ask(struct ulc *u, const char *method, const char *params, char *id,
    size_t idlen)
{
	char	*body;

	ulc_id(u, id, idlen);
	ck_assert_int_ne(asprintf(&body, "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"method\":\"%s\",\"params\":%s}", id, method, params), -1);
	ulc_send(u, body);
	free(body);
}

/* The answer to id (caller puts); notifications are kept. */
json_object *
ulc_answer(struct ulc *u, const char *id)
{
	json_object	*r;

	while ((r = ulc_read(u)) != NULL &&
	    !json_object_object_get_ex(r, "id", NULL))
		json_object_array_add(u->notes, r);
	ck_assert_msg(r != NULL, "no answer to %s", id);
	ck_assert_str_eq(json_object_to_json_string(jpath(r, "id")), id);
	return r;
}

/* v2 sends set-client-name before every tool call. */
json_object *
ulc_tool(struct ulc *u, const char *name, const char *tool,
    const char *params)
{
	char		 p[128];
	json_object	*r;

	if (name != NULL) {
		snprintf(p, sizeof(p), "{\"ClientName\":\"%s\"}", name);
		r = ulc_call(u, "set-client-name", p);
		json_object_put(r);
	}
	return ulc_call(u, tool, params);
}

json_object *
ulc_note(struct ulc *u, const char *method)
{
	json_object	*r, *m;
	size_t		 i;

	for (i = 0; i < json_object_array_length(u->notes); i++) {
		r = json_object_array_get_idx(u->notes, i);
		m = json_object_object_get(r, "method");
		if (m != NULL && strcmp(json_object_get_string(m), method) == 0) {
			json_object_get(r);
			json_object_array_del_idx(u->notes, 0, i + 1);
			return r;
		}
	}
	json_object_array_del_idx(u->notes, 0, i);
	while ((r = ulc_read(u)) != NULL) {
		m = json_object_object_get(r, "method");
		if (m != NULL && strcmp(json_object_get_string(m), method) == 0)
			return r;
		json_object_put(r);
	}
	ck_abort_msg("no %s", method);
	return NULL;
}
