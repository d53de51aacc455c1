// The host side of the MCP Apps bridge (stable spec 2026-01-26), written by hand: one view at a
// time in an iframe sandboxed with allow-scripts only (an opaque origin), JSON-RPC 2.0 over
// postMessage, accepting only messages whose source is that iframe's window.
const APPS_PROTOCOL = "2026-01-26";
// What hosts put around a view: the reference host's default policy, so a view that would be
// blocked in a real host is blocked here too.
const VIEW_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'";
const TEARDOWN_WAIT_MS = 1000;

class ViewHost {
  // box: the element the iframe goes in; client: an McpClient; log(direction, method, params);
  // onModel(kind, params): ui/update-model-context and ui/message; context: the initial hostContext.
  constructor({ box, client, log, onModel, onLayout, context }) {
    Object.assign(this, { box, client, log, onModel, onLayout: onLayout || (() => {}) });
    this.context = Object.assign({ displayMode: "inline", availableDisplayModes: ["inline", "fullscreen"] }, context);
    this.view = null;
    // Views sent ui/resource-teardown and not yet removed: their answer is still read.
    this.closing = new Set();
    window.addEventListener("message", (event) => this.receive(event));
    window.addEventListener("resize", () => {
      const now = this.dimensions();
      if (JSON.stringify(now) !== JSON.stringify(this.context.containerDimensions)) this.changeContext({ containerDimensions: now });
    });
  }

  // Mounts a view: `html` from resources/read, the show call's `args`, and the promise of its result.
  mount(html, args, result, tool) {
    const frame = el("iframe", { sandbox: "allow-scripts", title: "bb view", class: "view-frame" });
    const view = { frame, args, result, initialized: false, nextId: 1, waiting: new Map(), gone: false };
    this.view = view;
    this.context.toolInfo = { id: `preview-${Date.now()}`, tool: tool || { name: "show" } };
    frame.style.height = "120px";
    this.box.replaceChildren(frame);
    frame.srcdoc = withCsp(html);
    this.layout();
    return view;
  }

  // Sends ui/resource-teardown to the mounted view, waits a moment for its answer, and removes it.
  async teardown() {
    const view = this.view;
    if (!view) return;
    this.view = null;
    if (view.initialized) {
      this.closing.add(view);
      const answered = this.request(view, "ui/resource-teardown", {});
      await Promise.race([answered.catch(() => {}), new Promise((r) => setTimeout(r, TEARDOWN_WAIT_MS))]);
      this.closing.delete(view);
    }
    view.gone = true;
    view.frame.remove();
  }

  // Merges a partial host context and tells the view (once it is initialized).
  changeContext(part) {
    Object.assign(this.context, part);
    this.layout();
    const view = this.view;
    if (view && view.initialized) this.notify(view, "ui/notifications/host-context-changed", part);
  }

  setDisplayMode(mode) {
    if (!this.context.availableDisplayModes.includes(mode)) return this.context.displayMode;
    this.context.displayMode = mode;
    this.layout();
    this.changeContext({ displayMode: mode, containerDimensions: this.dimensions() });
    return mode;
  }

  dimensions() {
    if (this.context.displayMode === "fullscreen") return { width: window.innerWidth, height: window.innerHeight };
    return { width: Math.max(200, this.box.clientWidth || 700), maxHeight: 800 };
  }

  layout() {
    const full = this.context.displayMode === "fullscreen";
    this.box.classList.toggle("fullscreen", full);
    this.box.classList.toggle("inline", !full);
    if (this.view && full) this.view.frame.style.height = "100%";
    else if (this.view && this.view.height) this.view.frame.style.height = `${this.view.height}px`;
    this.onLayout(this.context.displayMode);
  }

  post(view, message) {
    if (view.gone || !view.frame.contentWindow) return;
    // The frame's origin is opaque ("null"), so the target origin can only be "*".
    view.frame.contentWindow.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*");
  }

  notify(view, method, params) {
    this.log("host → view", method, params);
    this.post(view, { method, params });
  }

  request(view, method, params) {
    const id = `host-${view.nextId++}`;
    this.log("host → view", method, params);
    this.post(view, { id, method, params });
    return new Promise((resolve, reject) => view.waiting.set(id, { resolve, reject }));
  }

  receive(event) {
    const from = (v) => v && !v.gone && event.source === v.frame.contentWindow;
    const closing = [...this.closing].find(from);
    const view = from(this.view) ? this.view : closing;
    if (!view) return;
    const msg = event.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
    // A view being torn down may only answer; it asks nothing more.
    if (view === closing && msg.method !== undefined) return;
    if (msg.method === undefined) {
      const w = view.waiting.get(msg.id);
      if (!w) return;
      view.waiting.delete(msg.id);
      this.log("view → host", "answer", msg.error || msg.result);
      if (msg.error) w.reject(msg.error); else w.resolve(msg.result);
      return;
    }
    this.log("view → host", msg.method, msg.params);
    if (msg.id === undefined) {
      this.onNotification(view, msg.method, msg.params || {});
      return;
    }
    Promise.resolve()
      .then(() => this.onRequest(view, msg.method, msg.params || {}))
      .then(
        (result) => this.post(view, { id: msg.id, result }),
        (err) => this.post(view, { id: msg.id, error: { code: (err && err.code) || -32603, message: String((err && err.message) || err) } }),
      );
  }

  onNotification(view, method, params) {
    if (method === "ui/notifications/initialized") {
      if (view.initialized) return;
      view.initialized = true;
      this.notify(view, "ui/notifications/tool-input", { arguments: view.args });
      view.result.then(
        (result) => this.notify(view, "ui/notifications/tool-result", result),
        (err) => this.notify(view, "ui/notifications/tool-cancelled", { reason: String(err.message || err) }),
      );
    } else if (method === "ui/notifications/size-changed") {
      if (Number.isFinite(params.height)) {
        view.height = Math.min(10000, Math.max(40, Math.ceil(params.height)));
        this.layout();
      }
    } else if (method === "notifications/message") {
      this.onModel("log", params);
    }
  }

  async onRequest(view, method, params) {
    switch (method) {
      case "ui/initialize":
        this.context.containerDimensions = this.dimensions();
        return {
          protocolVersion: APPS_PROTOCOL,
          hostInfo: { name: "bb view-preview", version: "0.1.0" },
          hostCapabilities: {
            openLinks: {}, serverTools: {}, serverResources: {}, logging: {},
            updateModelContext: { text: {}, structuredContent: {} }, message: { text: {} },
            availableDisplayModes: this.context.availableDisplayModes,
          },
          hostContext: Object.assign({}, this.context),
        };
      case "ping":
        return {};
      case "tools/call":
      case "resources/read":
        return this.client.request(method, params).catch((err) => {
          throw err.rpc || { code: -32603, message: String(err.message || err) };
        });
      case "ui/open-link": {
        let url = null;
        try { url = new URL(String(params.url)); } catch (_) { url = null; }
        if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) return { isError: true };
        window.open(url.href, "_blank", "noopener,noreferrer");
        return {};
      }
      case "ui/request-display-mode":
        return { mode: this.setDisplayMode(String(params.mode)) };
      case "ui/update-model-context":
        this.onModel("context", params);
        return {};
      case "ui/message":
        this.onModel("message", params);
        return {};
      default:
        throw { code: -32601, message: `Method not found: ${method}` };
    }
  }
}

// The view's HTML with the host's CSP placed first in its head.
function withCsp(html) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${VIEW_CSP}">`;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (!head) return meta + html;
  const at = head.index + head[0].length;
  return html.slice(0, at) + meta + html.slice(at);
}
