// Preloaded (node --import) into the MCP server that tests/mcp-http.sh
// starts: whatever port it is told (PORT=0: a free one), it listens on
// LOOPBACK_HOST (127.0.0.1 unless set) only, and once it does, writes
// "LISTENING <port>" to descriptor LISTENING_FD (1 unless set) and closes
// it, so that the test waits for that line instead of sleeping.
import fs from "node:fs";
import net from "node:net";

const host = process.env.LOOPBACK_HOST || "127.0.0.1";
const fd = Number(process.env.LISTENING_FD || 1);
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
	if (typeof args[0] !== "number" && typeof args[0] !== "string")
		return listen.apply(this, args);
	const cb = args.find((a) => typeof a === "function");
	this.once("listening", () => {
		fs.writeSync(fd, `LISTENING ${this.address().port}\n`);
		if (fd !== 1)
			fs.closeSync(fd);
	});
	return listen.call(this, Number(args[0]), host, ...(cb ? [cb] : []));
};
