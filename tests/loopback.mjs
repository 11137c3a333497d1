// Preloaded (node --import) into the MCP server that tests/mcp-http.sh
// starts: whatever port it is told, it listens on 127.0.0.1 only, and
// prints "LISTENING <port>" on standard output once it does, so that the
// test waits for that line instead of sleeping (PORT=0: a free port).
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
	if (typeof args[0] === "number" || typeof args[0] === "string") {
		const cb = args.find((a) => typeof a === "function");
		this.once("listening", () =>
			console.log(`LISTENING ${this.address().port}`));
		return listen.call(this, Number(args[0]), "127.0.0.1",
			...(cb ? [cb] : []));
	}
	return listen.apply(this, args);
};
