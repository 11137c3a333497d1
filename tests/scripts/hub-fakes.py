# SPDX-License-Identifier: ISC
"""The self-test of the hub stand-ins (tests/scripts/hub-fakes.sh runs it):
tests/fakes/hub_plugin.py against tests/fakes/hub_server.py, every
assertion from their logs (and from the server's HTTP answers).

	hub-fakes.py SERVER PLUGIN

Timers run at HUB_TIME_SCALE 0.1 (the 10 s ping is 1 s, the 20 s
staleness 2 s); every wait is bounded; every process is stopped.
"""
import hashlib
import http.client
import json
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time

WAIT = 10.0		# any one awaited line
SCALE = 0.1
FAKES = []


class Failure(Exception):
    pass


class Fake:
    """A stand-in process: its log read as it comes, its stdin to steer."""

    def __init__(self, name, argv):
        self.name = name
        env = dict(os.environ, HUB_TIME_SCALE=str(SCALE))
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
        self.lines = []
        self.fresh = queue.Queue()
        self.seen = 0		# lines before this were awaited
        threading.Thread(target=self.pump, daemon=True).start()
        FAKES.append(self)

    def pump(self):
        for raw in self.proc.stdout:
            self.fresh.put(raw.decode().rstrip("\n"))
        self.fresh.put(None)

    def take(self, deadline):
        """Move one fresh line into lines; False at the deadline or EOF."""
        try:
            line = self.fresh.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return False
        if line is None:
            self.fresh.put(None)
            return False
        self.lines.append(line)
        return True

    def find(self, match, start):
        for i in range(start, len(self.lines)):
            if match(self.lines[i]):
                return i
        return None

    def await_(self, want, timeout=WAIT, start=None):
        """The next line (after those awaited) matching want: a prefix, or
        a predicate; its index; fails after timeout."""
        match = want if callable(want) else lambda l: l.startswith(want)
        start = self.seen if start is None else start
        deadline = time.monotonic() + timeout
        while True:
            i = self.find(match, start)
            if i is not None:
                self.seen = i + 1
                return i
            if not self.take(deadline):
                raise Failure("%s: no line %r within %.1f s" % (
                    self.name, want.__doc__ if callable(want) else want,
                    timeout))

    def line(self, want, **kw):
        return self.lines[self.await_(want, **kw)]

    def absent(self, want, timeout):
        """No line matching want (prefix) comes within timeout."""
        start = len(self.lines)
        deadline = time.monotonic() + timeout
        while self.take(deadline):
            pass
        i = self.find(lambda l: l.startswith(want), start)
        check(i is None, "%s: unexpected %r" % (self.name,
                                               self.lines[i] if i else ""))

    def ctl(self, line):
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()
        seen = self.seen
        self.await_(exactly("ctl " + line))
        self.seen = seen	# no event of the stand-in: keep the place

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def dump(self):
        sys.stdout.write("--- %s's log:\n" % self.name)
        for line in self.lines[-40:]:
            sys.stdout.write("  %s\n" % line[:300])


def exactly(text):
    """A predicate for await_: the line is text."""
    def match(line):
        return line == text
    match.__doc__ = text
    return match


def check(cond, what):
    if not cond:
        raise Failure(what)


def words(line, n):
    return line.split(" ", n)


def project_hash(root):
    return hashlib.sha1((root + "/Assets").encode()).hexdigest()[:16]


def plugin(path, port, name, *args):
    p = Fake(name, [path, "ws://127.0.0.1:%d/hub/plugin" % port] +
             list(args))
    p.await_("port %d" % port)
    return p


def execute(server, cmd):
    """Send an execute through the server's control channel: its id."""
    server.ctl("execute " + cmd)
    return words(server.line("sent execute "), 3)[2]


def result(server, cid, kind="result"):
    """The outcome of execute cid: whenever it came after the send."""
    sent = server.find(lambda l: l.startswith("sent execute " + cid), 0)
    seen = server.seen
    at = server.await_("%s %s " % (kind, cid), start=sent)
    server.seen = max(seen, at + 1)
    return json.loads(words(server.lines[at], 2)[2])


def registration(server, plug, root, start=None):
    """welcome, then register, registered, register_tools: the sid."""
    h = project_hash(root)
    accept = server.await_("accept", start=start)
    welcome = server.await_("sent welcome")
    reg = server.await_(exactly("recv register " + h))
    regd = server.await_("registered ")
    sid = words(server.lines[regd], 1)[1]
    tools = server.await_("recv register_tools 6", start=accept)
    check(accept < welcome < reg < regd < tools, "server: hub order")
    conn = plug.await_("connected")
    regd = plug.await_("registered ")
    check(plug.lines[regd] == "registered " + sid,
          "plugin: another session id")
    check(plug.await_("sent register_tools 6", start=conn) > regd,
          "plugin: register_tools before registered")
    return sid


