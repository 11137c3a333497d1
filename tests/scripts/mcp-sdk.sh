#!/bin/sh
# The official MCP TypeScript SDK talks to the broker through "cmdgate
# mcp".  The SDK comes from node_modules in the source tree (package.json),
# else from npm; skipped, saying so, when neither has it.
srcdir=${CMDGATE_SRCDIR:-.}
if ! command -v node >/dev/null 2>&1; then
	echo "SKIP: node is not installed"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if [ -d "$srcdir/node_modules/@modelcontextprotocol/sdk" ]; then
	ln -s "$(cd "$srcdir" && pwd)/node_modules" "$tmp/node_modules"
elif ! command -v npm >/dev/null 2>&1 || ! (cd "$tmp" && npm install \
    --no-audit --no-fund --loglevel=error @modelcontextprotocol/sdk@1 \
    >"$tmp/npm.log" 2>&1); then
	echo "SKIP: no @modelcontextprotocol/sdk in node_modules, nor from npm"
	exit 77
fi
cp "$srcdir/tests/scripts/mcp-sdk.mjs" "$tmp/"
# The README's table, plus tools whose schemas name no type (issue 19.13)
# and one that fails (issue 35.1).
sed '$ s/^]}$/,{"name":"bare","exec":["true"],"params":{}},{"name":"untyped","exec":["true"],"params":{"properties":{"x":{"type":"string"}}}},{"name":"fails","exec":["sh","-c","echo no such thing >\&2; exit 3"]}]}/' \
    "$srcdir/etc/tools/demo.json" >"$tmp/tools.json"
exec "$WITH_BROKER" --tools "$tmp/tools.json" -- \
    sh -c 'exec node "$1" "$2" "$CMDGATE_PORT"' sh "$tmp/mcp-sdk.mjs" "$CMDGATE"
