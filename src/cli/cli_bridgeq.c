/* SPDX-License-Identifier: ISC */
/* cmdgate mcp: the client's requests held until the broker answers. */
#include "config.h"

#include <sys/queue.h>
#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "jstrict.h"
#include "util.h"

#define IDEM_META	"cmdgate/idempotency_key"
#define IDEM_BYTES	16			/* random, sent as hex */

void
callq_init(struct callq *q)
{
	TAILQ_INIT(&q->calls);
	q->n = 0;
	q->bytes = 0;
}

static int
call_has(const struct call *c, const char *id)
{
	size_t	i;

	if (c->id != NULL)
		return strcmp(c->id, id) == 0;
	for (i = 0; i < json_object_array_length(c->ids); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(
		    c->ids, i)), id) == 0)
			return 1;
	return 0;
}

struct call *
callq_find(struct callq *q, const char *id)
{
	struct call	*c;

	TAILQ_FOREACH(c, &q->calls, entry)
		if (call_has(c, id))
			return c;
	return NULL;
}

int
callq_id_ok(json_object *id)
{
	return json_object_is_type(id, json_type_string) ||
	    json_object_is_type(id, json_type_int);
}

struct call *
callq_find_batch(struct callq *q, json_object *msg)
{
	json_object	*id;
	struct call	*c = NULL;
	size_t		 i;

	for (i = 0; c == NULL && i < json_object_array_length(msg); i++)
		if (json_object_object_get_ex(json_object_array_get_idx(msg,
		    i), "id", &id) && callq_id_ok(id))
			c = callq_find(q, json_object_to_json_string_ext(id,
			    CALLQ_JSON));
	return c;
}

/* Keep the progressToken of request e (a string or an integer) in *tokens. */
static void
call_token(json_object **tokens, json_object *e)
{
	json_object	*p, *meta, *t;

	if (!json_object_object_get_ex(e, "params", &p) ||
	    !json_object_object_get_ex(p, "_meta", &meta) ||
	    !json_object_object_get_ex(meta, "progressToken", &t) ||
	    !callq_id_ok(t))
		return;
	if (*tokens == NULL)
		*tokens = json_object_new_object();
	json_object_object_add(*tokens, json_object_to_json_string_ext(t,
	    CALLQ_JSON), NULL);	/* none seen yet */
}

/* The progressTokens of request (or batch) msg, none seen yet; NULL. */
static json_object *
call_tokens(json_object *msg)
{
	json_object	*tokens = NULL;
	size_t		 i;

	if (!json_object_is_type(msg, json_type_array))
		call_token(&tokens, msg);
	else
		for (i = 0; i < json_object_array_length(msg); i++)
			call_token(&tokens, json_object_array_get_idx(msg, i));
	return tokens;
}

int
callq_progress_old(struct callq *q, json_object *msg)
{
	json_object	*m, *p, *t, *v, *last = NULL;
	struct call	*c;
	const char	*key;
	double		 now;

	if (msg == NULL || !json_object_object_get_ex(msg, "method", &m) ||
	    !json_object_is_type(m, json_type_string) ||
	    strcmp(json_object_get_string(m), "notifications/progress") != 0 ||
	    !json_object_object_get_ex(msg, "params", &p) ||
	    !json_object_object_get_ex(p, "progressToken", &t) ||
	    !json_object_object_get_ex(p, "progress", &v) ||
	    (!json_object_is_type(v, json_type_int) &&
	    !json_object_is_type(v, json_type_double)))
		return 0;
	key = json_object_to_json_string_ext(t, CALLQ_JSON);
	TAILQ_FOREACH(c, &q->calls, entry)
		if (c->progress != NULL &&
		    json_object_object_get_ex(c->progress, key, &last))
			break;
	if (c == NULL)
		return 0;	/* not a held request's: as it came */
	now = json_object_get_double(v);
	if (last != NULL && now <= json_object_get_double(last))
		return 1;
	json_object_object_add(c->progress, key, json_object_new_double(now));
	return 0;
}

int
callq_room(const struct callq *q, size_t len)
{
	if (q->n == 0)
		return 1;	/* one is always taken, however large */
	return q->n < CALLQ_MAX && q->bytes + len <= CALLQ_BYTES;
}

