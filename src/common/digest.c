/* SPDX-License-Identifier: ISC */
/*
 * Digests, from nettle (include/digest.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <nettle/sha1.h>

#include "digest.h"

void
digest_sha1(const void *buf, size_t len, unsigned char out[DIGEST_SHA1_LEN])
{
	struct sha1_ctx	ctx;

	sha1_init(&ctx);
	sha1_update(&ctx, len, buf);
	sha1_digest(&ctx, DIGEST_SHA1_LEN, out);
}

void
digest_sha1_hex8(const char *s, char out[9])
{
	unsigned char	d[DIGEST_SHA1_LEN];
	int		i;

	digest_sha1(s, strlen(s), d);
	for (i = 0; i < 4; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}
