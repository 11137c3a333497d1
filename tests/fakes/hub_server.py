#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""A stand-in of MCP for Unity's Python server in HTTP mode, for the tests.

	hub_server.py [-p PORT]

It listens on 127.0.0.1 (any free port without -p) and prints "port N"
first.  On the one port, as the real server (CoplayDev/unity-mcp v10.1.0,
facts in /work/shared/MFU-HTTP.md and /work/notes/hub-design.md):

* the plugin hub, a WebSocket at /hub/plugin (RFC 6455 by the sans-I/O
  layer of python3-websockets, as the real server's uvicorn uses):
  welcome on accept; register gets registered {session_id} and evicts an
  older session of the same project_hash (close 1001, a second register
  on one socket evicting that socket too); an empty hash closes 4400;
  register_tools from a registered socket replaces the tool list; a ping
  every 10 s after register, and close 1001 when the last pong for the
  session id written in a pong is more than 20 s old; command_result
  answers the execute of that id; a closed socket fails its pending
  executes at once.  Messages over 16 MiB close 1009, text that is not
  UTF-8 1007, malformed JSON 1003; a socket lost without a close frame is
  reported as 1005.  Other upgrade paths get HTTP 403, a plain GET of
  /hub/plugin 404.
* plain HTTP: GET /health, GET /api/instances, and /mcp: a POST of a
  JSON-RPC request is echoed as an event stream of three events (with
  params.hold true the stream waits after the first one for the control
  line "release"), a notification gets 202; a GET is an event stream
  that waits for "release" after its first event.

HUB_TIME_SCALE (default 1) scales the hub's timers (ping interval,
staleness); execute timeouts are the ones on the wire and are not scaled.
HUB_SID_SUFFIX (default none) is appended to every session id the hub
makes (a server whose ids are not 36-byte UUIDs).

Control channel, lines on stdin (end of file ends the fake):
  execute NAME PARAMS_JSON [TIMEOUT]   to the first registered session, a
      fresh uuid4 id; TIMEOUT (seconds) is both the execute's timeout and
      the wait, else the real rule (2.0 for ping, get_editor_state and
      read_console; else 30, raised by params.timeout_seconds).
  raw JSON        that text, verbatim, to the first registered session
  tools           the stored tool names of each session
  drop [CODE]     close every hub socket (default 1012, a shutdown)
  cut N           answer the next upgrade of /hub/plugin with a 101
                  status line and N bytes of header lines, no end of the
                  head, then close the connection (a server that dies
                  mid-answer)
  release         let held event streams go on
  quit
Log on stdout, one event a line: port N, accept, sent welcome, close CODE
[SID], recv TYPE ..., drop TYPE (why), registered SID, evicted SID,
sent ping SID, stale SID, cut N, sent execute ID NAME, result ID JSON,
timeout ID JSON,
tools SID NAMES..., http METHOD PATH, sse held, sse end, ctl LINE (once
the control line took effect).
"""
import asyncio
import datetime
import json
import os
import sys
import time
import uuid

try:
    from websockets.frames import OP_BINARY, OP_CLOSE, OP_CONT, OP_TEXT
    from websockets.connection import CLOSED, OPEN
    from websockets.server import ServerConnection
except ImportError:
    sys.stderr.write("hub_server.py: python3-websockets is not installed\n")
    sys.exit(77)

SCALE = float(os.environ.get("HUB_TIME_SCALE", "1") or "1")
PING_INTERVAL = 10 * SCALE
PING_TIMEOUT = 20 * SCALE
SID_SUFFIX = os.environ.get("HUB_SID_SUFFIX", "")
COMMAND_TIMEOUT = 30.0
FAST_FAIL_TIMEOUT = 2.0
FAST_FAIL = {"read_console", "get_editor_state", "ping"}
MAX_MESSAGE = 16 * 1024 * 1024
HEAD_MAX = 16 * 1024
BODY_MAX = 1024 * 1024
IDLE = 30.0		# an idle HTTP connection, a held stream: bounded
CLOSE_WAIT = 3.0	# for the peer's close frame after ours
VERSION = "10.1.0"


def log(*words):
    sys.stdout.write(" ".join(str(w) for w in words) + "\n")
    sys.stdout.flush()


def dumps(o):
    return json.dumps(o, separators=(",", ":"))


def mcp_response(error):
    """The server's MCPResponse(success=False, error, hint=retry) dump."""
    return {"success": False, "message": None, "error": error,
            "data": None, "hint": "retry"}


