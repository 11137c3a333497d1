#!/bin/sh
# The systemd units: what the broker relies on is there, systemd's own
# checker has nothing to say about them, and the system units' exposure
# (systemd-analyze security) stays at or below 3.0.  The score is printed.
srcdir=${CMDGATE_SRCDIR:-.}
max_exposure=3.0
fail() { echo "FAIL: $*"; exit 1; }

for in in "$srcdir/etc/cmdgated.service.in" "$srcdir/etc/cmdgated@.service.in" \
    "$srcdir/etc/cmdgated.user.service.in"; do
	for want in 'Type=notify' 'ExecReload=/bin/kill -HUP $MAINPID' \
	    'KillMode=control-group' 'UMask=0077' 'NoNewPrivileges=yes'; do
		grep -qxF "$want" "$in" || fail "$in lacks '$want'"
	done
	# Auth stays on: no unit may turn it off for everyone.
	! grep -q -- '--no-auth' "$in" || fail "$in disables auth"
done
for in in "$srcdir/etc/cmdgated.service.in" "$srcdir/etc/cmdgated@.service.in"; do
	for want in 'DynamicUser=yes' 'CapabilityBoundingSet=' \
	    'ProtectSystem=strict' 'ProtectHome=read-only' 'PrivateTmp=yes' \
	    'PrivateDevices=yes' 'ProtectProc=invisible' \
	    'SystemCallFilter=@system-service' \
	    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6'; do
		grep -qxF "$want" "$in" || fail "$in lacks '$want'"
	done
	grep -q '^TasksMax=[0-9]' "$in" || fail "$in lacks TasksMax="
	grep -q '^MemoryMax=[0-9]' "$in" || fail "$in lacks MemoryMax="
done
grep -qxF 'StateDirectory=cmdgate-%i' "$srcdir/etc/cmdgated@.service.in" ||
	fail "the template has no state dir of its own"
grep -qxF 'EnvironmentFile=/etc/cmdgate/%i.conf' \
    "$srcdir/etc/cmdgated@.service.in" || fail "the template reads no %i.conf"

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "SKIP: systemd-analyze not installed; the units' lines were checked"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
sbindir=$(dirname "$CMDGATED")
for u in cmdgated.service cmdgated@.service; do
	sed -e "s|@sbindir@|$sbindir|g" "$srcdir/etc/$u.in" > "$tmp/$u"
done
mkdir "$tmp/user"
sed -e "s|@sbindir@|$sbindir|g" "$srcdir/etc/cmdgated.user.service.in" \
    > "$tmp/user/cmdgated.service"
# An instance of the template is what systemd verifies.
cp "$tmp/cmdgated@.service" "$tmp/cmdgated@demo.service"
for u in cmdgated.service cmdgated@demo.service user/cmdgated.service; do
	out=$(systemd-analyze verify --man=no "$tmp/$u" 2>&1 |
	    grep -v 'EnvironmentFile\|/etc/cmdgate/')
	[ -z "$out" ] || fail "systemd-analyze verify $u: $out"
done
if ! systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
	echo "units verified; this systemd-analyze has no security --offline"
	exit 0
fi
for u in cmdgated.service cmdgated@demo.service; do
	score=$(systemd-analyze security --offline=yes "$tmp/$u" 2>&1 |
	    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	[ -n "$score" ] || fail "systemd-analyze security gave no score for $u"
	echo "$u: exposure $score (at most $max_exposure)"
	awk -v s="$score" -v m="$max_exposure" 'BEGIN { exit !(s <= m) }' ||
		fail "$u exposure $score is above $max_exposure"
done
echo "units verified"
