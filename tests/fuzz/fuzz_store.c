/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: the job store's records at recovery.  The input is
 * up to 8 records (split at "\n#\n"), each the bytes of one value of the
 * "jobs" database as LMDB holds it (status byte, expiry, the job's
 * JSON), planted at tickets 1..n (store_job_put_raw) in a store in a
 * temp dir, kept open from input to input; then recovery (recover.c)
 * over it, as a restart runs it.
 *
 * What must hold: recovery succeeds; a finished record is left as it
 * was; a packed queued record is queued from its byte alone, whose class
 * packs back to the same byte; any other record either is queued as it
 * was, or is stored again as failed ("interrupted", or "damaged" with
 * what could be kept), strictly readable.  A queued job's record read
 * later (job_rec_ref) is a checked record or refused as damaged, and
 * the failed record that would replace it is readable.  A second
 * recovery finds the same queue and nothing more to fail.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "../../src/engine/internal.h"
#include "engine.h"
#include "fuzzutil.h"
#include "jstrict.h"
#include "log.h"
#include "../../src/daemon/daemon.h"
#include "options.h"
#include "store.h"

#define MAXREC		8
#define SEP		"\n#\n"
#define MAP_SIZE	(8 * 1024 * 1024)

struct rec {
	const uint8_t	*p;
	size_t		 n;
};

static struct options	 opt;
static struct store	*st;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char			*a[] = { "cmdgated", "--sync", "none", NULL };
	char			 err[256], *moved, *damage;
	struct store_conf	 c;
	int			 rc;

	(void)argc;
	(void)argv;
	log_init(LOG_LVL_ERROR, "fuzz");
	if (options_parse(&opt, 3, a, stdout, err, sizeof(err)) != OPT_RUN)
		abort();
	c.map_size = c.map_size_max = MAP_SIZE;
	c.sync = SYNC_NONE;
	c.reset = 0;
	if ((rc = store_open(&st, fuzz_tmpdir(), &c, &moved, &damage)) != 0)
		fuzz_fail("cannot make a store: %s", store_strerror(rc));
	return 0;
}

static size_t
split(const uint8_t *data, size_t size, struct rec *r)
{
	const uint8_t	*p = data, *end = data + size, *s;
	size_t		 n = 0;

	while (n < MAXREC) {
		s = memmem(p, (size_t)(end - p), SEP, strlen(SEP));
		r[n].p = p;
		r[n].n = s != NULL ? (size_t)(s - p) : (size_t)(end - p);
		n++;
		if (s == NULL)
			break;
		p = s + strlen(SEP);
	}
	return n;
}

/* The store holding the records r[0..n) at tickets 1..n alone. */
static void
plant(const struct rec *r, size_t n)
{
	uint64_t	num;
	int		rc;

	if (store_begin(st) != 0)
		fuzz_fail("store_begin");
	for (num = 1; num <= MAXREC; num++)
		if ((rc = store_job_del(st, num)) != 0 &&
		    rc != STORE_ENOTFOUND)
			fuzz_fail("store_job_del: %s", store_strerror(rc));
	for (num = 1; num <= n; num++)
		if ((rc = store_job_put_raw(st, num, r[num - 1].p,
		    r[num - 1].n)) != 0)
			fuzz_fail("store_job_put_raw: %s", store_strerror(rc));
	if (store_commit(st) != 0)
		fuzz_fail("store_commit");
}

/* Recover the store into J: its counts. */
static void
recover(struct jobs *J, size_t *interrupted, size_t *damaged)
{
	int	rc;

	memset(J, 0, sizeof(*J));
	J->cfg.opt = &opt;
	J->st = st;
	TAILQ_INIT(&J->queued);
	TAILQ_INIT(&J->watched);
	TAILQ_INIT(&J->watched_new);
	TAILQ_INIT(&J->running);
	TAILQ_INIT(&J->unstored);
	TAILQ_INIT(&J->ending);
	if ((rc = recover_store(J, interrupted, damaged)) != 0)
		fuzz_fail("recovery failed: %s", store_strerror(rc));
}

static void
jobs_done(struct jobs *J)
{
	struct job	*j;

	while ((j = TAILQ_FIRST(&J->queued)) != NULL) {
		job_dequeue(J, j);
		job_free(j);
	}
}

