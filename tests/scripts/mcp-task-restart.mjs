// A 2026-07-28 task outlives a kill -9 of the broker and the client that
// made it: one client process (mcp-modern-tasks.mjs start) makes a task
// whose heavy job waits behind another, hands off its reference and exits;
// the broker is killed (SIGKILL) and started again on the same state dir
// and port; a new client process (mcp-modern-tasks.mjs resume) gets the
// task by its id and its result once the job has run (once).  Run by
// tests/mcp-modern.sh, which gives the paths.
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import net from "node:net";

const [cmdgated, dir, tools, script, ranFile] = process.argv.slice(2);
const STEP_MS = 30000;	// bound of every wait below
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
let broker = null;
process.on("exit", () => { broker?.kill("SIGKILL"); });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"])
  process.on(sig, () => process.exit(1));
const bounded = (p, what) => Promise.race([p, new Promise((_, no) =>
  setTimeout(() => no(new Error("timed out: " + what)), STEP_MS).unref())]);

async function freePort() {
  const s = net.createServer().listen(0, "127.0.0.1");
  await once(s, "listening");
  const { port } = s.address();
  s.close();
  await once(s, "close");
  return port;
}

async function startBroker(port) {
  const b = spawn(cmdgated, ["--listen", "127.0.0.1:0", "--socket",
    dir + "/sock", "--http",
    "127.0.0.1:" + port, "--state-dir", dir + "/state", "--tools", tools],
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

// A client process: its standard output, once it exited 0.
async function client(...args) {
  const c = spawn(process.execPath, [script, ...args],
    { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  c.stdout.on("data", (d) => { out += d; });
  const [code] = await bounded(once(c, "exit"), "client " + args[0]);
  if (code !== 0) fail("client " + args[0] + " exited " + code + ": " + out);
  return out;
}

const port = await freePort();
const url = "http://127.0.0.1:" + port + "/mcp";
broker = await startBroker(port);
const token = fs.readFileSync(dir + "/state/token", "utf8").trim();
const ref = (await client("start", url, token)).trim();
if (!JSON.parse(ref).taskId) fail("no reference: " + ref);
const gone = once(broker, "exit");
broker.kill("SIGKILL");
await bounded(gone, "cmdgated killed");
broker = await startBroker(port);
process.stdout.write(await client("resume", url, token, ref));
const runs = fs.readFileSync(ranFile, "utf8").split("\n").filter((l) => l);
if (runs.length !== 1) fail("the task's job ran " + runs.length + " times");
const down = once(broker, "exit");
broker.kill("SIGTERM");
await bounded(down, "cmdgated stopped");
broker = null;
console.log("ok: the task's job ran once, across the restart");
