// The page's entry point: the host's context, the tool's input and result, and the view of the
// kind the result names (from the registry the view modules filled, kinds.js). A result without
// view data is shown as its text, as text.
const root = document.getElementById("view");
const RESULT_WAIT_MS = 30000;
const page = { context: {}, caps: {}, status: "starting", note: "", result: null, data: null, input: null, partial: null, timers: [], observer: null, gone: false };

function later(fn, ms) { const t = setTimeout(fn, ms); page.timers.push(() => clearTimeout(t)); }
function every(fn, ms) { const t = setInterval(fn, ms); page.timers.push(() => clearInterval(t)); }
function stopTimers() { for (const stop of page.timers.splice(0)) stop(); }

const modes = () => (Array.isArray(page.context.availableDisplayModes) ? page.context.availableDisplayModes : []);
const isInline = () => page.context.displayMode !== "fullscreen";

function setMode(mode) {
  bridge.request("ui/request-display-mode", { mode }).then((answer) => {
    if (answer && typeof answer.mode === "string" && answer.mode !== page.context.displayMode) {
      page.context.displayMode = answer.mode;
      render();
    }
  }).catch(() => {});
}

// The bar above a view: Back, when bb read Bitbucket (not when the pull request changed), what
// refresh.js says, and the switch to fullscreen and back.
function bar(data) {
  const other = isInline() ? "fullscreen" : "inline";
  const toggle = modes().includes(other)
    ? el("button", { type: "button", class: "bb-mode", onclick: () => setMode(other) }, other === "fullscreen" ? "⤢ Full screen" : "⤡ Exit full screen")
    : null;
  return el("div", { class: "bb-bar" }, navigate.backButton(), el("span", { class: "bb-muted bb-read" }, fmt.time(data.readAt, "Read from Bitbucket ")), refresh.note, changes.line, toggle);
}

function missing(data) {
  const lines = (Array.isArray(data.missing) ? data.missing : []).filter((m) => typeof m === "string" && m);
  return lines.length ? el("ul", { class: "bb-missing", "aria-label": "Not shown" }, lines.map((m) => el("li", { dir: "auto" }, m.slice(0, 2000)))) : null;
}

