/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_TESTS_HTTPSUITE_H
#define CMDGATE_TESTS_HTTPSUITE_H

#include <json-c/json.h>

struct broker;
struct hc;

/* What the suites of the HTTP endpoint share (httpsuite.c). */

#define JSON_HDRS	"Content-Type: application/json\r\n" \
			"Accept: application/json, text/event-stream\r\n"
#define INIT_BODY	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":" \
			"\"initialize\",\"params\":{\"protocolVersion\":" \
			"\"2025-06-18\",\"capabilities\":{},\"clientInfo\":" \
			"{\"name\":\"check_http\",\"version\":\"1\"}}}"

/* The broker's --http port, which the requests below go to. */
extern int	 http_port;

/* The port of b's "http@127.0.0.1:PORT" (its STATUS=), asserted. */
int		 http_port_of(const struct broker *b);
/* A POST of body with the usual headers, sid's (or none) and more. */
struct hc	*post(const char *sid, const char *more, const char *body);
/* The whole body of h as JSON, h closed, status asserted.  Caller puts. */
json_object	*reply_json(struct hc *h, int status);
/* The reply is an HTTP status with a JSON-RPC error of data.type type. */
void		 assert_refused(struct hc *h, int status, const char *type);
/* Begin a session (INIT_BODY, more headers): its id into sid. */
void		 initialize(char sid[64], const char *more);
/* The data of an event as JSON.  Caller puts. */
json_object	*event_json(const char *ev);
/* The next event of h is a priming one: id NUM-SEQ, retry, empty data. */
void		 assert_priming(struct hc *h, char id[32]);
/* The next event of h is a message; its data.  Caller puts. */
json_object	*next_message(struct hc *h);
/* h's messages up to the answer of id (caller puts); the notifications
 * before it go to notes (caller puts) when not NULL. */
json_object	*await_answer(struct hc *h, int id, json_object *notes);
/* The session's GET stream (resumed from last unless NULL), 200 asserted. */
struct hc	*get_stream(const char *sid, const char *last);

#endif
