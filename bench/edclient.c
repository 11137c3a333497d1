/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-bench: the agents of the editor path, one per way of reaching
 * the editor (see editor.h), each making the same read again and again:
 * MCP for Unity's get_editor_state (straight to the stand-in bridge, or
 * through the unity-mcp face; a tools/call of it over MCP HTTP or stdio)
 * and uLoopMCP's get-logs (straight, or through the uloop face).  Every
 * answer is checked to be a success, so that a misconfigured run cannot
 * pass for a fast one.  Every wait is bounded by BROKER_TIMEOUT_MS.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "broker.h"
#include "editor.h"
#include "peers.h"

#define ED_UNITY_REQ	"{\"type\":\"get_editor_state\",\"params\":{}}"
#define ED_MCP_VERSION	"2025-06-18"
#define ED_INIT		"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":" \
			"\"initialize\",\"params\":{\"protocolVersion\":" \
			"\"" ED_MCP_VERSION "\"," \
			"\"capabilities\":{},\"clientInfo\":{\"name\":" \
			"\"cmdgate-bench\",\"version\":\"1\"}}}"
#define ED_INITED	"{\"jsonrpc\":\"2.0\",\"method\":" \
			"\"notifications/initialized\"}"

/* The agent's way, for messages. */
static const char *
ed_name(const struct ed_agent *a)
{
	static const char *const names[] = { "unity-mcp", "uloop",
	    "MCP HTTP", "cmdgate mcp" };

	return names[a->path];
}

/* ---- reading ------------------------------------------------------- */

/* Read what a->rfd has, waiting for it (bounded). */
static void
ed_fill(struct ed_agent *a)
{
	struct pollfd	p = { a->rfd, POLLIN, 0 };
	ssize_t		n;

	if (a->cap - a->len < 65536) {
		a->cap = a->cap * 2 + 65536;
		if ((a->buf = realloc(a->buf, a->cap)) == NULL)
			die("out of memory");
	}
	if (poll(&p, 1, BROKER_TIMEOUT_MS) != 1)
		die("%s: no answer within %d ms", ed_name(a),
		    BROKER_TIMEOUT_MS);
	if ((n = read(a->rfd, a->buf + a->len, a->cap - a->len - 1)) <= 0)
		die("%s: connection closed", ed_name(a));
	a->len += (size_t)n;
	a->buf[a->len] = '\0';
}

static void
ed_consume(struct ed_agent *a, size_t n)
{
	memmove(a->buf, a->buf + n, a->len - n);
	a->len -= n;
	a->buf[a->len] = '\0';
}

/*
 * Whether msg (n bytes at a->buf + off) holds want and not bad (may be
 * NULL); it is cut off there for the search.
 */
static int
ed_holds(struct ed_agent *a, size_t off, size_t n, const char *want,
    const char *bad)
{
	char	c = a->buf[off + n];
	int	ok;

	a->buf[off + n] = '\0';
	ok = strstr(a->buf + off, want) != NULL &&
	    (bad == NULL || strstr(a->buf + off, bad) == NULL);
	if (!ok)
		fprintf(stderr, "cmdgate-bench: %s answered: %.300s\n",
		    ed_name(a), a->buf + off);
	a->buf[off + n] = c;
	return ok;
}

static void
ed_send(struct ed_agent *a, const void *s, size_t n)
{
	if (write(a->fd, s, n) != (ssize_t)n)
		die("%s: write: %s", ed_name(a), strerror(errno));
}

/* ---- MCP for Unity's frames ---------------------------------------- */

static void
ed_unity_call(struct ed_agent *a)
{
	char		req[8 + sizeof(ED_UNITY_REQ)];
	uint64_t	len = sizeof(ED_UNITY_REQ) - 1;
	int		i;

	for (i = 7; i >= 0; i--, len >>= 8)
		req[i] = (char)(len & 0xff);
	memcpy(req + 8, ED_UNITY_REQ, sizeof(ED_UNITY_REQ) - 1);
	ed_send(a, req, sizeof(req) - 1);
	while (a->len < 8)
		ed_fill(a);
	for (i = 0, len = 0; i < 8; i++)
		len = len << 8 | (unsigned char)a->buf[i];
	if (len == 0 || len > 1 << 24)
		die("unity-mcp: a frame of %llu bytes",
		    (unsigned long long)len);
	while (a->len < 8 + len)
		ed_fill(a);
	if (!ed_holds(a, 8, len, "\"status\":\"success\"", "\"success\":false"))
		die("get_editor_state failed");
	ed_consume(a, 8 + len);
}

static void
ed_unity_open(struct ed_agent *a)
{
	char	*nl;

	while ((nl = memchr(a->buf, '\n', a->len)) == NULL)
		ed_fill(a);
	if (strncmp(a->buf, "WELCOME UNITY-MCP", 17) != 0)
		die("unity-mcp: no WELCOME line");
	ed_consume(a, (size_t)(nl + 1 - a->buf));
}

