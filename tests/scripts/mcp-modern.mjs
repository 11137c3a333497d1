// The official v2 MCP client (@modelcontextprotocol/client) against
// cmdgated: revision 2026-07-28 over Streamable HTTP and over stdio
// (cmdgate mcp), with no session; its fallback to initialize; and the
// header checks of a 2026-07-28 POST, raw.  Run by tests/mcp-modern.sh
// with the broker's URL, token, port and state dir, and cmdgate.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [url, token, port, stateDir, cmdgate] = process.argv.slice(2);
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
const ok = (msg) => console.log("ok: " + msg);
const VERSION = "2026-07-28";
const auth = { Authorization: "Bearer " + token };

async function exercise(c, how) {
  if (c.getNegotiatedProtocolVersion() !== VERSION)
    fail(how + ": negotiated " + c.getNegotiatedProtocolVersion());
  if (c.getServerVersion()?.name !== "cmdgate")
    fail(how + ": serverInfo " + JSON.stringify(c.getServerVersion()));
  const { tools } = await c.listTools();
  if (!tools.some((t) => t.name === "echo")) fail(how + ": tools " + JSON.stringify(tools));
  const res = await c.callTool({ name: "echo", arguments: { text: "hello " + how } });
  if (res.isError || !res.content?.[0]?.text?.includes("hello " + how))
    fail(how + ": echo " + JSON.stringify(res));
  const progress = [];
  const steps = await c.callTool({ name: "steps", arguments: {} },
    { onprogress: (p) => progress.push(p.progress) });
  if (steps.isError || progress.length < 3 ||
      progress.some((p, i) => i > 0 && !(p > progress[i - 1])))
    fail(how + ": progress " + JSON.stringify(progress));
  ok(how + ": " + VERSION + " negotiated; tools/list, tools/call, " +
    progress.length + " progress notifications");
}

// HTTP, probing with server/discover.
const http = new Client({ name: "modern-http", version: "1.0.0" },
  { versionNegotiation: { mode: "auto" } });
const ht = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } });
await http.connect(ht);
if (ht.sessionId) fail("a 2026-07-28 client got a session: " + ht.sessionId);
await exercise(http, "HTTP");
await http.close();

// stdio through cmdgate mcp (the client probes in a process of its own).
const stdio = new Client({ name: "modern-stdio", version: "1.0.0" },
  { versionNegotiation: { mode: "auto" } });
await stdio.connect(new StdioClientTransport({ command: cmdgate,
  args: ["--port", port, "--state-dir", stateDir, "mcp"] }));
await exercise(stdio, "stdio");
await stdio.close();

// The same client by default (initialize): today's behaviour.
const legacy = new Client({ name: "legacy-http", version: "1.0.0" });
const lt = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } });
await legacy.connect(lt);
if (legacy.getNegotiatedProtocolVersion() !== "2025-11-25" || !lt.sessionId)
  fail("initialize: " + legacy.getNegotiatedProtocolVersion() + " " + lt.sessionId);
const lres = await legacy.callTool({ name: "echo", arguments: { text: "old" } });
if (!lres.content?.[0]?.text?.includes("old")) fail("legacy echo: " + JSON.stringify(lres));
await legacy.close();
ok("initialize still gives 2025-11-25 and a session");

// Raw POSTs: what a 2026-07-28 request's headers must say.
const meta = { "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientCapabilities": {} };
async function raw(msg, headers) {
  const r = await fetch(url, { method: "POST", body: JSON.stringify(msg),
    headers: { "Content-Type": "application/json",
      Accept: "application/json, text/event-stream", ...auth, ...headers } });
  const t = await r.text();
  // An answer not ready at once comes at the end of the request's events.
  const sse = (r.headers.get("content-type") ?? "").startsWith("text/event-stream");
  const body = !t ? null : !sse ? JSON.parse(t) : t.split("\n")
    .filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)))
    .find((m) => "id" in m && !m.method);
  return { status: r.status, body, session: r.headers.get("mcp-session-id") };
}
const call = (name, m = meta) => ({ jsonrpc: "2.0", id: 7, method: "tools/call",
  params: { name, arguments: { text: "x" }, _meta: m } });
const hv = { "MCP-Protocol-Version": VERSION, "Mcp-Method": "tools/call" };
const cases = [
  ["no Mcp-Name", call("echo"), hv, 400, -32020],
  ["another Mcp-Name", call("echo"), { ...hv, "Mcp-Name": "other" }, 400, -32020],
  ["another Mcp-Method", call("echo"), { ...hv, "Mcp-Method": "tools/list",
    "Mcp-Name": "echo" }, 400, -32020],
  ["no MCP-Protocol-Version", call("echo"), { "Mcp-Method": "tools/call",
    "Mcp-Name": "echo" }, 400, -32020],
  ["no clientCapabilities", call("echo", { "io.modelcontextprotocol/protocolVersion":
    VERSION }), { ...hv, "Mcp-Name": "echo" }, 400, -32602],
  ["an unknown version", call("echo", { ...meta,
    "io.modelcontextprotocol/protocolVersion": "1900-01-01" }),
    { "MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "tools/call",
      "Mcp-Name": "echo" }, 400, -32022],
  ["an unknown ticket (-32002 elsewhere)", { jsonrpc: "2.0", id: 9,
    method: "tools/call", params: { name: "poll_job", arguments:
    { ticket: "t-999999" }, _meta: meta } }, { ...hv, "Mcp-Name": "poll_job" },
    200, -32602],
  ["ping, gone in 2026-07-28", { jsonrpc: "2.0", id: 8, method: "ping",
    params: { _meta: meta } }, { "MCP-Protocol-Version": VERSION,
    "Mcp-Method": "ping" }, 404, -32601],
];
for (const [what, body, headers, status, code] of cases) {
  const r = await raw(body, headers);
  if (r.status !== status || r.body?.error?.code !== code)
    fail(what + ": " + r.status + " " + JSON.stringify(r.body));
}
const b64 = await raw(call("echo"), { ...hv, "Mcp-Name": "=?base64?" +
  Buffer.from("echo").toString("base64") + "?=" });
if (b64.status !== 200 || !JSON.stringify(b64.body).includes("\"x\\n\"") || b64.session)
  fail("a base64 Mcp-Name: " + JSON.stringify(b64));
const unsup = await raw(call("echo", { ...meta, "io.modelcontextprotocol/protocolVersion":
  "1900-01-01" }), { "MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "tools/call",
  "Mcp-Name": "echo" });
if (!unsup.body.error.data?.supported?.includes(VERSION) ||
    unsup.body.error.data.requested !== "1900-01-01")
  fail("-32022's data: " + JSON.stringify(unsup.body));
ok(cases.length + " refusals as 2026-07-28 names them; a base64 Mcp-Name, no session");
