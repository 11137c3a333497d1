#!/bin/sh
# The official MCP TypeScript SDK, from npm, talks to the broker through
# "cmdgate mcp".  Skipped, saying so, only when npm cannot provide it.
srcdir=${CMDGATE_SRCDIR:-.}
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "SKIP: node and npm are not installed"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && npm install --no-audit --no-fund --loglevel=error \
    @modelcontextprotocol/sdk@1 >"$tmp/npm.log" 2>&1); then
	echo "SKIP: npm could not install @modelcontextprotocol/sdk:"
	tail -n 5 "$tmp/npm.log"
	exit 77
fi
cp "$srcdir/tests/mcp-sdk.mjs" "$tmp/"
# The README's table, plus tools whose schemas name no type (issue 19.13).
sed '$ s/^]}$/,{"name":"bare","exec":["true"],"params":{}},{"name":"untyped","exec":["true"],"params":{"properties":{"x":{"type":"string"}}}}]}/' \
    "$srcdir/etc/tools/demo.json" >"$tmp/tools.json"
exec "$WITH_BROKER" --tools "$tmp/tools.json" -- \
    sh -c 'exec node "$1" "$2" "$CMDGATE_PORT"' sh "$tmp/mcp-sdk.mjs" "$CMDGATE"
