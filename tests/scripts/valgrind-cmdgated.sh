#!/bin/sh
# Run the broker under valgrind memcheck for "make valgrind": an invalid
# access or a definite leak makes it exit 99, which fails the test that
# stopped it.  A test that names its own worker (check_probe) keeps it.
here=$(cd "$(dirname "$0")/../.." && pwd)
CMDGATE_WORKER="${CMDGATE_WORKER:-$here/workers/cmdgate-worker}"
export CMDGATE_WORKER
exec valgrind --quiet --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite --show-leak-kinds=definite \
    --log-fd=2 "$here/src/cmdgated" "$@"
