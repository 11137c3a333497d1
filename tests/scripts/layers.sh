#!/bin/sh
# The layering of the sources (issue 32; src/README): each folder of src/
# and workers/ includes only its own headers and those of the folders
# src/README lets it use, and those folders form no loop; no .c file sits
# directly in src/; a header in include/ declares only functions its
# folder defines; no function is over 120 lines.  A .c file over 1,000
# lines is a warning, not a failure: a file is split where its concepts
# split, never to fit a count.
srcdir=${CMDGATE_SRCDIR:-.}
cd "$srcdir" || exit 1
status=0
fail() { echo "FAIL: $*"; status=1; }

# src/README's table: "FOLDER  may use: A B ...", one line each.
uses=$(sed -n 's/^\([a-z]*\) *may use: *\(.*\)$/\1 \2/p' src/README)
[ -n "$uses" ] || fail "src/README has no \"FOLDER  may use:\" table"
folders=$(echo "$uses" | cut -d' ' -f1)
dir_of() { [ "$1" = workers ] && echo workers || echo "src/$1"; }

for d in src/*/ workers/; do
	f=$(basename "$d")
	echo "$folders" | grep -qx "$f" || fail "$d is not in src/README's table"
done
for f in src/*.c; do
	[ -e "$f" ] && fail "$f: no .c file sits directly in src/"
done

# The folders form no loop.
if ! loops=$(echo "$uses" | while read -r f rest; do
	echo "$f $f"
	for u in $rest; do [ "$u" = - ] || echo "$f $u"; done
done | tsort 2>&1 >/dev/null); then
	fail "the folders' uses loop:"
	echo "$loops"
fi

# The functions a header declares (comments and directives dropped).
declared() {
	cpp -P -fpreprocessed "$1" | grep -v '^#' | tr '\n' ' ' |
	    tr ';{}' '\n\n\n' | grep -v 'typedef\|(\*' |
	    sed 's/__attribute__ *((.*))//' |
	    sed -n 's/^.*[ *]\([a-z_][a-z0-9_]*\) *(.*$/\1/p'
}
command -v cpp >/dev/null || { echo "SKIP: no cpp"; exit 77; }

# The folder whose .c files a header serves: for src/F/X.h, F; for
# include/X.h, the one that holds X.c, else the folder named X.  A header
# that declares no function is a leaf of types and constants ("-"):
# anyone's (include/options.h, include/wire.h).
owner() {
	case $1 in
	src/*/*.h)	basename "$(dirname "$1")"; return ;;
	esac
	[ -z "$(declared "$1")" ] && { echo "-"; return; }
	m=$(basename "$1" .h)
	for c in src/*/"$m".c workers/"$m".c; do
		[ -f "$c" ] && { basename "$(dirname "$c")"; return; }
	done
	[ -d "src/$m" ] && { echo "$m"; return; }
	echo "?"
}
owners=$(for h in include/*.h src/*/*.h; do echo "$h $(owner "$h")"; done)
owner_of() { echo "$owners" | sed -n "s|^$1 ||p"; }

# Every #include "X.h" of a folder's files: its own header first (the
# compiler looks beside the file), else include/X.h.
for f in $folders; do
	d=$(dir_of "$f")
	allowed=" $f $(echo "$uses" | sed -n "s/^$f //p") "
	for file in "$d"/*.c "$d"/*.h; do
		[ -f "$file" ] || continue
		for h in $(sed -n 's/^#include "\([^"]*\.h\)".*/\1/p' "$file"); do
			[ "$h" = config.h ] && continue
			case $h in
			*/*)	fail "$file includes $h: by a path, past the folder rules"
				continue ;;
			esac
			if [ -f "$d/$h" ]; then continue; fi
			if [ ! -f "include/$h" ]; then
				fail "$file includes $h, which is neither in $d/ nor in include/"
				continue
			fi
			o=$(owner_of "include/$h")
			[ "$o" = - ] && continue
			case $allowed in
			*" $o "*) ;;
			*) fail "$file ($f) includes include/$h ($o), which src/README does not let $f use" ;;
			esac
		done
	done
done

for h in include/*.h src/*/*.h; do
	o=$(owner_of "$h")
	case $o in
	-)	continue ;;
	"?")	fail "$h declares functions, but no folder has its .c"
		continue ;;
	esac
	for fn in $(declared "$h"); do
		grep -q "^$fn(" "$(dir_of "$o")"/*.c && continue
		fail "$h declares $fn(), which no .c of $(dir_of "$o")/ defines"
	done
done

# Function lengths: from the line that names it to its closing brace.
long=$(for f in $folders; do
	for c in "$(dir_of "$f")"/*.c; do
		awk -v file="$c" '
		    /^[a-z_][a-z0-9_]*\(/ { name = $0; sub(/\(.*/, "", name);
			start = NR }
		    /^}/ && start { if (NR - start + 1 > 120)
			print file ": " name "() has " NR - start + 1 " lines";
			start = 0 }' "$c"
	done
done)
[ -z "$long" ] || fail "functions over 120 lines:
$long"
for f in $folders; do
	for c in "$(dir_of "$f")"/*.c; do
		n=$(wc -l < "$c")
		[ "$n" -gt 1000 ] && echo "WARNING: $c has $n lines (over 1,000)"
	done
done

[ "$status" -eq 0 ] && echo "layers: ok"
exit "$status"
