// An MCP client nobody here wrote: the official TypeScript SDK lists the
// tools and calls one through "cmdgate mcp".  Run by tests/mcp-sdk.sh.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [cmdgate, port] = process.argv.slice(2);
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };

// The SDK passes the bridge only a few environment variables, so name the
// state dir (where the broker made its token) as mcp-config would.
const transport = new StdioClientTransport({
  command: cmdgate,
  args: ["--port", port, "--state-dir", process.env.CMDGATE_STATE_DIR, "mcp"],
  stderr: "inherit",
});
const client = new Client({ name: "cmdgate-sdk-test", version: "1.0.0" });
await client.connect(transport);

const info = client.getServerVersion();
if (info?.name !== "cmdgate") fail("serverInfo.name is " + info?.name);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
for (const want of ["echo", "run_tests", "bare", "untyped", "poll_job", "wait_job", "cancel_job", "queue_status"])
  if (!names.includes(want)) fail("tools/list lacks " + want + ": " + names);
for (const t of tools)
  if (t.inputSchema?.type !== "object") fail(t.name + ": inputSchema.type is " + t.inputSchema?.type);

const res = await client.callTool({ name: "echo", arguments: { text: "from the sdk" } });
if (res.isError) fail("echo failed: " + JSON.stringify(res));
if (res.structuredContent?.status !== "done") fail("job not done: " + JSON.stringify(res));
// What an agent reads is the tool's output; the ticket rides in _meta.
if (res.content?.[0]?.text !== "from the sdk\n") fail("the text is not the output: " + JSON.stringify(res));
if (!/^t-[0-9]{6}$/.test(res._meta?.["cmdgate/ticket"] ?? "")) fail("no ticket in _meta: " + JSON.stringify(res));

// A failure is isError, with why as its text.
const bad = await client.callTool({ name: "fails", arguments: {} });
if (!bad.isError || bad.content?.[0]?.text !== "fails failed: exited with status 3\nstderr:\nno such thing\n")
  fail("a failure does not say why: " + JSON.stringify(bad));

// A bad argument: a JSON-RPC error whose message says why (issue 35.2).
let why = "";
try { await client.callTool({ name: "echo", arguments: { text: 5 } }); }
catch (e) { why = e.message; }
if (!why.includes("echo: params.text must be string")) fail("a bad argument says: " + why);

const q = await client.callTool({ name: "queue_status", arguments: {} });
if (q.isError || typeof q.structuredContent?.queued !== "number") fail("queue_status: " + JSON.stringify(q));

let rejected = false;
try { await client.callTool({ name: "no_such_tool", arguments: {} }); }
catch (e) { rejected = true; }
if (!rejected) fail("an unknown tool was not a JSON-RPC error");

await client.close();
console.log("MCP SDK client: " + names.length + " tools listed, echo called through cmdgate mcp");
