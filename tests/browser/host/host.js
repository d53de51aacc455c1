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

// The host as a real client renders views: an MCP client talking to bb over Streamable HTTP that
// declares the UI extension, reads the page named by show's _meta.ui.resourceUri, calls show and
// mounts the page with that input and result. Answers with what bb sent, as JSON text.
let client = null;
async function viaBb(url, args, opts = {}) {
  if (!client) {
    client = new Client({ name: "bb-browser-test-host", version: "1.0.0" },
      { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } });
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
