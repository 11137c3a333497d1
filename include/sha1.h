/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_SHA1_H
#define CMDGATE_SHA1_H

#include <stddef.h>

/*
 * SHA-1 (RFC 3174), to name MCP for Unity's status file as its bridge
 * does (the first 8 hex digits of the digest of the project's Assets
 * path), and as the fixed-size key of a face command in the repeat table
 * (facejob.c): neither libevent nor json-c offers one, and cmdgate takes
 * no crypto library for these.  Never use it where a collision someone
 * made would cost anyone but its maker.
 */

#define SHA1_LEN	20

void	sha1(const void *buf, size_t len, unsigned char out[SHA1_LEN]);
/* The first 8 lower-case hex digits of s's digest, NUL-ended. */
void	sha1_hex8(const char *s, char out[9]);

#endif
