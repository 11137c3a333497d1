/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "face.h"

/* Indexed by enum face; FACE_CMDGATE has no prefix. */
static const char *face_names[FACE_COUNT] = { "cmdgate", "uloop",
    "unity-mcp", "unity-hub" };

int
face_parse(const char *spec, enum face *face, const char **addr)
{
	const char	*at = strchr(spec, '@');
	size_t		 i, n;

	*face = FACE_CMDGATE;
	*addr = spec;
	if (at == NULL)
		return 0;
	n = (size_t)(at - spec);
	/* "cmdgate@" is no prefix cmdgated(8) names: only the faces. */
	for (i = FACE_ULOOP; i < FACE_COUNT; i++)
		if (strlen(face_names[i]) == n &&
		    strncmp(spec, face_names[i], n) == 0) {
			*face = (enum face)i;
			*addr = at + 1;
			return 0;
		}
	return -1;
}

const char *
face_name(enum face f)
{
	return (unsigned)f < FACE_COUNT ? face_names[f] : "unknown";
}