/* ---- uLoopMCP's Content-Length frames ------------------------------ */

/* The next frame's body into a->buf + *off, *n bytes long. */
static void
ed_lsp_read(struct ed_agent *a, size_t *off, size_t *n)
{
	char	*end, *cl;

	while ((end = strstr(a->buf, "\r\n\r\n")) == NULL)
		ed_fill(a);
	if ((cl = strstr(a->buf, "Content-Length:")) == NULL || cl > end)
		die("uloop: a frame without Content-Length");
	*n = strtoul(cl + 15, NULL, 10);
	*off = (size_t)(end + 4 - a->buf);
	while (a->len < *off + *n)
		ed_fill(a);
}

static void
ed_uloop_call(struct ed_agent *a)
{
	char	req[256], body[160];
	size_t	off, n;
	int	len;

	len = snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
	    "\"method\":\"get-logs\",\"params\":{}}", ++a->id);
	len = snprintf(req, sizeof(req), "Content-Length: %d\r\n\r\n%s", len,
	    body);
	ed_send(a, req, (size_t)len);
	ed_lsp_read(a, &off, &n);
	if (!ed_holds(a, off, n, "\"result\":", "\"error\":"))
		die("get-logs failed");
	ed_consume(a, off + n);
}

/* ---- MCP over stdio: cmdgate mcp ----------------------------------- */

/* Lines of cmdgate mcp until the answer to a->id: whether it was good. */
static int
ed_stdio_answer(struct ed_agent *a, const char *want)
{
	char	id[48], *nl;
	size_t	n;
	int	ok;

	snprintf(id, sizeof(id), "\"id\":%ld,", a->id);
	for (;;) {
		while ((nl = memchr(a->buf, '\n', a->len)) == NULL)
			ed_fill(a);
		n = (size_t)(nl - a->buf);
		*nl = '\0';
		/* Notifications and the like: not the answer. */
		if (strstr(a->buf, id) != NULL) {
			*nl = '\n';
			ok = ed_holds(a, 0, n, want, "\"isError\":true");
			ed_consume(a, n + 1);
			return ok;
		}
		ed_consume(a, n + 1);
	}
}

static void
ed_stdio_call(struct ed_agent *a)
{
	char	req[256];
	int	len;

	len = snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"get_editor_state\",\"arguments\":{}}}\n", ++a->id);
	ed_send(a, req, (size_t)len);
	if (!ed_stdio_answer(a, "\"isError\":false"))
		die("tools/call over cmdgate mcp failed");
}

/* cmdgate --host 127.0.0.1 --port port mcp, its stdin and stdout ours. */
static void
ed_stdio_open(struct ed_agent *a, int port, const char *state)
{
	static const char	 hello[] = ED_INIT "\n" ED_INITED "\n";
	const char		*cli = getenv("CMDGATE");
	char			 p[16];
	int			 in[2], out[2];

	if (cli == NULL)
		die("set CMDGATE to the cmdgate program");
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1)
		die("pipe: %s", strerror(errno));
	snprintf(p, sizeof(p), "%d", port);
	if ((a->pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], 0);
		dup2(out[1], 1);
		/* This broker's token (none: --no-auth), never the user's. */
		setenv("CMDGATE_STATE_DIR", state, 1);
		unsetenv("CMDGATE_TOKEN_FILE");
		unsetenv("CMDGATE_SOCKET");
		unsetenv("CMDGATE_INSTANCE");
		execl(cli, cli, "--host", "127.0.0.1", "--port", p, "mcp",
		    (char *)NULL);
		_exit(127);
	}
	if (a->pid == -1)
		die("fork: %s", strerror(errno));
	close(in[0]);
	close(out[1]);
	a->fd = in[1];
	a->rfd = out[0];
	ed_send(a, hello, sizeof(hello) - 1);
	a->id = 0;
	if (!ed_stdio_answer(a, "\"serverInfo\""))
		die("cmdgate mcp: initialize failed");
}

/* ---- MCP over HTTP ------------------------------------------------- */

static void
ed_http_callback(struct evhttp_request *req, void *arg)
{
	struct ed_agent	*a = arg;
	struct evbuffer	*in;
	const char	*sid;
	size_t		 n;

	a->status = req != NULL ? evhttp_request_get_response_code(req) : 0;
	if (req != NULL && a->status != 0) {
		in = evhttp_request_get_input_buffer(req);
		n = evbuffer_get_length(in);
		free(a->body);
		if ((a->body = malloc(n + 1)) == NULL)
			die("out of memory");
		evbuffer_remove(in, a->body, n);
		a->body[n] = '\0';
		sid = evhttp_find_header(evhttp_request_get_input_headers(req),
		    "Mcp-Session-Id");
		if (sid != NULL && a->session[0] == '\0')
			snprintf(a->session, sizeof(a->session), "%s", sid);
	}
	event_base_loopbreak(a->base);
}

