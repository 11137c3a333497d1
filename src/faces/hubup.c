/* SPDX-License-Identifier: ISC */
/*
 * The unity-hub face towards the real server: cmdgate connects to its
 * /hub/plugin as the plugin would and stands for the editor registered
 * on the face (/work/shared/MFU-HTTP.md).  It registers the editor's
 * project with exactly the four fields the editor sent, sends the
 * editor's tools once the server's registered came (and again whenever
 * the editor sends them again), answers each ping and sends a pong every
 * keepAliveInterval with the session id the SERVER gave, and runs each
 * execute as a face job (the same table, guard and tickets as every
 * command), answering its command_result with the server's id: "held"
 * before the server's own timeout runs out, as the unity-mcp face does.
 * One registration per upstream socket (a second would evict itself).
 * The editor away (a domain reload) keeps the upstream registered for
 * HUBUP_AWAY_MS, its commands held meanwhile; a lost upstream is
 * connected again after 0, 1, 3, 5, then every 5 seconds while an editor
 * is registered.  See cmdgated(8), The unity-hub face.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <json-c/json.h>

#include "addr.h"
#include "faces.h"
#include "jstrict.h"
#include "log.h"
#include "server.h"
#include "tools.h"
#include "util.h"
#include "ws.h"
#include "wshead.h"

#define HUBUP_MAX_MSG	(64 * 1024 * 1024)
#define HUBUP_SEND_MAX	(16 * 1024 * 1024)	/* the server's limit */
#define HUBUP_AWAY_MS	60000	/* past the plugin's ~49 s of resumes */
#define HUBUP_AGENT	"unity-hub"
#define HUBUP_KEEPALIVE_S 15
#define HUBUP_FLAP_MS	5000	/* evicted this soon after registered */
#define HUBUP_FLAPS	3	/* times in HUBUP_FLAPS_MS: another holds */
#define HUBUP_FLAPS_MS	60000
#define HUBUP_FLAP_WAIT_S 30

enum hubup_state { HU_DOWN, HU_CONNECTING, HU_HEAD, HU_OPEN };

/* An execute the server sent, run as a face job. */
struct upcall {
	TAILQ_ENTRY(upcall)	 entry;
	struct hubup		*U;
	char			*id, *tool;
	json_object		*params;
	struct facejob		*fj;
};

struct hubup {
	struct server		*srv;
	enum hubup_state	 state;
	struct bufferevent	*bev;		/* until the 101 */
	struct ws		*ws;
	char			 key[WS_KEY_LEN + 1];
	size_t			 head_seen;	/* answer bytes with no end */
	json_object		*sid;		/* the server's session id, whole;
						   NULL: none */
	json_object		*reg;		/* the editor's register */
	json_object		*tools;		/* its last register_tools */
	char			*api_key;
	int			 away;		/* the editor's socket went */
	unsigned		 tries;
	int			 keepalive_s;
	int64_t			 registered_ms, flaps_since;
	int			 flaps, backoff;
	struct event		*retry, *keepalive, *away_ev;
	TAILQ_HEAD(, upcall)	 calls;
	uint64_t		 connects, executes;
};

static void	hubup_connect(struct hubup *);

/* ---- sending ------------------------------------------------------------- */

static void
hubup_send(struct hubup *U, json_object *msg)
{
	if (U->state == HU_OPEN)
		(void)ws_send_json(U->ws, msg);
}

static void
hubup_pong(struct hubup *U)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "type", json_object_new_string("pong"));
	json_object_object_add(o, "session_id", json_object_get(U->sid));
	hubup_send(U, o);
	json_object_put(o);
}

static void
hubup_keepalive_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct hubup	*U = arg;
	struct timeval	 tv = { U->keepalive_s, 0 };

	(void)fd;
	(void)ev;
	hubup_pong(U);
	evtimer_add(U->keepalive, &tv);
}

/* ---- the server's executes -------------------------------------------- */

static void
upcall_free(struct upcall *c)
{
	TAILQ_REMOVE(&c->U->calls, c, entry);
	json_object_put(c->params);
	free(c->id);
	free(c->tool);
	free(c);
}

