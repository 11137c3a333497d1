#!/bin/sh
# The official MCP TypeScript SDK's StreamableHTTPClientTransport against
# cmdgated --http (tests/mcp-http-sdk.mjs).  "npm install" in the source
# directory provides the SDK (package.json); skipped, saying so, without
# node or the SDK.
srcdir=${CMDGATE_SRCDIR:-.}
if ! command -v node >/dev/null 2>&1; then
	echo "SKIP: node is not installed"
	exit 77
fi
if ! (cd "$srcdir" && node -e 'require.resolve(
    "@modelcontextprotocol/sdk/package.json")') >/dev/null 2>&1; then
	echo "SKIP: @modelcontextprotocol/sdk is not installed:"
	echo "      run 'npm install' in $srcdir (see package.json)"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/tools.json" <<'JSON'
{"tools": [
  {"name": "echo", "tier": "instant", "description": "Print a text",
   "exec": ["echo", "{text}"],
   "params": {"type": "object", "properties": {"text": {"type": "string"}}}},
  {"name": "steps", "tier": "smooth", "description": "Three steps",
   "exec": ["sh", "-c", "echo 'progress 1/3 first step' >&$CMDGATE_NOTIFY_FD; echo 'progress 2/3 second step' >&$CMDGATE_NOTIFY_FD; echo 'progress 3/3 third step' >&$CMDGATE_NOTIFY_FD"]},
  {"name": "logs", "tier": "smooth", "description": "Two log lines",
   "exec": ["sh", "-c", "echo 'log debug a debug line' >&$CMDGATE_NOTIFY_FD; echo 'log info an info line' >&$CMDGATE_NOTIFY_FD"]}
]}
JSON
# The test runs from the source directory, where node finds the SDK.
exec "$WITH_BROKER" --http 127.0.0.1:0 --tools "$tmp/tools.json" -- \
    sh -c 'cd "$1" && exec node "$2" "$CMDGATE_HTTP_URL" \
    "$(cat "$CMDGATE_STATE_DIR/token")"' sh "$srcdir" \
    "$(cd "$srcdir" && pwd)/tests/scripts/mcp-http-sdk.mjs"