class Disconnected(Exception):
    pass


class Hub:
    """The registry and the hub's state: sessions, sockets, pending."""

    def __init__(self):
        self.sessions = {}	# sid -> dict, registry order
        self.by_hash = {}	# project_hash -> sid
        self.sockets = {}	# sid -> Sock
        self.last_pong = {}	# sid -> monotonic time
        self.pings = {}		# sid -> task
        self.pending = {}	# id -> {future, sid}
        self.all = set()	# every open Sock
        self.tasks = set()	# the executes' outcomes, kept till done
        self.release = asyncio.Event()
        self.cut = 0		# the next upgrade's answer cut after this

    def sid_of(self, sock):
        return next((s for s, w in self.sockets.items() if w is sock), None)

    def fail_pending(self, sid, text):
        for entry in list(self.pending.values()):
            if entry["sid"] == sid and not entry["future"].done():
                entry["future"].set_exception(Disconnected(text))

    def forget(self, sid):
        self.sockets.pop(sid, None)
        task = self.pings.pop(sid, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        self.last_pong.pop(sid, None)

    def register(self, sid, session):
        """Record sid; the sid it replaced (same hash), if any."""
        old = self.by_hash.get(session["hash"])
        if old is not None and old != sid:
            self.sessions.pop(old, None)
        else:
            old = None
        self.by_hash[session["hash"]] = sid
        self.sessions[sid] = session
        return old

    def unregister(self, sid):
        session = self.sessions.pop(sid, None)
        if session is not None and self.by_hash.get(session["hash"]) == sid:
            del self.by_hash[session["hash"]]


HUB = None


class Sock:
    """One accepted hub WebSocket: the sans-I/O connection over a stream."""

    def __init__(self, conn, reader, writer):
        self.conn = conn
        self.reader = reader
        self.writer = writer
        self.frags = None
        self.code = None	# the close code the hub is told
        self.closed = asyncio.Event()

    async def flush(self):
        for data in self.conn.data_to_send():
            if data:
                self.writer.write(data)
            elif self.writer.can_write_eof():
                self.writer.write_eof()
        try:
            await self.writer.drain()
        except ConnectionError:
            pass

    async def send(self, obj):
        if self.conn.state is not OPEN:
            raise ConnectionError("socket not open")
        self.conn.send_text(dumps(obj).encode())
        await self.flush()

    async def close(self, code):
        """Start the closing handshake; the reader finishes it."""
        if self.conn.state is OPEN:
            if self.code is None:
                self.code = code
            self.conn.send_close(code)
            await self.flush()
            asyncio.get_running_loop().call_later(CLOSE_WAIT, self.abort)

    def abort(self):
        if not self.closed.is_set():
            self.writer.transport.abort()

    def message(self, frame):
        """A whole message from frame (fragments joined), else None."""
        if frame.opcode in (OP_TEXT, OP_BINARY):
            self.frags = [frame.data]
        elif frame.opcode is OP_CONT and self.frags is not None:
            self.frags.append(frame.data)
        else:
            return None
        if not frame.fin:
            return None
        data, self.frags = b"".join(self.frags), None
        return data

    async def serve(self):
        await self.send({"type": "welcome", "serverTimeout": 30,
                         "keepAliveInterval": 15})
        log("sent welcome")
        while self.conn.state is not CLOSED:
            try:
                data = await self.reader.read(65536)
            except ConnectionError:
                data = b""
            if data:
                self.conn.receive_data(data)
            else:
                self.conn.receive_eof()
            await self.frames()
            await self.flush()
            if not data:
                break

    async def frames(self):
        for frame in self.conn.events_received():
            if frame.opcode is OP_CLOSE and self.code is None:
                self.code = self.conn.close_rcvd.code
            data = self.message(frame)
            if data is None or self.conn.state is not OPEN:
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                self.code = 1007
                self.conn.fail(1007, "invalid UTF-8")
                return
            try:
                msg = json.loads(text)
            except ValueError:
                # Starlette's json decoding closes 1003.
                log("recv (bad json)")
                await self.close(1003)
                return
            await on_receive(self, msg)

    def lost_code(self):
        if self.code is not None:
            return self.code
        if self.conn.close_rcvd is not None:
            return self.conn.close_rcvd.code
        if self.conn.close_sent is not None:
            return self.conn.close_sent.code	# 1009, 1002: ours
        return 1005	# no close frame: as uvicorn tells the hub


def is_str(v, nullable=False):
    return isinstance(v, str) or (nullable and v is None)


async def on_receive(sock, msg):
    if not isinstance(msg, dict):
        log("drop", "(not an object)")
        return
    kind = msg.get("type")
    handler = {"register": on_register, "register_tools": on_tools,
               "pong": on_pong, "command_result": on_result}.get(kind)
    if handler is None:
        log("recv", kind if isinstance(kind, str) else dumps(kind))
        return
    await handler(sock, msg)


async def on_register(sock, msg):
    h = msg.get("project_hash")
    log("recv register", h if is_str(h) else
        ("(none)" if "project_hash" not in msg else dumps(h)))
    # The pydantic model: a hash is required, every field its type.
    if not (is_str(h) and is_str(msg.get("project_name", "")) and
            is_str(msg.get("unity_version", "")) and
            is_str(msg.get("project_path"), nullable=True)):
        log("drop register (validation)")
        return
    if h == "":
        await sock.close(4400)
        return
    sid = str(uuid.uuid4()) + SID_SUFFIX
    await sock.send({"type": "registered", "session_id": sid})
    log("registered", sid)
    now = datetime.datetime.now(datetime.timezone.utc)
    old = HUB.register(sid, {
        "project": msg.get("project_name", "Unknown Project"), "hash": h,
        "unity_version": msg.get("unity_version", "Unknown"),
        "path": msg.get("project_path"), "connected_at": now, "tools": {}})
    evicted = None
    if old is not None:
        evicted = HUB.sockets.get(old)
        HUB.forget(old)
        HUB.fail_pending(old, "Unity plugin session %s superseded by %s"
                         % (old, sid))
        log("evicted", old)
    HUB.sockets[sid] = sock
    HUB.last_pong[sid] = time.monotonic()
    HUB.pings[sid] = asyncio.ensure_future(ping_loop(sid, sock))
    if evicted is not None:
        await evicted.close(1001)


async def on_tools(sock, msg):
    tools = msg.get("tools")
    ok = isinstance(tools, list) and all(
        isinstance(t, dict) and is_str(t.get("name")) for t in tools)
    log("recv register_tools", len(tools) if ok else "(invalid)")
    if not ok:
        log("drop register_tools (validation)")
        return
    sid = HUB.sid_of(sock)
    if sid is None:
        log("drop register_tools (unregistered socket)")
        return
    session = HUB.sessions.get(sid)
    if session is not None:
        # "group" is no field of the server's model: it is dropped.
        session["tools"] = {t["name"]: {k: v for k, v in t.items()
                                        if k != "group"} for t in tools}


async def on_pong(sock, msg):
    sid = msg.get("session_id")
    log("recv pong", sid if is_str(sid) else dumps(sid))
    if not is_str(sid, nullable=True):
        log("drop pong (validation)")
        return
    if sid:
        # The session named in the message, whichever socket sent it.
        session = HUB.sessions.get(sid)
        if session is not None:
            session["connected_at"] = datetime.datetime.now(
                datetime.timezone.utc)
        HUB.last_pong[sid] = time.monotonic()


async def on_result(sock, msg):
    cid, result = msg.get("id"), msg.get("result", {})
    log("recv command_result", cid if is_str(cid) else dumps(cid),
        dumps(result))
    if not is_str(cid) or not isinstance(result, dict):
        log("drop command_result (validation)")
        return
    entry = HUB.pending.get(cid)
    if entry is not None and not entry["future"].done():
        entry["future"].set_result(result)


async def on_disconnect(sock):
    code = sock.lost_code()
    sid = HUB.sid_of(sock)
    log("close", code, *([sid] if sid else []))
    if sid is not None:
        HUB.forget(sid)
        HUB.fail_pending(sid, "Unity plugin session %s disconnected while "
                         "awaiting command_result" % sid)
        HUB.unregister(sid)


async def ping_loop(sid, sock):
    while True:
        await asyncio.sleep(PING_INTERVAL)
        if sid not in HUB.sockets:
            return
        if time.monotonic() - HUB.last_pong.get(sid, 0) > PING_TIMEOUT:
            log("stale", sid)
            await sock.close(1001)
            return
        try:
            await sock.send({"type": "ping"})
            log("sent ping", sid)
        except ConnectionError:
            # The real loop tries a close 1006, which cannot be sent.
            sock.code = 1006
            sock.abort()
            return


# The plain HTTP side.

REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request",
           403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
           411: "Length Required", 413: "Payload Too Large"}


