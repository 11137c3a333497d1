/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CONNFACE_H
#define CMDGATE_CONNFACE_H

#include "face.h"

struct conn;

/* The peer check of a connection (peercred.h), for the listener. */

/*
 * c came in on a listener of face f: no token is asked (where one is
 * needed, the peer check lets the client in or it is refused in the
 * face's shape and closed), and its messages go to face_ops[f].
 */
void		 conn_set_face(struct conn *, enum face f);
/*
 * --peer-auth: a client that must authenticate and whose peer on fd the
 * peer check allows (peercred.h) is authenticated at once.
 */
void		 conn_peer_auth(struct conn *, int fd);

#endif
