// The preview's own page: what to show, the host's switches, and the panels beside the view.
const VIEW_URI = "ui://bb/view";
const VIEW_MIME = "text/html;profile=mcp-app";
const meta = (name) => (document.querySelector(`meta[name="${name}"]`) || {}).content || "";

// Pull requests of the stack worth looking at, and lists.
const PRESETS = [
  { label: "BB/api #1 · open, tasks", args: { kind: "pull_request", project: "BB", repo: "api", pr_id: 1 } },
  { label: "BB/api #2 · draft", args: { kind: "pull_request", project: "BB", repo: "api", pr_id: 2 } },
  { label: "BB/api #4 · merged", args: { kind: "pull_request", project: "BB", repo: "api", pr_id: 4 } },
  { label: "BB/api #5 · declined", args: { kind: "pull_request", project: "BB", repo: "api", pr_id: 5 } },
  { label: "BB/api #7 · hostile text", args: { kind: "pull_request", project: "BB", repo: "api", pr_id: 7 } },
  { label: "BB/api · open list", args: { kind: "pull_requests", project: "BB", repo: "api", state: "OPEN" } },
  { label: "BB/cli · open list", args: { kind: "pull_requests", project: "BB", repo: "cli", state: "OPEN" } },
  { label: "Reviewer inbox", args: { kind: "pull_requests", inbox: true } },
];

// Style variables a host sends (reference/mcp.md §3); the view must also look right without them.
const FONTS = {
  "--font-sans": 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif',
  "--font-mono": 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
  "--border-radius-sm": "3px", "--border-radius-md": "6px", "--border-radius-lg": "8px",
};
const THEMES = {
  light: Object.assign({
    "--color-background-primary": "#ffffff", "--color-background-secondary": "#f7f8f9", "--color-background-tertiary": "#f1f2f4",
    "--color-background-inverse": "#172b4d", "--color-background-info": "#e9f2ff", "--color-background-danger": "#ffeceb",
    "--color-background-success": "#dcfff1", "--color-background-warning": "#fff7d6",
    "--color-text-primary": "#172b4d", "--color-text-secondary": "#44546f", "--color-text-tertiary": "#626f86",
    "--color-text-inverse": "#ffffff", "--color-text-info": "#0c66e4", "--color-text-danger": "#ae2a19",
    "--color-text-success": "#216e4e", "--color-text-warning": "#a54800",
    "--color-border-primary": "#dcdfe4", "--color-border-secondary": "#ebecf0", "--color-ring-primary": "#388bff",
  }, FONTS),
  dark: Object.assign({
    "--color-background-primary": "#1d2125", "--color-background-secondary": "#22272b", "--color-background-tertiary": "#2c333a",
    "--color-background-inverse": "#dee4ea", "--color-background-info": "#092957", "--color-background-danger": "#42221f",
    "--color-background-success": "#164b35", "--color-background-warning": "#533f04",
    "--color-text-primary": "#b6c2cf", "--color-text-secondary": "#9fadbc", "--color-text-tertiary": "#8c9bab",
    "--color-text-inverse": "#1d2125", "--color-text-info": "#579dff", "--color-text-danger": "#fd9891",
    "--color-text-success": "#7ee2b8", "--color-text-warning": "#f5cd47",
    "--color-border-primary": "#38414a", "--color-border-secondary": "#2c333a", "--color-ring-primary": "#85b8ff",
  }, FONTS),
};
// Switching variables off sends every name with an empty value, which the view removes.
const NO_VARIABLES = Object.fromEntries(Object.keys(THEMES.light).map((k) => [k, ""]));

const query = new URLSearchParams(location.search);
const settings = {
  theme: query.get("theme") === "dark" ? "dark" : "light",
  variables: query.get("vars") !== "0",
  mode: query.get("mode") === "fullscreen" ? "fullscreen" : "inline",
};
const $ = (id) => document.getElementById(id);

function logLine(direction, method, params) {
  const list = $("log");
  const detail = params === undefined ? "" : JSON.stringify(params);
  list.prepend(el("li", {}, el("span", { class: "dir" }, direction), " ", el("b", {}, method),
    detail ? el("span", { class: "muted" }, " ", detail.length > 160 ? `${detail.slice(0, 160)}…` : detail) : null));
  while (list.childElementCount > 200) list.lastElementChild.remove();
}

