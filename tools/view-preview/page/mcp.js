// A small MCP client over Streamable HTTP (fetch): initialize with the MCP Apps extension, then
// requests and notifications. Answers come as one JSON body or as an SSE stream that ends after
// the answer; both are read. The session id and protocol version go on every later request, and
// a session bb has ended (404) is started again once.
class McpClient {
  constructor(url, onLog) {
    this.url = url;
    this.onLog = onLog || (() => {});
    this.sessionId = null;
    this.protocolVersion = null;
    this.nextId = 1;
    this.ready = null;
    this.serverInfo = null;
  }

  connect() {
    if (!this.ready) {
      this.ready = this.initialize().catch((err) => { this.ready = null; throw err; });
    }
    return this.ready;
  }

  async initialize() {
    this.sessionId = null;
    this.protocolVersion = null;
    const answer = await this.post({
      jsonrpc: "2.0", id: this.nextId++, method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
        clientInfo: { name: "bb-view-preview", version: "0.1.0" },
      },
    });
    if (answer.error) throw new Error(`initialize: ${answer.error.message}`);
    this.protocolVersion = answer.result.protocolVersion;
    this.serverInfo = answer.result;
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    return answer.result;
  }

  // A request: its result, or an Error carrying the JSON-RPC error as `rpc`.
  async request(method, params) {
    await this.connect();
    let answer;
    try {
      answer = await this.post({ jsonrpc: "2.0", id: this.nextId++, method, params });
    } catch (err) {
      if (err.status !== 404) throw err;
      this.ready = null;
      await this.connect();
      answer = await this.post({ jsonrpc: "2.0", id: this.nextId++, method, params });
    }
    if (answer.error) {
      const err = new Error(`${method}: ${answer.error.message}`);
      err.rpc = answer.error;
      throw err;
    }
    return answer.result;
  }

  async post(message) {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    if (this.sessionId) headers["mcp-session-id"] = this.sessionId;
    if (this.protocolVersion) headers["mcp-protocol-version"] = this.protocolVersion;
    const res = await fetch(this.url, { method: "POST", headers, body: JSON.stringify(message) });
    const session = res.headers.get("mcp-session-id");
    if (session) this.sessionId = session;
    if (res.status === 202) return null;
    const text = await res.text();
    if (!res.ok) {
      const err = new Error(`bb answered ${res.status}: ${text.slice(0, 300)}`);
      err.status = res.status;
      throw err;
    }
    const type = res.headers.get("content-type") || "";
    if (!type.includes("text/event-stream")) return JSON.parse(text);
    // SSE: each event's data lines form one JSON-RPC message; the answer is the one with our id.
    let found = null;
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
      if (!data) continue;
      const msg = JSON.parse(data);
      if (msg.id !== undefined && msg.id === message.id && msg.method === undefined) found = msg;
      else this.onLog("server", msg.method || "message", msg.params);
    }
    if (!found) throw new Error("bb's event stream ended without the answer");
    return found;
  }
}
