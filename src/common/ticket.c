/* SPDX-License-Identifier: ISC */
/* Ticket names: a job's number as the wire spells it. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ticket.h"
#include "util.h"

void
ticket_format(char *buf, size_t len, uint64_t num)
{
	snprintf(buf, len, "t-%06llu", (unsigned long long)num);
}

int
ticket_parse(const char *s, uint64_t *num)
{
	if (strncmp(s, "t-", 2) != 0 || strlen(s) < 8)
		return -1;
	return util_parse_u64(s + 2, 0, UINT64_MAX - 1, num);
}