static void
upcall_answer(struct hubup *U, const char *id, json_object *result)
{
	json_object	*o = json_object_new_object();
	size_t		 n;

	json_object_object_add(o, "type",
	    json_object_new_string("command_result"));
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "result", result);
	/* The server closes a socket on a message over 16 MiB. */
	(void)json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
	if (n > HUBUP_SEND_MAX) {
		result = json_object_new_object();
		json_object_object_add(result, "status",
		    json_object_new_string("error"));
		json_object_object_add(result, "error", json_object_new_string(
		    "the answer is over the server's 16 MiB"));
		json_object_object_add(o, "result", result);
	}
	hubup_send(U, o);
	json_object_put(o);
}

/*
 * Held while the editor is away (a domain reload): data.reason says
 * "reloading", on which the server waits for the editor and sends a
 * change again once, and the repeat joins the ticket.  ans taken.
 */
static json_object *
upcall_held_away(const struct hubup *U, const struct facejob_news *n,
    json_object *ans)
{
	json_object	*r, *d;

	if (n->event == FJ_HELD && U->away &&
	    json_object_object_get_ex(ans, "result", &r) &&
	    json_object_object_get_ex(r, "data", &d))
		json_object_object_add(d, "reason",
		    json_object_new_string("reloading"));
	return ans;
}

static void
upcall_news(void *arg, const struct facejob_news *n)
{
	struct upcall	*c = arg;

	c->fj = NULL;
	if (n->event == FJ_FIRST)
		facejob_end_window(c->U->srv, 0, HUBUP_AGENT, c->tool,
		    c->params);
	if (c->U->state != HU_OPEN)
		log_info("unity-hub: %s (%s) ended with the server gone: its "
		    "answer is dropped", c->id, c->tool);
	else
		upcall_answer(c->U, c->id, upcall_held_away(c->U, n,
		    unity_answer(c->tool, n)));
	upcall_free(c);
}

/*
 * Held before the server gives up: its timeout less a margin for the
 * answer's way back (a quarter, at most 2 s; 1.5 s for its 2 s reads).
 */
static uint64_t
upcall_hold_ms(double timeout_s)
{
	double	ms = timeout_s * 1000, margin = ms / 4 < 2000 ? ms / 4 : 2000;

	return ms - margin < 100 ? 100 : (uint64_t)(ms - margin);
}

/* The unknown command's envelope, as the plugin gives it. */
static json_object *
upcall_unknown(const char *name)
{
	json_object	*o = json_object_new_object();
	char		*t = xasprintf("Unknown or unsupported command type: %s "
			    "(cmdgate's tool table has no such tool)", name);

	json_object_object_add(o, "status", json_object_new_string("error"));
	json_object_object_add(o, "error", json_object_new_string(t));
	json_object_object_add(o, "command", json_object_new_string(name));
	free(t);
	return o;
}

static void
hubup_execute(struct hubup *U, json_object *msg)
{
	json_object		*id, *name, *params, *to;
	const struct tool	*t;
	struct facejob_req	 fr;
	struct upcall		*c;

	if (!json_object_object_get_ex(msg, "id", &id) ||
	    !json_object_is_type(id, json_type_string) ||
	    !json_object_object_get_ex(msg, "name", &name) ||
	    !json_object_is_type(name, json_type_string) ||
	    !json_object_object_get_ex(msg, "params", &params) ||
	    !json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(msg, "timeout", &to) ||
	    !(json_object_is_type(to, json_type_double) ||
	    json_object_is_type(to, json_type_int)) ||
	    strlen(json_object_get_string(id)) !=
	    (size_t)json_object_get_string_len(id)) {
		log_info("unity-hub: the server sent an execute the plugin "
		    "could not read; ignored");
		return;
	}
	U->executes++;
	/* A name with a NUL names no tool (the plugin compares it whole). */
	if (strlen(json_object_get_string(name)) !=
	    (size_t)json_object_get_string_len(name) ||
	    (t = tooltab_find(U->srv->tools, json_object_get_string(name))) ==
	    NULL) {
		upcall_answer(U, json_object_get_string(id),
		    upcall_unknown(json_object_get_string(name)));
		return;
	}
	c = xcalloc(1, sizeof(*c));
	c->U = U;
	c->id = xstrdup(json_object_get_string(id));
	c->tool = xstrdup(t->name);
	c->params = json_object_get(params);
	TAILQ_INSERT_TAIL(&U->calls, c, entry);
	memset(&fr, 0, sizeof(fr));
	fr.agent = HUBUP_AGENT;
	fr.tool = t->name;
	fr.params = params;
	fr.hold_ms = upcall_hold_ms(json_object_get_double(to));
	fr.want_first = t->nreload == 0 && !t->reload_always;
	if ((c->fj = facejob_start(U->srv, &fr, upcall_news, c)) == NULL)
		fatalx("facejob_start: out of memory");
}

