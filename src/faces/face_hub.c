/* SPDX-License-Identifier: ISC */
/*
 * The unity-hub face: MCP for Unity's server as its Unity plugin sees
 * it, in HTTP mode (/work/shared/MFU-HTTP.md).  The plugin connects out
 * to ws://ADDR:PORT/hub/plugin, which cmdgate takes; every other request
 * on that port (MCP over HTTP at /mcp, /health, /api/...) is passed on,
 * byte for byte, to the real server (--unity-hub-server), so that agents
 * and the plugin keep the URL they have.  A connection's first head
 * decides which it is.
 *
 * Towards the plugin this is the server's side of the hub: welcome on
 * accept; register answered with registered and a session id of
 * cmdgate's, a newer registration of the same project evicting the older
 * (close 1001), an empty project hash closed 4400; register_tools kept;
 * a ping every 10 s, and a session whose pong (matched by the session id
 * it carries) is older than 20 s closed 1001.  See cmdgated(8), The
 * unity-hub face.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include <json-c/json.h>

#include "faces.h"
#include "jstrict.h"
#include "link.h"
#include "log.h"
#include "net.h"
#include "server.h"
#include "util.h"
#include "ws.h"
#include "wshead.h"

#define HUB_PATH	"/hub/plugin"
#define HUB_MAX_MSG	(16 * 1024 * 1024)	/* the server's */
#define HUB_PING_S	10
#define HUB_STALE_MS	20000
#define HUB_WELCOME	"{\"type\":\"welcome\",\"serverTimeout\":30," \
			"\"keepAliveInterval\":15}"

/* An accepted connection until its head says what it is. */
struct hubconn {
	LIST_ENTRY(hubconn)	 entry;
	struct hub		*H;
	struct bufferevent	*bev;
	struct event		*deadline;
	char			 peer[80];
	char			 local[80];	/* ADDR:PORT it came to */
	int			 refusing;	/* its refusal goes out */
	size_t			 seen;		/* head bytes with no end */
};

/* A plugin's WebSocket. */
struct hubplug {
	TAILQ_ENTRY(hubplug)	 entry;
	struct hub		*H;
	struct ws		*ws;
	struct event		*ping;
	char			 peer[80];
	char			 local[80];	/* the link's "to" */
	char			 api_key[256];	/* its X-API-Key, or "" */
	struct link		*L;		/* once registered */
	char			 sid[37];	/* "": not registered */
	json_object		*reg;		/* its register message */
	json_object		*tools;		/* its last register_tools */
	int64_t			 since_ms, pong_ms;
};

/* A connection passed on to the real server. */
struct hubpass {
	LIST_ENTRY(hubpass)	 entry;
	struct hub		*H;
	struct passthru		*pt;
};

struct hub {
	struct server		*srv;
	LIST_HEAD(, hubconn)	 conns;
	TAILQ_HEAD(, hubplug)	 plugs;
	LIST_HEAD(, hubpass)	 passes;
	size_t			 n;		/* of all three */
	uint64_t		 registrations, evictions, passed;
	struct hubup		*up;		/* towards the server */
};

static void	hub_pong_check(evutil_socket_t, short, void *);

static struct hub *
hub_of(struct server *srv)
{
	if (srv->hub == NULL) {
		srv->hub = xcalloc(1, sizeof(*srv->hub));
		srv->hub->srv = srv;
		LIST_INIT(&srv->hub->conns);
		TAILQ_INIT(&srv->hub->plugs);
		LIST_INIT(&srv->hub->passes);
		srv->hub->up = hubup_new(srv);
	}
	return srv->hub;
}

/* A version 4 UUID's text, as the server's session ids are. */
static void
hub_uuid4(char out[37])
{
	uint8_t	b[16];

	evutil_secure_rng_get_bytes(b, sizeof(b));
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5],
	    b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* ---- the plugins -------------------------------------------------------- */

static void	hubplug_detach(struct hubplug *, const char *);

static void
hubplug_free(struct hubplug *p)
{
	hubplug_detach(p, "the plugin's socket closed");
	TAILQ_REMOVE(&p->H->plugs, p, entry);
	p->H->n--;
	event_free(p->ping);
	json_object_put(p->reg);
	json_object_put(p->tools);
	ws_free(p->ws);
	free(p);
}

static void
hubplug_send(struct hubplug *p, json_object *msg)
{
	(void)ws_send_json(p->ws, msg);
}

