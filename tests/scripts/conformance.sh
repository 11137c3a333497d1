#!/bin/sh
# The official MCP conformance suite (@modelcontextprotocol/conformance,
# from npm) against cmdgated's Streamable HTTP endpoint, with the tool
# table tests/conformance.json: every server scenario of the suite (all,
# pending ones too) must pass but those of tests/conformance-expected.yaml,
# each listed with its reason, and those must fail.  It needs Node 22: the
# node on PATH, or the one "npm install" puts in node_modules/ (package
# json names node@22).  Skipped, saying so, when neither is there.
srcdir=${CMDGATE_SRCDIR:-.}
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
if ! suite=$(resolve @modelcontextprotocol/conformance dist/index.js) ||
    [ ! -f "$suite" ]; then
	echo "SKIP: @modelcontextprotocol/conformance is not installed:"
	echo "      run 'npm install' in $srcdir (see package.json)"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# --http-poll 1: a POST's event stream is closed after a second without
# its answer, and test_reconnection (2 s) is answered on the client's GET
# with Last-Event-ID (server-sse-polling).  No token: the suite sends
# none (the endpoint's bearer check has its own tests).
"$WITH_BROKER" --no-auth --http 127.0.0.1:0 --http-poll 1 \
    --tools "$srcdir/tests/scripts/conformance.json" -- \
    sh -c 'cd "$1" && exec "$2" "$3" server --url "$CMDGATE_HTTP_URL" \
    --suite all --expected-failures "$4" -o "$1/results"' sh "$tmp" "$node22" "$suite" \
    "$(cd "$srcdir" && pwd)/tests/scripts/conformance-expected.yaml" \
    >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || echo "FAIL: the conformance suite exited $rc"
exit $rc
