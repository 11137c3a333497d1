/* SPDX-License-Identifier: ISC */
/*
 * Strict JSON (RFC 8259, RFC 3629): a recursive check bounded by
 * JSTRICT_MAX_DEPTH, then json-c builds the value.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jstrict.h"

#define JSTRICT_NUM_MAX	512	/* longest number text given to strtod */

struct jscan {
	const unsigned char	*p;
	const unsigned char	*end;
};

static int	scan_value(struct jscan *, int);
static int	scan_string(struct jscan *);
static int	scan_name(struct jscan *);
static int	scan_escape(struct jscan *);
static int	scan_utf8(struct jscan *);
static int	scan_number(struct jscan *);
static int	scan_container(struct jscan *, int);
static int	scan_word(struct jscan *, const char *);
static int	int_fits(const unsigned char *, size_t, int);
static int	hex4(const unsigned char *, unsigned *);
static void	skip_ws(struct jscan *);

static void
skip_ws(struct jscan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
	    *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int
scan_word(struct jscan *s, const char *w)
{
	size_t	n = strlen(w);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
		return JSTRICT_SYNTAX;
	s->p += n;
	return JSTRICT_OK;
}

static int
hex4(const unsigned char *p, unsigned *v)
{
	int	i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		*v <<= 4;
		if (p[i] >= '0' && p[i] <= '9')
			*v |= p[i] - '0';
		else if (p[i] >= 'a' && p[i] <= 'f')
			*v |= p[i] - 'a' + 10;
		else if (p[i] >= 'A' && p[i] <= 'F')
			*v |= p[i] - 'A' + 10;
		else
			return -1;
	}
	return 0;
}

/* After the backslash.  A surrogate escape must come in a valid pair. */
static int
scan_escape(struct jscan *s)
{
	unsigned	u, lo;

	if (s->p >= s->end)
		return JSTRICT_SYNTAX;
	if (strchr("\"\\/bfnrt", *s->p) != NULL && *s->p != '\0') {
		s->p++;
		return JSTRICT_OK;
	}
	if (*s->p != 'u' || s->end - s->p < 5 || hex4(s->p + 1, &u) == -1)
		return JSTRICT_SYNTAX;
	s->p += 5;
	if (u >= 0xdc00 && u <= 0xdfff)
		return JSTRICT_UTF8;
	if (u < 0xd800 || u > 0xdbff)
		return JSTRICT_OK;
	if (s->end - s->p < 6 || s->p[0] != '\\' || s->p[1] != 'u' ||
	    hex4(s->p + 2, &lo) == -1 || lo < 0xdc00 || lo > 0xdfff)
		return JSTRICT_UTF8;
	s->p += 6;
	return JSTRICT_OK;
}

/*
 * The length of the UTF-8 sequence at p, end the first byte past the
 * text, or 0 when none begins there (RFC 3629, table of section 4).
 */