struct call *
callq_add(struct callq *q, const char *id, json_object *ids,
    json_object *msg, const char *line, size_t len, enum call_kind kind)
{
	struct call	*c;

	if (!callq_room(q, len)) {
		json_object_put(ids);
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->id = id != NULL ? xstrdup(id) : NULL;
	c->ids = ids;
	c->line = xmalloc(len + 1);
	memcpy(c->line, line, len);
	c->line[len] = '\0';
	c->len = len;
	c->kind = kind;
	c->progress = call_tokens(msg);
	TAILQ_INSERT_TAIL(&q->calls, c, entry);
	q->n++;
	q->bytes += len;
	return c;
}

void
callq_free(struct callq *q, struct call *c)
{
	TAILQ_REMOVE(&q->calls, c, entry);
	q->n--;
	q->bytes -= c->len;
	free(c->id);
	json_object_put(c->ids);
	free(c->line);
	free(c->cancel);
	json_object_put(c->progress);
	free(c);
}

void
callq_clear(struct callq *q)
{
	while (!TAILQ_EMPTY(&q->calls))
		callq_free(q, TAILQ_FIRST(&q->calls));
}

struct call *
callq_largest(struct callq *q)
{
	struct call	*c, *big = NULL;

	TAILQ_FOREACH(c, &q->calls, entry)
		if (c->sent && (big == NULL || c->len > big->len))
			big = c;
	return big;
}

enum call_kind
callq_kind(const char *method)
{
	if (strcmp(method, "initialize") == 0)
		return CALL_INIT;
	if (strcmp(method, "logging/setLevel") == 0)
		return CALL_LEVEL;
	if (strcmp(method, "tools/list") == 0)
		return CALL_TOOLS;
	return CALL_OTHER;
}

void
callq_cancel(struct callq *q, struct call *c, const char *id)
{
	json_object	*msg, *p, *meta;
	const char	*text;
	char		*line, *s;
	size_t		 n;

	if (c->kind != CALL_BATCH && c->progress != NULL &&
	    jstrict_parse_str(c->line, &msg) == 0) {
		if (json_object_object_get_ex(msg, "params", &p) &&
		    json_object_object_get_ex(p, "_meta", &meta) &&
		    json_object_is_type(meta, json_type_object))
			json_object_object_del(meta, "progressToken");
		text = json_object_to_json_string_length(msg, CALLQ_JSON, &n);
		q->bytes = q->bytes - c->len + n;
		free(c->line);
		c->line = xstrdup(text);
		c->len = n;
		json_object_put(msg);
		json_object_put(c->progress);
		c->progress = NULL;
	}

	line = xasprintf("{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%s}}", id);
	if (c->cancel != NULL && strstr(c->cancel, line) != NULL) {
		free(line);
		return;
	}
	s = xasprintf("%s%s%s", c->cancel != NULL ? c->cancel : "",
	    c->cancel != NULL ? "\n" : "", line);
	free(line);
	free(c->cancel);
	c->cancel = s;
}

void
callq_key(json_object *msg)
{
	json_object	*params, *meta;
	unsigned char	 raw[IDEM_BYTES];
	char		 hex[2 * IDEM_BYTES + 1];
	size_t		 i;

	if (!json_object_object_get_ex(msg, "params", &params) ||
	    !json_object_is_type(params, json_type_object))
		return;
	if (!json_object_object_get_ex(params, "_meta", &meta)) {
		meta = json_object_new_object();
		json_object_object_add(params, "_meta", meta);
	}
	if (!json_object_is_type(meta, json_type_object) ||
	    json_object_object_get_ex(meta, IDEM_META, NULL))
		return;
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		fprintf(stderr, "cmdgate mcp: getrandom: %s: a tools/call "
		    "goes without its key\n", strerror(errno));
		return;
	}
	for (i = 0; i < sizeof(raw); i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	json_object_object_add(meta, IDEM_META, json_object_new_string(hex));
}

char *
callq_error(const char *id, int code, const char *message, const char *type,
    const char *reason)
{
	json_object	*e = json_object_new_object(), *d, *idv = NULL;
	char		*s;

	if (id != NULL && jstrict_parse_str(id, &idv) != 0)
		idv = NULL;
	d = json_object_new_object();
	json_object_object_add(d, "type", json_object_new_string(type));
	json_object_object_add(d, "command", NULL);
	json_object_object_add(d, "reason", json_object_new_string(reason));
	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message", json_object_new_string(message));
	json_object_object_add(e, "data", d);
	d = json_object_new_object();
	json_object_object_add(d, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(d, "id", idv);
	json_object_object_add(d, "error", e);
	s = xstrdup(json_object_to_json_string_ext(d, CALLQ_JSON));
	json_object_put(d);
	return s;
}