def parse_head(head):
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return None
    headers = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            return None
        headers[name.strip().lower()] = value.strip()
    return parts[0], parts[1], headers


def tokens(value):
    return {t.strip().lower() for t in value.split(",")}


async def respond(writer, status, body=b"", ctype="application/json",
                  close=False):
    head = "HTTP/1.1 %d %s\r\ncontent-length: %d\r\n" % (
        status, REASONS[status], len(body))
    if body:
        head += "content-type: %s\r\n" % ctype
    if close:
        head += "connection: close\r\n"
    writer.write(head.encode() + b"\r\n" + body)
    await writer.drain()


async def respond_json(writer, obj, status=200):
    await respond(writer, status, dumps(obj).encode())


class Stream:
    """An event stream, chunked."""

    def __init__(self, writer):
        self.writer = writer

    async def start(self):
        self.writer.write(b"HTTP/1.1 200 OK\r\n"
                          b"content-type: text/event-stream\r\n"
                          b"cache-control: no-cache, no-transform\r\n"
                          b"transfer-encoding: chunked\r\n\r\n")
        await self.writer.drain()

    async def event(self, obj):
        data = ("event: message\r\ndata: %s\r\n\r\n" % dumps(obj)).encode()
        self.writer.write(b"%x\r\n%s\r\n" % (len(data), data))
        await self.writer.drain()

    async def end(self):
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()
        log("sse end")

    async def hold(self):
        log("sse held")
        try:
            await asyncio.wait_for(HUB.release.wait(), IDLE)
        except asyncio.TimeoutError:
            pass


