// A test MCP Apps host: the reference AppBridge from @modelcontextprotocol/ext-apps, a sandboxed
// iframe (scripts only: no same origin, no forms), and switches for theme and display mode.
// Bundled with esbuild at test time; the view page itself has no build step.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const log = { links: [], sizes: [], modeRequests: [], pwned: [], calls: [], context: [], messages: [], downloads: [], teardownRequests: 0, initialized: false };
// Time compressed for tests: every `next` in a result the view gets is multiplied by this
// (bb decides `next`; the host only makes a minute pass in a second).
let timeScale = 1;
function scaled(result) {
  const data = result && result._meta && result._meta["bb/view"];
  if (timeScale !== 1 && data && typeof data.next === "number") data.next = Math.round(data.next * timeScale);
  return result;
}
let bridge = null;
let iframe = null;
let context = {};

// A canary: hostile text in the fixtures tries to post {pwned} here or set a global.
window.addEventListener("message", (event) => {
  if (event.data && typeof event.data === "object" && "pwned" in event.data) log.pwned.push(String(event.data.pwned));
});

async function mount(html, opts = {}) {
  iframe = document.createElement("iframe");
  iframe.id = "view";
  iframe.setAttribute("sandbox", "allow-scripts");
  // `frameHeight`: the frame keeps this height whatever the view asks (a host's fullscreen pane).
  iframe.style.cssText = `display:block;border:1px solid #8888;width:${opts.width || 760}px;height:${opts.frameHeight || opts.height || 80}px`;
  document.body.append(iframe);
  context = {
    theme: opts.theme || "light",
    displayMode: opts.displayMode || "inline",
    availableDisplayModes: opts.availableDisplayModes || ["inline", "fullscreen"],
    // A chat's frame: as tall as the view asks, up to maxHeight (or exactly `height` when given).
    containerDimensions: Object.assign(opts.height ? { height: opts.height } : { maxHeight: opts.maxHeight || 600 }, { width: opts.width || 760 }),
    locale: "en-GB",
    timeZone: "UTC",
    platform: "web",
  };
  if (opts.variables) context.styles = { variables: opts.variables };
  // `caps`: host capabilities besides these (e.g. message, to take ui/message); `noContext`: none for context updates.
  const caps = Object.assign({ openLinks: {}, logging: {}, serverTools: {} }, opts.noContext ? {} : { updateModelContext: { text: {}, structuredContent: {} } }, opts.caps || {});
  bridge = new AppBridge(null, { name: "bb-test-host", version: "1.0.0" }, caps, { hostContext: context });
  bridge.onmessage = async (params) => { log.messages.push(JSON.parse(JSON.stringify(params))); return {}; };
  bridge.onrequestteardown = () => { log.teardownRequests++; };
  bridge.ondownloadfile = async (params) => { log.downloads.push(JSON.parse(JSON.stringify(params))); return {}; };
  if (typeof opts.timeScale === "number") timeScale = opts.timeScale;
  // What the view tells the model, in order (a real host keeps only the latest).
  bridge.onupdatemodelcontext = async (params) => { log.context.push(params); return {}; };
  bridge.onopenlink = async ({ url }) => { log.links.push(url); return {}; };
  // A view's tool call goes to bb, as a host forwards it to the server that owns the tool, or,
  // without bb, to the test's own answer (window.bbAnswer, given by page.exposeFunction: JSON in and out).
  bridge.oncalltool = async (params) => {
    log.calls.push(JSON.parse(JSON.stringify(params)));
    if (client) return scaled(await client.callTool(params));
    if (typeof window.bbAnswer === "function") return scaled(JSON.parse(await window.bbAnswer(JSON.stringify(params))));
    throw new Error("this test host talks to no server");
  };
  bridge.onsizechange = ({ height }) => {
    log.sizes.push(height);
    if (Number.isFinite(height) && !opts.frameHeight && !(context.displayMode === "inline" && context.containerDimensions && context.containerDimensions.height)) iframe.style.height = `${Math.ceil(height)}px`;
  };
  bridge.onrequestdisplaymode = async ({ mode }) => {
    log.modeRequests.push(mode);
    setContext({ displayMode: mode });
    return { mode };
  };
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html; // the test host only; the page never uses srcdoc
  await initialized;
  log.initialized = true;
  // `partials`: what a streaming host sends while the model writes the arguments; `hold`: input and result wait
  // for the test (window.bbHost.sendInput / sendResult).
  for (const partial of opts.partials || []) await bridge.sendToolInputPartial({ arguments: partial });
  if (opts.hold) return;
  if (opts.input) await bridge.sendToolInput({ arguments: opts.input });
  if (typeof opts.cancel === "string") await bridge.sendToolCancelled({ reason: opts.cancel });
  if (opts.result) await bridge.sendToolResult(scaled(opts.result));
}