// A REST address in an answer names the page a person would open: …/rest/api/1.0/projects/BB/repos/api/pull-requests/1/merge
// is …/projects/BB/repos/api/pull-requests/1 in Bitbucket.
function webAddress(url) {
  const m = /^(https?:\/\/.+?)\/rest\/api\/(?:1\.0|latest)\/(projects\/[^/?#]+(?:\/repos\/[^/?#]+(?:\/pull-requests\/\d+)?)?)/.exec(url);
  return m ? `${m[1]}/${m[2]}` : url;
}
// Text with its web addresses as links (through the host); nothing else is made of it.
function linked(text) {
  return String(text).split(/(https?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)\]])/).map((part, i) => (i % 2 ? link(webAddress(part), { class: "bb-link" }, webAddress(part)) : part));
}
// An answer that is an error, in words a person can act on: what went wrong as bb said it, where to
// open the pull request (or repository) in Bitbucket when bb's answer or the call names it.
function problem(result) {
  const input = page.input && typeof page.input === "object" ? page.input : {};
  const meta = result && result._meta && result._meta["bb/view"];
  const base = meta && typeof meta === "object" && meta.server && typeof meta.server.url === "string" ? meta.server.url.replace(/\/+$/, "") : null;
  const seg = (x) => encodeURIComponent(String(x));
  const compare = input.kind === "compare" && typeof input.from_ref === "string" && typeof input.to_ref === "string";
  const file = input.kind === "file" && typeof input.path === "string";
  const what = input.kind === "pull_requests" ? "these pull requests" : Number.isInteger(input.pr_id) ? `pull request #${input.pr_id}`
    : compare ? `${input.from_ref.slice(0, 200)} against ${input.to_ref.slice(0, 200)}` : file ? input.path.slice(0, 300) : "this";
  // A file's: bb's own address for the error (its source page) first, else one made from the call.
  let address = file && meta && typeof meta === "object" && meta.error && typeof meta.error === "object" ? webUrl(meta.error.url) : null;
  if (!address && file && base && typeof input.project === "string" && typeof input.repo === "string") {
    const at = typeof input.at === "string" && input.at ? `?at=${seg(input.at)}` : "";
    address = `${base}/projects/${seg(input.project)}/repos/${seg(input.repo)}/browse/${input.path.split("/").map(seg).join("/")}${at}`;
  }
  if (!address && base && typeof input.project === "string" && typeof input.repo === "string") {
    // Bitbucket's compare page for two refs (its Compare page, Diff tab), else the pull request or the list.
    const tail = compare ? `/compare/diff?sourceBranch=${seg(input.from_ref)}&targetBranch=${seg(input.to_ref)}`
      : Number.isInteger(input.pr_id) ? `/pull-requests/${input.pr_id}` : "/pull-requests";
    address = `${base}/projects/${seg(input.project)}/repos/${seg(input.repo)}${tail}`;
  }
  // Bitbucket's own words for what went wrong, when bb has them (error.said), else bb's sentence.
  const said = meta && typeof meta === "object" && meta.error && typeof meta.error === "object" && typeof meta.error.said === "string" ? meta.error.said : "";
  const text = said || resultText(result) || "bb answered with an error and no words.";
  return el("section", { class: "bb-problem", role: "alert" },
    el("h2", { class: "bb-problem-title" }, `bb could not show ${what}`),
    text.split(/\n{2,}/).map((para) => el("p", { dir: "auto" }, linked(para.slice(0, 4000)))),
    address ? el("p", {}, link(address, { class: "bb-link bb-open-in" }, "Open it in Bitbucket")) : null,
    input.kind ? el("p", {}, el("button", { type: "button", class: "bb-button bb-retry", onclick: retry }, "Try again")) : null,
    el("p", { class: "bb-muted" }, "The answer is also in the conversation."));
}

// Asks again, through the host and the model's own tool `show` with the same arguments, and draws
// what comes back in place of the error.
function retry(event) {
  const button = event && event.currentTarget;
  if (button) { button.disabled = true; button.textContent = "Trying again…"; }
  bridge.request("tools/call", { name: "show", arguments: page.input }).then((result) => {
    if (page.gone) return;
    page.result = result;
    page.data = viewData(result);
    page.status = "result";
    render();
    refresh.start(page.data);
  }, () => {
    if (button) { button.disabled = false; button.textContent = "Try again"; }
  });
}

// The first sentence of bb's words, for a line in the bar.
function firstSentence(text) {
  const t = String(text || "").trim();
  const m = /^[\s\S]*?[.!?](?=\s|$)/.exec(t);
  return (m ? m[0] : t).slice(0, 300) || "bb gave no reason.";
}

function resultText(result) {
  const blocks = Array.isArray(result && result.content) ? result.content : [];
  return blocks.filter((b) => b && b.type === "text" && typeof b.text === "string").map((b) => b.text).join("\n\n");
}

function status(words) { return el("p", { class: "bb-status", role: "status" }, words); }

function drawView(data) {
  grown.seen.clear();
  const ctx = { inline: isInline(), users: data.users && typeof data.users === "object" ? data.users : {}, server: data.server || {} };
  ctx.offers = (kind) => Array.isArray(ctx.server.kinds) && ctx.server.kinds.includes(kind) && KINDS.has(kind);
  return [bar(data), navigate.tabs(data), missing(data), KINDS.get(data.kind)(data, ctx)];
}

// Inline, the view's one shape (grow.js); fullscreen, everything, each long field cut with a way to read it.
function place(nodes) {
  if (isInline()) {
    const full = modes().includes("fullscreen") ? () => setMode("fullscreen") : null;
    shape.mount(root, nodes.filter(Boolean), page.context, full);
  } else {
    shape.stop();
    root.replaceChildren(...nodes.filter(Boolean));
    requestAnimationFrame(() => checkCaps(root));
  }
}