def order(plug, ids):
    """Each execute received only after the one before was answered."""
    for cid in ids:
        plug.await_("answer " + cid, start=0)
    at = []
    for cid in ids:
        at.append(plug.find(lambda l: l.startswith("recv execute " + cid),
                            0))
        at.append(plug.find(lambda l: l.startswith("answer " + cid), 0))
    check(None not in at and at == sorted(at),
          "plugin: executes not one at a time, in order: %r" % at)


def test_register(server, port, root):
    a = plugin(PLUGIN, port, "plugin A", "--project", root)
    sid = registration(server, a, root)
    server.ctl("tools")
    tools = server.line("tools " + sid).split()[2:]
    check("run_tests" in tools and "manage_build" in tools,
          "server: tools %r" % tools)
    return a, sid


def test_serial(server, a):
    a.ctl("stall manage_scene")
    ids = [execute(server, "manage_scene {} 10"),
           execute(server, "ping {} 10"),
           execute(server, "get_editor_state {} 10")]
    a.await_("recv execute " + ids[0])
    a.ctl("unstall")
    first = result(server, ids[0])
    check(first["status"] == "error" and first["error"] ==
          "Unknown or unsupported command type: manage_scene",
          "unknown command: %r" % first)
    check(result(server, ids[1]) == {"status": "success",
                                     "result": {"message": "pong"}},
          "ping: not the pong envelope")
    state = result(server, ids[2])["result"]
    check(state["success"] and not state["data"]["tests"]["is_running"],
          "get_editor_state: %r" % state)
    order(a, ids)


def test_fast_fail(server, a):
    """The server gives up at the timeout; the plugin's late answer, after
    max(1, 0) s, is ignored."""
    a.ctl("stall get_editor_state")
    cid = execute(server, "get_editor_state {} 0.5")
    got = result(server, cid, "timeout")
    check(got == {"success": False, "message": None, "error":
                  "Unity did not respond to 'get_editor_state' within "
                  "0.5s; please retry", "data": None, "hint": "retry"},
          "fast-fail: %r" % got)
    late = json.loads(words(a.line("answer " + cid), 2)[2])
    check(late == {"status": "error", "error": "Command 'get_editor_state' "
                   "timed out after 0 seconds"}, "plugin timeout: %r" % late)
    server.await_("recv command_result " + cid)
    a.ctl("unstall")
    after = execute(server, "ping {} 10")
    result(server, after)
    check(server.find(lambda l: l.startswith("result " + cid), 0) is None,
          "server: a late result taken")


def test_tests(server, a):
    job = result(server, execute(server, 'run_tests {"mode":"EditMode"} 10'))
    jid = job["result"]["data"]["job_id"]
    check(len(jid) == 32, "job id %r" % jid)
    busy = result(server, execute(server, "refresh_unity {} 10"))["result"]
    check(busy["code"] == "tests_running", "refresh while tests: %r" % busy)
    state = result(server, execute(server, "get_editor_state {} 10"))
    check(state["result"]["data"]["tests"]["is_running"], "tests running")
    a.ctl("end-tests succeeded")
    done = result(server, execute(server, 'get_test_job {"job_id":"%s"} 10'
                                  % jid))["result"]["data"]
    check(done["status"] == "succeeded" and
          done["result"]["summary"]["passed"] == 3, "job: %r" % done)


def test_evict(server, port, root, a, sid_a):
    """A newer registrant of the hash evicts the older (1001); so does a
    second register on one socket."""
    a.ctl("away")
    mark = len(server.lines)
    b = plugin(PLUGIN, port, "plugin B", "--project", root)
    sid_b = registration(server, b, root)
    at = server.await_("evicted " + sid_a, start=mark)
    check(at > server.find(exactly("registered " + sid_b), mark),
          "server: evicted before registered")
    server.await_(exactly("close 1001"), start=at)
    a.await_("close 1001")
    a.ctl("quit")
    b.ctl("register")
    at = server.await_("registered ")
    sid_b2 = words(server.lines[at], 1)[1]
    server.await_("evicted " + sid_b)
    server.await_(exactly("close 1001 " + sid_b2))
    b.await_("close 1001")
    return b, registration(server, b, root, start=at)


def test_empty_hash(server, port):
    c = plugin(PLUGIN, port, "plugin C", "--hash", "")
    server.await_(exactly("recv register "))
    server.await_(exactly("close 4400"))
    c.await_("close 4400")
    c.ctl("away")
    c.stop()


def test_silent(server, b, sid):
    """Pongs keep a session past the staleness; silence or pongs naming
    another session do not: a fresh session is dropped on the first check
    past 20 s, at the second tick."""
    for _ in range(3):
        server.await_("sent ping " + sid)
    for how, undo in (("silent", "talk"), ("pong-sid 00000000-0000-0000-"
                                           "0000-000000000000", "pong-sid -")):
        b.ctl(how)
        for fresh in (False, True):
            stale = server.await_("stale " + sid)
            server.await_(exactly("close 1001 " + sid))
            b.await_("close 1001")
            if fresh:
                pings = server.lines[reg:stale].count("sent ping " + sid)
                check(pings == 1, "%s: dropped after %d pings" % (how, pings))
            reg = server.await_("registered ", start=stale)
            sid = words(server.lines[reg], 1)[1]
            b.await_("registered " + sid)
        b.ctl(undo)
    return sid


