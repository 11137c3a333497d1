#!/bin/sh
# The layering of src/ (issue 14; src/README): no include loop among its
# modules (a module is src/X.c with include/X.h; tsort prints each loop),
# and each include/X.h declares only functions that its own X.c defines.
# There is no cap on a file's length (issue 32 withdrew it): a file is
# split where its concepts split.
srcdir=${CMDGATE_SRCDIR:-.}
cd "$srcdir" || exit 1
status=0

if ! loops=$(for f in src/*.c include/*.h; do
	m=$(basename "${f%.*}")
	sed -n 's/^#include "\(.*\)\.h"/\1/p' "$f" |
	    grep -vx -e config -e "$m" | sed "s/^/$m /"
done | tsort 2>&1 >/dev/null); then
	echo "FAIL: the includes of src/ loop (module X = src/X.c + include/X.h):"
	echo "$loops"
	status=1
fi

# The functions a header declares (comments and directives dropped).
declared() {
	cpp -P -fpreprocessed "$1" | grep -v '^#' | tr '\n' ' ' |
	    tr ';{}' '\n\n\n' | grep -v 'typedef\|(\*' |
	    sed 's/__attribute__ *((.*))//' |
	    sed -n 's/^.*[ *]\([a-z_][a-z0-9_]*\) *(.*$/\1/p'
}
if command -v cpp >/dev/null; then
	for h in include/*.h; do
		m=$(basename "$h" .h)
		c=
		for d in src workers; do
			[ -f "$d/$m.c" ] && c=$d/$m.c
		done
		if [ -z "$c" ]; then
			echo "FAIL: $h has no src/$m.c"
			status=1
			continue
		fi
		for f in $(declared "$h"); do
			grep -q "^$f(" "$c" && continue
			echo "FAIL: $h declares $f(), which $c does not define"
			status=1
		done
	done
else
	echo "SKIP: no cpp: headers not checked"
fi

[ "$status" -eq 0 ] && echo "layers: ok"
exit "$status"
