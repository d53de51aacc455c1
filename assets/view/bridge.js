// The MCP Apps host bridge (stable spec 2026-01-26), written by hand: JSON-RPC 2.0 over
// postMessage with the parent window, accepting only messages whose source is the parent.
const bridge = (() => {
  let nextId = 1;
  let closed = false;
  const waiting = new Map();
  const handlers = new Map();
  function post(message) {
    if (!closed) window.parent.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*");
  }
  function request(method, params) {
    const id = nextId++;
    post({ id, method, params });
    return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
  }
  function notify(method, params) { post({ method, params }); }
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent || closed) return;
    const msg = event.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
    if (msg.method === undefined) {
      const w = waiting.get(msg.id);
      if (!w) return;
      waiting.delete(msg.id);
      if (msg.error) w.reject(msg.error); else w.resolve(msg.result);
      return;
    }
    const handle = handlers.get(msg.method);
    let answer;
    try {
      answer = handle ? handle(msg.params || {}) : undefined;
    } catch (err) {
      if (msg.id !== undefined) post({ id: msg.id, error: { code: -32603, message: String(err && err.message) } });
      return;
    }
    if (msg.id !== undefined) {
      if (handle) post({ id: msg.id, result: answer || {} });
      else post({ id: msg.id, error: { code: -32601, message: "Method not found" } });
    }
  });
  function close() { closed = true; waiting.clear(); }
  return { request, notify, close, on: (method, fn) => handlers.set(method, fn) };
})();