def test_reload(server, b, root, sid):
    """A reload: abort (1005), the pending execute failed at once, away
    until reload-done, then the same hash and a new session."""
    h = project_hash(root)
    b.ctl("stall manage_script")
    cid = execute(server, "manage_script {} 20")
    b.await_("recv execute " + cid)
    b.ctl("reload")
    server.await_(exactly("close 1005 " + sid))
    got = result(server, cid)
    check(got == {"success": False, "message": None, "error":
                  "Unity plugin session %s disconnected while awaiting "
                  "command_result" % sid, "data": None, "hint": "retry"},
          "disconnect: %r" % got)
    server.absent("accept", 0.5)
    b.ctl("reload-done")
    server.await_("accept")
    server.await_(exactly("recv register " + h))
    new = words(server.line("registered "), 1)[1]
    check(new != sid, "reload: the same session id")
    b.await_("registered " + new)
    # refresh_unity compile "request": the answer, then the reload.
    cid = execute(server, 'refresh_unity {"compile":"request"} 10')
    sent = server.seen
    got = result(server, cid)
    check(got["result"]["data"]["compile_requested"], "refresh: %r" % got)
    # The result and the close come in either order.
    server.await_(exactly("close 1005 " + new), start=sent)
    b.await_("abort reload")
    b.ctl("reload-done")
    new = words(server.line("registered "), 1)[1]
    b.await_("registered " + new)
    return new


def test_hazards(server, b):
    """Params not an object, a timeout not a number: the plugin aborts its
    own socket and reconnects."""
    for bad in ('"params":[1],"timeout":2', '"params":{},"timeout":"soon"'):
        mark = len(server.lines)
        server.ctl('raw {"type":"execute","id":"x","name":"ping",%s}' % bad)
        b.await_("abort ")
        server.await_("close 1005", start=mark)
        sid = words(server.line("registered ", start=mark), 1)[1]
        b.await_("registered " + sid)
    return sid


def http_get(port, path, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    c.request("GET", path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, r.getheader("content-type"), body


def events(resp, n):
    got = []
    while len(got) < n:
        line = resp.readline()
        check(line, "event stream ended early")
        if line.startswith(b"data: "):
            got.append(json.loads(line[6:]))
    return got


def test_http(server, port, root, sid):
    status, ctype, body = http_get(port, "/health")
    health = json.loads(body)
    check(status == 200 and ctype == "application/json" and
          health["status"] == "healthy", "/health: %d %r" % (status, body))
    server.await_("http GET /health")
    status, _, body = http_get(port, "/api/instances")
    inst = json.loads(body)["instances"]
    check(status == 200 and [(i["session_id"], i["hash"]) for i in inst] ==
          [(sid, project_hash(root))], "/api/instances: %r" % inst)
    check(http_get(port, "/hub/plugin")[0] == 404, "plain GET /hub/plugin")
    check(http_get(port, "/ws", {"Upgrade": "websocket", "Connection":
                                 "Upgrade", "Sec-WebSocket-Version": "13",
                                 "Sec-WebSocket-Key":
                                 "dGhlIHNhbXBsZSBub25jZQ=="})[0] == 403,
          "an upgrade elsewhere")
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    c.request("POST", "/mcp", json.dumps({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"hold": True}}), {"Content-Type": "application/json",
                                      "Accept": "application/json, "
                                      "text/event-stream"})
    r = c.getresponse()
    check(r.status == 200 and r.getheader("content-type") ==
          "text/event-stream", "/mcp: %d" % r.status)
    events(r, 1)
    server.await_("sse held")	# the first event came before the end
    server.ctl("release")
    last = events(r, 2)[-1]
    check(last == {"jsonrpc": "2.0", "id": 7, "result": {"echo": {
        "method": "tools/call", "params": {"hold": True}}}}, "echo %r" % last)
    server.await_("sse end")
    c.close()


def main():
    global PLUGIN
    server_path, PLUGIN = sys.argv[1], sys.argv[2]
    root = tempfile.gettempdir() + "/hub-fakes/Projects/FakeGame"
    server = Fake("server", [server_path])
    port = int(words(server.line("port "), 1)[1])
    a, sid = test_register(server, port, root)
    test_serial(server, a)
    test_fast_fail(server, a)
    test_tests(server, a)
    b, sid = test_evict(server, port, root, a, sid)
    test_empty_hash(server, port)
    sid = test_silent(server, b, sid)
    sid = test_reload(server, b, root, sid)
    sid = test_hazards(server, b)
    test_http(server, port, root, sid)


if __name__ == "__main__":
    status = 0
    try:
        main()
    except Failure as e:
        print("FAIL:", e)
        for f in FAKES:
            f.dump()
        status = 1
    finally:
        for f in FAKES:
            f.stop()
    sys.exit(status)
