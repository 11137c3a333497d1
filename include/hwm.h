/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_HWM_H
#define CMDGATE_HWM_H

#include <stdint.h>

/*
 * The ticket high-water mark: a file beside the store holding a number
 * at or above which no ticket was issued, so that ticket numbers never
 * go back even when the store is lost or older.
 */

/* Read it into *hwm: 0 (*hwm 0 when there is none yet), -1 if garbled. */
int	hwm_read(const char *path, uint64_t *hwm);
/*
 * Write it durably: a new file, synced, renamed over the old, the
 * directory synced.  0, or an errno.
 */
int	hwm_write(const char *path, uint64_t hwm);

#endif
