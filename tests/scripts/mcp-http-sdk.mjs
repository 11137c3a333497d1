// The official MCP TypeScript SDK's Streamable HTTP client against
// cmdgated's --http endpoint: it lists and calls tools, receives a tool's
// progress and log lines, two clients in parallel each get their own
// answers, and a client without the token is refused.  Run by
// tests/mcp-http-sdk.sh with the broker's URL and token.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, token] = process.argv.slice(2);
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
const ok = (msg) => console.log("ok: " + msg);

async function connect(name, tok) {
  const headers = tok === undefined ? {} : { Authorization: "Bearer " + tok };
  const transport = new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers } });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

const a = await connect("sdk-http-a", token);
if (a.client.getServerVersion()?.name !== "cmdgate")
  fail("serverInfo.name is " + a.client.getServerVersion()?.name);
if (!a.transport.sessionId) fail("no Mcp-Session-Id");
ok("initialized, session " + a.transport.sessionId.length + " characters");

const { tools } = await a.client.listTools();
const names = tools.map((t) => t.name);
for (const want of ["echo", "steps", "poll_job", "queue_status"])
  if (!names.includes(want)) fail("tools/list lacks " + want + ": " + names);
ok("tools/list: " + names.length + " tools");

// Progress: the tool's own lines on its notify fd, and the broker's.
const progress = [];
const res = await a.client.request({ method: "tools/call", params:
  { name: "steps", arguments: {} } }, CallToolResultSchema,
  { onprogress: (p) => progress.push(p) });
if (res.isError) fail("steps failed: " + JSON.stringify(res));
if (progress.length < 3) fail("progress notifications: " + JSON.stringify(progress));
for (let i = 1; i < progress.length; i++)
  if (!(progress[i].progress > progress[i - 1].progress))
    fail("progress does not increase: " + JSON.stringify(progress));
if (!progress.some((p) => p.message === "second step"))
  fail("the tool's message is missing: " + JSON.stringify(progress));
ok(progress.length + " progress notifications, increasing");

// Logging: at info, the tool's info line comes; its debug line does not.
const logs = [];
a.client.setNotificationHandler(LoggingMessageNotificationSchema,
  (n) => logs.push(n.params));
await a.client.setLoggingLevel("info");
const lres = await a.client.callTool({ name: "logs", arguments: {} });
if (lres.isError) fail("logs failed: " + JSON.stringify(lres));
const texts = logs.map((l) => JSON.stringify(l));
if (!texts.some((t) => t.includes("an info line"))) fail("no info line: " + texts);
if (texts.some((t) => t.includes("a debug line"))) fail("a debug line at info: " + texts);
ok(logs.length + " log notifications at info and above");

// Two clients in parallel, each with its own answers.
const b = await connect("sdk-http-b", token);
const calls = [];
for (let i = 0; i < 4; i++)
  for (const [who, c] of [["a", a.client], ["b", b.client]])
    calls.push(c.callTool({ name: "echo", arguments: { text: who + i } })
      .then((r) => [who + i, r]));
for (const [want, r] of await Promise.all(calls)) {
  if (r.isError) fail(want + ": " + JSON.stringify(r));
  // The text is what the tool printed, its own and nothing else.
  if (r.content[0].text !== want + "\n") fail(want + ": " + r.content[0].text);
}
ok("two clients in parallel: 8 calls, each its own answer");

// Without the token, or with a wrong one: refused, saying so (issue
// 35.3), and not with 401, on which a client with an OAuth provider
// would start a flow the broker does not speak.
const oauth = {
  get redirectUrl() { return "http://127.0.0.1:1/callback"; },
  get clientMetadata() { return { redirect_uris: [this.redirectUrl] }; },
  clientInformation() { return undefined; },
  tokens() { return undefined; },
  saveTokens() {},
  redirectToAuthorization() { fail("an OAuth flow was started"); },
  saveCodeVerifier() {},
  codeVerifier() { return ""; },
};
for (const [tok, want] of [[undefined, "missing token"], ["nope", "wrong token"]]) {
  let why = "";
  const headers = tok === undefined ? {} : { Authorization: "Bearer " + tok };
  const transport = new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers }, authProvider: oauth });
  try { await new Client({ name: "sdk-http-anon", version: "1.0.0" }).connect(transport); }
  catch (e) { why = String(e); }
  if (!why.includes(want)) fail("token " + tok + ": " + (why || "let in"));
}
ok("no token and a wrong one: refused, saying which");

await b.client.close();
await a.transport.terminateSession();
await a.client.close();
ok("sessions ended");
