// server-everything's MCP server behind the official SDK's Streamable
// HTTP transport with enableJsonResponse: every answer application/json
// instead of an event stream, sessions as in its own streamableHttp.js.
// A few tool names get answers of our own making instead, to test what
// the client does with them; "forget-session" forgets the session first
// (once), so that the server answers 404.  For tests/mcp-http.sh: listens on
// 127.0.0.1 and a free port, writes "LISTENING <port>" to descriptor 3
// once it does.
import fs from "node:fs";
import http from "node:http";
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createServer } from "@modelcontextprotocol/server-everything/dist/server/index.js";

const sessions = new Map();
let forgotten = false;	// "forget-session" forgets the session once

async function body(req) {
	const chunks = [];
	for await (const c of req)
		chunks.push(c);
	return chunks.length ? JSON.parse(Buffer.concat(chunks)) : undefined;
}

// The answers of our own making, by tool name: [status, type, body].
const odd = {
	"jsonrpc-error": (id) => [200, "application/json", JSON.stringify({
		jsonrpc: "2.0", id,
		error: { code: -32001, message: "refused by the test" } })],
	"http-500": (id) => [500, "application/json", JSON.stringify({
		jsonrpc: "2.0", id,
		error: { code: -32603, message: "internal error" } })],
	"http-503": () => [503, "text/plain", "busy"],
	"not-json": () => [200, "text/plain", "hello"],
	"bad-json": () => [200, "application/json", "{\"jsonrpc\":"],
	"null-id": () => [200, "application/json", JSON.stringify({
		jsonrpc: "2.0", id: null,
		error: { code: -32700, message: "parse error" } })],
	"other-id": (id) => [200, "application/json", JSON.stringify({
		jsonrpc: "2.0", id: id + 1000, result: {} })],
	"too-long": (id) => [200, "application/json", JSON.stringify({
		jsonrpc: "2.0", id,
		result: { x: "x".repeat(64 * 1024 * 1024) } })],
};

async function serve(req, res) {
	const sid = req.headers["mcp-session-id"];
	const msg = req.method === "POST" ? await body(req) : undefined;
	if (msg?.method === "tools/call" &&
	    msg.params?.name === "forget-session" && !forgotten) {
		// As after a restart: the session is unknown, the call not run.
		forgotten = true;
		sessions.get(sid)?.close();
		sessions.delete(sid);
		res.writeHead(404).end();
		return;
	}
	if (msg?.method === "tools/call" && msg.params?.name === "hang-up") {
		req.socket.destroy();	// the request read, never answered
		return;
	}
	const make = msg?.method === "tools/call" && odd[msg.params?.name];
	if (make) {
		const [status, type, text] = make(msg.id);
		res.writeHead(status, { "Content-Type": type }).end(text);
		return;
	}
	let transport = sid ? sessions.get(sid) : undefined;
	if (sid && !transport) {
		res.writeHead(404).end();
		return;
	}
	if (!transport) {
		const { server } = createServer();
		transport = new StreamableHTTPServerTransport({
			sessionIdGenerator: () => randomUUID(),
			enableJsonResponse: true,
			onsessioninitialized: (id) => sessions.set(id, transport),
		});
		transport.onclose = () => sessions.delete(transport.sessionId);
		await server.connect(transport);
	}
	await transport.handleRequest(req, res, msg);
}

const srv = http.createServer((req, res) => {
	serve(req, res).catch((e) => {
		console.error(e);
		if (!res.headersSent)
			res.writeHead(500).end();
	});
});
srv.listen(0, "127.0.0.1", () => {
	fs.writeSync(3, `LISTENING ${srv.address().port}\n`);
	fs.closeSync(3);
});
