/* SPDX-License-Identifier: ISC */
/*
 * The spare worker: started ahead of need, so that a job's start is one
 * message to a ready worker plus the tool's own spawn.  It is a fresh
 * worker for one job only (worker.c never hands a worker a second spec);
 * --max-workers counts it; no job for SPARE_IDLE_S seconds retires it.
 */
#include "config.h"

#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "engine.h"
#include "internal.h"
#include "log.h"
#include "options.h"
#include "proc.h"
#include "util.h"

struct spare {
	struct event	*fill_ev;	/* zero timer: start one */
	struct event	*idle_ev;	/* no job took it: retire */
	int		 failed;	/* said once until one starts */
};

static void
on_fill(evutil_socket_t fd, short ev, void *arg)
{
	struct jobs	*J = arg;
	struct timeval	 tv = { SPARE_IDLE_S, 0 };
	int		 rc;

	(void)fd;
	(void)ev;
	/* The spare is one of --max-workers; none while anything stops. */
	if (J->stopping || J->store_blocked || J->W.norphans > 0 ||
	    J->W.nworkers >= J->cfg.opt->max_workers)
		return;
	if ((rc = worker_spare_start(&J->W)) != 0) {
		if (!J->spare->failed)
			log_warnx("cannot start a spare worker: %s (jobs "
			    "start their own)", strerror(rc));
		J->spare->failed = 1;
		return;
	}
	J->spare->failed = 0;
	evtimer_add(J->spare->idle_ev, &tv);
}

static void
on_idle(evutil_socket_t fd, short ev, void *arg)
{
	struct jobs	*J = arg;

	(void)fd;
	(void)ev;
	worker_spare_retire(&J->W);
}

void
spare_init(struct jobs *J)
{
	J->spare = xcalloc(1, sizeof(*J->spare));
	J->spare->fill_ev = evtimer_new(J->cfg.base, on_fill, J);
	J->spare->idle_ev = evtimer_new(J->cfg.base, on_idle, J);
	if (J->spare->fill_ev == NULL || J->spare->idle_ev == NULL)
		fatalx("evtimer_new");
}

void
spare_free(struct jobs *J)
{
	if (J->spare == NULL)
		return;
	event_free(J->spare->fill_ev);
	event_free(J->spare->idle_ev);
	free(J->spare);
	J->spare = NULL;
}

void
spare_refill(struct jobs *J)
{
	struct timeval	tv = { 0, 0 };

	if (!evtimer_pending(J->spare->fill_ev, NULL))
		evtimer_add(J->spare->fill_ev, &tv);
}

void
spare_retire(struct jobs *J)
{
	evtimer_del(J->spare->fill_ev);
	evtimer_del(J->spare->idle_ev);
	worker_spare_retire(&J->W);
}
