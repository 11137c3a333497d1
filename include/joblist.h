/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JOBLIST_H
#define CMDGATE_JOBLIST_H

#include <json-c/json.h>

#include "rpc.h"

/* list_jobs (cmdgate-protocol(7), Methods). */
enum rpc_status	 method_list_jobs(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

#endif
