#!/bin/sh
# The broker killed (SIGKILL) and restarted on the same port and state
# dir under "cmdgate mcp", with the official MCP TypeScript SDK as the
# client (tests/mcp-restart.mjs).  The SDK comes from node_modules in the
# source tree, else from npm; skipped, saying so, when neither has it.
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
cp "$srcdir/tests/scripts/mcp-restart.mjs" "$tmp/"
mkdir "$tmp/run"
# slow: writes its line, then takes 2 s; the broker dies meanwhile.
cat >"$tmp/tools.json" <<JSON
{"tools":[
{"name":"slow","exec":["sh","-c","echo ran >>$tmp/run/ran; sleep 2"]},
{"name":"echo","tier":"instant","exec":["echo","{text}"],
 "params":{"type":"object","properties":{"text":{"type":"string"}}}}
]}
JSON
# Not exec: the trap removes $tmp afterwards.
node "$tmp/mcp-restart.mjs" "$CMDGATED" "$CMDGATE" "$tmp/run" \
    "$tmp/tools.json" "$tmp/run/ran"
