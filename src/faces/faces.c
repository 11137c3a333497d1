/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stddef.h>

#include <json-c/json.h>

#include "faces.h"
#include "net.h"

/* conn.h: what each listener face does; FACE_CMDGATE is conn.c's own. */
const struct face_ops face_ops[FACE_COUNT] = {
	[FACE_CMDGATE] = { NULL, NULL, NULL, NULL, FACE_NOTES_ALL, NULL, NULL,
	    NULL },
	[FACE_ULOOP] = { uloop_accept, uloop_message, uloop_fail,
	    uloop_closed, FACE_NOTES_NAMED, NULL, NULL, NULL },
	[FACE_UNITY] = { unity_accept, unity_message, unity_fail, NULL,
	    FACE_NOTES_NONE, unity_status_dir, NULL, NULL },
	[FACE_HUB] = { NULL, NULL, NULL, NULL, FACE_NOTES_NONE, hub_status,
	    hub_adopt, hub_free },
};