// Draws the view again with its scroll kept, within one task: nothing in between is painted.
function redraw() {
  const clip = root.querySelector(".bb-clip");
  const top = clip ? clip.scrollTop : 0;
  const [x, y] = [scrollX, scrollY];
  render();
  const again = root.querySelector(".bb-clip");
  if (again) again.scrollTop = top;
  scrollTo(x, y);
}

function render() {
  if (page.gone) return;
  root.className = isInline() ? "bb-inline" : "bb-fullscreen";
  const data = page.data;
  if (page.status === "result" && data && !(page.result && page.result.isError)) {
    try {
      place(drawView(data));
      return;
    } catch (err) {
      place([status("This view could not be drawn; here is the answer as text."), el("pre", { class: "bb-text" }, resultText(page.result))]);
      return;
    }
  }
  if (page.status === "result") {
    if (page.result && page.result.isError) { place([problem(page.result)]); return; }
    const text = resultText(page.result);
    place([el("pre", { class: "bb-text" }, text || "The answer has no text.")]);
    return;
  }
  // A host that streamed the arguments sees their skeleton until the result (the whole input, once it came).
  const shell = (page.status === "waiting-input" || page.status === "waiting") && page.partial ? skeleton(page.input || page.partial) : null;
  if (shell) { place([status("Waiting for the result…"), shell]); return; }
  const words = {
    starting: "Connecting…",
    "waiting-input": "Waiting for the result…",
    waiting: "Waiting for the result…",
    late: "The result did not arrive. Ask again if you still need it.",
    cancelled: "The call was cancelled.",
    nohost: "The host did not answer, so nothing can be shown.",
  };
  place([status(words[page.status] || ""), page.note ? el("p", { class: "bb-muted" }, page.note) : null]);
}

function viewData(result) {
  const data = result && result._meta && result._meta["bb/view"];
  return data && typeof data === "object" && data.v === 1 && KINDS.has(data.kind) ? data : null;
}

function applyContext(part) {
  if (!part || typeof part !== "object") return;
  const before = page.context.displayMode;
  const styles = part.styles && typeof part.styles === "object"
    ? Object.assign({}, page.context.styles, part.styles, { variables: Object.assign({}, (page.context.styles || {}).variables, (part.styles || {}).variables) })
    : page.context.styles;
  page.context = Object.assign({}, page.context, part, styles ? { styles } : {});
  theme.apply(page.context);
  fmt.setPlace(page.context);
  shape.setContext(page.context);
  if (page.context.displayMode !== before) shape.reset();
  if (page.context.displayMode !== before || "availableDisplayModes" in part) render();
}

