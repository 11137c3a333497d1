#!/bin/sh
# The official MCP conformance suite (@modelcontextprotocol/conformance,
# from npm) against cmdgated's Streamable HTTP endpoint, with the tool
# table tests/scripts/conformance.json, in four runs, each against a
# broker of its own:
#   - today's release (0.1.16), every server scenario (all, pending ones
#     too), expected failures in conformance-expected.yaml;
#   - the 2026 pre-release (package conformance-next, 0.2.0-alpha.12),
#     --suite all at --spec-version 2025-11-25 (the 2025 wire: initialize,
#     sessions), expected failures in conformance-next-2025-11-25.yaml;
#   - the same at --spec-version 2026-07-28 (stateless requests), and
#   - its extension scenarios (tasks-*, sep-2640-skills-*), which a
#     --spec-version leaves out of a suite, one --scenario at a time at
#     2026-07-28; expected failures of both in
#     conformance-next-2026-07-28.yaml.
# Every scenario must pass but those listed (a scenario, or one check of
# it as SCENARIO:CHECK-ID), each with its reason, and those must fail.
# It needs Node 22: the node on PATH, or the one "npm install" puts in
# node_modules/ (package.json names node@22).  A run whose package is
# not installed is skipped, saying so; the test is then SKIP unless a
# run that could go failed.
srcdir=${CMDGATE_SRCDIR:-.}
here=$(cd "$srcdir" && pwd)/tests/scripts
if [ "$1" = --extensions ]; then
	# Under the broker: --extensions NODE SUITE YAML DIR.  Each extension
	# scenario the suite lists, at 2026-07-28 (--force: the suite runs
	# no extension scenario at a --spec-version otherwise).
	node22=$2 suite=$3 yaml=$4 dir=$5
	names=$("$node22" "$suite" list --server |
	    sed -n 's/^  - \([a-z0-9-]*\) \[extension\]$/\1/p')
	if [ -z "$names" ]; then
		echo "FAIL: the suite lists no extension scenario"
		exit 1
	fi
	rc=0
	for s in $names; do
		echo "=== $s"
		"$node22" "$suite" server --url "$CMDGATE_HTTP_URL" \
		    --scenario "$s" --spec-version 2026-07-28 --force \
		    --expected-failures "$yaml" -o "$dir" || rc=1
	done
	exit $rc
fi
if ! command -v node >/dev/null 2>&1; then
	echo "SKIP: node is not installed (run 'npm install', see package.json)"
	exit 77
fi
# resolve PKG FILE: the path of FILE of npm package PKG, from srcdir.
resolve() {
	(cd "$srcdir" && node -e 'const p = require.resolve(process.argv[1] +
	    "/package.json"); process.stdout.write(require("path").join(
	    require("path").dirname(p), process.argv[2]))' "$1" "$2") \
	    2>/dev/null
}
# new_enough NODE: whether NODE runs and is Node 22 or newer.
new_enough() {
	v=$("$1" -e 'process.stdout.write(process.versions.node.split(".")[0])' \
	    2>/dev/null) && [ -n "$v" ] && [ "$v" -ge 22 ]
}
node22=node
if ! new_enough node; then
	node22=$(resolve node bin/node)
	if [ -z "$node22" ] || ! new_enough "$node22"; then
		echo "SKIP: the conformance suite needs Node 22 or newer;" \
		    "node is $(node --version): run 'npm install' in $srcdir"
		exit 77
	fi
fi
# installed PKG: the suite's dist/index.js of npm package PKG, or nothing.
installed() {
	f=$(resolve "$1" dist/index.js) && [ -f "$f" ] && echo "$f"
}
suite=$(installed @modelcontextprotocol/conformance)
next=$(installed conformance-next)
if [ -z "$suite" ] && [ -z "$next" ]; then
	echo "SKIP: neither @modelcontextprotocol/conformance nor" \
	    "conformance-next is installed:"
	echo "      run 'npm install' in $srcdir (see package.json)"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0 skipped=0
# broker NAME CMD...: CMD against a broker of its own, its output kept
# in $tmp/NAME.out and shown; counts a failure.  --http-poll 1: a POST's
# event stream is closed after a second without its answer, and
# test_reconnection (2 s) is answered on the client's GET with
# Last-Event-ID (server-sse-polling).  No token: the suite sends none
# (the endpoint's bearer check has its own tests).
broker() {
	name=$1
	shift
	echo "===== $name"
	mkdir "$tmp/$name" || exit 1
	(cd "$tmp/$name" && "$WITH_BROKER" --no-auth --http 127.0.0.1:0 \
	    --http-poll 1 --tools "$here/conformance.json" -- "$@") \
	    >"$tmp/$name.out" 2>&1
	rc=$?
	cat "$tmp/$name.out"
	if [ $rc -ne 0 ]; then
		echo "FAIL: $name: exited $rc"
		failed=$((failed + 1))
	fi
}
# suite_run NAME SUITE YAML [ARG...]: the suite's server scenarios.
suite_run() {
	name=$1 js=$2 yaml=$3
	shift 3
	broker "$name" sh -c 'n=$1 js=$2 y=$3 o=$4; shift 4; exec "$n" "$js" \
	    server --url "$CMDGATE_HTTP_URL" --expected-failures "$y" -o "$o" \
	    "$@"' sh "$node22" "$js" "$here/$yaml" "$tmp/$name/results" "$@"
}
if [ -n "$suite" ]; then
	suite_run conformance "$suite" conformance-expected.yaml --suite all
else
	echo "SKIP: @modelcontextprotocol/conformance is not installed"
	skipped=1
fi
if [ -n "$next" ]; then
	for v in 2025-11-25 2026-07-28; do
		suite_run "next-$v" "$next" "conformance-next-$v.yaml" \
		    --suite all --spec-version $v
	done
	broker next-extensions sh "$here/conformance.sh" --extensions \
	    "$node22" "$next" "$here/conformance-next-2026-07-28.yaml" \
	    "$tmp/next-extensions/results"
else
	echo "SKIP: conformance-next (@modelcontextprotocol/conformance" \
	    "0.2.0-alpha.12) is not installed"
	skipped=1
fi
if [ $failed -ne 0 ]; then
	echo "FAIL: $failed conformance run(s) failed"
	exit 1
fi
[ $skipped -eq 0 ] || exit 77
exit 0
