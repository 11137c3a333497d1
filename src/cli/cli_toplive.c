/* SPDX-License-Identifier: ISC */
/*
 * cmdgate top (cmdgate(1)): --once draws the view (cli_top.c) once to
 * stdout; without it, the live screen: redrawn when the broker says
 * something changed (subscribe_status), at most every TOP_REDRAW_MS,
 * and every TOP_TICK_MS for the running times; q quits.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "jsonl.h"
#include "util.h"

#define TOP_NAME	"cmdgate-top"
#define TOP_REDRAW_MS	250	/* at most 4 redraws a second */
#define TOP_TICK_MS	2000	/* redraw for the running times */

/* The live screen's terminal and signals. */
struct top_term {
	struct termios	 saved;
	int		 raw;		/* saved holds the mode to restore */
	struct sigaction old[4];
};

static const int	 top_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH };
static int		 top_pipe[2] = { -1, -1 };

/* A signal, written to the pipe that the wait reads. */
static void
top_onsig(int sig)
{
	int	 e = errno;
	char	 c = (char)sig;

	(void)write(top_pipe[1], &c, 1);
	errno = e;
}

static int
top_once(struct cli *cl)
{
	struct top_view	 v;
	int		 rc, rows, width;

	if ((rc = top_fetch(cl, &v)) != 0)
		return rc;
	width = top_width(STDOUT_FILENO, 0, &rows);
	top_draw(stdout, &v, width, -1, 0);
	top_view_free(&v);
	return 0;
}

/* Name the connection, so that top shows itself as such. */
static int
top_name(struct cli *cl)
{
	json_object	*p = json_object_new_object(), *r;
	int		 rc = 0;

	json_object_object_add(p, "name", json_object_new_string(TOP_NAME));
	if ((r = cli_call(cl, "set_client_name", p, &rc)) == NULL)
		return rc;
	json_object_put(r);
	return 0;
}

/* The terminal in raw-ish mode (no echo, a key at a time), the signals
 * caught; the alternate screen, the cursor hidden. */
