/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_EDSTATE_H
#define CMDGATE_EDSTATE_H

/*
 * The state of the editor behind cmdgate as the listener faces show it
 * (cmdgated(8), Editor state): whether it is reloading, and whether the
 * editor probe reaches it.  reloading is true while a reload job runs
 * (cmdgate asked for the reload), or while the probe finds the editor
 * unreachable after it had answered, for at most EDSTATE_LOST_MAX_S
 * (then the editor is taken as gone, not reloading).
 */

#define EDSTATE_LOST_MAX_S	120

struct server;
struct edsub;

struct edstate {
	int	reloading;
	int	reachable;	/* -1: no probe, or not known yet */
};

void		 edstate_get(struct server *, struct edstate *);
/*
 * fn(arg) after any change, from the loop (never from here): a handle
 * for edstate_unsubscribe, which must come before the engine is freed.
 */
struct edsub	*edstate_subscribe(struct server *, void (*fn)(void *),
		    void *arg);
/* No more calls of its fn; sub may be NULL. */
void		 edstate_unsubscribe(struct edsub *sub);

#endif
