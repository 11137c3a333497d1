/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLI_TOP_H
#define CMDGATE_CLI_TOP_H

#include <stdio.h>

#include <json-c/json.h>

#include "cli.h"

/* What cmdgate top shows, as the broker answered (all owned). */
struct top_view {
	json_object	*server;	/* server_status */
	json_object	*queue;		/* queue_status */
	json_object	*clients;	/* list_clients */
	json_object	*queued;	/* list_jobs of the queued */
	json_object	*running;	/* [poll_job of each running] */
	json_object	*finished;	/* [the last finished summaries] */
};

/* Ask the broker for v; 0, or an exit status with the error printed. */
int		 top_fetch(struct cli *, struct top_view *v);
void		 top_view_free(struct top_view *);
/*
 * Draw v to f, each line cut to width characters, at most rows lines
 * (-1: no bound); live: each line clears to its end and ends in CR LF.
 */
void		 top_draw(FILE *f, struct top_view *v, int width, int rows,
		    int live);
/* The terminal's width of fd (live: the terminal's, else COLUMNS first),
 * and its rows in *rows (-1: not a terminal). */
int		 top_width(int fd, int live, int *rows);

#endif
