/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_DATAFILE_H
#define CMDGATE_DATAFILE_H

#include <stddef.h>

/*
 * The store's data file (data.mdb) checked against its own meta pages
 * before LMDB maps it, and moved aside when it cannot be trusted.
 */

/*
 * 0 when file is sound or absent (a new store), -1 with why: a page past
 * the file's end would fault (SIGBUS) at LMDB's first read.
 */
int	datafile_check(const char *file, char *why, size_t len);
/*
 * Rename file to file.broken-<unix time>, which *moved names (caller
 * frees): 0 or an errno.
 */
int	datafile_move_aside(const char *file, char **moved);

#endif
