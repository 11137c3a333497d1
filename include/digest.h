/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_DIGEST_H
#define CMDGATE_DIGEST_H

#include <stddef.h>

/*
 * SHA-1 from nettle: to name MCP for Unity's status file as its bridge
 * does (the first 8 hex digits of the digest of the project's Assets
 * path), and as the fixed-size key of a face command in the repeat table
 * (facejob.c).  Never use it where a collision someone made would cost
 * anyone but its maker.
 */

#define DIGEST_SHA1_LEN	20

void	digest_sha1(const void *buf, size_t len,
	    unsigned char out[DIGEST_SHA1_LEN]);
/* The first 8 lower-case hex digits of s's digest, NUL-ended. */
void	digest_sha1_hex8(const char *s, char out[9]);

#endif
