/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "addr.h"
#include "cli.h"
#include "jsonl.h"
#include "jstrict.h"
#include "net.h"
#include "peeruid.h"
#include "runfile.h"
#include "token.h"
#include "util.h"

#define CG_LINE_MAX	(256 * 1024 * 1024)

/* Whether host is this machine's loopback: 127/8, ::1 or localhost. */
static int
client_host_local(const char *host)
{
	struct in_addr	a4;
	struct in6_addr	a6;

	if (strcmp(host, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, host, &a6) == 1 &&
	    IN6_IS_ADDR_LOOPBACK(&a6);
}

/*
 * The token to present: from the named file (--token-file or
 * CMDGATE_TOKEN_FILE), else from STATE_DIR/token, the state dir being
 * --state-dir, CMDGATE_STATE_DIR or cmdgated's default, and only to a
 * broker on this machine's loopback.  A state dir
 * without a token means a broker run with --no-auth (or none): connect
 * without.  0 with *tok (caller frees; NULL for none) and, unless owner
 * is NULL, the owner of its file in *owner; or an exit status with c->err
 * set.
 */
int
client_find_token(struct client_client *c, const struct client_target *t, char **tok,
    uid_t *owner)
{
	char	*dir, *path;
	int	 errnum;

	*tok = NULL;
	if (t->token_file != NULL) {
		*tok = token_read(t->token_file, 0, owner, &errnum, c->err,
		    sizeof(c->err));
		return *tok != NULL ? 0 : CX_NOPERM;
	}
	/* The state dir's token is the local broker's: never sent away. */
	if (!client_host_local(t->host))
		return 0;
	dir = t->state_dir != NULL ? xstrdup(t->state_dir) :
	    runfile_state_dir();
	path = xasprintf("%s/%s", dir, TOKEN_NAME);
	free(dir);
	*tok = token_read(path, 0, owner, &errnum, c->err, sizeof(c->err));
	if (*tok == NULL && errnum == EACCES)
		snprintf(c->err, sizeof(c->err), "cannot read the broker's "
		    "token %s: %s; run as the user cmdgated runs as, or give "
		    "--token-file", path, strerror(errnum));
	free(path);
	if (*tok == NULL && errnum == ENOENT)
		return 0;
	return *tok != NULL ? 0 : CX_NOPERM;
}

static int
client_dial(struct client_client *c, const struct client_target *t)
{
	size_t	n;
	int	fd;

	if (t->socket != NULL) {
		struct sockaddr_un sun;

		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		if (strlen(t->socket) >= sizeof(sun.sun_path)) {
			snprintf(c->err, sizeof(c->err), "socket path too "
			    "long: %s", t->socket);
			return -1;
		}
		strcpy(sun.sun_path, t->socket);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd == -1 || connect(fd, (struct sockaddr *)&sun,
		    sizeof(sun)) == -1) {
			snprintf(c->err, sizeof(c->err), "cannot connect to "
			    "%s: %s", t->socket, strerror(errno));
			if (fd != -1)
				close(fd);
			return -1;
		}
		return fd;
	}
	fd = addr_connect(t->host, t->port, 0, 0, c->err, sizeof(c->err));
	if (fd == ADDR_ECONNECT) {
		n = strlen(c->err);
		snprintf(c->err + n, sizeof(c->err) - n,
		    " (is cmdgated running?)");
	}
	return fd < 0 ? -1 : fd;
}

/* uid as "uid N (name)" in buf. */
static void
client_user(uid_t uid, char *buf, size_t len)
{
	struct passwd	*pw = getpwuid(uid);

	snprintf(buf, len, "uid %u (%s)", (unsigned)uid, pw != NULL ?
	    pw->pw_name : "no such user");
}

int
client_peer_check(int fd, uid_t owner, char *err, size_t errlen)
{
	struct peeruid_conn	 pc;
	char			 why[256], addr[PEERUID_ADDRSTRLEN];
	char			 found[96], want[96];
	uid_t			 uid;
	int			 rc;

	if (peeruid_ends(fd, &pc, why, sizeof(why)) != 1) {
		snprintf(err, errlen, "the listener cannot be checked (%s): "
		    "the token is not sent", why);
		return -1;
	}
	peeruid_remote_str(&pc, addr, sizeof(addr));
	rc = peeruid_ask(&pc, &uid, why, sizeof(why));
	/* Not this machine's: nobody here can say who it is (cmdgate(1)). */
	if (rc == 0 && !peeruid_loopback(&pc))
		return 0;
	if (rc != 1) {
		snprintf(err, errlen, "%s: cannot tell whose it is (%s): the "
		    "token is not sent", addr, why);
		return -1;
	}
	if (uid == owner)
		return 0;
	client_user(uid, found, sizeof(found));
	client_user(owner, want, sizeof(want));
	snprintf(err, errlen, "%s is not the broker's: the kernel says %s "
	    "holds it, and the token file is %s's: the token is not sent",
	    addr, found, want);
	return -1;
}

/*
 * Whether the listener on c is the broker's (client_peer_check).  The kernel
 * names the owner of a socket only once a process has accepted it: any
 * answer to a ping proves that (the broker answers it unauthorized).
 */
static int
client_check_listener(struct client_client *c, uid_t owner)
{
	json_object	*r, *e = NULL;

	if ((r = client_call(c, "ping", NULL, &e)) == NULL && e == NULL)
		return CX_UNAVAILABLE;
	json_object_put(r);
	json_object_put(e);
	if (client_peer_check(c->fd, owner, c->err, sizeof(c->err)) == -1)
		return CX_UNAVAILABLE;
	return 0;
}