/* ---- the server's messages ------------------------------------------- */

static void
hubup_registered(struct hubup *U, json_object *msg)
{
	json_object	*v;

	if (!json_object_object_get_ex(msg, "session_id", &v) ||
	    !json_object_is_type(v, json_type_string))
		return;
	/* Kept whole (its length, any \u0000 in it), as the pong must name
	 * it for the server to find the session; "" is none. */
	json_object_put(U->sid);
	U->sid = json_object_get_string_len(v) > 0 ? json_object_get(v) : NULL;
	U->tries = 0;
	U->registered_ms = util_monotonic_ms();
	log_info("unity-hub: the server registered the editor, session %s",
	    json_object_get_string(v));
	if (U->tools != NULL)
		hubup_send(U, U->tools);
}

static void
hubup_welcome(struct hubup *U, json_object *msg)
{
	json_object	*v;
	int		 k = HUBUP_KEEPALIVE_S, s;
	struct timeval	 tv;

	/* As the plugin: max(5, min(serverTimeout, keepAliveInterval)). */
	if (json_object_object_get_ex(msg, "keepAliveInterval", &v))
		k = json_object_get_int(v);
	if (json_object_object_get_ex(msg, "serverTimeout", &v) &&
	    (s = json_object_get_int(v)) > 0 && s < k)
		k = s;
	U->keepalive_s = k < 5 ? 5 : k;
	tv.tv_sec = U->keepalive_s;
	tv.tv_usec = 0;
	evtimer_add(U->keepalive, &tv);
}

/* The server's message, by its type compared whole as the plugin's
 * switch does: one it does not know ("ping\u0000x" too) is ignored. */
static void
hubup_message(void *arg, const char *buf, size_t len)
{
	struct hubup	*U = arg;
	json_object	*msg = NULL, *type;

	if (jstrict_parse(buf, len, &msg) != 0 ||
	    !json_object_object_get_ex(msg, "type", &type)) {
		json_object_put(msg);
		return;		/* the plugin logs and ignores it */
	}
	if (jstrict_is(type, "welcome"))
		hubup_welcome(U, msg);
	else if (jstrict_is(type, "registered"))
		hubup_registered(U, msg);
	else if (jstrict_is(type, "ping"))
		hubup_pong(U);
	else if (jstrict_is(type, "execute"))
		hubup_execute(U, msg);
	json_object_put(msg);
}

/* ---- the connection ------------------------------------------------------ */

/* Connect again later: 0, 1, 3, 5, then every 5 s, while it is wanted. */
static void
hubup_retry(struct hubup *U)
{
	static const int	 after[] = { 0, 1, 3, 5 };
	struct timeval		 tv = { 5, 0 };

	if (U->reg == NULL)
		return;
	if (U->tries < sizeof(after) / sizeof(after[0]))
		tv.tv_sec = after[U->tries];
	if (U->backoff) {
		tv.tv_sec = HUBUP_FLAP_WAIT_S;
		U->backoff = 0;
	}
	U->tries++;
	evtimer_add(U->retry, &tv);
}

static void
hubup_down(struct hubup *U, const char *why)
{
	if (U->state == HU_OPEN)
		log_info("unity-hub: the server's connection went (%s)", why);
	if (U->ws != NULL)
		ws_free(U->ws);
	else if (U->bev != NULL)
		bufferevent_free(U->bev);
	U->ws = NULL;
	U->bev = NULL;
	json_object_put(U->sid);
	U->sid = NULL;
	U->state = HU_DOWN;
	evtimer_del(U->keepalive);
	hubup_retry(U);
}