/* The link writes an execute. */
static void
hub_port_send(void *arg, const char *msg, size_t len)
{
	struct hubplug	*p = arg;

	(void)ws_send(p->ws, msg, len);
}

static const struct link_port	hub_port = { hub_port_send };

/* p's socket is no longer its link's: the editor is away. */
static void
hubplug_detach(struct hubplug *p, const char *why)
{
	if (p->L != NULL && link_attached(p->L) == p) {
		link_detach(p->L, why);
		hubup_editor_away(p->H->up);
	}
	p->L = NULL;
}

static const char *
hub_str(json_object *o, const char *name)
{
	json_object	*v;

	return json_object_object_get_ex(o, name, &v) &&
	    json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : NULL;
}

/*
 * o's project_hash and its length, or NULL when it is no string.  The
 * length is the JSON string's: one with a \u0000 in it is neither empty
 * nor the same as its part before the NUL, as for the server.
 */
static const char *
hub_hash(json_object *o, size_t *len)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, "project_hash", &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	*len = (size_t)json_object_get_string_len(v);
	return json_object_get_string(v);
}

/* A newer registration of hash[len]: every other session of it goes. */
static void
hub_evict(struct hub *H, struct hubplug *newer, const char *hash, size_t len)
{
	struct hubplug	*p;
	const char	*h;
	size_t		 n;

	TAILQ_FOREACH(p, &H->plugs, entry)
		if (p != newer && p->reg != NULL &&
		    (h = hub_hash(p->reg, &n)) != NULL && n == len &&
		    memcmp(h, hash, len) == 0) {
			log_info("unity-hub: session %s of project %s "
			    "superseded by %s", p->sid, hash, newer->sid);
			H->evictions++;
			ws_close(p->ws, WS_GOING_AWAY, "superseded");
		}
}

static void
hub_register(struct hubplug *p, json_object *msg)
{
	size_t		 len;
	const char	*hash = hub_hash(msg, &len);
	json_object	*r;
	struct timeval	 tv = { HUB_PING_S, 0 };

	if (hash == NULL)
		return;		/* the server drops it */
	if (len == 0) {
		ws_close(p->ws, 4400, "project_hash is empty");
		return;
	}
	/* A second register on one socket supersedes its own session. */
	if (p->reg != NULL) {
		ws_close(p->ws, WS_GOING_AWAY, "superseded");
		return;
	}
	hub_uuid4(p->sid);
	p->reg = json_object_get(msg);
	p->pong_ms = util_monotonic_ms();
	p->H->registrations++;
	r = json_object_new_object();
	json_object_object_add(r, "type", json_object_new_string("registered"));
	json_object_object_add(r, "session_id", json_object_new_string(p->sid));
	hubplug_send(p, r);
	json_object_put(r);
	log_info("unity-hub: %s registered project %s (%s), session %s",
	    p->peer, hash, hub_str(msg, "project_name") != NULL ?
	    hub_str(msg, "project_name") : "?", p->sid);
	hub_evict(p->H, p, hash, len);
	evtimer_add(p->ping, &tv);
	if (p->H->srv->links != NULL && (p->L = links_get(p->H->srv->links,
	    "unity-hub", p->local)) != NULL)
		link_attach(p->L, &hub_port, p);
	hubup_editor(p->H->up, msg, p->api_key);
}

/* The plugin's answer to an execute: its link's call (the id whole,
 * with its JSON length, as the server matches it). */
