#!/bin/sh
# The mcp-http forward dialect (workers/mcphttp.c) against the real MCP
# server @modelcontextprotocol/server-everything, started with its
# streamableHttp transport on a free loopback port, through
# tests/mcphttp_drive, then through cmdgated.  "npm install" in the
# source directory puts the server in node_modules/ (package.json names
# it); node finds it there or in a directory above (so make distcheck
# finds the tree's).  Skipped, saying so, when node or the package is
# missing.
srcdir=${CMDGATE_SRCDIR:-.}
drive=${MCPHTTP_DRIVE:?}
if ! command -v node >/dev/null 2>&1; then
	echo "SKIP: node is not installed"
	exit 77
fi
pkg=@modelcontextprotocol/server-everything
if ! ev=$(cd "$srcdir" && node -e 'process.stdout.write(require.resolve(
    process.argv[1] + "/package.json"))' "$pkg" 2>/dev/null); then
	echo "SKIP: $pkg is not installed:"
	echo "      run 'npm install' in $srcdir (see package.json)"
	exit 77
fi
ev=${ev%/package.json}/dist/index.js
if ! node --import "data:text/javascript," -e 0 >/dev/null 2>&1; then
	echo "SKIP: node $(node --version) has no --import (18.19 or newer)"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
pids=
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	[ -f "$tmp/server.log" ] && tail -n 20 "$tmp/server.log"
	exit 1
}

# listening: the "LISTENING PORT" line of the server just started (pid),
# through the fifo it writes to: read waits for it, and ends at end of
# file if the server dies first.  Sets port; fails without one.
listening() {
	pids="$pids $pid"
	port=
	read -r word port <"$tmp/listening" || port=
	rm -f "$tmp/listening"
	[ -n "$port" ]
}

# start HOST: server-everything on HOST and a free port.
start() {
	mkfifo "$tmp/listening" || exit 1
	PORT=0 LOOPBACK_HOST=$1 LISTENING_FD=3 node --import \
	    "$srcdir/tests/scripts/loopback.mjs" "$ev" streamableHttp \
	    3>"$tmp/listening" >>"$tmp/server.log" 2>&1 &
	pid=$!
	listening
}

# start_json: the same server, every answer application/json.
start_json() {
	mkfifo "$tmp/listening" || exit 1
	node "$srcdir/tests/scripts/mcp-http-json.mjs" \
	    3>"$tmp/listening" >>"$tmp/server.log" 2>&1 &
	pid=$!
	listening
}

# run ARGS...: the driver's line in out; it must exit 0 (and, under the
# sanitizers, report nothing).
run() {
	out=$("$drive" "$@" 2>"$tmp/drive.err") ||
		fail "mcphttp_drive $*: exit $?: $(cat "$tmp/drive.err")"
	[ ! -s "$tmp/drive.err" ] ||
		fail "mcphttp_drive $*: $(cat "$tmp/drive.err")"
}

# check NAME WANT OUT: OUT (the driver's line) holds WANT.
check() {
	case $3 in
	*"$2"*)	echo "ok: $1";;
	*)	fail "$1: wanted $2 in: $3";;
	esac
}

ms() { echo $(($(date +%s%N) / 1000000)); }

start 127.0.0.1 || fail "server-everything did not start"
url=http://127.0.0.1:$port/mcp

run "$url" 10000 echo '{"message":"hello mcp-http"}'
check "tools/call echo" '"status":"ok","out":{"content":[{"type":"text","text":"Echo: hello mcp-http"}]}' "$out"
check "session opened" '"open":"ok"' "$out"
grep -q "Received session termination request" "$tmp/server.log" ||
	fail "no DELETE of the session at close"
echo "ok: session ended with DELETE"

run "$url" 10000 --ping
check "ping" '"status":"ok"' "$out"

# A tool the server does not have: a CallToolResult with isError true.
run "$url" 10000 no-such-tool '{}'
check "unknown tool" '"isError":true' "$out"
check "unknown tool's text" 'Tool no-such-tool not found' "$out"

