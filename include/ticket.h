/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_TICKET_H
#define CMDGATE_TICKET_H

#include <stddef.h>
#include <stdint.h>

/*
 * Ticket names, "t-" and at least six decimal digits of the job's number
 * (cmdgate-protocol(7)): shared by the broker, the client and the bench.
 */

#define TICKET_LEN	24	/* bytes of a formatted ticket, NUL included */

/* Write num's ticket, e.g. 42 -> "t-000042", into buf[len]. */
void	 ticket_format(char *buf, size_t len, uint64_t num);
/* "t-000042" -> 42: 0, or -1 when s is not a ticket. */
int	 ticket_parse(const char *s, uint64_t *num);

#endif
