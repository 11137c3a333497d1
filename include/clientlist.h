/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLIENTLIST_H
#define CMDGATE_CLIENTLIST_H

#include <json-c/json.h>

#include "rpc.h"

/* list_clients: every connected client, in the order they connected. */
enum rpc_status	method_list_clients(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

/* subscribe_status: this connection hears notifications/status. */
enum rpc_status	method_subscribe_status(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

#endif
