#!/bin/sh
# MCP tasks against cmdgated with the official v1 SDK from npm: its
# experimental task API (revision 2025-11-25, tests/mcp-tasks-v1.mjs), over
# HTTP and over stdio through cmdgate mcp.  Skipped, saying so, without node or the SDK.
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
  {"name": "slow", "tier": "smooth", "description": "Take half a second",
   "exec": ["sh", "-c", "sleep 0.5; echo slow done"]},
  {"name": "hold", "tier": "smooth", "description": "Take a minute",
   "exec": ["sleep", "60"]},
  {"name": "must", "tier": "instant", "task": "required",
   "description": "Only as a task", "exec": ["echo", "must done"]}
]}
JSON
"$WITH_BROKER" --http 127.0.0.1:0 --tools "$tmp/tools.json" -- \
    sh -c 'cd "$1" && node "$2" http "$CMDGATE_HTTP_URL" \
    "$(cat "$CMDGATE_STATE_DIR/token")" && exec node "$2" stdio "$CMDGATE" \
    "$CMDGATE_PORT" "$CMDGATE_STATE_DIR"' sh "$srcdir" \
    "$(cd "$srcdir" && pwd)/tests/scripts/mcp-tasks-v1.mjs"