# Answered over SSE after progress notifications for the progressToken
# we sent: the response is taken, and each became a progress event.
run "$url" 10000 trigger-long-running-operation \
    '{"duration":1,"steps":4}'
check "SSE with progress first" '"text":"Long running operation completed. Duration: 1 seconds, Steps: 4."' "$out"
check "upstream progress as events" '{"event":"progress","index":0,"progress":1,"total":4}' "$out"
check "upstream progress, the last" '{"event":"progress","index":0,"progress":4,"total":4}' "$out"

# The deadline ends a call the server is still working on.
t0=$(ms)
run "$url" 1000 trigger-long-running-operation \
    '{"duration":5,"steps":5}'
check "deadline" '"status":"timeout"' "$out"
[ $(($(ms) - t0)) -lt 3000 ] || fail "the deadline took $(($(ms) - t0)) ms"

# SIGTERM while the answer is awaited (blocked otherwise, as in the
# worker) ends the call at once.
t0=$(ms)
run --term-after 300 "$url" 10000 \
    trigger-long-running-operation '{"duration":5,"steps":5}'
check "SIGTERM" '"status":"cancelled","err":"'"$url"': call cancelled"' "$out"
[ $(($(ms) - t0)) -lt 3000 ] || fail "SIGTERM took $(($(ms) - t0)) ms"

# The broker gone (the reader of fd 1 closed) ends it too.
t0=$(ms)
"$drive" --out "$tmp/gone" "$url" 10000 trigger-long-running-operation \
    '{"duration":5,"steps":5}' | true
check "broker gone" 'cancelled' "$(cat "$tmp/gone")"
check "broker gone's reason" 'the broker is gone' "$(cat "$tmp/gone")"
[ $(($(ms) - t0)) -lt 3000 ] || fail "the broker's end took $(($(ms) - t0)) ms"

run "http://127.0.0.1:$port/no-such-path" 10000 --ping
check "HTTP 404" '"open":"protocol","err":"http://127.0.0.1:'"$port"'/no-such-path: HTTP 404 Not Found"' "$out"

run "https://127.0.0.1:$port/mcp" 10000 --ping
check "https refused" '"open":"protocol"' "$out"

# A stopped server: refused, nothing sent.
kill "$pid" && wait "$pid" 2>/dev/null
deadport=$port
run "$url" 10000 --ping
check "stopped server" '"open":"refused"' "$out"

# IPv6 in brackets, where the machine has a loopback for it.
if start ::1; then
	run "http://[::1]:$port/mcp" 10000 echo '{"message":"v6"}'
	check "IPv6" '"text":"Echo: v6"' "$out"
else
	echo "ok: IPv6 skipped: no ::1 here"
