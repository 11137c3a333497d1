/* SPDX-License-Identifier: ISC */
/*
 * What the suites of the HTTP endpoint share (check_http,
 * check_httplimits): requests to the broker's --http port, sessions,
 * and the events of a stream.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "httpcli.h"
#include "httpsuite.h"
#include "testnet.h"

int	http_port;

int
http_port_of(const struct broker *b)
{
	const char	*p = strstr(b->status, "http@127.0.0.1:");
	int		 port;

	ck_assert_msg(p != NULL, "no http address in %s", b->status);
	port = atoi(p + 15);
	ck_assert_int_gt(port, 0);
	return port;
}

/* A POST of body with the usual headers, sid's and more. */
struct hc *
post(const char *sid, const char *more, const char *body)
{
	char		 hdrs[1024];
	struct hc	*h;

	snprintf(hdrs, sizeof(hdrs), JSON_HDRS "%s%s%s%s", sid != NULL ?
	    "Mcp-Session-Id: " : "", sid != NULL ? sid : "",
	    sid != NULL ? "\r\n" : "", more != NULL ? more : "");
	h = hc_request(http_port, "POST", "/mcp", hdrs, body);
	ck_assert_msg(h != NULL, "no HTTP reply");
	return h;
}

/* The whole body of h as JSON, h closed, status asserted.  Caller puts. */
json_object *
reply_json(struct hc *h, int status)
{
	json_object	*j;

	ck_assert_int_eq(hc_body(h), 0);
	ck_assert_msg(h->status == status, "HTTP %d, not %d: %s", h->status,
	    status, h->body);
	j = json_tokener_parse(h->body);
	ck_assert_msg(j != NULL, "not JSON: %s", h->body);
	hc_close(h);
	return j;
}

/* The reply is an HTTP status with a JSON-RPC error of data.type type. */
void
assert_refused(struct hc *h, int status, const char *type)
{
	json_object	*j = reply_json(h, status);

	ck_assert_msg(jpath(j, "error.data.type") != NULL, "no error: %s",
	    json_object_to_json_string(j));
	ck_assert_str_eq(json_object_get_string(jpath(j, "error.data.type")),
	    type);
	ck_assert(jpath(j, "error.data.reason") != NULL);
	json_object_put(j);
}

/* Begin a session: its id into sid. */
void
initialize(char sid[64], const char *more)
{
	struct hc	*h = post(NULL, more, INIT_BODY);
	json_object	*j;

	ck_assert_int_eq(hc_header(h, "Mcp-Session-Id", sid, 64), 0);
	ck_assert_int_eq(strlen(sid), 32);
	ck_assert_int_eq(strspn(sid, "0123456789abcdef"), 32);
	j = reply_json(h, 200);
	ck_assert_str_eq(json_object_get_string(jpath(j,
	    "result.protocolVersion")), "2025-06-18");
	json_object_put(j);
}

/* The data of an event as JSON.  Caller puts. */
json_object *
event_json(const char *ev)
{
	const char	*d = strstr(ev, "data: ");
	json_object	*j;

	ck_assert_msg(d != NULL, "no data in event %s", ev);
	j = json_tokener_parse(d + 6);
	ck_assert_msg(j != NULL, "event data not JSON: %s", ev);
	return j;
}

/* The next event of h is a priming one: id NUM-SEQ, retry, empty data. */
void
assert_priming(struct hc *h, char id[32])
{
	char	*ev = hc_event(h);

	ck_assert_msg(ev != NULL, "no priming event");
	ck_assert_msg(sscanf(ev, "id: %31s", id) == 1, "no id: %s", ev);
	ck_assert_msg(strstr(ev, "\nretry: ") != NULL, "no retry: %s", ev);
	ck_assert_msg(strstr(ev, "\ndata: ") != NULL &&
	    strstr(ev, "\ndata: ")[7] == '\0', "data not empty: %s", ev);
	free(ev);
}

/* The next event of h is a message whose data has id (a JSON text). */
json_object *
next_message(struct hc *h)
{
	char		*ev = hc_event(h);
	json_object	*j;

	ck_assert_msg(ev != NULL, "no event (ended %d)", h->ended);
	ck_assert_msg(strncmp(ev, "event: message\nid: ", 19) == 0,
	    "not a message with an id: %s", ev);
	j = event_json(ev);
	free(ev);
	return j;
}

/*
 * Read h's messages up to the answer of id (caller puts): the ones
 * before it are notifications of the request, kept in notes (caller
 * puts) when not NULL.
 */
json_object *
await_answer(struct hc *h, int id, json_object *notes)
{
	json_object	*j;
	int		 i;

	for (i = 0; i < 1000; i++) {
		j = next_message(h);
		if (jpath(j, "method") == NULL) {
			ck_assert_int_eq(json_object_get_int(jpath(j, "id")),
			    id);
			return j;
		}
		ck_assert_msg(strncmp(json_object_get_string(jpath(j,
		    "method")), "notifications/", 14) == 0, "%s",
		    json_object_to_json_string(j));
		if (notes != NULL)
			json_object_array_add(notes, json_object_get(j));
		json_object_put(j);
	}
	ck_abort_msg("no answer of id %d", id);
	return NULL;
}

struct hc *
get_stream(const char *sid, const char *last)
{
	char		 hdrs[512];
	struct hc	*g;

	snprintf(hdrs, sizeof(hdrs), "Accept: text/event-stream\r\n"
	    "Mcp-Session-Id: %s\r\n%s%s%s", sid, last != NULL ?
	    "Last-Event-ID: " : "", last != NULL ? last : "",
	    last != NULL ? "\r\n" : "");
	g = hc_request(http_port, "GET", "/mcp", hdrs, NULL);
	ck_assert_msg(g != NULL, "no HTTP reply");
	ck_assert_int_eq(g->status, 200);
	return g;
}
