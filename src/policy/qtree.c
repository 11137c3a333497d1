/* SPDX-License-Identifier: ISC */
/*
 * The queue's ordered index: a treap with subtree sizes and class masks
 * (see qtree.h).  Priorities are a hash of the key, so the shape needs no
 * random state and tickets inserted in order still give a balanced tree.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "policy.h"

static uint32_t
qtree_prio(uint64_t key)
{
	/* splitmix64's finaliser */
	key += 0x9e3779b97f4a7c15ULL;
	key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ULL;
	key = (key ^ (key >> 27)) * 0x94d049bb133111ebULL;
	return (uint32_t)((key ^ (key >> 31)) >> 32);
}

/* n's size and mask from its children's. */
static void
qtree_pull(struct qnode *n)
{
	n->size = 1;
	n->mask = (uint8_t)(1u << n->cls);
	if (n->l != NULL) {
		n->size += n->l->size;
		n->mask |= n->l->mask;
	}
	if (n->r != NULL) {
		n->size += n->r->size;
		n->mask |= n->r->mask;
	}
}

/* t into the keys below key (*l) and the others (*r). */
static void
qtree_split(struct qnode *t, uint64_t key, struct qnode **l, struct qnode **r)
{
	if (t == NULL) {
		*l = *r = NULL;
		return;
	}
	if (t->key < key) {
		qtree_split(t->r, key, &t->r, r);
		*l = t;
	} else {
		qtree_split(t->l, key, l, &t->l);
		*r = t;
	}
	qtree_pull(t);
}

/* Every key of a below every key of b. */
static struct qnode *
qtree_merge(struct qnode *a, struct qnode *b)
{
	if (a == NULL)
		return b;
	if (b == NULL)
		return a;
	if (a->prio > b->prio) {
		a->r = qtree_merge(a->r, b);
		qtree_pull(a);
		return a;
	}
	b->l = qtree_merge(a, b->l);
	qtree_pull(b);
	return b;
}

static struct qnode *
qtree_ins(struct qnode *t, struct qnode *n)
{
	if (t == NULL)
		return n;
	if (n->prio > t->prio) {
		qtree_split(t, n->key, &n->l, &n->r);
		qtree_pull(n);
		return n;
	}
	if (n->key < t->key)
		t->l = qtree_ins(t->l, n);
	else
		t->r = qtree_ins(t->r, n);
	qtree_pull(t);
	return t;
}

void
qtree_insert(struct qnode **root, struct qnode *n)
{
	n->l = n->r = NULL;
	n->prio = qtree_prio(n->key);
	qtree_pull(n);
	*root = qtree_ins(*root, n);
}

static struct qnode *
qtree_del(struct qnode *t, const struct qnode *n)
{
	if (t == n)
		return qtree_merge(t->l, t->r);
	if (n->key < t->key)
		t->l = qtree_del(t->l, n);
	else
		t->r = qtree_del(t->r, n);
	qtree_pull(t);
	return t;
}

void
qtree_remove(struct qnode **root, struct qnode *n)
{
	*root = qtree_del(*root, n);
	n->l = n->r = NULL;
}

struct qnode *
qtree_find(struct qnode *t, uint64_t key)
{
	while (t != NULL && t->key != key)
		t = key < t->key ? t->l : t->r;
	return t;
}

size_t
qtree_rank(const struct qnode *t, uint64_t key)
{
	size_t	n = 0;

	while (t != NULL) {
		if (t->key < key) {
			n += 1 + (t->l != NULL ? t->l->size : 0);
			t = t->r;
		} else
			t = t->l;
	}
	return n;
}

struct qnode *
qtree_next(struct qnode *t, uint64_t from, unsigned mask)
{
	struct qnode	*n;

	/* A subtree without the classes is never entered: O(depth). */
	while (t != NULL && (t->mask & mask) != 0 && t->key < from)
		t = t->r;
	if (t == NULL || (t->mask & mask) == 0)
		return NULL;
	if ((n = qtree_next(t->l, from, mask)) != NULL)
		return n;
	if ((1u << t->cls) & mask)
		return t;
	return qtree_next(t->r, from, mask);
}
