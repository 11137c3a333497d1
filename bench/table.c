/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-bench: the one table.  Each row is a figure of cmdgate beside
 * its peer or floor measured in the same repetitions, the ratio of each
 * pair, and the target (issue 15's, issue 33's) with whether the median
 * meets it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

#define ROWS	64

struct row {
	char		 what[128], unit[16], peer[96], target[48];
	struct stat3	 ours, theirs, ratio;
	int		 has_peer;
	enum goal	 goal;
	double		 limit;
};

static struct row	rows[ROWS];
static int		nrows;

static int
cmpd(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stat3
summarize(const double *v, int n)
{
	struct stat3	 s = { 0, 0, 0 };
	double		*c;

	if (n <= 0 || (c = malloc((size_t)n * sizeof(double))) == NULL)
		return s;
	memcpy(c, v, (size_t)n * sizeof(double));
	qsort(c, (size_t)n, sizeof(double), cmpd);
	s.med = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	s.min = c[0];
	s.max = c[n - 1];
	free(c);
	return s;
}

void
table_row(const char *what, const char *unit, const double *ours,
    const char *peer, const double *theirs, int n, enum goal goal,
    double limit, const char *target)
{
	struct row	*r;
	double		*q;
	int		 i;

	if (nrows == ROWS)
		return;
	r = &rows[nrows++];
	memset(r, 0, sizeof(*r));
	snprintf(r->what, sizeof(r->what), "%s", what);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	snprintf(r->peer, sizeof(r->peer), "%s", peer ? peer : "");
	snprintf(r->target, sizeof(r->target), "%s", target ? target : "");
	r->ours = summarize(ours, n);
	r->goal = goal;
	r->limit = limit;
	if (theirs == NULL || (q = calloc((size_t)n, sizeof(double))) == NULL)
		return;
	for (i = 0; i < n; i++)
		q[i] = theirs[i] > 0 ? ours[i] / theirs[i] : 0;
	r->has_peer = 1;
	r->theirs = summarize(theirs, n);
	r->ratio = summarize(q, n);
	free(q);
}

/* A figure with as many digits as it is worth. */
static void
num(char *buf, size_t len, double v)
{
	if (v >= 100 || v <= -100)
		snprintf(buf, len, "%.0f", v);
	else if (v >= 10 || v <= -10)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.2f", v);
}

/* "12.3 [11.0-13.1]" */
static void
cell(char *buf, size_t len, struct stat3 s, const char *suffix)
{
	char	m[32], lo[32], hi[32];

	num(m, sizeof(m), s.med);
	num(lo, sizeof(lo), s.min);
	num(hi, sizeof(hi), s.max);
	snprintf(buf, len, "%s%s [%s-%s]", m, suffix, lo, hi);
}

static const char *
verdict(const struct row *r)
{
	switch (r->goal) {
	case GOAL_RATIO_GE:
		return r->ratio.med >= r->limit ? "met" : "missed";
	case GOAL_RATIO_LE:
		return r->ratio.med <= r->limit ? "met" : "missed";
	case GOAL_LE:
		return r->ours.med <= r->limit ? "met" : "missed";
	default:
		return "";
	}
}

static void
row_print(FILE *f, const struct row *r)
{
	char	ours[128], theirs[256], ratio[128], t[128];

	cell(ours, sizeof(ours), r->ours, "");
	if (r->has_peer) {
		cell(t, sizeof(t), r->theirs, "");
		snprintf(theirs, sizeof(theirs), "%s %s", r->peer, t);
		cell(ratio, sizeof(ratio), r->ratio, "x");
	} else {
		snprintf(theirs, sizeof(theirs), "%s", r->peer[0] ? r->peer :
		    "-");
		snprintf(ratio, sizeof(ratio), "-");
	}
	fprintf(f, "| %s, %s | %s | %s | %s | %s | %s |\n", r->what, r->unit,
	    ours, theirs, ratio, r->target[0] ? r->target : "-", verdict(r));
}

char *
table_take(void)
{
	char	*text = NULL;
	size_t	 len = 0;
	FILE	*f;
	int	 i;

	if ((f = open_memstream(&text, &len)) == NULL)
		return NULL;
	fprintf(f, "| figure | cmdgate | peer / floor, same run | ratio "
	    "| target | met |\n|---|---|---|---|---|---|\n");
	for (i = 0; i < nrows; i++)
		row_print(f, &rows[i]);
	fclose(f);
	nrows = 0;
	return text;
}

/* The whole file at path, or an empty string when there is none. */
static char *
slurp(const char *path)
{
	FILE	*f = fopen(path, "r");
	char	*s = NULL;
	size_t	 cap = 0, len = 0, n;

	if (f == NULL)
		return errno == ENOENT ? strdup("") : NULL;
	do {
		if (len + 4096 + 1 > cap) {
			char *t = realloc(s, cap = (cap + 4096) * 2);

			if (t == NULL) {
				free(s);
				fclose(f);
				return NULL;
			}
			s = t;
		}
		n = fread(s + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	s[len] = '\0';
	fclose(f);
	return s;
}

int
table_splice(const char *path, const char *name, const char *text)
{
	char	 begin[64], end[64], tmp[4096], *old, *b, *e;
	FILE	*f;
	int	 rc;

	snprintf(begin, sizeof(begin), "<!-- begin %s -->\n", name);
	snprintf(end, sizeof(end), "<!-- end %s -->\n", name);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if ((old = slurp(path)) == NULL || (f = fopen(tmp, "w")) == NULL) {
		free(old);
		return -1;
	}
	if ((b = strstr(old, begin)) != NULL &&
	    (e = strstr(b, end)) != NULL) {
		fwrite(old, 1, (size_t)(b - old), f);
		fprintf(f, "%s%s%s", begin, text, e);
	} else
		fprintf(f, "%s%s%s%s%s", old, old[0] ? "\n" : "", begin,
		    text, end);
	rc = fclose(f) == 0 ? rename(tmp, path) : -1;
	free(old);
	return rc;
}
