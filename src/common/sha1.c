/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sha1.h"

#define SHA1_BLOCK	64

static uint32_t	sha1_rol(uint32_t, int);
static void	sha1_block(uint32_t h[5], const unsigned char *);

static uint32_t
sha1_rol(uint32_t x, int n)
{
	return x << n | x >> (32 - n);
}

/* One 64-byte block into the state h. */
static void
sha1_block(uint32_t h[5], const unsigned char *p)
{
	static const uint32_t	 k[4] = { 0x5a827999, 0x6ed9eba1,
				    0x8f1bbcdc, 0xca62c1d6 };
	uint32_t		 w[80], a, b, c, d, e, f, t;
	int			 i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (; i < 80; i++)
		w[i] = sha1_rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = h[0];
	b = h[1];
	c = h[2];
	d = h[3];
	e = h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20)
			f = (b & c) | (~b & d);
		else if (i < 40 || i >= 60)
			f = b ^ c ^ d;
		else
			f = (b & c) | (b & d) | (c & d);
		t = sha1_rol(a, 5) + f + e + k[i / 20] + w[i];
		e = d;
		d = c;
		c = sha1_rol(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

void
sha1(const void *buf, size_t len, unsigned char out[SHA1_LEN])
{
	uint32_t		 h[5] = { 0x67452301, 0xefcdab89, 0x98badcfe,
				    0x10325476, 0xc3d2e1f0 };
	const unsigned char	*p = buf;
	unsigned char		 last[2 * SHA1_BLOCK];
	uint64_t		 bits = (uint64_t)len * 8;
	size_t			 i, n, tail;

	for (i = 0; i + SHA1_BLOCK <= len; i += SHA1_BLOCK)
		sha1_block(h, p + i);
	n = len - i;
	/* The rest, 0x80, zeros, and the length in bits: one or two blocks. */
	tail = n + 1 + 8 <= SHA1_BLOCK ? SHA1_BLOCK : 2 * SHA1_BLOCK;
	memset(last, 0, sizeof(last));
	memcpy(last, p + i, n);
	last[n] = 0x80;
	for (i = 0; i < 8; i++)
		last[tail - 1 - i] = (unsigned char)(bits >> (8 * i));
	for (i = 0; i < tail; i += SHA1_BLOCK)
		sha1_block(h, last + i);
	for (i = 0; i < SHA1_LEN; i++)
		out[i] = (unsigned char)(h[i / 4] >> (24 - 8 * (i % 4)));
}

void
sha1_hex8(const char *s, char out[9])
{
	unsigned char	d[SHA1_LEN];

	sha1(s, strlen(s), d);
	snprintf(out, 9, "%02x%02x%02x%02x", d[0], d[1], d[2], d[3]);
}
