// MCP 2026-07-28 tasks (the io.modelcontextprotocol/tasks extension)
// against cmdgated --http, with the official @modelcontextprotocol/ext-tasks
// client over the v2 SDK client.  Modes (argv[2]):
//   run URL TOKEN         a heavy call becomes a task and completes; one is
//                         cancelled; unknown ids and undeclared calls are
//                         refused as the extension says
//   run25 URL TOKEN       the same client at 2025-11-25 (initialize): a task
//                         completes, one is cancelled
//   start URL TOKEN       a heavy call that waits behind another: prints the
//                         task's serialized reference, and exits
//   resume URL TOKEN REF  a new process: the task of REF, completed
// The raw dispatch the extension needs for a 2026-07-28 server posts each
// request with its headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";

const [mode, url, token, ref] = process.argv.slice(2);
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
const ok = (msg) => console.log("ok: " + msg);
const VERSION = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const auth = { Authorization: "Bearer " + token };
const framing = { protocolVersion: VERSION,
  clientInfo: { name: "ext-tasks-" + mode, version: "1.0.0" },
  clientCapabilities: { extensions: { [TASKS]: {} } } };
const NAMED = { "tools/call": "name", "tasks/get": "taskId",
  "tasks/update": "taskId", "tasks/cancel": "taskId" };

// One POST: the JSON answer, or the answer at the end of its events.
async function post(msg, extra = {}) {
  const headers = { "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": VERSION, "Mcp-Method": msg.method, ...auth,
    ...extra };
  const key = NAMED[msg.method];
  if (key && msg.params?.[key] !== undefined && !("Mcp-Name" in extra))
    headers["Mcp-Name"] = String(msg.params[key]);
  const r = await fetch(url, { method: "POST", headers,
    body: JSON.stringify(msg) });
  const text = await r.text();
  if (r.headers.get("mcp-session-id")) fail("a 2026-07-28 answer named a session");
  if (!(r.headers.get("content-type") ?? "").startsWith("text/event-stream"))
    return { status: r.status, body: text ? JSON.parse(text) : null };
  const msgs = text.split("\n").filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)));
  return { status: r.status, body: msgs.find((m) => "id" in m && !m.method) };
}

let nextId = 1;
// The extension gives method and params; the host numbers the request.
const rawDispatch = async (request) => {
  const { body } = await post({ jsonrpc: "2.0", id: nextId++, ...request });
  if (body?.error) return { kind: "error", error: body.error };
  return { kind: "result", result: body.result };
};
const meta = (caps = framing.clientCapabilities) => ({
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": framing.clientInfo,
  "io.modelcontextprotocol/clientCapabilities": caps });

async function session() {
  const client = new Client(framing.clientInfo,
    { versionNegotiation: { mode: { pin: VERSION } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: auth } }));
  const caps = client.getServerCapabilities();
  if (JSON.stringify(caps?.extensions?.[TASKS]) !== "{}")
    fail("server/discover's tasks extension: " + JSON.stringify(caps));
  return { client, s: createTaskSessionFromClient(client, {
    endpointId: "cmdgate-test", rawDispatch, v2RequestFraming: framing }) };
}

const text = (res) => JSON.stringify(res?.content ?? res);