static size_t
utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned char	c = *p, lo = 0x80, hi = 0xbf;
	size_t		n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 1;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 2;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;	/* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 3;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;	/* nothing above U+10FFFF */
	} else
		return 0;
	if ((size_t)(end - p) <= n)
		return 0;
	for (i = 1; i <= n; i++) {
		if (p[i] < lo || p[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return n + 1;
}

/* One multi-byte UTF-8 sequence. */
static int
scan_utf8(struct jscan *s)
{
	size_t	n = utf8_seq(s->p, s->end);

	if (n == 0)
		return JSTRICT_UTF8;
	s->p += n;
	return JSTRICT_OK;
}

static int
scan_string(struct jscan *s)
{
	int	rc;

	s->p++;
	while (s->p < s->end) {
		if (*s->p == '"') {
			s->p++;
			return JSTRICT_OK;
		}
		if (*s->p < 0x20)
			return JSTRICT_SYNTAX;
		if (*s->p == '\\') {
			s->p++;
			rc = scan_escape(s);
		} else if (*s->p >= 0x80)
			rc = scan_utf8(s);
		else {
			s->p++;
			rc = JSTRICT_OK;
		}
		if (rc != JSTRICT_OK)
			return rc;
	}
	return JSTRICT_SYNTAX;
}

/* A member name: json-c keeps names as C strings, so no U+0000. */
static int
scan_name(struct jscan *s)
{
	const unsigned char	*start = s->p, *q;
	int			 rc;

	if ((rc = scan_string(s)) != JSTRICT_OK)
		return rc;
	for (q = start; q + 6 <= s->p; q++) {
		if (*q == '\\' && q[1] == '\\') {
			q++;
			continue;
		}
		if (memcmp(q, "\\u0000", 6) == 0)
			return JSTRICT_NULNAME;
	}
	return JSTRICT_OK;
}

/*
 * Whether the n digits at d fit: up to INT64_MIN's magnitude when
 * negative, UINT64_MAX otherwise.
 */
static int
int_fits(const unsigned char *d, size_t n, int neg)
{
	const char	*max = neg ? "9223372036854775808" :
			    "18446744073709551615";
	size_t		 maxlen = strlen(max);

	if (n != maxlen)
		return n < maxlen;
	return memcmp(d, max, n) <= 0;
}

static int
scan_number(struct jscan *s)
{
	const unsigned char	*start = s->p, *digits;
	char			 buf[JSTRICT_NUM_MAX + 1];
	size_t			 n;
	int			 neg = 0, isint = 1;
	double			 d;

	if (*s->p == '-') {
		neg = 1;
		s->p++;
	}
	digits = s->p;
	if (s->p >= s->end || *s->p < '0' || *s->p > '9')
		return JSTRICT_SYNTAX;
	if (*s->p == '0')
		s->p++;
	else
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			s->p++;
	n = (size_t)(s->p - digits);
	if (s->p < s->end && *s->p == '.') {
		isint = 0;
		if (++s->p >= s->end || *s->p < '0' || *s->p > '9')
			return JSTRICT_SYNTAX;
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			s->p++;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		isint = 0;
		if (++s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (s->p >= s->end || *s->p < '0' || *s->p > '9')
			return JSTRICT_SYNTAX;
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			s->p++;
	}
	if (isint)
		return int_fits(digits, n, neg) ? JSTRICT_OK : JSTRICT_NUMBER;
	if ((size_t)(s->p - start) > JSTRICT_NUM_MAX)
		return JSTRICT_NUMBER;
	memcpy(buf, start, (size_t)(s->p - start));
	buf[s->p - start] = '\0';
	d = strtod(buf, NULL);
	return isfinite(d) ? JSTRICT_OK : JSTRICT_NUMBER;
}

/* An array or an object, its opening bracket at s->p. */
static int
scan_container(struct jscan *s, int depth)
{
	unsigned char	close = *s->p == '[' ? ']' : '}';
	int		rc;

	if (depth >= JSTRICT_MAX_DEPTH)
		return JSTRICT_DEPTH;
	s->p++;
	skip_ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		return JSTRICT_OK;
	}
	for (;;) {
		if (close == '}') {
			if (s->p >= s->end || *s->p != '"')
				return JSTRICT_SYNTAX;
			if ((rc = scan_name(s)) != JSTRICT_OK)
				return rc;
			skip_ws(s);
			if (s->p >= s->end || *s->p++ != ':')
				return JSTRICT_SYNTAX;
		}
		if ((rc = scan_value(s, depth + 1)) != JSTRICT_OK)
			return rc;
		skip_ws(s);
		if (s->p >= s->end)
			return JSTRICT_SYNTAX;
		if (*s->p == close) {
			s->p++;
			return JSTRICT_OK;
		}
		if (*s->p++ != ',')
			return JSTRICT_SYNTAX;
		skip_ws(s);
	}
}

/* depth: containers around this value. */
static int
scan_value(struct jscan *s, int depth)
{
	skip_ws(s);
	if (s->p >= s->end)
		return JSTRICT_SYNTAX;
	switch (*s->p) {
	case '{':
	case '[':
		return scan_container(s, depth);
	case '"':
		return scan_string(s);
	case 't':
		return scan_word(s, "true");
	case 'f':
		return scan_word(s, "false");
	case 'n':
		return scan_word(s, "null");
	default:
		if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
			return scan_number(s);
		return JSTRICT_SYNTAX;
	}
}

int
jstrict_check(const char *buf, size_t len)
{
	struct jscan	s;
	int		rc;

	if (len == 0)
		return JSTRICT_EMPTY;	/* buf may be NULL: no arithmetic */
	s.p = (const unsigned char *)buf;
	s.end = s.p + len;
	skip_ws(&s);
	if (s.p == s.end)
		return JSTRICT_EMPTY;
	if ((rc = scan_value(&s, 0)) != JSTRICT_OK)
		return rc;
	skip_ws(&s);
	return s.p == s.end ? JSTRICT_OK : JSTRICT_TRAILING;
}

int
jstrict_parse(const char *buf, size_t len, json_object **out)
{
	static struct json_tokener	*tok;
	json_object			*v;
	int				 rc;

	*out = NULL;
	if ((rc = jstrict_check(buf, len)) != JSTRICT_OK)
		return rc;
	if (tok == NULL) {
		/* json-c counts the outermost value as one level. */
		if ((tok = json_tokener_new_ex(JSTRICT_MAX_DEPTH + 1)) == NULL)
			abort();
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	} else
		json_tokener_reset(tok);
	/* Checked above: json-c now sees one complete value.  A bare number
	 * needs the end of input to finish, hence the second call. */
	v = json_tokener_parse_ex(tok, buf, (int)len);
	if (v == NULL && json_tokener_get_error(tok) == json_tokener_continue)
		v = json_tokener_parse_ex(tok, "", 1);
	if (v == NULL && json_tokener_get_error(tok) != json_tokener_success)
		return JSTRICT_SYNTAX;
	*out = v;
	return JSTRICT_OK;
}

int
jstrict_parse_str(const char *s, json_object **out)
{
	return jstrict_parse(s, strlen(s), out);
}

const char *
jstrict_strerror(int code)
{
	switch (code) {
	case JSTRICT_OK:
		return "no error";
	case JSTRICT_EMPTY:
		return "no JSON value";
	case JSTRICT_SYNTAX:
		return "not RFC 8259 JSON";
	case JSTRICT_UTF8:
		return "invalid UTF-8 (RFC 3629) or a lone surrogate escape";
	case JSTRICT_NUMBER:
		return "a number out of range (integers must fit 64 bits, "
		    "other numbers must be finite)";
	case JSTRICT_DEPTH:
		return "nested deeper than 64 arrays and objects";
	case JSTRICT_TRAILING:
		return "bytes after the value";
	case JSTRICT_NULNAME:
		return "a member name holds U+0000";
	default:
		return "unknown error";
	}
}

int
jstrict_has_nul(json_object *v)
{
	size_t	i, n;

	switch (json_object_get_type(v)) {
	case json_type_string:
		return strlen(json_object_get_string(v)) !=
		    (size_t)json_object_get_string_len(v);
	case json_type_array:
		n = json_object_array_length(v);
		for (i = 0; i < n; i++)
			if (jstrict_has_nul(json_object_array_get_idx(v, i)))
				return 1;
		return 0;
	case json_type_object: {
		json_object_object_foreach(v, key, val) {
			if (jstrict_has_nul(val))
				return 1;
			(void)key;
		}
		return 0;
	}
	default:
		return 0;
	}
}

int
jstrict_is(json_object *v, const char *s)
{
	size_t	n = strlen(s);

	return json_object_is_type(v, json_type_string) &&
	    (size_t)json_object_get_string_len(v) == n &&
	    memcmp(json_object_get_string(v), s, n) == 0;
}

const char *
jstrict_to_string(json_object *v)
{
	return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
}

json_object *
jstrict_string(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	const unsigned char	*end = p + strlen(s);
	json_object		*o;
	char			*buf;
	size_t			 n, len = 0;

	/* Each byte that begins no sequence becomes U+FFFD, 3 bytes. */
	if ((buf = malloc(3 * (size_t)(end - p) + 1)) == NULL)
		return NULL;
	while (p < end) {
		if ((n = utf8_seq(p, end)) == 0) {
			memcpy(buf + len, "\xef\xbf\xbd", 3);
			len += 3;
			p++;
		} else {
			memcpy(buf + len, p, n);
			len += n;
			p += n;
		}
	}
	o = json_object_new_string_len(buf, (int)len);
	free(buf);
	return o;
}

json_object *
utf8_json(const char *s, size_t n)
{
	json_object	*o;
	char		*out = malloc(n * 3 + 1);
	size_t		 i = 0, j = 0, k, len;
	unsigned char	 c;

	if (out == NULL)
		abort();
	while (i < n) {
		c = (unsigned char)s[i];
		len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 :
		    (c >> 3) == 30 ? 4 : 0;
		for (k = 1; len > 1 && k < len; k++)
			if (i + k >= n || ((unsigned char)s[i + k] >> 6) != 2)
				len = 0;
		if (len == 2 && c < 0xc2)
			len = 0;
		if (len == 3 && ((c == 0xe0 && (unsigned char)s[i + 1] < 0xa0) ||
		    (c == 0xed && (unsigned char)s[i + 1] >= 0xa0)))
			len = 0;
		if (len == 4 && ((c == 0xf0 && (unsigned char)s[i + 1] < 0x90) ||
		    c > 0xf4 || (c == 0xf4 && (unsigned char)s[i + 1] >= 0x90)))
			len = 0;
		if (len == 0) {
			memcpy(out + j, "\xef\xbf\xbd", 3);
			j += 3;
			i++;
			continue;
		}
		memcpy(out + j, s + i, len);
		i += len;
		j += len;
	}
	o = json_object_new_string_len(out, (int)j);
	free(out);
	return o;
}