def note(text):
    return {"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": text}}


async def mcp_post(reader, writer, headers):
    if "content-length" not in headers:
        await respond(writer, 411, close=True)
        return False
    n = int(headers["content-length"])
    if n > BODY_MAX:
        await respond(writer, 413, close=True)
        return False
    body = await asyncio.wait_for(reader.readexactly(n), IDLE)
    try:
        req = json.loads(body)
        assert isinstance(req, dict) and is_str(req.get("method"))
    except (ValueError, AssertionError):
        await respond_json(writer, {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32700, "message": "Parse error"}}, 400)
        return True
    if "id" not in req:
        await respond(writer, 202)
        return True
    params = req.get("params")
    stream = Stream(writer)
    await stream.start()
    await stream.event(note("echo 1/3"))
    if isinstance(params, dict) and params.get("hold") is True:
        await stream.hold()
    await stream.event(note("echo 2/3"))
    await stream.event({"jsonrpc": "2.0", "id": req["id"], "result": {
        "echo": {"method": req["method"], "params": params}}})
    await stream.end()
    return True


async def mcp_get(writer):
    stream = Stream(writer)
    await stream.start()
    await stream.event(note("stream open"))
    await stream.hold()
    await stream.event(note("stream end"))
    await stream.end()
    return True


def instances():
    return {"success": True, "instances": [
        {"session_id": sid, "project": s["project"], "hash": s["hash"],
         "unity_version": s["unity_version"],
         "connected_at": s["connected_at"].isoformat()}
        for sid, s in HUB.sessions.items()]}


