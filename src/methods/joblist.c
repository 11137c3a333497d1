/* SPDX-License-Identifier: ISC */
/* list_jobs of cmdgate-protocol(7), Methods: the stored jobs, filtered. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine.h"
#include "jstrict.h"
#include "methods.h"
#include "net.h"
#include "server.h"
#include "store.h"
#include "ticket.h"

#define LIST_DEFAULT		100
#define LIST_MAX		1000

struct list_ctx {
	struct jobs	*J;
	unsigned	 statuses;	/* bit per status; 0: all */
	const char	*agent;
	uint64_t	 limit;
	json_object	*jobs;
	uint64_t	 last;
	int		 more;
};

static int
list_one(void *arg, uint64_t num, char status, const char *json)
{
	struct list_ctx		*lc = arg;
	int			 st = job_status_from_char(status);
	json_object		*rec, *v;

	if (st < 0 || (lc->statuses != 0 && !(lc->statuses & (1u << st))))
		return 0;
	if (jstrict_parse_str(json, &rec) != 0)
		return 0;
	v = json_object_object_get(rec, "agent");
	if (lc->agent != NULL && (!json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), lc->agent) != 0)) {
		json_object_put(rec);
		return 0;
	}
	if (json_object_array_length(lc->jobs) == lc->limit) {
		json_object_put(rec);
		lc->more = 1;
		return 1;	/* stop: one more matched */
	}
	/* The record at hand makes the summary: no second read. */
	json_object_array_add(lc->jobs, jobview_record(lc->J, num, rec));
	json_object_put(rec);
	lc->last = num;
	return 0;
}

enum rpc_status
method_list_jobs(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct list_ctx	 lc;
	json_object	*st, *e;
	uint64_t	 after = 0;
	size_t		 i;
	int		 k, rc;

	if (req->conn->srv->jobs == NULL)
		return rpc_fail(err, RPC_INTERNAL_ERROR, "internal_error",
		    "this broker has no job store open");
	memset(&lc, 0, sizeof(lc));
	lc.J = req->conn->srv->jobs;
	lc.limit = LIST_DEFAULT;
	if (param_string(params, "agent", 0, &lc.agent, err) == -1 ||
	    param_uint(params, "limit", 1, LIST_MAX, &lc.limit, err) == -1)
		return RPC_ERROR;
	if (json_object_object_get_ex(params, "after", &e)) {
		if (!json_object_is_type(e, json_type_string) ||
		    ticket_parse(json_object_get_string(e), &after) == -1)
			return rpc_fail(err, RPC_INVALID_PARAMS,
			    "invalid_params", "\"after\" must be a ticket");
		after++;
	}
	if (json_object_object_get_ex(params, "status", &st)) {
		if (!json_object_is_type(st, json_type_array))
			goto badstatus;
		for (i = 0; i < json_object_array_length(st); i++) {
			e = json_object_array_get_idx(st, i);
			for (k = 0; k < JOB_NSTATUS; k++)
				if (json_object_is_type(e, json_type_string) &&
				    strcmp(json_object_get_string(e),
				    job_status_name(k)) == 0)
					break;
			if (k == JOB_NSTATUS)
				goto badstatus;
			lc.statuses |= 1u << k;
		}
	}
	lc.jobs = json_object_new_array();
	if ((rc = store_jobs_each(jobs_store(lc.J), after, list_one, &lc)) != 0 &&
	    rc != 1) {
		json_object_put(lc.jobs);
		return rpc_fail(err, RPC_STORAGE_ERROR, "storage_error",
		    "the store could not be read: %s", store_strerror(rc));
	}
	*result = json_object_new_object();
	json_object_object_add(*result, "jobs", lc.jobs);
	if (lc.more) {
		char t[TICKET_LEN];

		ticket_format(t, sizeof(t), lc.last);
		json_object_object_add(*result, "next",
		    json_object_new_string(t));
	}
	return RPC_OK;
badstatus:
	return rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "\"status\""
	    " must be a list of queued, running, done, failed, cancelled");
}
