#!/bin/sh
# MCP 2026-07-28 against cmdgated with the official clients from npm:
# the v2 client over HTTP and stdio, its fallback, the header checks
# (tests/mcp-modern.mjs); tasks through @modelcontextprotocol/ext-tasks
# at 2026-07-28 and at 2025-11-25 (tests/mcp-modern-tasks.mjs run, run25);
# and a task across a kill -9 of the
# broker and of its client (tests/mcp-task-restart.mjs).  Skipped, saying
# so, without node or the packages (run "npm install", see package.json).
srcdir=${CMDGATE_SRCDIR:-.}
if ! command -v node >/dev/null 2>&1; then
	echo "SKIP: node is not installed"
	exit 77
fi
for p in @modelcontextprotocol/client @modelcontextprotocol/ext-tasks/client; do
	if ! (cd "$srcdir" && node --input-type=module \
	    -e 'await import(process.argv[1])' "$p") >/dev/null 2>&1; then
		echo "SKIP: $p is not installed:"
		echo "      run 'npm install' in $srcdir (see package.json)"
		exit 77
	fi
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
scripts=$(cd "$srcdir/tests/scripts" && pwd)
cat >"$tmp/tools.json" <<'JSON'
{"tools": [
  {"name": "echo", "tier": "instant", "description": "Print a text",
   "exec": ["echo", "{text}"],
   "params": {"type": "object", "properties": {"text": {"type": "string"}}}},
  {"name": "steps", "tier": "smooth", "description": "Three steps",
   "exec": ["sh", "-c", "echo 'progress 1/3 first step' >&$CMDGATE_NOTIFY_FD; echo 'progress 2/3 second step' >&$CMDGATE_NOTIFY_FD; echo 'progress 3/3 third step' >&$CMDGATE_NOTIFY_FD"]},
  {"name": "slow", "tier": "heavy", "description": "Take half a second",
   "exec": ["sh", "-c", "sleep 0.5; echo slow done"]},
  {"name": "hold", "tier": "heavy", "description": "Take a minute",
   "exec": ["sleep", "60"]},
  {"name": "must", "tier": "instant", "task": "required",
   "description": "Quick, but only as a task", "exec": ["echo", "must done"]},
  {"name": "never", "tier": "heavy", "task": "forbidden",
   "description": "Heavy, but never a task",
   "exec": ["sh", "-c", "sleep 0.3; echo never done"]}
]}
JSON
# The packages resolve from the source directory.
"$WITH_BROKER" --http 127.0.0.1:0 --tools "$tmp/tools.json" -- \
    sh -c 'cd "$1" && node "$2/mcp-modern.mjs" "$CMDGATE_HTTP_URL" \
    "$(cat "$CMDGATE_STATE_DIR/token")" "$CMDGATE_PORT" \
    "$CMDGATE_STATE_DIR" "$CMDGATE" &&
    node "$2/mcp-modern-tasks.mjs" run "$CMDGATE_HTTP_URL" \
    "$(cat "$CMDGATE_STATE_DIR/token")" &&
    node "$2/mcp-modern-tasks.mjs" run25 "$CMDGATE_HTTP_URL" \
    "$(cat "$CMDGATE_STATE_DIR/token")"' sh "$srcdir" "$scripts" || exit 1
# A task whose heavy job waits behind another's when both die.
mkdir -m 700 "$tmp/r"
: >"$tmp/r/ran"
cat >"$tmp/r/tools.json" <<JSON
{"tools": [
  {"name": "blocker", "tier": "heavy", "description": "Hold the heavy slot",
   "exec": ["sleep", "60"]},
  {"name": "work", "tier": "heavy", "description": "Run once",
   "exec": ["sh", "-c", "echo ran >>$tmp/r/ran; echo work done"]}
]}
JSON
cd "$srcdir" && node "$scripts/mcp-task-restart.mjs" "$CMDGATED" "$tmp/r" \
    "$tmp/r/tools.json" "$scripts/mcp-modern-tasks.mjs" "$tmp/r/ran"
