/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_ADDR_H
#define CMDGATE_ADDR_H

struct sockaddr_storage;

/*
 * Split "ADDR:PORT" or "[V6ADDR]:PORT" (numeric addresses, a port 0 to
 * 65535) into a sockaddr; 0 on success, -1 when malformed.  The broker's
 * --listen, --http and --listen FACE@ADDR:PORT all use it.
 */
int	 addr_parse(const char *, struct sockaddr_storage *, int *sslen);

#endif
