/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JSTRICT_H
#define CMDGATE_JSTRICT_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * Strict JSON: one parser configuration for every path in and out of the
 * broker, the store, the worker and the CLI.  json-c's own strict mode
 * still takes NaN, Infinity, single quotes, surrogates encoded in UTF-8
 * and integers it has to clamp; each value is therefore first checked
 * against RFC 8259 and RFC 3629 here, then built by json-c.
 */

#define JSTRICT_MAX_DEPTH	64	/* nested arrays and objects */

enum {
	JSTRICT_OK = 0,
	JSTRICT_EMPTY,		/* nothing but white space */
	JSTRICT_SYNTAX,		/* not RFC 8259 JSON */
	JSTRICT_UTF8,		/* invalid UTF-8 or a lone surrogate escape */
	JSTRICT_NUMBER,		/* integer out of 64-bit range, or not finite */
	JSTRICT_DEPTH,		/* nested deeper than JSTRICT_MAX_DEPTH */
	JSTRICT_TRAILING,	/* bytes after the value */
	JSTRICT_NULNAME,	/* a member name holds \u0000 */
};

/*
 * Check buf[0..len) is exactly one JSON value with only white space
 * around it: 0, or a JSTRICT_* code.  Integers must fit in int64_t or
 * uint64_t (so they are echoed exactly); numbers with a fraction or an
 * exponent must be finite as doubles.  A raw NUL byte is never valid, nor
 * is \u0000 in a member name (json-c keeps names as C strings).
 */
int		 jstrict_check(const char *buf, size_t len);
/*
 * jstrict_check, then build the value: 0 with *out set (caller puts), or
 * a JSTRICT_* code with *out NULL.
 */
int		 jstrict_parse(const char *buf, size_t len, json_object **out);
/* The same for a NUL-terminated string. */
int		 jstrict_parse_str(const char *s, json_object **out);
/* A short description of a JSTRICT_* code ("invalid UTF-8", ...). */
const char	*jstrict_strerror(int code);
/* Whether any string or member name under v holds U+0000. */
int		 jstrict_has_nul(json_object *v);
/*
 * Whether v is a JSON string of exactly s's bytes, compared with its JSON
 * length: "pong\u0000x" is not "pong", as for a peer that compares whole
 * strings.  0 when v is NULL or no string.
 */
int		 jstrict_is(json_object *v, const char *s);
/*
 * A JSON string of s, bytes that may not be UTF-8 (a header, a text cut
 * at a byte count): each byte that begins no valid sequence becomes
 * U+FFFD, so that what quotes it is JSON.  Caller puts; NULL when out
 * of memory.
 */
json_object	*jstrict_string(const char *s);
/* v (borrowed) as compact JSON; borrowed until v changes or is put. */
const char	*jstrict_to_string(json_object *v);

/* A JSON string of bytes that may not be UTF-8: bad bytes become U+FFFD.
 * Caller puts. */
json_object	*utf8_json(const char *s, size_t n);

#endif