/* Record r (ticket num), as recovery left it in the store. */
static void
check_record(struct jobs *J, uint64_t num, const struct rec *r)
{
	/* Shorter than its header: read as status 0 and no JSON. */
	char		 s0 = r->n >= 9 ? (char)r->p[0] : '\0', s, *json, *orig;
	int		 st0 = job_status_from_char(s0), rc;
	json_object	*o, *v;
	enum tier	 t;
	unsigned	 b;
	int		 rl;

	if ((rc = store_job_get(J->st, num, &s, &json)) != 0)
		fuzz_fail("record %llu: %s", (unsigned long long)num,
		    store_strerror(rc));
	orig = strndup(r->n > 9 ? (const char *)r->p + 9 : "",
	    r->n > 9 ? r->n - 9 : 0);
	if (st0 >= JOB_DONE || job_unpack_status(s0, &t, &rl, &b) == 0 ||
	    (st0 == JOB_QUEUED && s == s0)) {
		/* Left as it was. */
		if (s != s0 || strcmp(json, orig) != 0)
			fuzz_fail("record %llu changed", (unsigned long long)num);
	} else {
		/* Stored again, failed. */
		if (s != job_status_char(JOB_FAILED))
			fuzz_fail("record %llu stored as '%c'",
			    (unsigned long long)num, s);
		o = fuzz_json("a record recovery stored", json, strlen(json));
		v = json_object_object_get(o, "error");
		if (strcmp(json_object_get_string(json_object_object_get(o,
		    "status")), "failed") != 0 ||
		    !json_object_is_type(v, json_type_string))
			fuzz_fail("record %llu: not failed with an error: %s",
			    (unsigned long long)num, json);
		json_object_put(o);
	}
	free(orig);
	free(json);
}

/* The queued jobs: their class packs back; their records read later. */
static void
check_queue(struct jobs *J, const struct rec *r, size_t n)
{
	struct job	*j;
	json_object	*rec, *d;
	enum tier	 t;
	unsigned	 b;
	int		 rl, rc;

	TAILQ_FOREACH(j, &J->queued, entry) {
		if (j->num < 1 || j->num > n)
			fuzz_fail("queued %s, never planted", j->ticket);
		if (j->rec != NULL)
			fuzz_fail("%s queued with its record kept", j->ticket);
		if (r[j->num - 1].n >= 9 && job_unpack_status(
		    (char)r[j->num - 1].p[0], &t, &rl, &b) == 0 &&
		    job_store_status(j) != (char)r[j->num - 1].p[0])
			fuzz_fail("%s: status byte %#x packs back as %#x",
			    j->ticket, r[j->num - 1].p[0],
			    (unsigned char)job_store_status(j));
		rc = 0;
		if ((rec = job_rec_ref(J, j, &rc)) != NULL) {
			if (job_rec_malformed(rec) != NULL)
				fuzz_fail("%s: a malformed record read",
				    j->ticket);
			json_object_put(rec);
			continue;
		}
		if (rc != STORE_EBADRECORD || !j->damaged)
			fuzz_fail("%s: unread, %s", j->ticket,
			    store_strerror(rc));
		d = recover_damaged(J, j, "when it was to start");
		if (strcmp(json_object_get_string(json_object_object_get(d,
		    "ticket")), j->ticket) != 0 ||
		    jstrict_check(jstrict_to_string(d),
		    strlen(jstrict_to_string(d))) != 0)
			fuzz_fail("%s: its damaged record", j->ticket);
		json_object_put(d);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec	 r[MAXREC];
	struct jobs	 J;
	size_t		 n, i, intr, dam, nq;

	n = split(data, size, r);
	plant(r, n);
	recover(&J, &intr, &dam);
	for (i = 0; i < n; i++)
		check_record(&J, i + 1, &r[i]);
	check_queue(&J, r, n);
	nq = J.nqueued;
	jobs_done(&J);
	/* Once more: the same queue, nothing left to fail. */
	recover(&J, &intr, &dam);
	if (J.nqueued != nq || intr != 0 || dam != 0)
		fuzz_fail("second recovery: %zu queued (was %zu), %zu "
		    "interrupted, %zu damaged", J.nqueued, nq, intr, dam);
	jobs_done(&J);
	return 0;
}
