/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_QTREE_H
#define CMDGATE_QTREE_H

#include <stddef.h>
#include <stdint.h>

/*
 * An ordered index of the queue: a treap keyed by ticket number whose
 * nodes live inside the jobs (struct job's qn), each subtree knowing its
 * size and the classes (enum sched_class) it holds.  Insert, remove,
 * find, rank and "the first job at or after a key whose class is in a
 * set" each take O(log n) expected, so that neither the scheduler's pass
 * nor a position walks the queue.  Pure: no allocation, no I/O.
 */

struct qnode {
	struct qnode	*l, *r;
	uint64_t	 key;
	uint32_t	 prio;		/* a hash of key: heap-ordered */
	uint32_t	 size;		/* nodes in this subtree */
	uint8_t		 cls;		/* the node's class, < 8 */
	uint8_t		 mask;		/* 1 << cls of each node below */
};

/* Add n (n->key, not in the tree yet, and n->cls set by the caller). */
void		 qtree_insert(struct qnode **root, struct qnode *n);
/* Take n out of the tree. */
void		 qtree_remove(struct qnode **root, struct qnode *n);
/* The node of key, or NULL. */
struct qnode	*qtree_find(struct qnode *root, uint64_t key);
/* How many nodes have a smaller key. */
size_t		 qtree_rank(const struct qnode *root, uint64_t key);
/* The node of least key >= from whose class is in mask (bits 1 << cls),
 * or NULL. */
struct qnode	*qtree_next(struct qnode *root, uint64_t from, unsigned mask);

#endif
