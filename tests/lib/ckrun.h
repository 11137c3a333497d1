/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CKRUN_H
#define CMDGATE_CKRUN_H

#include <check.h>

/* Run one suite; the exit status for automake: 0 when every test passed. */
static inline int
ck_run(Suite *s)
{
	SRunner	*sr = srunner_create(s);
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

#endif