async def route(reader, writer, method, path, headers):
    """Answer one plain request; False: close the connection."""
    log("http", method, path)
    path = path.split("?", 1)[0]
    if path == "/health" and method == "GET":
        await respond_json(writer, {
            "status": "healthy", "timestamp": time.time(),
            "version": VERSION,
            "message": "MCP for Unity server is running"})
    elif path == "/api/instances" and method == "GET":
        await respond_json(writer, instances())
    elif path == "/mcp" and method == "POST":
        return await mcp_post(reader, writer, headers)
    elif path == "/mcp" and method == "GET":
        return await mcp_get(writer)
    elif path in ("/health", "/api/instances", "/mcp"):
        await respond(writer, 405, b"Method Not Allowed", "text/plain")
    else:
        await respond(writer, 404, b"Not Found", "text/plain")
    return "close" not in tokens(headers.get("connection", ""))


async def cut_answer(writer, n):
    """A 101 status line and n bytes of header lines, never ended."""
    line = b"X-Pad: " + b"a" * 60 + b"\r\n"
    pad = line * (n // len(line) + 1)
    writer.write(b"HTTP/1.1 101 Switching Protocols\r\n" + pad[:n])
    await writer.drain()
    log("cut", n)


async def upgrade(reader, writer, head):
    if HUB.cut > 0:
        n, HUB.cut = HUB.cut, 0
        await cut_answer(writer, n)
        return
    conn = ServerConnection(max_size=MAX_MESSAGE)
    conn.receive_data(head)
    request = next(e for e in conn.events_received())
    response = conn.accept(request)
    conn.send_response(response)
    sock = Sock(conn, reader, writer)
    await sock.flush()
    if response.status_code != 101:
        log("http GET", request.path, response.status_code)
        return
    log("accept")
    HUB.all.add(sock)
    try:
        await sock.serve()
    finally:
        sock.closed.set()
        HUB.all.discard(sock)
        await on_disconnect(sock)


async def client(reader, writer):
    try:
        while True:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"),
                                          IDLE)
            req = parse_head(head)
            if req is None:
                await respond(writer, 400, close=True)
                break
            method, path, headers = req
            if ("websocket" in tokens(headers.get("upgrade", "")) and
                    "upgrade" in tokens(headers.get("connection", ""))):
                if path == "/hub/plugin":
                    await upgrade(reader, writer, head)
                else:
                    log("http", method, path)
                    await respond(writer, 403, close=True)
                break
            if not await route(reader, writer, method, path, headers):
                break
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError,
            asyncio.TimeoutError, ConnectionError):
        pass
    finally:
        writer.close()


# The control channel.

def first_session():
    return next(iter(HUB.sessions), None)