/*
 * TCP_NODELAY on the connection's socket, as MCP clients set it (Node's
 * HTTP agent does): libevent's client does not, and a request it writes in
 * two segments would wait for the broker's delayed ACK (40 ms).  The
 * socket is libevent's, made at its connect: set once it is there, and
 * again should libevent connect anew.
 */
static void
ed_http_nodelay(struct ed_agent *a)
{
	evutil_socket_t	fd;
	int		one = 1;

	fd = bufferevent_getfd(evhttp_connection_get_bufferevent(a->http));
	if (fd != -1 && fd != a->nodelay_fd) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		a->nodelay_fd = fd;
	}
}

/*
 * POST body (DELETE when NULL) to /mcp on the session's connection; wait
 * for its whole reply, which must have status want.
 */
static void
ed_http_post(struct ed_agent *a, const char *body, int want)
{
	struct evhttp_request	*req;
	struct evkeyvalq	*h;

	if ((req = evhttp_request_new(ed_http_callback, a)) == NULL)
		die("evhttp_request_new");
	h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Host", "127.0.0.1");
	evhttp_add_header(h, "Content-Type", "application/json");
	evhttp_add_header(h, "Accept", "application/json, text/event-stream");
	if (a->session[0] != '\0') {
		evhttp_add_header(h, "Mcp-Session-Id", a->session);
		evhttp_add_header(h, "MCP-Protocol-Version", ED_MCP_VERSION);
	}
	if (body != NULL)
		evbuffer_add(evhttp_request_get_output_buffer(req), body,
		    strlen(body));
	a->status = -1;
	if (evhttp_make_request(a->http, req, body != NULL ? EVHTTP_REQ_POST :
	    EVHTTP_REQ_DELETE, "/mcp") == -1)
		die("MCP HTTP: cannot send");
	if (a->status == -1)	/* not answered already */
		event_base_dispatch(a->base);
	if (a->status != want)
		die("MCP HTTP: status %d, not %d: %.300s", a->status, want,
		    a->body != NULL ? a->body : "");
	ed_http_nodelay(a);
}

static void
ed_http_call(struct ed_agent *a)
{
	char	req[256], id[48];

	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"get_editor_state\",\"arguments\":{}}}", ++a->id);
	ed_http_post(a, req, 200);
	/* A JSON body or an event stream: either way the answer is in it. */
	snprintf(id, sizeof(id), "\"id\":%ld,", a->id);
	if (strstr(a->body, id) == NULL ||
	    strstr(a->body, "\"isError\":false") == NULL)
		die("tools/call over MCP HTTP failed: %.300s", a->body);
}

static void
ed_http_open(struct ed_agent *a, int port)
{
	if ((a->base = event_base_new()) == NULL ||
	    (a->http = evhttp_connection_base_new(a->base, NULL, "127.0.0.1",
	    (unsigned short)port)) == NULL)
		die("evhttp_connection_base_new");
	evhttp_connection_set_timeout(a->http, BROKER_TIMEOUT_MS / 1000);
	ed_http_post(a, ED_INIT, 200);
	if (a->session[0] == '\0')
		die("MCP HTTP: initialize gave no session");
	ed_http_post(a, ED_INITED, 202);
}

/* ---- the agent ----------------------------------------------------- */

void
ed_open(struct ed_agent *a, enum ed_path path, int port, const char *state)
{
	memset(a, 0, sizeof(*a));
	a->path = path;
	a->fd = a->rfd = a->nodelay_fd = -1;
	a->cap = 65536;
	if ((a->buf = calloc(1, a->cap)) == NULL)
		die("out of memory");
	if (path == ED_HTTP) {
		ed_http_open(a, port);
		return;
	}
	if (path == ED_STDIO) {
		ed_stdio_open(a, port, state);
		return;
	}
	if ((a->fd = a->rfd = broker_dial(port)) == -1)
		die("dial %d: %s", port, strerror(errno));
	if (path == ED_UNITY)
		ed_unity_open(a);
}

void
ed_call(struct ed_agent *a)
{
	switch (a->path) {
	case ED_UNITY:
		ed_unity_call(a);
		break;
	case ED_ULOOP:
		ed_uloop_call(a);
		break;
	case ED_HTTP:
		ed_http_call(a);
		break;
	case ED_STDIO:
		ed_stdio_call(a);
		break;
	}
}

void
ed_close(struct ed_agent *a)
{
	if (a->session[0] != '\0')
		ed_http_post(a, NULL, 204);	/* the session ends */
	if (a->http != NULL)
		evhttp_connection_free(a->http);
	if (a->base != NULL)
		event_base_free(a->base);
	if (a->fd != -1)
		close(a->fd);
	if (a->rfd != -1 && a->rfd != a->fd)
		close(a->rfd);
	if (a->pid > 0)
		stop(a->pid);
	free(a->buf);
	free(a->body);
	memset(a, 0, sizeof(*a));
	a->fd = a->rfd = -1;
}
