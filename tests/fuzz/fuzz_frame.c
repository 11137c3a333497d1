/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer harness: the framer.  The first byte picks the limit, the
 * second how the rest is cut into reads; every cut must give the same
 * messages as one read, and never a message over the limit.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "net.h"

static size_t
run(const uint8_t *p, size_t n, size_t max, size_t step, char **out,
    size_t *outlen)
{
	struct framer	 fr;
	struct evbuffer	*in = evbuffer_new();
	enum frame_status st = FRAME_MORE;
	size_t		 off = 0, count = 0, len, olen = 0;
	char		*msg;

	frame_init(&fr, max);
	*out = malloc(1);
	while (off < n && st != FRAME_TOO_LARGE && st != FRAME_BAD_HEADER) {
		size_t k = n - off < step ? n - off : step;

		evbuffer_add(in, p + off, k);
		off += k;
		while ((st = frame_next(&fr, in, &msg, &len)) == FRAME_MSG) {
			if (len > max)
				abort();
			*out = realloc(*out, olen + len + 1);
			memcpy(*out + olen, msg, len);
			olen += len;
			(*out)[olen++] = '\n';
			free(msg);
			count++;
		}
	}
	evbuffer_free(in);
	*outlen = olen;
	return count;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*a, *b;
	size_t	 max, step, na, nb, la, lb;

	if (size < 2)
		return 0;
	max = 16 + data[0] * 8;
	step = 1 + data[1] % 64;
	na = run(data + 2, size - 2, max, size, &a, &la);
	nb = run(data + 2, size - 2, max, step, &b, &lb);
	/* However the bytes are cut, the same messages come out. */
	if (na != nb || la != lb || memcmp(a, b, la) != 0)
		abort();
	free(a);
	free(b);
	return 0;
}
