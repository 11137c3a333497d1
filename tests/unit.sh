#!/bin/sh
# etc/cmdgated.service: what the broker relies on is there, and systemd's
# own checker has nothing to say about the unit.
srcdir=${CMDGATE_SRCDIR:-.}
in="$srcdir/etc/cmdgated.service.in"
for want in 'Type=notify' 'ExecReload=/bin/kill -HUP $MAINPID' \
    'StateDirectory=cmdgate' 'KillMode=mixed'; do
	grep -qxF "$want" "$in" || { echo "FAIL: unit lacks '$want'"; exit 1; }
done
if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "SKIP: systemd-analyze not installed; the unit's lines were checked"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
sed -e "s|@sbindir@|$(dirname "$CMDGATED")|g" "$in" > "$tmp/cmdgated.service"
out=$(systemd-analyze verify --man=no "$tmp/cmdgated.service" 2>&1)
if [ -n "$out" ]; then
	echo "FAIL: systemd-analyze verify:"
	echo "$out"
	exit 1
fi
echo "cmdgated.service verified"