function blocksText(blocks) {
  return (Array.isArray(blocks) ? blocks : []).map((b) => (b && b.type === "text" ? b.text : JSON.stringify(b))).join("\n\n");
}

function onModel(kind, params) {
  const box = $("model");
  if (kind === "context") {
    const old = box.querySelector(".model-context");
    const entry = el("div", { class: "entry model-context" },
      el("div", { class: "tag" }, "ui/update-model-context (latest)"),
      el("pre", {}, blocksText(params.content)),
      params.structuredContent ? el("details", {}, el("summary", {}, "structuredContent"), el("pre", {}, JSON.stringify(params.structuredContent, null, 2))) : null);
    if (old) old.replaceWith(entry); else box.prepend(entry);
  } else if (kind === "message") {
    box.append(el("div", { class: "entry" }, el("div", { class: "tag" }, `ui/message · ${params.role || "user"}`), el("pre", {}, blocksText(params.content))));
  } else {
    logLine("view log", `notifications/message ${params.level || ""}`, params.data);
  }
}

// bb asks the person before a tool that merges or cannot be undone (elicitation/create in form mode),
// during the model's call or one the view makes through the host (the card's Merge): a modal form drawn
// from requestedSchema, as a real host draws it. The message is text, never HTML; each boolean is a
// checkbox with its title, unticked; Accept answers {action: "accept", content}, Decline and Cancel (and
// Escape) answer their action. ?confirm=accept (tick every box and accept), decline or cancel answers by
// itself, as the Host section's switch does. Selectors: #bb-elicit, .bb-elicit-message, .bb-elicit-field
// input[type=checkbox] (data-key), .bb-elicit-accept, .bb-elicit-decline, .bb-elicit-cancel.
const CONFIRM_CHOICES = ["ask", "accept", "decline", "cancel"];
settings.confirm = CONFIRM_CHOICES.includes(query.get("confirm")) ? query.get("confirm") : "ask";
function elicitForm(params) {
  const schema = params.requestedSchema && typeof params.requestedSchema === "object" ? params.requestedSchema : {};
  const props = schema.properties && typeof schema.properties === "object" ? schema.properties : {};
  const boxes = [];
  const fields = Object.entries(props).filter(([, p]) => p && p.type === "boolean").map(([key, p]) => {
    const box = el("input", { type: "checkbox", "data-key": key });
    boxes.push([key, box]);
    return el("div", { class: "elicit-field-row" },
      el("label", { class: "bb-elicit-field" }, box, el("span", { class: "bb-elicit-title" }, String(p.title || key))),
      p.description ? el("p", { class: "muted bb-elicit-description" }, String(p.description)) : null);
  });
  const others = Object.entries(props).filter(([, p]) => !p || p.type !== "boolean").map(([key]) => key);
  const accept = el("button", { type: "button", class: "primary bb-elicit-accept" }, "Accept");
  const decline = el("button", { type: "button", class: "bb-elicit-decline" }, "Decline");
  const cancel = el("button", { type: "button", class: "bb-elicit-cancel" }, "Cancel");
  const dialog = el("dialog", { id: "bb-elicit", class: "elicit", "aria-labelledby": "bb-elicit-heading" },
    el("h2", { id: "bb-elicit-heading" }, "bb asks"),
    el("p", { class: "bb-elicit-message" }, String(params.message || "")),
    fields,
    others.length ? el("p", { class: "error" }, `This preview draws only checkboxes; not shown: ${others.join(", ")}.`) : null,
    el("div", { class: "elicit-buttons" }, cancel, decline, accept));
  document.body.append(dialog);
  dialog.showModal();
  return new Promise((resolve) => {
    const answer = (result) => { dialog.close(); dialog.remove(); resolve(result); };
    accept.addEventListener("click", () => answer({ action: "accept", content: Object.fromEntries(boxes.map(([k, b]) => [k, b.checked])) }));
    decline.addEventListener("click", () => answer({ action: "decline" }));
    cancel.addEventListener("click", () => answer({ action: "cancel" }));
    dialog.addEventListener("cancel", (e) => { e.preventDefault(); answer({ action: "cancel" }); });
    if (settings.confirm === "accept") { for (const [, b] of boxes) b.checked = true; setTimeout(() => accept.click(), 0); }
    else if (settings.confirm === "decline") setTimeout(() => decline.click(), 0);
    else if (settings.confirm === "cancel") setTimeout(() => cancel.click(), 0);
  });
}
async function onServerRequest(method, params) {
  if (method === "elicitation/create" && (params.mode === undefined || params.mode === "form")) return elicitForm(params);
  if (method === "ping") return {};
  throw { code: -32601, message: `Method not found: ${method}` };
}

