/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-worker: the program cmdgated starts, one process per job.  It
 * never links the broker's store or event loop.  This first version only
 * identifies itself; running jobs comes with the jobs subsystem.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#define EXIT_USAGE	64

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("cmdgate-worker %s\n", PACKAGE_VERSION);
		return 0;
	}
	fprintf(stderr, "cmdgate-worker: started by cmdgated, not by hand "
	    "(see cmdgated(8))\n");
	return EXIT_USAGE;
}