fi
# Every answer application/json (the SDK's enableJsonResponse), and
# answers of the test's own making for what the client must refuse.
start_json || fail "tests/scripts/mcp-http-json.mjs did not start"
url=http://127.0.0.1:$port/mcp
run "$url" 10000 echo '{"message":"json"}'
check "JSON answer" '"status":"ok","out":{"content":[{"type":"text","text":"Echo: json"}]}' "$out"
run "$url" 10000 jsonrpc-error '{}'
check "JSON-RPC error" '"status":"error","out":{"code":-32001,"message":"refused by the test"},"err":"'"$url"': upstream error -32001: refused by the test"' "$out"
run "$url" 10000 http-500 '{}'
check "HTTP 500 with a JSON-RPC error" '"status":"error","out":{"code":-32603,"message":"internal error"},"err":"'"$url"': HTTP 500 Internal Server Error: internal error"' "$out"
run "$url" 10000 http-503 '{}'
check "HTTP 503" '"status":"protocol","err":"'"$url"': HTTP 503 Service Unavailable"' "$out"
run "$url" 10000 not-json '{}'
check "Content-Type text/plain" '"status":"protocol","err":"'"$url"': answered Content-Type text/plain, not application/json or text/event-stream"' "$out"
run "$url" 10000 bad-json '{}'
check "bad JSON" '"status":"protocol","err":"'"$url"': answered something that is not JSON' "$out"
run "$url" 10000 null-id '{}'
check "error with a null id" '"status":"error","out":{"code":-32700,"message":"parse error"},"err":"'"$url"': upstream error -32700: parse error"' "$out"
run "$url" 10000 other-id '{}'
check "another id" '"status":"protocol","err":"'"$url"': answered without a response to request 2"' "$out"
run "$url" 10000 hang-up '{}'
check "lost after sending" '"status":"lost","err":"'"$url"': closed the connection before answering"' "$out"
run "$url" 10000 too-long '{}'
check "over 64 MiB" '"status":"too_long"' "$out"
# A session the server no longer knows (404): a new one, the call sent
# once more (the server ran nothing the first time).
run "$url" 10000 forget-session '{}'
check "session expired: a new one" '"status":"ok","out":{"content":[{"type":"text","text":"MCP error -32602: Tool forget-session not found"}],"isError":true},"err":""' "$out"
# Through the broker: a table whose tools forward to a fresh
# server-everything, driven by cmdgate submit (the worker's mcp-http
# dialect, its result and error types).
dead=http://127.0.0.1:$deadport/mcp
start 127.0.0.1 || fail "server-everything did not start again"
url=http://127.0.0.1:$port/mcp
cat >"$tmp/tools.json" <<JSON
{"tools": [
  {"name": "echo", "timeout_s": 30,
   "forward": {"to": "$url", "dialect": "mcp-http"},
   "params": {"type": "object", "properties": {
     "message": {"type": "string"}}}},
  {"name": "missing", "timeout_s": 30,
   "forward": {"to": "$url", "dialect": "mcp-http",
               "method": "no-such-tool"},
   "params": {"type": "object"}},
  {"name": "long", "timeout_s": 30,
   "forward": {"to": "$url", "dialect": "mcp-http",
               "method": "trigger-long-running-operation"},
   "params": {"type": "object"}},
  {"name": "down", "timeout_s": 30,
   "forward": {"to": "$dead", "dialect": "mcp-http",
               "connect_timeout_s": 1},
   "params": {"type": "object"}}
]}
JSON
mkdir "$tmp/state"
if ! "${CMDGATED:?}" -n --no-auth --state-dir "$tmp/state" \
    --tools "$tmp/tools.json" >"$tmp/n.out" 2>&1; then
	sed 's/^/      /' "$tmp/n.out"
	fail "cmdgated refuses the mcp-http table"
fi
# submit TOOL ARGS...: cmdgate's JSON answer in out, waiting for the job.
submit() {
	out=$("${WITH_BROKER:?}" --tools "$tmp/tools.json" -- \
	    "${CMDGATE:?}" --json submit "$@" --wait 2>/dev/null)
}
submit echo message="via cmdgated"
check "cmdgated: echo" '"ok":true' "$out"
check "cmdgated: echo's result" '"result":{"content":[{"type":"text","text":"Echo: via cmdgated"}]}' "$out"
submit missing
check "cmdgated: unknown tool" '"error_type":"tool_failed"' "$out"
check "cmdgated: unknown tool keeps result" '"isError":true' "$out"
submit down
check "cmdgated: stopped server" '"error_type":"upstream_refused"' "$out"
# An MCP client's progressToken: the upstream's progress of the
# forwarded call reaches it as notifications/progress, 1 + 97 P/T, and
# the command's end after it, at 99.
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"long","arguments":{"duration":1,"steps":4},"_meta":{"progressToken":"up"}}}' |
    "${WITH_BROKER:?}" --tools "$tmp/tools.json" -- "${CMDGATE:?}" mcp \
    2>/dev/null)
check "cmdgated: upstream progress" '"progressToken":"up","progress":25.25,"total":100' "$out"
check "cmdgated: upstream progress, the last" '"progressToken":"up","progress":98,"total":100' "$out"
check "cmdgated: the end's progress" '"progressToken":"up","progress":99,"total":100,"message":"done"' "$out"
check "cmdgated: the call's answer" '"id":1,"result":{"content"' "$out"
echo "mcp-http: ok"
