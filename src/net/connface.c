/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdio.h>

#include <event2/bufferevent.h>

#include "face.h"
#include "log.h"
#include "net.h"
#include "options.h"

/* A connection's peer check: the listener faces and --peer-auth. */

/*
 * The clients of a face never send a token: where cmdgate's own clients
 * need one, the peer check decides for them (unless --peer-auth did
 * already); --no-auth lets them in.  0, or -1 when refused (reason).
 */
static int
conn_face_admit(struct conn *c, char *reason, size_t len)
{
	char	why[256];
	int	fd, rc;

	if (!conn_needs_auth(c))
		return 0;
	fd = c->bev != NULL ? bufferevent_getfd(c->bev) : -1;
	if (fd == -1)
		snprintf(why, sizeof(why), "no socket");
	if (fd == -1 ||
	    (rc = peercred_check(c->sh->opt, fd, why, sizeof(why))) != 1) {
		snprintf(reason, len, "refused by the peer check (%s clients "
		    "cannot send a token): %s; cmdgated(8) --allow-user and "
		    "--allow-group let other users in", face_name(c->face),
		    why);
		return -1;
	}
	c->authenticated = 1;
	log_debug("client %llu (%s): let in by the peer check, %s",
	    (unsigned long long)c->id, c->peer, why);
	return 0;
}

void
conn_set_face(struct conn *c, enum face f)
{
	char	reason[RPC_REASON_MAX];

	c->face = f;
	if (f == FACE_CMDGATE)
		return;
	if (conn_face_admit(c, reason, sizeof(reason)) == -1) {
		conn_fail(c, RPC_UNAUTHORIZED, "unauthorized", reason);
		log_info("client %llu (%s): %s, closed",
		    (unsigned long long)c->id, c->peer, reason);
		return;
	}
	if (face_ops[f].accept != NULL)
		face_ops[f].accept(c);
}

void
conn_peer_auth(struct conn *c, int fd)
{
	char	why[256];

	if (!conn_needs_auth(c) || !c->sh->opt->peer_auth)
		return;
	if (peercred_check(c->sh->opt, fd, why, sizeof(why)) != 1) {
		log_debug("client %llu (%s): peer check: %s; it needs the "
		    "token", (unsigned long long)c->id, c->peer, why);
		return;
	}
	c->authenticated = 1;
	log_debug("client %llu (%s): authenticated by the peer check, %s",
	    (unsigned long long)c->id, c->peer, why);
}