static void
hub_result(struct hubplug *p, json_object *msg)
{
	json_object	*v, *r;
	const char	*id;

	if (!json_object_object_get_ex(msg, "id", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    !json_object_object_get_ex(msg, "result", &r) ||
	    !json_object_is_type(r, json_type_object))
		return;		/* the server drops it too */
	id = json_object_get_string(v);
	if (p->L == NULL || link_hub_answer(p->L, id,
	    (size_t)json_object_get_string_len(v), r) == -1)
		log_debug("unity-hub: %s answered %s, no call of ours",
		    p->peer, id);
}

/* A pong refreshes the session it names, whichever socket it came on:
 * the id whole, as the server keys sessions ("<sid>\u0000x" is none). */
static void
hub_pong(struct hub *H, json_object *msg)
{
	json_object	*sid;
	struct hubplug	*p;

	if (!json_object_object_get_ex(msg, "session_id", &sid))
		return;
	TAILQ_FOREACH(p, &H->plugs, entry)
		if (p->sid[0] != '\0' && jstrict_is(sid, p->sid))
			p->pong_ms = util_monotonic_ms();
}

/*
 * One of the plugin's messages, by its type compared whole as the
 * server's dispatch compares it: "register\u0000x" is a type it does not
 * know, and one of those is ignored, as one with no type.
 */
static void
hub_message(void *arg, const char *buf, size_t len)
{
	struct hubplug	*p = arg;
	json_object	*msg = NULL, *type;

	if (jstrict_parse(buf, len, &msg) != 0) {
		ws_close(p->ws, WS_UNSUPPORTED, "malformed JSON");
		return;
	}
	if (!json_object_object_get_ex(msg, "type", &type))
		;		/* not ours: ignored, as the server does */
	else if (jstrict_is(type, "register"))
		hub_register(p, msg);
	else if (jstrict_is(type, "register_tools") && p->reg != NULL) {
		json_object_put(p->tools);
		p->tools = json_object_get(msg);
		hubup_tools(p->H->up, msg);
	} else if (jstrict_is(type, "pong"))
		hub_pong(p->H, msg);
	else if (jstrict_is(type, "command_result"))
		hub_result(p, msg);
	json_object_put(msg);
}

static void
hub_closed(void *arg, int code)
{
	struct hubplug	*p = arg;

	log_info("unity-hub: %s's socket closed (%d)%s%s", p->peer, code,
	    p->sid[0] != '\0' ? ", session " : "", p->sid);
	hubplug_free(p);
}

static const struct ws_cbs	hub_ws_cbs = { hub_message, hub_closed };

/* Every HUB_PING_S: a session silent for HUB_STALE_MS goes, else a ping. */
static void
hub_pong_check(evutil_socket_t fd, short ev, void *arg)
{
	struct hubplug	*p = arg;
	struct timeval	 tv = { HUB_PING_S, 0 };

	(void)fd;
	(void)ev;
	if (util_monotonic_ms() - p->pong_ms > HUB_STALE_MS) {
		log_info("unity-hub: session %s sent no pong for %d s",
		    p->sid, HUB_STALE_MS / 1000);
		ws_close(p->ws, WS_GOING_AWAY, "no pong");
		return;
	}
	(void)ws_send(p->ws, "{\"type\":\"ping\"}", 15);
	evtimer_add(p->ping, &tv);
}

/* ---- an accepted connection's head ------------------------------------- */

static void
hubconn_free(struct hubconn *c, int keep_bev)
{
	LIST_REMOVE(c, entry);
	c->H->n--;
	event_free(c->deadline);
	if (!keep_bev)
		bufferevent_free(c->bev);
	free(c);
}

static void
hub_pass_done(void *arg)
{
	struct hubpass	*hp = arg;

	LIST_REMOVE(hp, entry);
	hp->H->n--;
	free(hp);
}

/* Not the hub's: the real server takes it, its head first. */
static void
hubconn_pass(struct hubconn *c)
{
	struct hub	*H = c->H;
	struct hubpass	*hp = xcalloc(1, sizeof(*hp));
	struct bufferevent *bev = c->bev;

	hp->H = H;
	LIST_INSERT_HEAD(&H->passes, hp, entry);
	H->n++;
	H->passed++;
	hubconn_free(c, 1);
	hp->pt = passthru_new(H->srv->base, bev, H->srv->opt->unity_hub_server,
	    hub_pass_done, hp);
}

/* The plugin's upgrade: the 101, and the hub's welcome. */
static void
hubconn_upgrade(struct hubconn *c, const struct wshead *h, size_t headlen)
{
	struct hubplug	*p = xcalloc(1, sizeof(*p));
	struct hub	*H = c->H;
	struct bufferevent *bev = c->bev;
	char		*ans = wshead_accept(h->key);

	p->H = H;
	snprintf(p->peer, sizeof(p->peer), "%s", c->peer);
	snprintf(p->local, sizeof(p->local), "%s", c->local);
	snprintf(p->api_key, sizeof(p->api_key), "%s", h->api_key);
	p->since_ms = util_monotonic_ms();
	if ((p->ping = evtimer_new(H->srv->base, hub_pong_check, p)) == NULL)
		fatalx("evtimer_new");
	hubconn_free(c, 1);
	evbuffer_drain(bufferevent_get_input(bev), headlen);
	bufferevent_write(bev, ans, strlen(ans));
	free(ans);
	TAILQ_INSERT_TAIL(&H->plugs, p, entry);
	H->n++;
	p->ws = ws_new(bev, 0, HUB_MAX_MSG, &hub_ws_cbs, p);
	(void)ws_send(p->ws, HUB_WELCOME, strlen(HUB_WELCOME));
	log_debug("unity-hub: %s connected", p->peer);
}

/* Refuse with status, then close once it is out. */
static void
hubconn_refuse(struct hubconn *c, int status)
{
	char	*s = wshead_refuse(status);

	bufferevent_write(c->bev, s, strlen(s));
	free(s);
	c->refusing = 1;
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
}

/*
 * No client of the face sends a token: where the broker has one, the
 * peer check decides for every connection on the port (the plugin's and
 * those passed on alike), as for the other faces.
 */
static void
hubconn_admit(struct hubconn *c)
{
	char	why[256], body[512];
	int	fd = bufferevent_getfd(c->bev);

	if (c->H->srv->token == NULL || (fd != -1 &&
	    peercred_check(c->H->srv->opt, fd, why, sizeof(why)) == 1))
		return;
	if (fd == -1)
		snprintf(why, sizeof(why), "no socket");
	snprintf(body, sizeof(body), "cmdgated: refused by the peer check "
	    "(unity-hub clients cannot send a token): %s; cmdgated(8) "
	    "--allow-user and --allow-group let other users in\n", why);
	log_info("unity-hub: %s: refused by the peer check: %s", c->peer,
	    why);
	evbuffer_add_printf(bufferevent_get_output(c->bev), "HTTP/1.1 403 "
	    "Forbidden\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n%s", strlen(body), body);
	c->refusing = 1;
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
}

/* The whole head (len bytes) is in: decide. */
static void
hubconn_head(struct hubconn *c, const char *head, size_t len)
{
	struct wshead	h;
	size_t		n;
	int		st;

	if (wshead_request(head, len, &h) == -1) {
		hubconn_pass(c);	/* the server answers what it is */
		return;
	}
	n = strcspn(h.target, "?");
	if (n != strlen(HUB_PATH) || strncmp(h.target, HUB_PATH, n) != 0) {
		hubconn_pass(c);
		return;
	}
	if ((st = wshead_upgrade_status(&h)) != 0) {
		hubconn_refuse(c, h.upgrade == 0 ? 404 : st);
		return;
	}
	hubconn_upgrade(c, &h, len);
}

static void
hubconn_read(struct bufferevent *bev, void *arg)
{
	struct hubconn	*c = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	size_t		 have = evbuffer_get_length(in);
	const char	*buf;
	long		 n;

	if (c->refusing)
		return;
	buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)(have < WSHEAD_MAX ?
	    have : WSHEAD_MAX));
	n = wshead_length(buf, have, &c->seen);
	if (n == 0)
		return;
	if (n < 0) {
		hubconn_refuse(c, 400);
		return;
	}
	hubconn_head(c, buf, (size_t)n);
}

