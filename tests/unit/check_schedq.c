/* SPDX-License-Identifier: ISC */
/*
 * The scheduler without a walk of the queue: sched_pick() over the
 * queue's index (qtree.c) against sched_decide(), the reference, on many
 * random queues and states; and the index itself against plain arrays.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "ckrun.h"
#include "policy.h"
#include "tools.h"

#define QMAX		48	/* jobs in a random queue */
#define ROUNDS		200000
#define TREE_N		5000

/* A queue: its jobs, their keys (increasing, with gaps), their nodes. */
struct rq {
	struct sched_job	*jobs;
	uint64_t		*keys;
	struct qnode		*nodes;
	struct qnode		*root;
	size_t			 n;
};

static uint64_t	seed = 88172645463325252ULL;

static unsigned
rnd(unsigned n)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (unsigned)(seed % n);
}

static unsigned
rnd_busy(void)
{
	static const unsigned b[] = { 0, 0, 0,
	    SCHED_BUSY_BIT(BUSY_TESTS_RUNNING), SCHED_BUSY_BIT(BUSY_COMPILING),
	    SCHED_BUSY_BIT(BUSY_TESTS_RUNNING) |
	    SCHED_BUSY_BIT(BUSY_COMPILING) };

	return b[rnd(6)];
}

/* Index q's jobs, inserted in a random order: the tree must not care. */
static void
rq_index_all(struct rq *q)
{
	size_t	i, k, t, *perm = calloc(q->n + 1, sizeof(*perm));

	q->root = NULL;
	for (i = 0; i < q->n; i++) {
		q->nodes[i].key = q->keys[i];
		q->nodes[i].cls = (uint8_t)sched_class(&q->jobs[i]);
		perm[i] = i;
	}
	for (i = 0; i < q->n; i++) {
		k = i + rnd((unsigned)(q->n - i));
		t = perm[i];
		perm[i] = perm[k];
		perm[k] = t;
		qtree_insert(&q->root, &q->nodes[perm[i]]);
	}
	free(perm);
}

static void
rq_make(struct rq *q)
{
	uint64_t	key = rnd(3);
	size_t		i;

	q->n = rnd(QMAX + 1);
	for (i = 0; i < q->n; i++) {
		q->jobs[i].tier = (enum tier)rnd(3);
		q->jobs[i].reload = rnd(5) == 0;
		if (q->jobs[i].reload && rnd(4) != 0)
			q->jobs[i].tier = TIER_HEAVY;
		q->jobs[i].busy = rnd_busy();
		q->keys[i] = key;
		key += 1 + rnd(3);
	}
	rq_index_all(q);
}

static int
rq_next(void *arg, uint64_t from, unsigned mask, uint64_t *key,
    struct sched_job *job)
{
	struct rq	*q = arg;
	struct qnode	*n = qtree_next(q->root, from, mask);

	if (n == NULL)
		return -1;
	*key = n->key;
	*job = q->jobs[n - q->nodes];
	return 0;
}

/* sched_pick() over q gives what sched_decide() gives: how many start. */
static size_t
rq_compare(struct rq *q, const struct sched_state *s, const char *what)
{
	struct sched_queue	 sq = { rq_next, q };
	size_t			*want = calloc(q->n + 1, sizeof(*want)), i, n;
	uint64_t		*got = calloc(s->max_workers + 1, sizeof(*got));

	n = sched_decide(q->jobs, q->n, s, want);
	ck_assert_msg(sched_pick(&sq, s, got) == n, "%s: not as many start",
	    what);
	for (i = 0; i < n; i++)
		ck_assert_msg(got[i] == q->keys[want[i]], "%s: start %zu "
		    "differs", what, i);
	free(want);
	free(got);
	return n;
}

static void
rnd_state(struct sched_state *s)
{
	memset(s, 0, sizeof(*s));
	s->heavy_running = rnd(4) == 0;
	s->smooth_running = rnd(3) == 0 ? rnd(3) : 0;
	s->max_workers = 1 + rnd(10);
	s->workers = rnd((unsigned)s->max_workers + 1);
	s->busy.tests_running = rnd(4) == 0;
	s->busy.compiling = rnd(4) == 0;
	s->busy.editor_busy = rnd(6) == 0;
}