/*
 * Evicted (1001) just after the server registered us: another registrant
 * of the project (the editor itself still pointed at the server, or a
 * second gateway) and cmdgate would evict each other for ever.  The third
 * time in a minute, cmdgate says so and waits HUBUP_FLAP_WAIT_S.
 */
static void
hubup_flap(struct hubup *U, int code)
{
	int64_t	now = util_monotonic_ms();

	if (code != WS_GOING_AWAY || U->sid == NULL ||
	    now - U->registered_ms > HUBUP_FLAP_MS)
		return;
	if (now - U->flaps_since > HUBUP_FLAPS_MS) {
		U->flaps_since = now;
		U->flaps = 0;
	}
	if (++U->flaps < HUBUP_FLAPS)
		return;
	log_warnx("unity-hub: another registrant holds project %s at %s (is "
	    "the editor still pointed at the server?): cmdgate waits %d s",
	    json_object_get_string(json_object_object_get(U->reg,
	    "project_hash")), U->srv->opt->unity_hub_server, HUBUP_FLAP_WAIT_S);
	U->flaps = 0;
	U->backoff = 1;
}

static void
hubup_closed(void *arg, int code)
{
	char	why[64];

	hubup_flap(arg, code);
	snprintf(why, sizeof(why), "close %d", code);
	hubup_down(arg, why);
}

static const struct ws_cbs	hubup_ws_cbs = { hubup_message, hubup_closed };

/* The server's answer to the upgrade; then its frames. */
static void
hubup_head_read(struct bufferevent *bev, void *arg)
{
	struct hubup	*U = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	size_t		 have = evbuffer_get_length(in);
	const char	*buf = (const char *)evbuffer_pullup(in, -1);
	char		 err[256];
	long		 n = wshead_length(buf, have, &U->head_seen);

	if (n == 0)
		return;
	if (n < 0 || wshead_answered(buf, (size_t)n, U->key, err,
	    sizeof(err)) == -1) {
		log_warnx("unity-hub: the server at %s %s",
		    U->srv->opt->unity_hub_server, n < 0 ? "sent no answer "
		    "head in 8 KiB" : err);
		hubup_down(U, "refused the upgrade");
		return;
	}
	evbuffer_drain(in, (size_t)n);
	U->bev = NULL;
	U->ws = ws_new(bev, 1, HUBUP_MAX_MSG, &hubup_ws_cbs, U);
	U->state = HU_OPEN;
	U->connects++;
	/* As the plugin: register at once, not waiting for welcome. */
	hubup_send(U, U->reg);
}

static void
hubup_event(struct bufferevent *bev, short what, void *arg)
{
	struct hubup	*U = arg;
	char		*head;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		head = wshead_connect(U->srv->opt->unity_hub_server,
		    "/hub/plugin", U->api_key, U->key);
		bufferevent_write(bev, head, strlen(head));
		free(head);
		U->state = HU_HEAD;
		return;
	}
	hubup_down(U, evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
}

static void
hubup_connect(struct hubup *U)
{
	const char	*port;
	char		 host[256], err[512];
	int		 fd;

	if (U->state != HU_DOWN || U->reg == NULL)
		return;
	if (addr_split(U->srv->opt->unity_hub_server, host, sizeof(host),
	    &port) == -1 || (fd = addr_connect(host, port, U->tries,
	    ADDR_NONBLOCK, err, sizeof(err))) < 0) {
		hubup_retry(U);
		return;
	}
	if ((U->bev = bufferevent_socket_new(U->srv->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL ||
	    bufferevent_socket_connect(U->bev, NULL, 0) == -1)
		fatalx("bufferevent_socket_new");
	bufferevent_setcb(U->bev, hubup_head_read, NULL, hubup_event, U);
	bufferevent_enable(U->bev, EV_READ | EV_WRITE);
	U->head_seen = 0;	/* its answer may be read before CONNECTED */
	U->state = HU_CONNECTING;
}

static void
hubup_retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	hubup_connect(arg);
}

/* Away too long: the server is told the truth (no editor). */
static void
hubup_away_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct hubup	*U = arg;

	(void)fd;
	(void)ev;
	log_info("unity-hub: the editor stayed away %d s: the server's "
	    "registration ends", HUBUP_AWAY_MS / 1000);
	json_object_put(U->reg);
	U->reg = NULL;
	if (U->ws != NULL)
		ws_close(U->ws, WS_NORMAL, "the editor is away");
	else
		hubup_down(U, "the editor is away");
}