const client = new McpClient(meta("bb-mcp-url"), logLine, onServerRequest);
const host = new ViewHost({
  box: $("frame-box"), client, log: logLine, onModel,
  onLayout: (mode) => {
    document.body.classList.toggle("has-fullscreen", mode === "fullscreen");
    for (const b of document.querySelectorAll("[data-mode]")) b.setAttribute("aria-pressed", String(b.dataset.mode === mode));
  },
  context: {
    theme: settings.theme,
    styles: { variables: settings.variables ? THEMES[settings.theme] : {} },
    displayMode: settings.mode,
    locale: navigator.language || "en",
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    platform: "web",
    userAgent: "bb view-preview",
  },
});

function setStatus(text, isError) {
  $("status").replaceChildren(text ? el("span", { class: isError ? "error" : "" }, text) : "");
}

let showTool = null;
async function findShowTool() {
  if (showTool) return showTool;
  let cursor;
  for (let page = 0; page < 10; page++) {
    const answer = await client.request("tools/list", cursor ? { cursor } : {});
    showTool = (answer.tools || []).find((t) => t.name === "show") || null;
    if (showTool || !answer.nextCursor) break;
    cursor = answer.nextCursor;
  }
  return showTool;
}

async function viewHtml() {
  const answer = await client.request("resources/read", { uri: VIEW_URI });
  const item = (answer.contents || [])[0] || {};
  if (item.mimeType !== VIEW_MIME) setStatus(`${VIEW_URI} has mimeType ${item.mimeType}, not ${VIEW_MIME}`, true);
  if (typeof item.text !== "string") throw new Error(`${VIEW_URI} has no text`);
  return item.text;
}

function showRaw(result, error) {
  const box = $("raw");
  if (error) {
    box.replaceChildren(el("pre", { class: "error" }, String(error.message || error)));
    return;
  }
  const data = result._meta && result._meta["bb/view"];
  // replaceChildren would write a null as the text "null": build through el(), which skips it.
  box.replaceChildren(...el("div", {},
    result.isError ? el("p", { class: "error" }, "isError: true") : null,
    el("pre", {}, blocksText(result.content) || "(no text)"),
    result.structuredContent ? el("details", {}, el("summary", {}, "structuredContent"), el("pre", {}, JSON.stringify(result.structuredContent, null, 2))) : null,
    data ? el("details", {}, el("summary", {}, `_meta["bb/view"] · ${data.kind} · ${JSON.stringify(data).length} bytes`), el("pre", {}, JSON.stringify(data, null, 2))) : el("p", { class: "muted" }, "No view data in _meta."),
  ).childNodes);
}

let showing = 0;
let current = null; // the show arguments on screen, for the stand-in's changes
async function show(args) {
  const mine = ++showing;
  current = args;
  setStatus(`show ${JSON.stringify(args)}…`);
  $("model").replaceChildren();
  const q = new URLSearchParams(location.search);
  q.set("show", toShowParam(args));
  history.replaceState(null, "", `?${q}`);
  try {
    await host.teardown();
    const [html, tool] = await Promise.all([viewHtml(), findShowTool()]);
    if (mine !== showing) return;
    const result = client.request("tools/call", { name: "show", arguments: args });
    host.mount(html, args, result, tool);
    const answer = await result;
    if (mine === showing) { showRaw(answer); setStatus(""); }
  } catch (err) {
    if (mine === showing) { showRaw(null, err); setStatus(String(err.message || err), true); }
  }
}

