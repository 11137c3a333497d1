/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-stamp: the bench's tool for the guard figure.  With no argument
 * it prints the monotonic clock in nanoseconds, its first act; with
 * "hold OUT IN" it writes its parent's pid (the worker's) to the FIFO
 * OUT, then waits for a byte on the FIFO IN and exits.  libc only, so
 * that its exec costs as little as a tool's can.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct timespec	ts;
	char		c;
	int		fd;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (argc == 1) {
		printf("%lld\n", (long long)ts.tv_sec * 1000000000LL +
		    ts.tv_nsec);
		return 0;
	}
	if (argc != 4 || strcmp(argv[1], "hold") != 0)
		return 2;
	if ((fd = open(argv[2], O_WRONLY)) == -1 ||
	    dprintf(fd, "%d\n", (int)getppid()) < 0)
		return 1;
	close(fd);
	if ((fd = open(argv[3], O_RDONLY)) == -1 || read(fd, &c, 1) != 1)
		return 1;
	return 0;
}