/* ---- the face's side ---------------------------------------------------- */

struct hubup *
hubup_new(struct server *srv)
{
	struct hubup	*U = xcalloc(1, sizeof(*U));

	U->srv = srv;
	U->keepalive_s = HUBUP_KEEPALIVE_S;
	TAILQ_INIT(&U->calls);
	if ((U->retry = evtimer_new(srv->base, hubup_retry_cb, U)) == NULL ||
	    (U->keepalive = evtimer_new(srv->base, hubup_keepalive_cb,
	    U)) == NULL ||
	    (U->away_ev = evtimer_new(srv->base, hubup_away_cb, U)) == NULL)
		fatalx("evtimer_new");
	return U;
}

/* Whether a and b name the same editor (the four fields). */
static int
hubup_same(json_object *a, json_object *b)
{
	static const char *const f[] = { "project_name", "project_hash",
	    "unity_version", "project_path", NULL };
	json_object	*x, *y;
	int		 i;

	for (i = 0; f[i] != NULL; i++) {
		x = json_object_object_get(a, f[i]);
		y = json_object_object_get(b, f[i]);
		if (!json_object_equal(x, y))
			return 0;
	}
	return 1;
}

void
hubup_editor(struct hubup *U, json_object *reg, const char *api_key)
{
	json_object	*r = json_object_new_object();
	static const char *const f[] = { "type", "project_name",
	    "project_hash", "unity_version", "project_path", NULL };
	int		 i;

	evtimer_del(U->away_ev);
	U->away = 0;
	for (i = 0; f[i] != NULL; i++)
		if (json_object_object_get_ex(reg, f[i], NULL))
			json_object_object_add(r, f[i], json_object_get(
			    json_object_object_get(reg, f[i])));
	free(U->api_key);
	U->api_key = api_key != NULL && *api_key != '\0' ?
	    xstrdup(api_key) : NULL;
	if (U->reg != NULL && hubup_same(U->reg, r)) {
		json_object_put(r);	/* back from a reload: nothing new */
		return;
	}
	if (U->reg != NULL && U->state != HU_DOWN)
		hubup_down(U, "the editor registered another project");
	json_object_put(U->reg);
	U->reg = r;
	U->tries = 0;
	hubup_connect(U);
}

void
hubup_tools(struct hubup *U, json_object *msg)
{
	json_object_put(U->tools);
	U->tools = json_object_get(msg);
	if (U->sid != NULL)
		hubup_send(U, msg);
}

void
hubup_editor_away(struct hubup *U)
{
	struct timeval	tv = { HUBUP_AWAY_MS / 1000, 0 };

	if (U->reg == NULL || U->away)
		return;
	U->away = 1;
	evtimer_add(U->away_ev, &tv);
}

void
hubup_free(struct hubup *U)
{
	struct upcall	*c;

	if (U == NULL)
		return;
	while ((c = TAILQ_FIRST(&U->calls)) != NULL) {
		if (c->fj != NULL)
			facejob_cancel(c->fj);
		upcall_free(c);
	}
	if (U->ws != NULL)
		ws_free(U->ws);
	else if (U->bev != NULL)
		bufferevent_free(U->bev);
	event_free(U->retry);
	event_free(U->keepalive);
	event_free(U->away_ev);
	json_object_put(U->reg);
	json_object_put(U->tools);
	json_object_put(U->sid);
	free(U->api_key);
	free(U);
}

json_object *
hubup_json(const struct hubup *U)
{
	static const char *const st[] = { "down", "connecting", "upgrading",
	    "open" };
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "state", json_object_new_string(
	    st[U->state]));
	json_object_object_add(o, "session_id", json_object_get(U->sid));
	json_object_object_add(o, "editor_away",
	    json_object_new_boolean(U->away));
	json_object_object_add(o, "connects",
	    json_object_new_int64((int64_t)U->connects));
	json_object_object_add(o, "executes",
	    json_object_new_int64((int64_t)U->executes));
	return o;
}
