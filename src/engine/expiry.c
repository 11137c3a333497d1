/* SPDX-License-Identifier: ISC */
/*
 * Expiry: finished jobs leave the store once --result-ttl has passed
 * (cmdgate-protocol(7), Jobs), with their idempotency keys.
 */
#include "config.h"

#include <stdlib.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "jstrict.h"
#include "log.h"
#include "store.h"
#include "util.h"

#define EXPIRE_BATCH	256	/* jobs deleted per expiry transaction */

static void	 on_expire(evutil_socket_t, short, void *);
static void	 expiry_retry(struct jobs *, int);

void
expiry_init(struct jobs *J)
{
	if ((J->expire_ev = evtimer_new(J->cfg.base, on_expire, J)) == NULL)
		fatalx("event_new");
}

void
expiry_arm(struct jobs *J)
{
	int64_t		next = store_next_expiry(J->st), wait;
	struct timeval	tv;

	evtimer_del(J->expire_ev);
	if (next == 0)
		return;
	wait = next - util_now_ms();
	if (wait < 0)
		wait = 0;
	tv.tv_sec = wait / 1000;
	tv.tv_usec = (wait % 1000) * 1000;
	evtimer_add(J->expire_ev, &tv);
}

static void
on_expire(evutil_socket_t fd, short ev, void *arg)
{
	struct jobs	*J = arg;
	uint64_t	 nums[EXPIRE_BATCH];
	json_object	*rec, *k, *a;
	char		*json, status, *key;
	size_t		 i, n;
	int		 rc = 0, st_of[EXPIRE_BATCH];

	(void)fd;
	(void)ev;
	n = store_expired(J->st, util_now_ms(), nums, EXPIRE_BATCH);
	if (n == 0) {
		expiry_arm(J);
		return;
	}
	if ((rc = store_begin(J->st)) != 0) {
		expiry_retry(J, rc);
		return;
	}
	for (i = 0; i < n; i++) {
		if ((rc = store_job_get(J->st, nums[i], &status, &json)) != 0)
			break;
		if (jstrict_parse_str(json, &rec) != 0)
			rec = NULL;	/* damaged: the job goes all the same */
		free(json);
		if ((k = job_rec_get(rec, "idempotency_key")) != NULL &&
		    (a = job_rec_get(rec, "agent")) != NULL) {
			key = xasprintf("%s\n%s", json_object_get_string(a),
			    json_object_get_string(k));
			rc = store_idem_del(J->st, key);
			free(key);
		}
		json_object_put(rec);
		if (rc != 0 || (rc = store_job_del(J->st, nums[i])) != 0)
			break;
		st_of[i] = job_status_from_char(status);
	}
	if (rc != 0 || (rc = job_commit(J, 0)) != 0) {
		store_abort(J->st);
		expiry_retry(J, rc);
		return;
	}
	J->expire_retry_s = 0;
	for (i = 0; i < n; i++)
		if (st_of[i] >= 0)
			J->count[st_of[i]]--;
	log_debug("%zu finished jobs expired", n);
	expiry_arm(J);
}

/*
 * Expired jobs could not be removed: grow the map and go again at once
 * if it was full and may grow, else back off (logged once).
 */
static void
expiry_retry(struct jobs *J, int rc)
{
	struct timeval	tv = { 0, 0 };

	if (rc == STORE_EFAILED) {
		/* Nothing is written until a restart: keep them, said once. */
		if (J->expire_retry_s != -1)
			log_warnx("expired jobs are kept until cmdgated is "
			    "restarted: %s", store_strerror(rc));
		J->expire_retry_s = -1;
		return;
	}
	if (!store_map_full(rc) || job_store_grow(J, "expiry") != 0) {
		if (J->expire_retry_s == 0)
			log_warnx("expired jobs could not be removed: %s; "
			    "retrying with backoff", store_strerror(rc));
		J->expire_retry_s = J->expire_retry_s == 0 ? STORE_RETRY_S :
		    J->expire_retry_s * 2 > STORE_RETRY_MAX_S ?
		    STORE_RETRY_MAX_S : J->expire_retry_s * 2;
		tv.tv_sec = J->expire_retry_s;
	}
	evtimer_add(J->expire_ev, &tv);
}
