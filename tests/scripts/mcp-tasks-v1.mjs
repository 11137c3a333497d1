// The official MCP TypeScript SDK (v1)'s experimental task API against
// cmdgated, over HTTP and over stdio (cmdgate mcp), revision 2025-11-25: the broker advertises tasks, its
// table tools take them, a slow call runs as a task polled to its
// result, tasks/list shows it, tasks/result gives it again with its task
// named, its end is told (notifications/tasks/status), a task is
// cancelled, and an unknown id is refused with -32602.
// Run by tests/mcp-tasks.sh with the broker's URL and token, or with
// cmdgate, the broker's port and its state dir.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [how, ...args] = process.argv.slice(2);
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
const ok = (msg) => console.log("ok: " + how + ": " + msg);
const RELATED = "io.modelcontextprotocol/related-task";

// "http URL TOKEN", or "stdio CMDGATE PORT STATE_DIR" (cmdgate mcp).
const transport = how === "http" ?
  new StreamableHTTPClientTransport(new URL(args[0]),
    { requestInit: { headers: { Authorization: "Bearer " + args[1] } } }) :
  new StdioClientTransport({ command: args[0],
    args: ["--port", args[1], "--state-dir", args[2], "mcp"] });
const client = new Client({ name: "sdk-tasks-v1", version: "1.0.0" },
  { defaultTaskPollInterval: 100 });
await client.connect(transport);
const caps = client.getServerCapabilities();
if (!caps?.tasks?.requests?.tools?.call || !caps.tasks.list || !caps.tasks.cancel)
  fail("tasks capability: " + JSON.stringify(caps?.tasks));
ok("initialize advertises tasks (tools/call, list, cancel)");

const statuses = [];
client.setNotificationHandler(TaskStatusNotificationSchema,
  (n) => statuses.push(n.params));
const { tools } = await client.listTools();
const slow = tools.find((t) => t.name === "slow");
if (slow?.execution?.taskSupport !== "optional")
  fail("slow's execution: " + JSON.stringify(slow?.execution));
const must = tools.find((t) => t.name === "must");
if (must?.execution?.taskSupport !== "required")
  fail("must's execution: " + JSON.stringify(must?.execution));
try {
  await client.request({ method: "tools/call", params: { name: "must",
    arguments: {} } }, CallToolResultSchema);
  fail("a task-only tool answered a call without a task");
} catch (e) {
  if (e.code !== -32602 || !String(e.message).includes("runs only as a task"))
    fail("must without a task: " + e);
}
let mustResult;
for await (const m of client.experimental.tasks.callToolStream(
    { name: "must", arguments: {} }, CallToolResultSchema))
  if (m.type === "result") mustResult = m.result;
if (!JSON.stringify(mustResult?.content).includes("must done"))
  fail("must as a task: " + JSON.stringify(mustResult));
ok("table tools take tasks (execution.taskSupport optional; a task-only " +
  "tool's required, refused without one)");

// A slow call as a task: created, polled, its result.
const seen = [];
let taskId, result;
for await (const m of client.experimental.tasks.callToolStream(
    { name: "slow", arguments: {} }, CallToolResultSchema)) {
  seen.push(m.type);
  if (m.type === "taskCreated") taskId = m.task.taskId;
  if (m.type === "result") result = m.result;
  if (m.type === "error") fail("the task failed: " + m.error);
}
if (!/^t-\d+$/.test(taskId ?? "")) fail("task id: " + taskId);
if (seen[0] !== "taskCreated" || !seen.includes("taskStatus"))
  fail("messages: " + seen);
if (result?.isError || !JSON.stringify(result?.content).includes("slow done"))
  fail("result: " + JSON.stringify(result));
ok("slow ran as task " + taskId + " (" + seen.join(", ") + ")");

const got = await client.experimental.tasks.getTask(taskId);
if (got.status !== "completed" || typeof got.ttl !== "number" ||
    !got.createdAt || !got.lastUpdatedAt)
  fail("tasks/get of the completed task: " + JSON.stringify(got));
const again = await client.experimental.tasks.getTaskResult(taskId,
  CallToolResultSchema);
if (again._meta?.[RELATED]?.taskId !== taskId ||
    !JSON.stringify(again.content).includes("slow done"))
  fail("tasks/result: " + JSON.stringify(again));
ok("tasks/get completed, tasks/result names its task");

// Its end was told on the session's own stream (GET), as it came.
for (let i = 0; i < 100 && !statuses.some((t) => t.taskId === taskId); i++)
  await client.experimental.tasks.getTask(taskId);
const told = statuses.find((t) => t.taskId === taskId);
if (told?.status !== "completed")
  fail("notifications/tasks/status: " + JSON.stringify(statuses));
ok("notifications/tasks/status told its end");

const listed = await client.experimental.tasks.listTasks();
if (!listed.tasks.some((t) => t.taskId === taskId))
  fail("tasks/list lacks " + taskId + ": " + JSON.stringify(listed));
ok("tasks/list shows it among " + listed.tasks.length);

// A task cancelled while it runs; cancelling it again is refused.
let holdId;
for await (const m of client.experimental.tasks.callToolStream(
    { name: "hold", arguments: {} }, CallToolResultSchema)) {
  if (m.type === "taskCreated") { holdId = m.task.taskId; break; }
}
const cancelled = await client.experimental.tasks.cancelTask(holdId);
if (cancelled.status !== "cancelled")
  fail("tasks/cancel: " + JSON.stringify(cancelled));
const after = await client.experimental.tasks.getTask(holdId);
if (after.status !== "cancelled") fail("after cancel: " + JSON.stringify(after));
try {
  await client.experimental.tasks.cancelTask(holdId);
  fail("a cancelled task was cancelled again");
} catch (e) {
  if (e.code !== -32602) fail("second cancel: " + e);
}
ok("hold cancelled (" + holdId + "); a second cancel refused");

try {
  await client.experimental.tasks.getTask("t-999999");
  fail("an unknown task was found");
} catch (e) {
  if (e.code !== -32602) fail("unknown task: code " + e.code + ": " + e);
}
ok("an unknown task id: -32602");
await client.close();