// ?show=BB/api/1 is a pull request, ?show=BB/cli a list (&state=…), ?show=inbox the reviewer inbox.
function fromShowParam(text, state) {
  if (!text) return null;
  if (text === "inbox") return { kind: "pull_requests", inbox: true };
  const [project, repo, id] = text.split("/");
  if (project && repo && id) return { kind: "pull_request", project, repo, pr_id: Number(id) };
  if (project && repo) return { kind: "pull_requests", project, repo, state: state || "OPEN" };
  return null;
}
function toShowParam(args) {
  if (args.kind === "pull_requests" && args.inbox) return "inbox";
  if (args.kind === "pull_request") return `${args.project}/${args.repo}/${args.pr_id}`;
  if (args.project && args.repo) return `${args.project}/${args.repo}`;
  return JSON.stringify(args);
}

// The picker: fields that write the arguments, which stay editable as JSON for any kind.
function picker() {
  const f = {
    kind: el("select", {}, el("option", { value: "pull_request" }, "pull_request"), el("option", { value: "pull_requests" }, "pull_requests")),
    project: el("input", { value: "BB", size: 6 }),
    repo: el("input", { value: "api", size: 8 }),
    pr_id: el("input", { value: "1", type: "number", min: 1, size: 4 }),
    state: el("select", {}, ...["OPEN", "MERGED", "DECLINED", "ALL"].map((s) => el("option", { value: s }, s))),
    inbox: el("input", { type: "checkbox" }),
  };
  const json = el("textarea", { rows: 5, spellcheck: "false", "aria-label": "show arguments (JSON)" });
  const row = (label, input, cls) => el("label", { class: `row ${cls || ""}` }, el("span", {}, label), input);
  const rows = [row("kind", f.kind), row("project", f.project, "scoped"), row("repo", f.repo, "scoped"),
    row("pr_id", f.pr_id, "for-pr"), row("state", f.state, "for-list"), row("inbox", f.inbox, "for-list")];
  function fromFields() {
    const kind = f.kind.value;
    const args = { kind };
    if (kind === "pull_request") Object.assign(args, { project: f.project.value, repo: f.repo.value, pr_id: Number(f.pr_id.value) });
    else if (f.inbox.checked) args.inbox = true;
    else Object.assign(args, { project: f.project.value, repo: f.repo.value, state: f.state.value });
    json.value = JSON.stringify(args, null, 1);
    for (const r of rows) {
      r.hidden = (r.classList.contains("for-pr") && kind !== "pull_request")
        || (r.classList.contains("for-list") && kind !== "pull_requests")
        || (r.classList.contains("scoped") && kind === "pull_requests" && f.inbox.checked);
    }
  }
  function toFields(args) {
    f.kind.value = args.kind === "pull_requests" ? "pull_requests" : "pull_request";
    if (args.project) f.project.value = args.project;
    if (args.repo) f.repo.value = args.repo;
    if (args.pr_id) f.pr_id.value = String(args.pr_id);
    if (args.state) f.state.value = args.state;
    f.inbox.checked = Boolean(args.inbox);
    fromFields();
    json.value = JSON.stringify(args, null, 1);
  }
  for (const input of Object.values(f)) input.addEventListener("change", fromFields);
  const go = () => {
    let args;
    try { args = JSON.parse(json.value); } catch (err) { setStatus(`The arguments are not JSON: ${err.message}`, true); return; }
    show(args);
  };
  $("picker").replaceChildren(...rows, json, el("button", { type: "button", class: "primary", onclick: go }, "Show"));
  fromFields();
  return toFields;
}

