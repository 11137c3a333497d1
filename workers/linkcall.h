/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_LINKCALL_H
#define CMDGATE_LINKCALL_H

#include <json-c/json.h>

#include "exchange.h"

/*
 * The worker's end of the broker's editor links: an exchange with a
 * bridge the broker links is one call line up the event socket and one
 * answer line down it (include/wire.h, WIRE_EV_CALL).
 */

/* 1: the spec said the broker links (WIRE_SPEC_LINK). */
extern int	linkcall_on;

/* Whether x's exchanges go through the broker's link. */
int		linkcall_linked(const struct exchange *x);
/* exchange_once's work over the link, as exchange.h says. */
enum up_status	linkcall(struct exchange *x, const char *method,
		    json_object *params, int64_t deadline, json_object **out);

#endif