bridge.on("ui/notifications/host-context-changed", applyContext);
// While the model is still writing show's arguments the host may send what it has so far (MCP Apps
// ui/notifications/tool-input-partial): a skeleton of the kind asked for is drawn with what they already name,
// then the view replaces it. Partial arguments are never acted on (the spec's MUST NOT), only drawn.
bridge.on("ui/notifications/tool-input-partial", (params) => {
  if (page.status === "result" || page.status === "cancelled" || page.input) return;
  if (params && params.arguments && typeof params.arguments === "object" && !Array.isArray(params.arguments)) {
    page.partial = params.arguments;
    render();
  }
});
// A view's outline before its data: the kind's shape, no taller than the view will be, with what the arguments
// name (the repository, the pull request, the path), the rest grey bars. null for an unknown kind.
function skeleton(args) {
  const str = (x) => (typeof x === "string" ? x.slice(0, 200) : "");
  const kind = str(args.kind);
  const repo = str(args.project) && str(args.repo) ? `${str(args.project)}/${str(args.repo)}` : str(args.project);
  const pr = Number.isInteger(args.pr_id) ? ` #${args.pr_id}` : "";
  const bars = (n, cls = "") => Array.from({ length: n }, (_, i) => el("div", { class: `bb-skel-bar${cls}`, style: `width: ${[92, 78, 85, 64, 88, 70][i % 6]}%` }));
  const head = (...words) => el("p", { class: "bb-skel-head" }, ...words.filter(Boolean));
  const shapes = {
    pull_request: () => [head(repo || "Pull request", pr), el("div", { class: "bb-skel-title" }), bars(3)],
    diff: () => [head(repo || "Pull request", pr, " · Diff"), bars(2), el("div", { class: "bb-skel-code" }, bars(5, " bb-skel-mono"))],
    compare: () => [head("Compare", repo ? ` · ${repo}` : "", str(args.from_ref) ? ` · ${str(args.from_ref)}` : "", str(args.to_ref) ? ` → ${str(args.to_ref)}` : ""), bars(2), el("div", { class: "bb-skel-code" }, bars(5, " bb-skel-mono"))],
    file: () => [head(repo, str(args.path) ? ` · ${str(args.path)}` : "", str(args.at) ? ` at ${str(args.at)}` : ""), el("div", { class: "bb-skel-code" }, bars(6, " bb-skel-mono"))],
    pull_requests: () => [head(repo ? `Pull requests · ${repo}` : "Pull requests"), bars(4)],
    pull_request_form: () => [head("Create pull request", repo ? ` · ${repo}` : ""), bars(3)],
  };
  if (!Object.hasOwn(shapes, kind)) return null;
  return el("div", { class: "bb-skel", "data-kind": kind, "aria-busy": "true", role: "status", "aria-label": "Loading the view" }, shapes[kind]());
}
bridge.on("ui/notifications/tool-input", (params) => {
  if (params && params.arguments && typeof params.arguments === "object") page.input = params.arguments;
  if (page.status !== "result" && page.status !== "cancelled") {
    page.status = "waiting";
    later(() => { if (page.status === "waiting") { page.status = "late"; render(); } }, RESULT_WAIT_MS);
    render();
  }
});
bridge.on("ui/notifications/tool-result", (result) => {
  page.result = result;
  page.data = viewData(result);
  page.status = "result";
  navigate.reset();
  render();
  if (!(result && result.isError)) refresh.start(page.data);
});
bridge.on("ui/notifications/tool-cancelled", (params) => {
  if (page.status === "result") return;
  page.status = "cancelled";
  page.note = typeof params.reason === "string" ? params.reason : "";
  render();
});
bridge.on("ui/resource-teardown", () => {
  page.gone = true;
  stopTimers();
  refresh.stop();
  shape.stop();
  if (page.observer) page.observer.disconnect();
  setTimeout(bridge.close, 0);
  return {};
});

page.observer = new ResizeObserver(() => {
  const box = document.body.getBoundingClientRect();
  bridge.notify("ui/notifications/size-changed", { width: Math.ceil(box.width), height: Math.ceil(box.height) });
});
page.observer.observe(document.body);
every(() => fmt.tick(root), 30000);
window.addEventListener("resize", () => { if (!isInline()) checkCaps(root); });
render();

const appInfo = { name: "bb", version: "0.1.0" };
later(() => { if (page.status === "starting") { page.status = "nohost"; render(); } }, 10000);
bridge.request("ui/initialize", { protocolVersion: "2026-01-26", appInfo, appCapabilities: { availableDisplayModes: ["inline", "fullscreen"] } })
  .then((answer) => {
    const a = answer && typeof answer === "object" ? answer : {};
    const context = Object.assign({}, a.hostContext);
    page.caps = a.hostCapabilities && typeof a.hostCapabilities === "object" ? a.hostCapabilities : {};
    const caps = a.hostCapabilities && a.hostCapabilities.availableDisplayModes;
    if (!Array.isArray(context.availableDisplayModes) && Array.isArray(caps)) context.availableDisplayModes = caps;
    if (page.status === "starting") page.status = "waiting-input";
    applyContext(context);
    render();
    bridge.notify("ui/notifications/initialized", {});
  })
  .catch(() => { page.status = "nohost"; render(); });