if (mode === "run") {
  const { client, s } = await session();
  ok("server/discover advertises " + TASKS);
  const ex = await s.callTool("slow", {}, { task: { preference: "require" } });
  if (ex.kind !== "task") fail("slow was not a task: " + ex.kind);
  const id = ex.handle.taskId;
  const { outcome } = await ex.settle();
  const res = resultFromTaskOutcome(outcome);
  if (!text(res).includes("slow done")) fail("slow's outcome: " + JSON.stringify(outcome));
  ok("slow ran as task " + id + " and completed");
  const quick = await s.callTool("echo", { text: "at once" });
  if (quick.kind !== "immediate") fail("a quick call became a " + quick.kind);
  const qres = resultFromTaskOutcome((await quick.settle()).outcome);
  if (!text(qres).includes("at once")) fail("echo: " + JSON.stringify(qres));
  ok("a quick call is answered at once");

  const hold = await s.callTool("hold", {}, { task: { preference: "require" } });
  if (hold.kind !== "task") fail("hold was not a task");
  await hold.cancel();
  const snap = await s.task(hold.handle.taskId).snapshot();
  if (snap.status !== "cancelled") fail("after cancel: " + JSON.stringify(snap));
  const again = await post({ jsonrpc: "2.0", id: nextId++, method: "tasks/cancel",
    params: { taskId: hold.handle.taskId, _meta: meta() } });
  if (again.body?.result?.resultType !== "complete")
    fail("a second cancel: " + JSON.stringify(again.body));
  ok("hold cancelled; cancelling it again is acknowledged");

  const unknown = await post({ jsonrpc: "2.0", id: nextId++, method: "tasks/get",
    params: { taskId: "t-999999", _meta: meta() } });
  if (unknown.body?.error?.code !== -32602) fail("unknown task: " + JSON.stringify(unknown.body));
  const undeclared = await post({ jsonrpc: "2.0", id: nextId++, method: "tasks/get",
    params: { taskId: id, _meta: meta({}) } });
  if (undeclared.status !== 400 || undeclared.body?.error?.code !== -32021 ||
      !undeclared.body.error.data?.requiredCapabilities?.extensions?.[TASKS])
    fail("tasks/get without the extension: " + JSON.stringify(undeclared));
  const plain = await post({ jsonrpc: "2.0", id: nextId++, method: "tools/call",
    params: { name: "slow", arguments: {}, _meta: meta({}) } });
  if (plain.body?.result?.resultType !== "complete" ||
      !text(plain.body.result).includes("slow done"))
    fail("a call without the extension: " + JSON.stringify(plain.body));
  const old = await post({ jsonrpc: "2.0", id: nextId++, method: "tasks/result",
    params: { taskId: id, _meta: meta() } });
  if (old.status !== 404 || old.body?.error?.code !== -32601)
    fail("tasks/result in 2026-07-28: " + JSON.stringify(old));
  ok("unknown id -32602, undeclared -32021 (400), no task without the " +
    "extension, tasks/result -32601 (404)");

  // A tool's "task": required runs only as a task, forbidden never.
  const mustNo = await post({ jsonrpc: "2.0", id: nextId++, method: "tools/call",
    params: { name: "must", arguments: {}, _meta: meta({}) } });
  if (mustNo.status !== 400 || mustNo.body?.error?.code !== -32021)
    fail("a required task without the extension: " + JSON.stringify(mustNo));
  const must = await post({ jsonrpc: "2.0", id: nextId++, method: "tools/call",
    params: { name: "must", arguments: {}, _meta: meta() } });
  if (must.body?.result?.resultType !== "task")
    fail("a required task: " + JSON.stringify(must.body));
  const never = await post({ jsonrpc: "2.0", id: nextId++, method: "tools/call",
    params: { name: "never", arguments: {}, _meta: meta() } });
  if (never.body?.result?.resultType !== "complete" ||
      !text(never.body.result).includes("never done"))
    fail("a forbidden task: " + JSON.stringify(never.body));
  ok("\"task\": required is a task even when quick (-32021 without the " +
    "extension), forbidden never one even when heavy");

  // subscriptions/listen: acknowledged first, then the task's end.
  const started = await post({ jsonrpc: "2.0", id: nextId++, method: "tools/call",
    params: { name: "slow", arguments: {}, _meta: meta() } });
  const tid = started.body?.result?.taskId;
  if (started.body?.result?.resultType !== "task") fail("slow: " + JSON.stringify(started.body));
  const ac = new AbortController();
  const lr = await fetch(url, { method: "POST", signal: ac.signal, headers: {
    "Content-Type": "application/json", Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": VERSION, "Mcp-Method": "subscriptions/listen", ...auth },
    body: JSON.stringify({ jsonrpc: "2.0", id: "sub-1", method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true, taskIds: [tid, "t-999999"] },
        _meta: meta() } }) });
  const heard = [];
  let buf = "";
  const dec = new TextDecoder();
  for await (const chunk of lr.body) {
    buf += dec.decode(chunk, { stream: true });
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const data = buf.slice(0, i).split("\n").filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6)).join("\n");
      buf = buf.slice(i + 2);
      if (data) heard.push(JSON.parse(data));
    }
    if (heard.some((m) => m.method === "notifications/tasks")) break;
  }
  ac.abort();
  const [ackn, done] = heard;
  if (ackn?.method !== "notifications/subscriptions/acknowledged" ||
      ackn.params._meta?.["io.modelcontextprotocol/subscriptionId"] !== "sub-1" ||
      JSON.stringify(ackn.params.notifications) !==
      JSON.stringify({ toolsListChanged: true, taskIds: [tid] }))
    fail("the acknowledgement: " + JSON.stringify(heard));
  if (done?.params?.taskId !== tid || done.params.status !== "completed" ||
      !text(done.params.result).includes("slow done") ||
      done.params._meta?.["io.modelcontextprotocol/subscriptionId"] !== "sub-1")
    fail("the task's notification: " + JSON.stringify(heard));
  ok("subscriptions/listen: acknowledged (the unknown id left out), then " +
    "notifications/tasks at the task's end");
  await s.close();
  await client.close();
} else if (mode === "run25") {
  // The same client after initialize (2025-11-25): the revision's
  // experimental tasks, through the extension's client.
  const client = new Client(framing.clientInfo);
  await client.connect(new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: auth } }));
  if (client.getNegotiatedProtocolVersion() !== "2025-11-25")
    fail("initialize: " + client.getNegotiatedProtocolVersion());
  const s = createTaskSessionFromClient(client, { endpointId: "cmdgate-test-25" });
  const ex = await s.callTool("slow", {}, { task: { preference: "require" } });
  if (ex.kind !== "task") fail("slow was not a task at 2025-11-25: " + ex.kind);
  const { outcome } = await ex.settle();
  if (!text(resultFromTaskOutcome(outcome)).includes("slow done"))
    fail("slow's outcome at 2025-11-25: " + JSON.stringify(outcome));
  const hold = await s.callTool("hold", {}, { task: { preference: "require" } });
  await hold.cancel();
  const snap = await s.task(hold.handle.taskId).snapshot();
  if (snap.status !== "cancelled") fail("hold at 2025-11-25: " + JSON.stringify(snap));
  ok("2025-11-25 through ext-tasks: task " + ex.handle.taskId +
    " completed, " + hold.handle.taskId + " cancelled");
  await s.close();
  await client.close();
} else if (mode === "start") {
  const { client, s } = await session();
  const first = await s.callTool("blocker", {}, { task: { preference: "require" } });
  const ex = await s.callTool("work", {}, { task: { preference: "require" } });
  if (first.kind !== "task" || ex.kind !== "task") fail("not tasks");
  const snap = await s.task(ex.handle.taskId).snapshot();
  if (snap.status !== "working") fail("work: " + JSON.stringify(snap));
  let reference;
  await ex.handoff((r) => { reference = r; });
  await first.detach();
  console.log(JSON.stringify(reference));
  // Not s.close(): ext-tasks 0.2.2 cancels on close what was handed off.
  await client.close();
  process.exit(0);
} else if (mode === "resume") {
  const { client, s } = await session();
  const ex = await s.resumeTask(JSON.parse(ref));
  const { outcome } = await ex.settle();
  const res = resultFromTaskOutcome(outcome);
  if (!text(res).includes("work done")) fail("resumed: " + JSON.stringify(outcome));
  ok("task " + JSON.parse(ref).taskId + " completed for a new process");
  await s.close();
  await client.close();
} else
  fail("mode " + mode);