/* The same jobs in the same order as the reference, on random queues. */
START_TEST(pick_is_decide)
{
	static struct sched_job	jobs[QMAX];
	static uint64_t		keys[QMAX];
	static struct qnode	nodes[QMAX];
	struct rq		q = { jobs, keys, nodes, NULL, 0 };
	struct sched_state	s;
	char			what[64];
	long			r, started = 0;

	for (r = 0; r < ROUNDS; r++) {
		rq_make(&q);
		rnd_state(&s);
		snprintf(what, sizeof(what), "round %ld", r);
		started += (long)rq_compare(&q, &s, what);
	}
	ck_assert_int_gt(started, ROUNDS);	/* the rounds start jobs */
}
END_TEST

/*
 * Long queues, far longer than a pass: a held reload with busy jobs behind
 * it, heavy jobs behind a running one, reloads that a started test job
 * holds; what starts is still the reference's.
 */
START_TEST(pick_long_queue)
{
	static struct sched_job	jobs[TREE_N];
	static uint64_t		keys[TREE_N];
	static struct qnode	nodes[TREE_N];
	struct rq		q = { jobs, keys, nodes, NULL, TREE_N };
	struct sched_state	s;
	size_t			i, k, started = 0;
	char			what[64];

	for (k = 0; k < 40; k++) {
		for (i = 0; i < TREE_N; i++) {
			jobs[i].tier = rnd(40) == 0 ? TIER_INSTANT :
			    rnd(50) == 0 ? TIER_SMOOTH : TIER_HEAVY;
			jobs[i].reload = rnd(k % 2 ? 3 : 200) == 0;
			jobs[i].busy = rnd(30) == 0 ? rnd_busy() : 0;
			keys[i] = 7 + 2 * i;
		}
		rq_index_all(&q);
		rnd_state(&s);
		s.max_workers = s.workers + 1 + rnd(8);
		snprintf(what, sizeof(what), "long queue %zu", k);
		started += rq_compare(&q, &s, what);
	}
	ck_assert_uint_gt(started, 0);
}
END_TEST

/* qtree against a sorted array: find, rank, next by class, removal. */
START_TEST(tree_matches_array)
{
	static struct qnode	nodes[TREE_N];
	static int		in[TREE_N];
	struct qnode		*root = NULL, *n;
	uint64_t		from;
	unsigned		mask;
	size_t			i, k, rank;
	int			r;

	for (i = 0; i < TREE_N; i++) {
		nodes[i].key = 2 * i + 1;
		nodes[i].cls = (uint8_t)rnd(SCHED_NCLASS);
		qtree_insert(&root, &nodes[i]);
		in[i] = 1;
	}
	for (r = 0; r < 20000; r++) {
		k = rnd(TREE_N);
		if (in[k])
			qtree_remove(&root, &nodes[k]);
		else
			qtree_insert(&root, &nodes[k]);
		in[k] = !in[k];
		from = rnd(2 * TREE_N + 2);
		mask = rnd(1u << SCHED_NCLASS);
		n = qtree_next(root, from, mask);
		for (i = 0; i < TREE_N; i++)
			if (in[i] && nodes[i].key >= from &&
			    (mask & (1u << nodes[i].cls)))
				break;
		ck_assert_ptr_eq(n, i < TREE_N ? &nodes[i] : NULL);
		k = rnd(TREE_N);
		ck_assert_ptr_eq(qtree_find(root, nodes[k].key),
		    in[k] ? &nodes[k] : NULL);
		ck_assert_ptr_null(qtree_find(root, nodes[k].key + 1));
		for (rank = 0, i = 0; i < k; i++)
			rank += in[i];
		ck_assert_uint_eq(qtree_rank(root, nodes[k].key), rank);
	}
	for (i = 0, rank = 0; i < TREE_N; i++)
		rank += in[i];
	ck_assert_uint_eq(root != NULL ? root->size : 0, rank);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("schedq");
	TCase	*tc = tcase_create("schedq");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, pick_is_decide);
	tcase_add_test(tc, pick_long_queue);
	tcase_add_test(tc, tree_matches_array);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
