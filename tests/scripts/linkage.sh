#!/bin/sh
# What each program links against: cmdgate(1) never loads LMDB (it has no
# store), nor does the worker (a plain poll(2) loop, which runs libevent
# only inside its mcp-http calls).  Checked on the NEEDED entries of the
# built programs.
fail() { echo "FAIL: $*"; exit 1; }

command -v objdump >/dev/null || { echo "SKIP: no objdump"; exit 77; }
needed() {
	[ -f "$1" ] || fail "$1 not built"
	objdump -p "$1" | sed -n 's/^ *NEEDED *//p'
}
check() {
	prog=$1; shift
	libs=$(needed "$prog") || exit 1
	for lib in "$@"; do
		! echo "$libs" | grep -q "^lib$lib[.-]" ||
			fail "$prog needs lib$lib"
	done
	echo "$prog:" $libs
}
# The worker is built beside cmdgate: $top/src and $top/workers.
worker=$(dirname "${CMDGATE:?}")/../workers/cmdgate-worker
check "$CMDGATE" lmdb
check "$worker" lmdb
echo "linkage: ok"