async def execute(name, params, timeout):
    """Send one execute as send_command does; log its outcome."""
    sid = first_session()
    if sid is None or sid not in HUB.sockets:
        log("result - " + dumps({"success": False, "error":
            "No Unity instances connected. Make sure Unity is running "
            "with MCP plugin."}))
        return
    if timeout is not None:
        unity_t = wait_t = timeout
    elif name in FAST_FAIL:
        unity_t = wait_t = FAST_FAIL_TIMEOUT
    else:
        unity_t = wait_t = COMMAND_TIMEOUT
        req = params.get("timeout_seconds", params.get("timeoutSeconds"))
        try:
            req = max(1.0, min(float(req), 3600.0))
            unity_t, wait_t = max(unity_t, req), max(wait_t, req + 5.0)
        except (TypeError, ValueError):
            pass
    cid = str(uuid.uuid4())
    future = asyncio.get_running_loop().create_future()
    HUB.pending[cid] = {"future": future, "sid": sid}
    try:
        await HUB.sockets[sid].send({"type": "execute", "id": cid,
                                     "name": name, "params": params,
                                     "timeout": float(unity_t)})
    except ConnectionError:
        HUB.pending.pop(cid, None)
        log("result", cid, dumps({"success": False, "error":
                                  "send failed"}))
        return
    log("sent execute", cid, name)
    task = asyncio.ensure_future(outcome(cid, name, future, wait_t))
    HUB.tasks.add(task)
    task.add_done_callback(HUB.tasks.discard)


async def outcome(cid, name, future, wait_t):
    try:
        log("result", cid, dumps(await asyncio.wait_for(future, wait_t)))
    except Disconnected as e:
        log("result", cid, dumps(mcp_response(str(e))))
    except asyncio.TimeoutError:
        if name in FAST_FAIL:
            log("timeout", cid, dumps(mcp_response(
                "Unity did not respond to '%s' within %.1fs; please retry"
                % (name, wait_t))))
        else:
            # /api/command: HTTP 500, str(TimeoutError()) is empty.
            log("timeout", cid, dumps({"success": False, "error": ""}))
    finally:
        HUB.pending.pop(cid, None)


def parse_execute(rest):
    name, _, rest = rest.strip().partition(" ")
    params, end = json.JSONDecoder().raw_decode(rest.strip() or "{}")
    tail = rest.strip()[end:].strip()
    if not name or not isinstance(params, dict):
        raise ValueError("execute NAME PARAMS_JSON [TIMEOUT]")
    return name, params, float(tail) if tail else None


async def control(line):
    cmd, _, rest = line.partition(" ")
    if cmd == "execute":
        try:
            args = parse_execute(rest)
        except ValueError as e:
            log("ctl-refused", line, "(%s)" % e)
            return
        await execute(*args)
    elif cmd == "raw":
        sid = first_session()
        if sid is not None and sid in HUB.sockets:
            sock = HUB.sockets[sid]
            sock.conn.send_text(rest.encode())
            await sock.flush()
    elif cmd == "tools":
        for sid, s in HUB.sessions.items():
            log("tools", sid, *s["tools"].keys())
    elif cmd == "drop":
        for sock in list(HUB.all):
            await sock.close(int(rest) if rest else 1012)
    elif cmd == "cut" and rest.isdigit():
        HUB.cut = int(rest)
    elif cmd == "release":
        HUB.release.set()
        HUB.release = asyncio.Event()
    elif cmd == "quit":
        log("ctl", line)
        os._exit(0)
    else:
        log("ctl-refused", line)
        return
    log("ctl", line)


async def controls():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = await reader.readline()
        if not line:
            return
        line = line.decode().strip()
        if line:
            await control(line)


async def main():
    global HUB
    port = 0
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "-p":
        port = int(args[1])
    elif args:
        sys.stderr.write("usage: hub_server.py [-p PORT]\n")
        sys.exit(2)
    HUB = Hub()
    server = await asyncio.start_server(client, "127.0.0.1", port,
                                        limit=HEAD_MAX)
    log("port", server.sockets[0].getsockname()[1])
    await controls()
    os._exit(0)


if __name__ == "__main__":
    asyncio.run(main())