static void
hubconn_written(struct bufferevent *bev, void *arg)
{
	struct hubconn	*c = arg;

	if (c->refusing && evbuffer_get_length(bufferevent_get_output(bev)) ==
	    0)
		hubconn_free(c, 0);
}

static void
hubconn_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	hubconn_free(arg, 0);	/* a probe's connect and close, or gone */
}

static void
hubconn_deadline(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	hubconn_free(arg, 0);
}

/* The address a connection came to, as a table's "to" names it. */
static void
hub_local(int fd, char *buf, size_t len)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof(ss);
	struct sockaddr_in	*in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*in6 = (struct sockaddr_in6 *)&ss;
	char			 a[INET6_ADDRSTRLEN];

	buf[0] = '\0';
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == -1)
		return;
	if (ss.ss_family == AF_INET && inet_ntop(AF_INET, &in->sin_addr, a,
	    sizeof(a)) != NULL)
		snprintf(buf, len, "%s:%d", a, ntohs(in->sin_port));
	else if (ss.ss_family == AF_INET6 && inet_ntop(AF_INET6,
	    &in6->sin6_addr, a, sizeof(a)) != NULL)
		snprintf(buf, len, "[%s]:%d", a, ntohs(in6->sin6_port));
}

void
hub_adopt(struct server *srv, struct bufferevent *bev, const char *peer)
{
	struct hub	*H = hub_of(srv);
	struct hubconn	*c;
	struct timeval	 tv = { (time_t)srv->opt->auth_timeout, 0 };

	if (H->n >= srv->opt->max_clients) {
		log_warnx("unity-hub: --max-clients %llu reached; connection "
		    "refused", (unsigned long long)srv->opt->max_clients);
		bufferevent_free(bev);
		return;
	}
	c = xcalloc(1, sizeof(*c));
	c->H = H;
	c->bev = bev;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	hub_local(bufferevent_getfd(bev), c->local, sizeof(c->local));
	if ((c->deadline = evtimer_new(srv->base, hubconn_deadline, c)) == NULL)
		fatalx("evtimer_new");
	evtimer_add(c->deadline, &tv);
	LIST_INSERT_HEAD(&H->conns, c, entry);
	H->n++;
	bufferevent_setcb(bev, hubconn_read, hubconn_written, hubconn_event,
	    c);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	hubconn_admit(c);
}

