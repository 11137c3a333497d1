/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "log.h"
#include "server.h"
#include "util.h"

#define AUTHLIMIT_KEY_MAX	(INET6_ADDRSTRLEN + 4)

struct authpeer {
	char		 key[AUTHLIMIT_KEY_MAX];	/* "" when unused */
	unsigned	 fails;		/* wrong tokens since last forgotten */
	unsigned	 refused;	/* tries refused since last logged */
	int64_t		 last_ms;	/* the last wrong token */
	int64_t		 until_ms;	/* locked out until */
};

struct authlimit {
	struct authpeer	 peers[AUTHLIMIT_PEERS];
};

static void		 authlimit_key(const char *, char *, size_t);
static struct authpeer	*authlimit_find(struct authlimit *, const char *,
			    int64_t, int);

struct authlimit *
authlimit_new(void)
{
	return xcalloc(1, sizeof(struct authlimit));
}

void
authlimit_free(struct authlimit *al)
{
	free(al);
}

/* An IPv6 address as its key: loopback, a mapped IPv4 one, or its /64. */
static void
authlimit_key6(struct in6_addr *a6, char *key, size_t len)
{
	char	buf[INET6_ADDRSTRLEN];

	if (IN6_IS_ADDR_LOOPBACK(a6) || (IN6_IS_ADDR_V4MAPPED(a6) &&
	    a6->s6_addr[12] == 127)) {
		snprintf(key, len, "loopback");
		return;
	}
	if (IN6_IS_ADDR_V4MAPPED(a6)) {
		inet_ntop(AF_INET, &a6->s6_addr[12], buf, sizeof(buf));
		snprintf(key, len, "%s", buf);
		return;
	}
	memset(&a6->s6_addr[8], 0, 8);
	inet_ntop(AF_INET6, a6, buf, sizeof(buf));
	snprintf(key, len, "%s/64", buf);
}

/*
 * The address part of peer ("ADDR:PORT", "[V6]:PORT", or "unix"), as the
 * table counts it; a peer of no such address counts as itself.
 */
static void
authlimit_key(const char *peer, char *key, size_t len)
{
	char		 host[INET6_ADDRSTRLEN];
	struct in_addr	 a4;
	struct in6_addr	 a6;

	switch (addr_split(peer, host, sizeof(host), NULL)) {
	case 0:
		if (inet_pton(AF_INET, host, &a4) != 1)
			break;
		snprintf(key, len, "%s", (ntohl(a4.s_addr) >> 24) == 127 ?
		    "loopback" : host);
		return;
	case 1:
		if (inet_pton(AF_INET6, host, &a6) != 1)
			break;
		authlimit_key6(&a6, key, len);
		return;
	}
	snprintf(key, len, "%s", peer);
}

/*
 * The entry of peer's address, or NULL when it has none and create is 0.
 * An entry past its time is forgotten first; when the table is full, the
 * one least recently wrong is reused.
 */
static struct authpeer *
authlimit_find(struct authlimit *al, const char *peer, int64_t now,
    int create)
{
	struct authpeer	*p, *found = NULL, *free_ = NULL, *oldest = NULL;
	char		 key[AUTHLIMIT_KEY_MAX];
	size_t		 i;

	authlimit_key(peer, key, sizeof(key));
	for (i = 0; i < AUTHLIMIT_PEERS; i++) {
		p = &al->peers[i];
		if (p->key[0] != '\0' && now >= p->until_ms &&
		    now - p->last_ms >= AUTHLIMIT_FORGET_S * 1000LL)
			memset(p, 0, sizeof(*p));
		if (p->key[0] == '\0') {
			if (free_ == NULL)
				free_ = p;
			continue;
		}
		if (strcmp(p->key, key) == 0)
			found = p;
		if (oldest == NULL || p->last_ms < oldest->last_ms)
			oldest = p;
	}
	if (found != NULL || !create)
		return found;
	p = free_ != NULL ? free_ : oldest;
	memset(p, 0, sizeof(*p));
	snprintf(p->key, sizeof(p->key), "%s", key);
	return p;
}

int64_t
authlimit_locked(struct authlimit *al, const char *peer, int64_t now_ms)
{
	struct authpeer	*p = authlimit_find(al, peer, now_ms, 0);

	if (p == NULL || now_ms >= p->until_ms)
		return 0;
	p->refused++;
	return (p->until_ms - now_ms + 999) / 1000;
}

int64_t
authlimit_failed(struct authlimit *al, const char *peer, int64_t now_ms)
{
	struct authpeer	*p = authlimit_find(al, peer, now_ms, 1);
	unsigned	 shift;
	int64_t		 lock;

	p->fails++;
	p->last_ms = now_ms;
	if (p->fails == 1)
		log_warnx("authentication: wrong token from %s; further ones "
		    "from %s are logged once per lockout", peer, p->key);
	if (p->fails < AUTHLIMIT_FREE)
		return 0;
	shift = p->fails - AUTHLIMIT_FREE;
	lock = shift < 6 ? 1LL << shift : AUTHLIMIT_LOCK_MAX_S;
	if (lock > AUTHLIMIT_LOCK_MAX_S)
		lock = AUTHLIMIT_LOCK_MAX_S;
	p->until_ms = now_ms + lock * 1000;
	log_warnx("authentication: %u wrong tokens from %s (%u tries refused "
	    "during its last lockout); refusing it for %lld s", p->fails,
	    p->key, p->refused, (long long)lock);
	p->refused = 0;
	return lock;
}