function setContext(part) {
  context = Object.assign({}, context, part);
  if (part.displayMode === "fullscreen") iframe.style.width = "1000px";
  if (part.displayMode === "inline") iframe.style.width = "760px";
  bridge.setHostContext(context);
}

// Another frame, not the parent, posts a result into the view: the view must ignore it.
function spoof(result) {
  const other = document.createElement("iframe");
  other.setAttribute("sandbox", "allow-scripts");
  other.style.display = "none";
  const message = JSON.stringify({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result });
  other.srcdoc = `<script>parent.frames[0].postMessage(${message.replace(/</g, "\\u003c")}, "*")<\/script>`;
  document.body.append(other);
}

// bb asks the person before a tool that merges or cannot be undone (elicitation/create, form mode), as a
// real host does: a modal form drawn from requestedSchema (the message as text, never HTML; each boolean a
// checkbox with its title, unticked; Accept, Decline, Cancel), answered with the person's action and content.
// `confirm` ("accept": tick every box and accept; "decline"; "cancel"; anything else: wait for the test to
// press a button) answers by itself, for tests that press write buttons. Every question asked is kept in
// log.elicitations. Selectors: #bb-elicit (the dialog), .bb-elicit-message, .bb-elicit-field input[type=checkbox]
// (data-key: the property), .bb-elicit-accept, .bb-elicit-decline, .bb-elicit-cancel.
log.elicitations = [];
let autoConfirm = null;
function elicit(params) {
  params = params || {};
  const asked = JSON.parse(JSON.stringify(params));
  log.elicitations.push(asked);
  const schema = (params.requestedSchema && typeof params.requestedSchema === "object") ? params.requestedSchema : {};
  const props = (schema.properties && typeof schema.properties === "object") ? schema.properties : {};
  const make = (tag, attrs = {}, ...kids) => { const n = document.createElement(tag); for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v); n.append(...kids); return n; };
  const dialog = make("dialog", { id: "bb-elicit", "aria-label": "The server asks", style: "max-width:440px;font:14px system-ui,sans-serif;border:1px solid #888;border-radius:8px;padding:16px" });
  const message = make("p", { class: "bb-elicit-message", style: "white-space:pre-wrap;margin:0 0 12px" });
  message.textContent = String(params.message || "");
  dialog.append(make("p", { class: "bb-elicit-server", style: "margin:0 0 6px;color:#666;font-size:12px" }, "bb asks"), message);
  const boxes = [];
  for (const [key, prop] of Object.entries(props)) {
    if (!prop || prop.type !== "boolean") continue; // bb asks with booleans only
    const box = make("input", { type: "checkbox", "data-key": key });
    const title = make("span", { class: "bb-elicit-title" });
    title.textContent = String(prop.title || key);
    const label = make("label", { class: "bb-elicit-field", style: "display:flex;gap:6px;align-items:center;font-weight:600" }, box, title);
    dialog.append(label);
    if (prop.description) { const d = make("p", { class: "bb-elicit-description", style: "margin:2px 0 8px 22px;color:#666;font-size:12px" }); d.textContent = String(prop.description); dialog.append(d); }
    boxes.push([key, box]);
  }
  const accept = make("button", { type: "button", class: "bb-elicit-accept" }, "Accept");
  const decline = make("button", { type: "button", class: "bb-elicit-decline" }, "Decline");
  const cancel = make("button", { type: "button", class: "bb-elicit-cancel" }, "Cancel");
  dialog.append(make("p", { style: "display:flex;gap:8px;justify-content:flex-end;margin:12px 0 0" }, cancel, decline, accept));
  document.body.append(dialog);
  dialog.showModal();
  return new Promise((resolve) => {
    const answer = (result) => { dialog.close(); dialog.remove(); asked.answer = result; resolve(result); };
    accept.onclick = () => answer({ action: "accept", content: Object.fromEntries(boxes.map(([k, b]) => [k, b.checked])) });
    decline.onclick = () => answer({ action: "decline" });
    cancel.onclick = () => answer({ action: "cancel" });
    dialog.addEventListener("cancel", (e) => { e.preventDefault(); answer({ action: "cancel" }); }); // Escape
    if (autoConfirm === "accept") { for (const [, b] of boxes) b.checked = true; setTimeout(() => accept.click(), 0); }
    else if (autoConfirm === "decline") setTimeout(() => decline.click(), 0);
    else if (autoConfirm === "cancel") setTimeout(() => cancel.click(), 0);
  });
}