/* ---- the face ------------------------------------------------------------ */

void
hub_free(struct server *srv)
{
	struct hub	*H = srv->hub;
	struct hubpass	*hp;

	if (H == NULL)
		return;
	while (!LIST_EMPTY(&H->conns))
		hubconn_free(LIST_FIRST(&H->conns), 0);
	/* The links go next (links_free): their calls hear the stop, not a
	 * loss that a worker would take on. */
	while (!TAILQ_EMPTY(&H->plugs)) {
		TAILQ_FIRST(&H->plugs)->L = NULL;
		hubplug_free(TAILQ_FIRST(&H->plugs));
	}
	while ((hp = LIST_FIRST(&H->passes)) != NULL) {
		LIST_REMOVE(hp, entry);
		passthru_free(hp->pt);
		free(hp);
	}
	hubup_free(H->up);
	free(H);
	srv->hub = NULL;
}

/* A registered plugin: its project, session and liveness. */
static json_object *
hub_plug_json(const struct hubplug *p)
{
	json_object	*o = json_object_new_object(), *t;
	static const char *const keep[] = { "project_name", "project_hash",
	    "unity_version", "project_path", NULL };
	int64_t		 now = util_monotonic_ms();
	size_t		 i;

	for (i = 0; keep[i] != NULL; i++)
		json_object_object_add(o, keep[i], hub_str(p->reg, keep[i]) ?
		    json_object_new_string(hub_str(p->reg, keep[i])) : NULL);
	json_object_object_add(o, "session_id", json_object_new_string(p->sid));
	json_object_object_add(o, "peer", json_object_new_string(p->peer));
	json_object_object_add(o, "connected_ms",
	    json_object_new_int64(now - p->since_ms));
	json_object_object_add(o, "pong_ago_ms",
	    json_object_new_int64(now - p->pong_ms));
	json_object_object_add(o, "tools", p->tools != NULL &&
	    json_object_object_get_ex(p->tools, "tools", &t) &&
	    json_object_is_type(t, json_type_array) ? json_object_new_int64(
	    (int64_t)json_object_array_length(t)) : NULL);
	return o;
}

/* server_status's unity_hub: the editor's session, and the counts. */
json_object *
hub_status(const struct server *srv)
{
	const struct hub	*H = srv->hub;
	const struct hubplug	*p;
	json_object		*o = json_object_new_object(), *eds;
	size_t			 nconn = 0, npass = 0;
	const struct hubconn	*c;
	const struct hubpass	*hp;

	eds = json_object_new_array();
	if (H != NULL) {
		TAILQ_FOREACH(p, &H->plugs, entry)
			if (p->reg != NULL)
				json_object_array_add(eds, hub_plug_json(p));
		LIST_FOREACH(c, &H->conns, entry)
			nconn++;
		LIST_FOREACH(hp, &H->passes, entry)
			npass++;
	}
	json_object_object_add(o, "server", json_object_new_string(
	    srv->opt->unity_hub_server));
	json_object_object_add(o, "editors", eds);
	json_object_object_add(o, "passing_on", json_object_new_int64(
	    (int64_t)npass));
	json_object_object_add(o, "registrations", json_object_new_int64(
	    H != NULL ? (int64_t)H->registrations : 0));
	json_object_object_add(o, "evictions", json_object_new_int64(
	    H != NULL ? (int64_t)H->evictions : 0));
	json_object_object_add(o, "reading_heads", json_object_new_int64(
	    (int64_t)nconn));
	json_object_object_add(o, "upstream", H != NULL ?
	    hubup_json(H->up) : NULL);
	return o;
}