int
client_connect(struct client_client *c, const struct client_target *t)
{
	json_object	*p, *r, *e = NULL;
	char		*tok;
	uid_t		 owner = (uid_t)-1;
	int		 rc;

	memset(c, 0, sizeof(*c));
	c->next_id = 1;
	c->timeout_ms = t->reply_timeout_ms > 0 ? t->reply_timeout_ms :
	    CG_REPLY_TIMEOUT_S * 1000;
	if ((c->fd = client_dial(c, t)) == -1)
		return CX_UNAVAILABLE;
	jsonl_init(&c->jl, c->fd, CG_LINE_MAX);
	if (t->socket != NULL)
		return 0;	/* trusted by the socket's permissions */
	if ((rc = client_find_token(c, t, &tok, &owner)) != 0 || tok == NULL)
		return rc;
	if ((rc = client_check_listener(c, owner)) != 0) {
		explicit_bzero(tok, strlen(tok));
		free(tok);
		return rc;
	}
	p = json_object_new_object();
	json_object_object_add(p, "token", json_object_new_string(tok));
	explicit_bzero(tok, strlen(tok));
	free(tok);
	if ((r = client_call(c, "authenticate", p, &e)) == NULL) {
		if (e != NULL)
			snprintf(c->err, sizeof(c->err), "not authorized: %s",
			    json_object_get_string(json_object_object_get(
			    json_object_object_get(e, "data"), "reason")));
		json_object_put(e);
		return e != NULL ? CX_NOPERM : CX_UNAVAILABLE;
	}
	json_object_put(r);
	return 0;
}

void
client_close(struct client_client *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	jsonl_free(&c->jl);
}

/* Set c->err to why no answer could be read. */
static void
client_read_failed(struct client_client *c, enum jsonl_status st)
{
	c->lost = st != JSONL_TIMEOUT && st != JSONL_TOO_LONG &&
	    st != JSONL_BAD_JSON;
	switch (st) {
	case JSONL_TIMEOUT:
		snprintf(c->err, sizeof(c->err), "the broker did not answer "
		    "within %lld s (--reply-timeout)",
		    (long long)(c->timeout_ms + 999) / 1000);
		break;
	case JSONL_TOO_LONG:
		snprintf(c->err, sizeof(c->err), "an answer longer than "
		    "256 MiB");
		break;
	case JSONL_BAD_JSON:
		snprintf(c->err, sizeof(c->err), "the broker sent a line "
		    "that is not JSON (%s)", jstrict_strerror(c->jl.jerr));
		break;
	default:
		snprintf(c->err, sizeof(c->err), "the broker closed the "
		    "connection%s%s", st == JSONL_EOF ? "" : ": ",
		    st == JSONL_EOF ? "" : strerror(errno));
		break;
	}
}

/*
 * The answer to request id (caller puts), or NULL with c->err; it may
 * take wait_ms (what the request asked the broker to wait) more.
 */
static json_object *
client_answer(struct client_client *c, int64_t id, int64_t wait_ms)
{
	int64_t			 deadline = util_monotonic_ms() + c->timeout_ms +
				    wait_ms, left;
	enum jsonl_status	 st;
	json_object		*resp;

	for (;;) {
		left = deadline - util_monotonic_ms();
		if ((st = jsonl_json(&c->jl, left < 0 ? 0 : left, &resp)) !=
		    JSONL_MSG) {
			client_read_failed(c, st);
			return NULL;
		}
		if (jsonl_is_answer(resp, id))
			return resp;
		json_object_put(resp);	/* a notification */
	}
}

json_object *
client_call(struct client_client *c, const char *method, json_object *params,
    json_object **error)
{
	return client_call_wait(c, method, params, 0, error);
}

json_object *
client_call_wait(struct client_client *c, const char *method, json_object *params,
    int64_t wait_ms, json_object **error)
{
	json_object	*req = json_object_new_object(), *resp, *v, *r;
	const char	*s;
	size_t		 n;
	int64_t		 id = c->next_id++;

	*error = NULL;
	c->lost = 0;
	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(req, "id", json_object_new_int64(id));
	json_object_object_add(req, "method", json_object_new_string(method));
	json_object_object_add(req, "params", params != NULL ? params :
	    json_object_new_object());
	s = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	if (jsonl_send(c->fd, s, n) == -1 || jsonl_send(c->fd, "\n", 1) == -1) {
		snprintf(c->err, sizeof(c->err), "send: %s", strerror(errno));
		c->lost = 1;
		json_object_put(req);
		return NULL;
	}
	json_object_put(req);
	if ((resp = client_answer(c, id, wait_ms)) == NULL)
		return NULL;
	if (json_object_object_get_ex(resp, "error", &v) &&
	    json_object_is_type(v, json_type_object)) {
		*error = json_object_get(v);
		json_object_put(resp);
		return NULL;
	}
	if (!json_object_object_get_ex(resp, "result", &r) || r == NULL) {
		snprintf(c->err, sizeof(c->err), "the broker's answer has "
		    "neither a result nor an error object");
		json_object_put(resp);
		return NULL;
	}
	json_object_get(r);
	json_object_put(resp);
	return r;
}

int
client_error_status(json_object *error)
{
	switch (json_object_get_int(json_object_object_get(error, "code"))) {
	case RPC_UNAUTHORIZED:
	case RPC_SECURITY_BLOCKED:
		return CX_NOPERM;
	case RPC_STORAGE_ERROR:
	case RPC_QUEUE_FULL:
	case RPC_INTERNAL_ERROR:
		return CX_UNAVAILABLE;
	default:
		return CX_USAGE;
	}
}
