/* SPDX-License-Identifier: ISC */
/* cmdgate-bench: the one table of figures (see table.c). */
#ifndef CMDGATE_BENCH_TABLE_H
#define CMDGATE_BENCH_TABLE_H

#include <stdio.h>

struct stat3 {
	double	med, min, max;
};

/* How a row's target is checked: on the ratio's median, or the figure's. */
enum goal {
	GOAL_NONE,
	GOAL_RATIO_GE,
	GOAL_RATIO_LE,
	GOAL_LE
};

/* Median, min and max of n values (v is left as it was). */
struct stat3	 summarize(const double *v, int n);
/*
 * One row: n repetitions of ours, each paired with theirs[i] measured
 * beside it (theirs NULL: no peer).  The ratio is ours[i] / theirs[i],
 * pair by pair; its median and spread are shown.
 */
void		 table_row(const char *what, const char *unit,
		    const double *ours, const char *peer, const double *theirs,
		    int n, enum goal goal, double limit, const char *target);
/* The rows so far as a Markdown table, then forget them.  Caller frees. */
char		*table_take(void);
/*
 * Put text between "<!-- begin NAME -->" and "<!-- end NAME -->" in the
 * file at path (appended when the markers are missing): 0, or -1.
 */
int		 table_splice(const char *path, const char *name,
		    const char *text);

#endif
