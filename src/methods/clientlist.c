/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdint.h>

#include <json-c/json.h>

#include "engine.h"
#include "face.h"
#include "methods.h"
#include "net.h"
#include "server.h"
#include "util.h"

struct owned {
	uint64_t	id;
	int64_t		n;
};

static void
owned_one(struct job *j, void *arg)
{
	struct owned	*o = arg;

	if (job_owner_conn(j) == o->id)
		o->n++;
}

/* Jobs of J, queued or stored as running, that connection id submitted. */
static int64_t
owned(struct jobs *J, uint64_t id)
{
	struct owned	 o = { id, 0 };

	job_foreach_queued(J, owned_one, &o);
	job_foreach_stored(J, JOB_QUEUED, owned_one, &o);
	job_foreach_stored(J, JOB_RUNNING, owned_one, &o);
	return o.n;
}

static json_object *
editor_json(const struct editor_flags *f)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "tests_running",
	    json_object_new_boolean(f->tests_running));
	json_object_object_add(o, "compiling",
	    json_object_new_boolean(f->compiling));
	json_object_object_add(o, "busy", json_object_new_boolean(f->busy));
	return o;
}

/* One client; now_ms - mono_ms turns a monotonic time into a wall one. */
static json_object *
client_json(const struct conn *c, int64_t now_ms, int64_t mono_ms)
{
	struct jobs	*J = c->srv->jobs;
	json_object	*o = json_object_new_object();
	char		 since[UTIL_TIMESTAMP_LEN];

	util_timestamp(since, now_ms - (mono_ms - c->since_ms));
	json_object_object_add(o, "id", json_object_new_uint64(c->id));
	json_object_object_add(o, "name", c->name != NULL ?
	    json_object_new_string(c->name) : NULL);
	json_object_object_add(o, "face", json_object_new_string(
	    c->drain != NULL ? "http" : face_name(c->face)));
	json_object_object_add(o, "peer", json_object_new_string(c->peer));
	json_object_object_add(o, "since", json_object_new_string(since));
	json_object_object_add(o, "jobs_in_flight", json_object_new_int64(
	    J != NULL ? owned(J, c->id) : 0));
	json_object_object_add(o, "waits",
	    json_object_new_uint64(c->npending));
	json_object_object_add(o, "session",
	    json_object_new_boolean(c->session));
	json_object_object_add(o, "editor", editor_json(&c->editor));
	return o;
}

enum rpc_status
method_subscribe_status(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct conn	*c = req->conn;

	(void)params;
	(void)err;
	if (!c->status_sub) {
		c->status_sub = 1;
		c->srv->nstatus_subs++;
	}
	*result = json_object_new_object();
	json_object_object_add(*result, "subscribed",
	    json_object_new_boolean(1));
	json_object_object_add(*result, "interval_ms",
	    json_object_new_int(SERVER_STATUS_MS));
	return RPC_OK;
}

enum rpc_status
method_list_clients(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct server	*srv = req->conn->srv;
	struct conn	*c;
	json_object	*list = json_object_new_array();
	int64_t		 now = util_now_ms(), mono = util_monotonic_ms();

	(void)params;
	(void)err;
	TAILQ_FOREACH(c, &srv->conns, entry)
		if (!c->dead)
			json_object_array_add(list, client_json(c, now, mono));
	*result = json_object_new_object();
	json_object_object_add(*result, "clients", list);
	return RPC_OK;
}
