#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""A stand-in of MCP for Unity's editor plugin in HTTP mode, for the tests.

	hub_plugin.py URL [--project DIR] [--hash HASH] [--unity-version V]

It dials URL (ws://127.0.0.1:PORT/hub/plugin) and prints "port PORT" (the
port it dials) first.  On the wire as the real plugin (CoplayDev/unity-mcp
v10.1.0, WebSocketTransportClient.cs; facts in /work/shared/MFU-HTTP.md
and /work/notes/hub-design.md):

* register at once on open, not waiting for welcome: project_name the
  last element of DIR, project_hash the first 16 hex of SHA-1 of
  "DIR/Assets" (--hash replaces it, "" included), unity_version,
  project_path DIR;
* register_tools (a few built-in tools) only on registered;
* a pong {session_id} on each ping and unprompted every keepAliveInterval
  from welcome (15 s), plus an unsolicited WebSocket PONG frame at that
  pace, as .NET's KeepAliveInterval does; the session id is the last one
  registered (a reconnect keeps it until the new registered; a reload
  clears it);
* executes strictly one at a time, each given max(1, timeout) seconds
  (the wire's timeout read as an int, rounding half to even) before the
  "timed out" envelope; answers: ping, get_editor_state, run_tests,
  get_test_job, refresh_unity (compile "request": the answer, then a
  reload), anything else the unknown-command error envelope;
* an execute whose params is not an object (or null), or whose timeout
  is not a number, aborts the socket, as the real receive loop throws;
* after an unexpected close it reconnects after 0, 1, 3, 5, 10, 30 s,
  then every 30 s; after a reload the same list once, then it gives up.

HUB_TIME_SCALE (default 1) scales keep-alive and reconnect delays; the
execute timeouts from the wire are not scaled.

Control channel, lines on stdin (end of file ends the fake):
  stall NAME|*    executes of NAME (of any name) wait until unstall
  unstall
  end-tests succeeded|failed   the running test job ends so
  reload          abort the socket (no close frame) and stay away
  reload-done     come back: reconnect (resume schedule), a new session
  away            no reconnect until reload-done (the socket is kept)
  silent / talk   stop / restart the pongs (PONG frames go on)
  pong-sid SID|-  pongs carry SID instead of the registered id / again it
  stray JSON|-    before each answer, another command_result (message
                  "stray answer") whose id is the JSON string with %s
                  the execute's id and %d its number; - forgets them
  raw JSON        that text, verbatim, on the open socket, with %s the
                  registered session id
  register        a second register on the open socket
  retools         register_tools again (a user's toggle)
  stop            close 1000 "Shutdown", never reconnect
  quit
Log on stdout, one event a line: port N, connected, connect failed,
recv welcome, registered SID, sent register_tools N, recv execute ID NAME
PARAMS, stray ID-JSON, answer ID JSON, recv ping, sent pong SID, close CODE, abort WHY,
gave up, ctl LINE (once the control line took effect).
"""
import asyncio
import hashlib
import json
import os
import sys
import time
import urllib.parse
import uuid

try:
    import websockets
except ImportError:
    sys.stderr.write("hub_plugin.py: python3-websockets is not installed\n")
    sys.exit(77)

SCALE = float(os.environ.get("HUB_TIME_SCALE", "1") or "1")
RECONNECT = [0, 1, 3, 5, 10, 30]
TAIL = 30
DEFAULT_KEEPALIVE = 15
DEFAULT_TIMEOUT = 30
OPEN_TIMEOUT = 10


def log(*words):
    sys.stdout.write(" ".join(str(w) for w in words) + "\n")
    sys.stdout.flush()


def dumps(o):
    return json.dumps(o, separators=(",", ":"))


def now_ms():
    return int(time.time() * 1000)


def success(message, data=None):
    r = {"success": True, "message": message}
    if data is not None:
        r["data"] = data
    return {"status": "success", "result": r}


def error(text, data=None):
    r = {"success": False, "code": text, "error": text}
    if data is not None:
        r["data"] = data
    return {"status": "success", "result": r}


def tool(name, group="core", polling=False, max_poll=0):
    return {"name": name, "description": "Tool: " + name,
            "structured_output": True, "requires_polling": polling,
            "poll_action": "status", "max_poll_seconds": max_poll,
            "group": group, "parameters": []}


TOOLS = [tool("read_console"), tool("refresh_unity"),
         tool("run_tests", "testing"), tool("get_test_job", "testing"),
         tool("manage_script"),
         tool("manage_build", polling=True, max_poll=1800)]


class BadExecute(Exception):
    pass


class Plugin:
    def __init__(self, url, project, phash, version):
        self.url = url
        self.project = project.rstrip("/") or "/"
        self.name = os.path.basename(self.project)
        if phash is None:
            phash = hashlib.sha1((self.project + "/Assets").encode(
                "utf-8")).hexdigest()[:16]
        self.hash = phash
        self.version = version
        self.sid = None
        self.keepalive = DEFAULT_KEEPALIVE * SCALE
        self.ws = None
        self.rx = None		# the receive loop's task
        self.present = asyncio.Event()
        self.present.set()
        self.resume = False	# after a reload: the schedule once
        self.stopped = False
        self.aborted = False
        self.stall = None
        self.unstalled = asyncio.Event()
        self.unstalled.set()
        self.silent = False
        self.pong_sid = None
        self.strays = []
        self.jobs = {}
        self.running = None	# the running job's id
        self.sequence = 0

    # The commands.

    def editor_state(self):
        self.sequence += 1
        job = self.jobs.get(self.running)
        return success("Retrieved editor state.", {
            "schema_version": "unity-mcp/editor_state@2",
            "observed_at_unix_ms": now_ms(), "sequence": self.sequence,
            "unity": {"unity_version": self.version,
                      "project_id": self.hash, "platform": "LinuxEditor",
                      "is_batch_mode": False},
            "editor": {"is_focused": True, "play_mode": {
                "is_playing": False, "is_paused": False,
                "is_changing": False}},
            "activity": {"phase": "running_tests" if job else "idle",
                         "since_unix_ms": now_ms(), "reasons": []},
            "compilation": {"is_compiling": False,
                            "is_domain_reload_pending": False},
            "assets": {"is_updating": False},
            "tests": {"is_running": job is not None,
                      "mode": job["mode"] if job else None,
                      "current_job_id": self.running,
                      "started_unix_ms": job["started_unix_ms"]
                      if job else None},
            "transport": {"unity_bridge_connected": True,
                          "last_message_unix_ms": now_ms()}})

    def run_tests(self, params):
        if self.running is not None:
            return error("tests_running", {"reason": "tests_running",
                                           "retry_after_ms": 5000})
        jid = uuid.uuid4().hex
        mode = str(params.get("mode") or "EditMode")
        self.jobs[jid] = {"job_id": jid, "status": "running", "mode": mode,
                          "started_unix_ms": now_ms(),
                          "finished_unix_ms": None,
                          "last_update_unix_ms": now_ms(), "error": None,
                          "result": None}
        self.running = jid
        return success("Test job started.", {
            "job_id": jid, "status": "running", "mode": mode,
            "include_details": False, "include_failed_tests": False})

    def test_job(self, params):
        jid = params.get("job_id", params.get("jobId"))
        if jid is None:
            return error("Missing required parameter 'job_id'.")
        job = self.jobs.get(str(jid))
        if job is None:
            return error("Unknown job_id.")
        data = {k: v for k, v in job.items() if k != "result"}
        data["progress"] = {"completed": 3 if job["finished_unix_ms"]
                            else 0, "total": 3}
        if job["status"] == "succeeded":
            data["result"] = job["result"]
        return success("Test job status retrieved.", data)

    def end_tests(self, how):
        job = self.jobs.get(self.running)
        if job is None or how not in ("succeeded", "failed"):
            return False
        job.update(status=how, finished_unix_ms=now_ms(),
                   last_update_unix_ms=now_ms())
        failed = int(how == "failed")
        job["result"] = {"mode": job["mode"], "summary": {
            "total": 3, "passed": 3 - failed, "failed": failed,
            "skipped": 0, "durationSeconds": 0.1,
            "resultState": "Failed" if failed else "Passed"},
            "results": None}
        if failed:
            job["error"] = "1 test failed"
        self.running = None
        return True

    def refresh(self, params):
        if self.running is not None:
            return error("tests_running", {"reason": "tests_running",
                                           "retry_after_ms": 5000}), False
        compile_ = str(params.get("compile") or "none").lower() == "request"
        return success("Refresh requested.", {
            "refresh_triggered": True, "compile_requested": compile_,
            "resulting_state": "compiling" if compile_ else "idle",
            "hint": "If Unity enters compilation/domain reload, poll "
            "editor_state until ready_for_tools is true."}), compile_

    async def dispatch(self, name, params):
        """The envelope for one command; True when a reload follows."""
        if self.stall in (name, "*"):
            await self.unstalled.wait()
        if name == "ping":
            return {"status": "success", "result": {"message": "pong"}}, 0
        if name == "get_editor_state":
            return self.editor_state(), 0
        if name == "run_tests":
            return self.run_tests(params), 0
        if name == "get_test_job":
            return self.test_job(params), 0
        if name == "refresh_unity":
            return self.refresh(params)
        return {"status": "error", "error":
                "Unknown or unsupported command type: " + name,
                "command": "Unknown (error during processing)",
                "stackTrace": None}, 0

    # The wire.

    async def send(self, obj):
        await self.ws.send(dumps(obj))

    async def pong(self):
        sid = self.pong_sid if self.pong_sid is not None else self.sid
        await self.send({"type": "pong", "session_id": sid})
        log("sent pong", sid if sid is not None else "null")

    async def keepalive_loop(self, ws):
        try:
            while True:
                await asyncio.sleep(self.keepalive)
                await ws.pong(b"")
                if not self.silent:
                    await self.pong()
        except websockets.ConnectionClosed:
            pass	# the receive loop tells the close

    def execute_args(self, msg):
        """id, name, params, timeout as the plugin reads them."""
        def scalar(v):
            if isinstance(v, (dict, list)):
                raise BadExecute("id or name not a value")
            return None if v is None else str(v)
        cid, name = scalar(msg.get("id")), scalar(msg.get("name"))
        params = msg.get("params")
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            raise BadExecute("params not an object")
        t = msg.get("timeout")
        if t is None:
            t = DEFAULT_TIMEOUT
        elif isinstance(t, bool):
            t = int(t)
        elif isinstance(t, (int, float)):
            t = round(t)	# Convert.ToInt32: half to even
        elif isinstance(t, str) and t.strip().lstrip("+-").isdigit():
            t = int(t)
        else:
            raise BadExecute("timeout not a number")
        return cid, name, params, t

    async def execute(self, msg):
        cid, name, params, t = self.execute_args(msg)
        if not cid or not name:
            log("drop execute (no id or name)")
            return
        log("recv execute", cid, name, dumps(params))
        reload_ = False
        try:
            result, reload_ = await asyncio.wait_for(
                self.dispatch(name, params), max(1, t))
        except asyncio.TimeoutError:
            result = {"status": "error", "error":
                      "Command '%s' timed out after %d seconds" % (name, t)}
        for tmpl in self.strays:
            other = tmpl.replace("%s", cid).replace("%d", cid[3:])
            await self.send({"type": "command_result", "id": other,
                             "result": success("stray answer")})
            log("stray", dumps(other))
        await self.send({"type": "command_result", "id": cid,
                         "result": result})
        log("answer", cid, dumps(result))
        if reload_:
            self.reload()

    async def handle(self, text):
        try:
            msg = json.loads(text)
        except ValueError:
            log("recv (bad json)")
            return
        if not isinstance(msg, dict):
            return
        kind = msg.get("type")
        if kind == "welcome":
            log("recv welcome")
            ka = msg.get("keepAliveInterval")
            if isinstance(ka, int) and ka > 0:
                self.keepalive = ka * SCALE
        elif kind == "registered":
            sid = msg.get("session_id")
            if isinstance(sid, str) and sid:
                self.sid = sid
                log("registered", sid)
                await self.send_tools()
        elif kind == "execute":
            await self.execute(msg)
        elif kind == "ping":
            log("recv ping")
            if not self.silent:
                await self.pong()

    async def send_tools(self):
        await self.send({"type": "register_tools", "tools": TOOLS})
        log("sent register_tools", len(TOOLS))

    async def register(self):
        await self.send({"type": "register", "project_name": self.name,
                         "project_hash": self.hash,
                         "unity_version": self.version,
                         "project_path": self.project})

    async def receive_loop(self, ws):
        while True:
            await self.handle(await ws.recv())

    async def session(self, ws):
        """One socket, from open to end."""
        self.ws, self.aborted = ws, False
        log("connected")
        ka = asyncio.ensure_future(self.keepalive_loop(ws))
        self.rx = asyncio.ensure_future(self.receive_loop(ws))
        try:
            await self.register()
            await self.rx
        except BadExecute as e:
            log("abort", e)
            ws.transport.abort()
        except websockets.ConnectionClosed:
            if not self.aborted:
                log("close", ws.close_code or 1006)
        except asyncio.CancelledError:
            pass
        finally:
            ka.cancel()
            self.rx.cancel()
            self.ws = self.rx = None
            if not ws.transport.is_closing():
                ws.transport.abort()

    def reload(self):
        """A domain reload: abort, no close frame; away till reload-done."""
        self.present.clear()
        self.stall = None
        self.unstalled.set()
        if self.ws is not None:
            self.aborted = True
            log("abort reload")
            self.ws.transport.abort()
            self.rx.cancel()

    async def connect(self):
        try:
            ws = await websockets.connect(
                self.url, ping_interval=None, max_size=None,
                compression=None, open_timeout=OPEN_TIMEOUT)
        except (OSError, asyncio.TimeoutError,
                websockets.WebSocketException) as e:
            log("connect failed", type(e).__name__)
            return None
        return ws

    async def attempt(self, delays, forever):
        """Connect on the schedule: the socket, or None (gave up)."""
        tail = [TAIL] if forever else []
        i = 0
        while True:
            if i < len(delays):
                delay = delays[i]
            elif forever:
                delay = tail[0]
            else:
                return None
            i += 1
            if delay:
                await asyncio.sleep(delay * SCALE)
            await self.present.wait()
            if self.stopped:
                return None
            ws = await self.connect()
            if ws is not None:
                return ws

    async def run(self):
        forever = True
        while not self.stopped:
            if not self.present.is_set():
                await self.present.wait()
                # Back from a reload: StartAsync afresh.
                self.sid = None
                forever = False
            ws = await self.attempt(RECONNECT, forever)
            if ws is None:
                if self.stopped:
                    return
                log("gave up")
                self.present.clear()
                continue
            forever = True
            await self.session(ws)

    async def stop(self):
        self.stopped = True
        self.present.set()
        if self.ws is not None:
            self.aborted = True
            await self.ws.close(1000, "Shutdown")

    def stray_of(self, arg):
        try:
            tmpl = json.loads(arg)
        except ValueError:
            return False
        if isinstance(tmpl, str):
            self.strays.append(tmpl)
        return isinstance(tmpl, str)

    async def control(self, line):
        cmd, _, arg = line.partition(" ")
        if cmd == "stall" and arg:
            self.stall = arg
            self.unstalled.clear()
        elif cmd == "unstall":
            self.unstalled.set()
            self.stall = None
        elif cmd == "end-tests" and self.end_tests(arg):
            pass
        elif cmd == "reload":
            self.reload()
        elif cmd == "reload-done":
            self.present.set()
        elif cmd == "away":
            self.present.clear()
        elif cmd == "silent":
            self.silent = True
        elif cmd == "talk":
            self.silent = False
        elif cmd == "stray" and arg == "-":
            self.strays = []
        elif cmd == "stray" and arg and self.stray_of(arg):
            pass
        elif cmd == "pong-sid" and arg:
            self.pong_sid = None if arg == "-" else arg
        elif cmd == "raw" and arg and self.ws is not None:
            await self.ws.send(arg.replace("%s", self.sid or ""))
        elif cmd in ("register", "retools") and self.ws is not None:
            await (self.register() if cmd == "register"
                   else self.send_tools())
        elif cmd == "stop":
            await self.stop()
        elif cmd == "quit":
            log("ctl", line)
            os._exit(0)
        else:
            log("ctl-refused", line)
            return
        log("ctl", line)

    async def controls(self):
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
                try:
                    await self.control(line)
                except websockets.ConnectionClosed:
                    log("ctl-refused", line, "(socket closed)")


def usage():
    sys.stderr.write("usage: hub_plugin.py URL [--project DIR] "
                     "[--hash HASH] [--unity-version V]\n")
    sys.exit(2)


async def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        usage()
    url, opts = args[0], {"--project": "/home/dev/Projects/FakeGame",
                          "--hash": None, "--unity-version": "6000.0.58f2"}
    rest = args[1:]
    while rest:
        if len(rest) < 2 or rest[0] not in opts:
            usage()
        opts[rest[0]] = rest[1]
        rest = rest[2:]
    port = urllib.parse.urlsplit(url).port
    if port is None:
        usage()
    log("port", port)
    plugin = Plugin(url, opts["--project"], opts["--hash"],
                    opts["--unity-version"])
    runner = asyncio.ensure_future(plugin.run())
    await plugin.controls()
    runner.cancel()
    os._exit(0)


if __name__ == "__main__":
    asyncio.run(main())