static int
top_term_open(struct top_term *t)
{
	struct sigaction	sa;
	struct termios		tio;
	size_t			i;

	memset(t, 0, sizeof(*t));
	if (pipe2(top_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = top_onsig;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 4; i++)
		sigaction(top_signals[i], &sa, &t->old[i]);
	if (tcgetattr(STDIN_FILENO, &t->saved) == 0) {
		tio = t->saved;
		tio.c_lflag &= ~(ICANON | ECHO);
		tio.c_cc[VMIN] = 1;
		tio.c_cc[VTIME] = 0;
		t->raw = tcsetattr(STDIN_FILENO, TCSAFLUSH, &tio) == 0;
	}
	fputs("\033[?1049h\033[?25l", stdout);
	return 0;
}

static void
top_term_close(struct top_term *t)
{
	size_t	i;

	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	if (t->raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &t->saved);
	for (i = 0; i < 4; i++)
		sigaction(top_signals[i], &t->old[i], NULL);
	close(top_pipe[0]);
	close(top_pipe[1]);
	top_pipe[0] = top_pipe[1] = -1;
}

/* jsonl's wait: the broker's socket, and a key or a signal (cancel). */
static int
top_wait(void *arg, int fd, int ms)
{
	struct pollfd	p[3] = { { fd, POLLIN, 0 },
			    { STDIN_FILENO, POLLIN, 0 },
			    { top_pipe[0], POLLIN, 0 } };

	(void)arg;
	if (poll(p, 3, ms) == -1)
		return errno == EINTR ? 0 : JSONL_WAIT_ERROR;
	if (p[1].revents != 0 || p[2].revents != 0)
		return JSONL_WAIT_CANCEL;
	return p[0].revents != 0;
}

/* Fetch and draw a screen; 0, or an exit status. */
static int
top_redraw(struct cli *cl)
{
	struct top_view	 v;
	int		 rc, rows, width;

	if ((rc = top_fetch(cl, &v)) != 0)
		return rc;
	width = top_width(STDOUT_FILENO, 1, &rows);
	fputs("\033[H", stdout);
	top_draw(stdout, &v, width, rows > 0 ? rows - 1 : -1, 1);
	fputs("\033[J", stdout);
	fflush(stdout);
	top_view_free(&v);
	return 0;
}

/*
 * A key or a signal woke the wait: 1 to quit, else 0 (*dirty set when
 * the screen must be drawn again: a resize).
 */
static int
top_input(int *dirty)
{
	struct pollfd	 p = { STDIN_FILENO, POLLIN, 0 };
	char		 buf[64];
	ssize_t		 n, i;

	while ((n = read(top_pipe[0], buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++) {
			if (buf[i] != SIGWINCH)
				return 1;
			*dirty = 1;
		}
	if (poll(&p, 1, 0) <= 0 || p.revents == 0)
		return 0;
	if ((n = read(STDIN_FILENO, buf, sizeof(buf))) <= 0)
		return n == 0 || (errno != EINTR && errno != EAGAIN);
	return memchr(buf, 'q', (size_t)n) != NULL ||
	    memchr(buf, 'Q', (size_t)n) != NULL;
}

/* Wait for news until a redraw is due; 1 to quit, 0, or an exit status
 * above 1 (the broker lost). */
static int
top_wait_news(struct cli *cl, int64_t due_ms, int *dirty)
{
	enum jsonl_status	 st;
	char			*line;
	int64_t			 left;

	left = due_ms - util_monotonic_ms();
	cl->c.jl.wait = top_wait;
	st = jsonl_line(&cl->c.jl, left > 0 ? left : 0, &line, NULL);
	cl->c.jl.wait = NULL;
	switch (st) {
	case JSONL_MSG:
		free(line);	/* notifications/status: draw again */
		*dirty = 1;
		return 0;
	case JSONL_TIMEOUT:
		return 0;
	case JSONL_CANCELLED:
		return top_input(dirty);
	default:
		snprintf(cl->c.err, sizeof(cl->c.err), "lost the broker: %s",
		    jsonl_strerror(st));
		return CX_UNAVAILABLE;
	}
}

/* cli_reconnect's wake: a key or a signal came in (arg: the dirty flag). */
static int
top_quit(void *arg)
{
	return top_input(arg);
}

/*
 * The broker went away: connect again (however long it takes: q or a
 * signal quits meanwhile), name ourselves and subscribe again.  0, 1 to
 * quit, or an exit status.
 */
static int
top_again(struct cli *cl, int *dirty)
{
	struct cli_wake	 w = { { STDIN_FILENO, top_pipe[0] }, top_quit, dirty };
	json_object	*r;
	int		 rc;

	if ((rc = cli_reconnect(cl, INT64_MAX, &w)) == CLI_QUIT)
		return 1;
	if (rc != 0 || (rc = top_name(cl)) != 0)
		return rc;
	if ((r = cli_call(cl, "subscribe_status", NULL, &rc)) == NULL)
		return rc;
	json_object_put(r);
	*dirty = 1;
	return 0;
}

static int
top_loop(struct cli *cl)
{
	int64_t	 last = 0, due;
	int	 dirty = 1, rc;

	for (;;) {
		if (dirty || util_monotonic_ms() >= last + TOP_TICK_MS) {
			if (util_monotonic_ms() >= last + TOP_REDRAW_MS) {
				if ((rc = top_redraw(cl)) == 0) {
					last = util_monotonic_ms();
					dirty = 0;
				} else if (rc != CX_UNAVAILABLE ||
				    (rc = top_again(cl, &dirty)) != 0)
					return rc == 1 ? 0 : rc;
			}
		}
		due = last + (dirty ? TOP_REDRAW_MS : TOP_TICK_MS);
		if ((rc = top_wait_news(cl, due, &dirty)) == CX_UNAVAILABLE)
			rc = top_again(cl, &dirty);
		if (rc != 0)
			return rc == 1 ? 0 : rc;
	}
}

static int
top_live(struct cli *cl)
{
	struct top_term	 t;
	json_object	*r;
	int		 rc = 0;

	if ((r = cli_call(cl, "subscribe_status", NULL, &rc)) == NULL)
		return rc;
	json_object_put(r);
	if (top_term_open(&t) == -1) {
		fprintf(stderr, "cmdgate: pipe: %s\n", strerror(errno));
		return CX_UNAVAILABLE;
	}
	rc = top_loop(cl);
	top_term_close(&t);
	if (rc == CX_UNAVAILABLE && *cl->c.err != '\0')
		fprintf(stderr, "cmdgate: %s\n", cl->c.err);
	return rc;
}

int
cmd_top(struct cli *cl, int argc, char **argv)
{
	int	rc;

	if ((argc == 1 || (argc == 2 && strcmp(argv[1], "--once") == 0)) &&
	    (rc = top_name(cl)) != 0)
		return rc;
	if (argc == 2 && strcmp(argv[1], "--once") == 0)
		return top_once(cl);
	if (argc != 1)
		return cli_usage_error("top takes only --once, not '%s'",
		    argv[1]);
	return top_live(cl);
}
