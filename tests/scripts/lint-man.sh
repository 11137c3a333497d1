#!/bin/sh
# Every manual page passes mandoc -Tlint at warning level.
# ("referenced manual not found" is only a STYLE note and depends on what
# the machine has installed, so it is left out with -Wwarning.)
srcdir=${CMDGATE_SRCDIR:-.}
if [ -z "${MANDOC:-}" ]; then
	echo "SKIP: mandoc not found at configure time (apt-get install mandoc)"
	exit 77
fi
"$MANDOC" -Tlint -Wwarning "$srcdir"/man/*.[0-9] || {
	echo "FAIL: mandoc -Tlint reports the problems above"
	exit 1
}
echo "man pages lint-clean: $(ls "$srcdir"/man/*.[0-9] | wc -l)"