function switches() {
  const themeButton = (name) => el("button", { type: "button", "data-theme-choice": name, onclick: () => setTheme(name) }, name);
  const modeButton = (mode) => el("button", { type: "button", "data-mode": mode, onclick: () => host.setDisplayMode(mode) }, mode);
  // How bb's questions are answered: by the person (ask), or at once (accept, decline, cancel).
  const confirmChoice = el("select", { "aria-label": "answer bb's questions", onchange: () => { settings.confirm = confirmChoice.value; } },
    ...CONFIRM_CHOICES.map((c) => el("option", { value: c }, c)));
  confirmChoice.value = settings.confirm;
  const vars = el("input", { type: "checkbox", checked: settings.variables, onchange: () => { settings.variables = vars.checked; setTheme(settings.theme); } });
  $("switches").replaceChildren(
    el("div", { class: "row" }, el("span", {}, "theme"), themeButton("light"), themeButton("dark")),
    el("label", { class: "row" }, el("span", {}, "variables"), vars, el("span", { class: "muted" }, "send style variables")),
    el("div", { class: "row" }, el("span", {}, "display"), modeButton("inline"), modeButton("fullscreen")),
    el("label", { class: "row" }, el("span", {}, "confirm"), confirmChoice),
  );
  // Over a fullscreen view the host keeps a way back, as real hosts do.
  document.body.append(el("button", { type: "button", class: "exit-full", onclick: () => host.setDisplayMode("inline") }, "Exit full screen (host)"));
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") host.setDisplayMode("inline"); });
}

// The stand-in's control API, through the page server (POST /stack/…): a build of the pull request
// on show, or a comment on it as another user. The view follows by itself, through refresh_view.
function standIn() {
  if (meta("bb-stack") !== "1") return;
  $("stand-in").hidden = false;
  const key = el("input", { value: "LIVE-1", size: 10, "aria-label": "build key" });
  const state = el("select", { "aria-label": "build state" }, ...["INPROGRESS", "SUCCESSFUL", "FAILED", "CANCELLED"].map((s) => el("option", { value: s }, s)));
  const user = el("select", { "aria-label": "as user" }, ...["carol", "bob", "dave", "frank"].map((u) => el("option", { value: u }, u)));
  const text = el("input", { value: "Looks good to me.", "aria-label": "comment text" });
  const said = el("p", { class: "muted", role: "status" });
  async function send(what, body) {
    const pr = current && (current.kind === "pull_request" || current.kind === "diff") && current.pr_id ? current : null;
    if (!pr) { said.textContent = "Show a pull request first."; return; }
    const res = await fetch(`/stack/${what}`, { method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify(Object.assign({ project: pr.project, repo: pr.repo, pullRequest: pr.pr_id }, body)) });
    const answer = await res.text();
    said.textContent = res.ok ? `${what === "builds" ? "Build set" : "Comment added"} at ${new Date().toLocaleTimeString()}: the view will ask bb again by itself.`
      : `The stand-in answered ${res.status}: ${answer.slice(0, 200)}`;
    logLine("stand-in", `POST /_stack/${what}`, body);
  }
  $("changes").replaceChildren(
    el("div", { class: "row" }, el("span", {}, "build"), key),
    el("div", { class: "row" }, el("span", {}, "state"), state),
    el("button", { type: "button", onclick: () => send("builds", { key: key.value, state: state.value }) }, "Set build"),
    el("div", { class: "row" }, el("span", {}, "as"), user),
    el("div", { class: "row" }, el("span", {}, "text"), text),
    el("button", { type: "button", onclick: () => send("comments", { user: user.value, text: text.value }) }, "Add comment"),
    said);
}

function setTheme(name) {
  settings.theme = name;
  document.documentElement.dataset.theme = name;
  for (const b of document.querySelectorAll("[data-theme-choice]")) b.setAttribute("aria-pressed", String(b.dataset.themeChoice === name));
  host.changeContext({ theme: name, styles: { variables: settings.variables ? THEMES[name] : NO_VARIABLES } });
}

$("about").textContent = `bb at ${meta("bb-mcp-url")} · Bitbucket: ${meta("bb-source")}`;
$("presets").replaceChildren(...PRESETS.map((p) => el("button", { type: "button", onclick: () => { setFields(p.args); show(p.args); } }, p.label)));
const setFields = picker();
switches();
standIn();
setTheme(settings.theme);
host.layout();
const first = fromShowParam(query.get("show"), query.get("state"));
if (first) { setFields(first); show(first); }
else setStatus("Pick a preset, or fill in the arguments and press Show.");
client.connect().then(() => logLine("bb", "initialize", client.serverInfo && client.serverInfo.serverInfo), (err) => setStatus(`bb did not answer initialize: ${err.message}`, true));
