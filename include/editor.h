/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_EDITOR_H
#define CMDGATE_EDITOR_H

/* Editor flags across a restart (editor.c). */

struct jobs;

/* At start: the flags held when the last run ended hold reloads for
 * --editor-grace seconds (J->grace_ev), or until clients hold them again. */
void	editor_restore(struct jobs *);
/* The connections' flags changed: record them for a restart. */
void	editor_update(struct jobs *);
/* --editor-grace passed: the flags of the last run hold nothing now. */
void	editor_grace_over(struct jobs *);

#endif