// The host as a real client renders views: an MCP client talking to bb over Streamable HTTP that
// declares the UI extension, reads the page named by show's _meta.ui.resourceUri, calls show and
// mounts the page with that input and result. Answers with what bb sent, as JSON text.
let client = null;
async function viaBb(url, args, opts = {}) {
  if (typeof opts.confirm === "string") autoConfirm = opts.confirm;
  if (!client) {
    client = new Client({ name: "bb-browser-test-host", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} }, extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } });
    client.setRequestHandler("elicitation/create", (request) => elicit(request.params));
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  }
  const { tools } = await client.listTools();
  const show = tools.find((t) => t.name === "show");
  const uri = show && show._meta && show._meta.ui && show._meta.ui.resourceUri;
  const page = await client.readResource({ uri });
  const html = page.contents[0].text;
  const result = await client.callTool({ name: "show", arguments: args });
  await mount(html, Object.assign({}, opts, { input: args, result }));
  return JSON.stringify({ uri, mimeType: page.contents[0].mimeType, html, result });
}

window.bbHost = {
  viaBb,
  // A tool call to bb as the model would make it, through the host page's client: JSON in and out.
  callBb: async (json) => JSON.stringify(await client.callTool(JSON.parse(json))),
  log,
  mount,
  // A question as bb would ask it, without bb (the form's own test): resolves with the answer, as JSON text.
  elicit: async (json) => JSON.stringify(await elicit(JSON.parse(json))),
  // How the host answers bb's questions from now on: "accept", "decline", "cancel", or null (the person does).
  setConfirm: (how) => { autoConfirm = how || null; },
  setContext,
  spoof,
  teardown: () => bridge.teardownResource({}),
  // The frame off screen and back: display none (a collapsed message), or scrolled out of view.
  hide: (how) => { if (how === "scroll") { document.body.style.paddingBottom = "3000px"; iframe.style.marginTop = "3000px"; } else iframe.style.display = "none"; },
  unhide: () => { iframe.style.display = "block"; iframe.style.marginTop = "0"; window.scrollTo(0, 0); },
  app: () => ({ capabilities: bridge.getAppCapabilities(), version: bridge.getAppVersion() }),
  sendResult: (result) => bridge.sendToolResult(result),
  sendInput: (args) => bridge.sendToolInput({ arguments: args }),
  sendPartial: (args) => bridge.sendToolInputPartial({ arguments: args }),
};
