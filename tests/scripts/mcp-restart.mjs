// The broker killed and restarted under "cmdgate mcp", the official MCP
// TypeScript SDK on the other side: a tools/call in flight is answered
// and its tool ran once, tools/list works after the restart, and the
// bridge stays.  Run by tests/mcp-restart.sh, which gives the paths.
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import net from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [cmdgated, cmdgate, dir, tools, ranFile] = process.argv.slice(2);
const STEP_MS = 20000;	// bound of every wait below
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
// Whatever ends this test (a failure, a timeout, a signal) ends its
// broker too: the latest one started.
let broker = null;
process.on("exit", () => { broker?.kill("SIGKILL"); });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"])
  process.on(sig, () => process.exit(1));
const bounded = (p, what) => Promise.race([p, new Promise((_, no) =>
  setTimeout(() => no(new Error("timed out: " + what)), STEP_MS).unref())]);

// A port free now, for both lives of the broker.
async function freePort() {
  const s = net.createServer().listen(0, "127.0.0.1");
  await once(s, "listening");
  const { port } = s.address();
  s.close();
  await once(s, "close");
  return port;
}

// cmdgated on port and the state dir; resolves once it says it is ready.
async function startBroker(port) {
  const b = spawn(cmdgated, ["--listen", "127.0.0.1:" + port,
    "--state-dir", dir + "/state", "--tools", tools],
    { stdio: ["ignore", "ignore", "pipe"] });
  broker = b;
  let log = "";
  const ready = new Promise((ok, no) => {
    b.stderr.on("data", (d) => { log += d; if (/ ready: /.test(log)) ok(); });
    b.on("exit", (c, s) => no(new Error("cmdgated exited " + (c ?? s) + ": " + log)));
  });
  await bounded(ready, "cmdgated ready");
  return b;
}

async function killBroker(b) {
  const gone = once(b, "exit");
  b.kill("SIGKILL");
  await bounded(gone, "cmdgated killed");
}

// Resolves once the slow tool has written its line (it has started).
function toolStarted() {
  return bounded(new Promise((ok) => {
    const look = () => fs.existsSync(ranFile) && fs.readFileSync(ranFile, "utf8").includes("\n");
    if (look()) return ok();
    const w = fs.watch(dir, () => { if (look()) { w.close(); ok(); } });
  }), "the slow tool starts");
}

const port = await freePort();
broker = await startBroker(port);
const transport = new StdioClientTransport({
  command: cmdgate,
  args: ["--port", String(port), "--state-dir", dir + "/state", "mcp"],
  stderr: "pipe",
});
let bridgeErr = "";
transport.stderr.on("data", (d) => { bridgeErr += d; });
let bridgeExited = false;
const client = new Client({ name: "cmdgate-restart-test", version: "1.0.0" });
client.onclose = () => { bridgeExited = true; };
await bounded(client.connect(transport), "initialize");
transport._process?.on("exit", () => { bridgeExited = true; });

const before = (await client.listTools()).tools.map((t) => t.name).sort();
if (!before.includes("slow")) fail("tools/list lacks slow: " + before);

// The call in flight when the broker dies.
const call = client.callTool({ name: "slow", arguments: {} }, undefined,
  { timeout: 60000 });
await toolStarted();
await killBroker(broker);
broker = await startBroker(port);
const res = await bounded(call, "the call in flight is answered");
const job = res.structuredContent;
if (!/^t-\d{6}$/.test(job?.ticket ?? "")) fail("no job in the answer: " + JSON.stringify(res));
if (job.ticket !== "t-000000") fail("the call made another job: " + JSON.stringify(res));
const lines = fs.readFileSync(ranFile, "utf8").split("\n").filter((l) => l !== "");
if (lines.length !== 1) fail("the tool ran " + lines.length + " times");

const after = (await bounded(client.listTools(), "tools/list after")).tools.map((t) => t.name).sort();
if (JSON.stringify(after) !== JSON.stringify(before)) fail("tools/list changed: " + after);
const echo = await bounded(client.callTool({ name: "echo", arguments: { text: "back again" } }), "echo");
if (echo.isError || !echo.content?.[0]?.text?.includes("back again")) fail("echo: " + JSON.stringify(echo));
if (bridgeExited) fail("the bridge exited");

const lost = bridgeErr.match(/broker lost/g) ?? [];
if (lost.length !== 1 || !/reconnected after \d+ s\n/.test(bridgeErr))
  fail("stderr is not one line for the outage: " + JSON.stringify(bridgeErr));
await client.close();
await killBroker(broker);
console.log("cmdgate mcp across a broker restart: the call in flight (" +
  job.ticket + ", " + job.status + ") answered, its tool ran once");
