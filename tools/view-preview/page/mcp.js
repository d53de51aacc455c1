// A small MCP client over Streamable HTTP (fetch): initialize with the MCP Apps extension and form
// elicitation, then requests and notifications. Answers come as one JSON body or as an SSE stream
// that ends after the answer; the stream is read as it comes. A request bb sends on that stream
// (elicitation/create: bb asks the person before a tool that merges or cannot be undone) goes to
// `onRequest(method, params)`, and its answer is POSTed back with the session id (bb answers 202)
// while the stream stays open for the call's own answer. The session id and protocol version go on
// every later request, and a session bb has ended (404) is started again once.
class McpClient {
  constructor(url, onLog, onRequest) {
    this.url = url;
    this.onLog = onLog || (() => {});
    this.onRequest = onRequest || (async (method) => { throw { code: -32601, message: `Method not found: ${method}` }; });
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
        capabilities: { elicitation: { form: {} }, extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
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
    if (!res.ok) {
      const text = await res.text();
      const err = new Error(`bb answered ${res.status}: ${text.slice(0, 300)}`);
      err.status = res.status;
      throw err;
    }
    const type = res.headers.get("content-type") || "";
    if (!type.includes("text/event-stream")) return JSON.parse(await res.text());
    // SSE, read as it comes: each event's data lines form one JSON-RPC message; the answer is the one
    // with our id. bb's own requests on the stream are answered while it stays open.
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const events = buffer.split(/\r?\n\r?\n/);
      buffer = done ? "" : events.pop();
      for (const event of events) {
        const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
        if (!data) continue;
        const msg = JSON.parse(data);
        if (msg.id !== undefined && msg.id === message.id && msg.method === undefined) {
          reader.cancel().catch(() => {});
          return msg;
        }
        if (msg.method !== undefined && msg.id !== undefined) this.answer(msg);
        else this.onLog("server", msg.method || "message", msg.params);
      }
      if (done) break;
    }
    throw new Error("bb's event stream ended without the answer");
  }

  // Answers a request bb sent (elicitation/create) with a POST of its own.
  answer(msg) {
    this.onLog("server", msg.method, msg.params);
    Promise.resolve()
      .then(() => this.onRequest(msg.method, msg.params || {}))
      .then((result) => ({ jsonrpc: "2.0", id: msg.id, result }),
        (err) => ({ jsonrpc: "2.0", id: msg.id, error: { code: (err && err.code) || -32603, message: String((err && err.message) || err) } }))
      .then((reply) => { this.onLog("client", `answer to ${msg.method}`, reply.result || reply.error); return this.post(reply); })
      .catch((err) => this.onLog("client", `answer to ${msg.method} failed`, String(err.message || err)));
  }
}
