// Shared by the browser tests: the view page from the Rust crate, the test host bundled with
// esbuild, headless Debian Chromium through playwright-core, and the fixtures.
import { execFileSync, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium } from "playwright-core";

export const HERE = dirname(fileURLToPath(import.meta.url));
export const RESULTS = join(HERE, "results");
mkdirSync(RESULTS, { recursive: true });

const HOST_URL = "http://host.invalid/";
export const HOST_ORIGIN = "http://host.invalid";
// The view's frame inherits this policy from its srcdoc parent: the MCP Apps default CSP.
const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; media-src data:; connect-src 'none'";

let viewHtml = null;
// The page exactly as bb serves it: printed by the bb-assets crate (or read from BB_VIEW_HTML).
export function view() {
  if (viewHtml === null) {
    viewHtml = process.env.BB_VIEW_HTML
      ? readFileSync(process.env.BB_VIEW_HTML, "utf8")
      : execFileSync("cargo", ["run", "-q", "-p", "bb-assets", "--example", "print_view"], { cwd: join(HERE, "../.."), encoding: "utf8", maxBuffer: 1 << 24 });
  }
  if (!viewHtml.startsWith("<!doctype html>")) throw new Error("the bb-assets crate printed no page");
  return viewHtml;
}

let hostScript = null;
async function host() {
  if (hostScript === null) {
    const out = await build({ entryPoints: [join(HERE, "host/host.js")], bundle: true, write: false, format: "iife", platform: "browser", target: "chrome120", logLevel: "silent" });
    hostScript = out.outputFiles[0].text;
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>bb test host</title></head>
<body style="margin:8px;background:#777"><script>${hostScript.replace(/<\/script/gi, "<\\/script")}</script></body></html>`;
}

const TIMES = new Set(["readAt", "created", "updated", "closed", "at"]);
function shift(value, by) {
  if (Array.isArray(value)) return value.map((v) => shift(v, by));
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, TIMES.has(k) && typeof v === "number" ? v + by : shift(v, by)]));
}
// A fixture, its times moved so that it was read `readAgo` ms before now ("Updated 2 minutes ago").
export function fixture(name, readAgo = 2 * 60000) {
  const data = JSON.parse(readFileSync(join(HERE, "fixtures", `${name}.json`), "utf8"));
  return shift(data, Date.now() - readAgo - data.readAt);
}

// A CallToolResult as `show` answers: a short text for the model, the view data in _meta.
export function result(data, text = "Shown to the person.") {
  return { content: [{ type: "text", text }], _meta: { "bb/view": data } };
}

// `loopback: true` lets the test host page (http://host.invalid, not a secure context) reach bb on
// 127.0.0.1: Chromium's Private/Local Network Access checks would block it otherwise. A real host
// serves its page from wherever it likes; the view's own frame still reaches nothing (see open()).
export async function launch({ loopback = false } = {}) {
  const args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"];
  if (loopback) args.push("--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks");
  return chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args });
}

// Opens the test host and mounts the view. Options travel as JSON text: Playwright's own
// argument serializer stalls on the deeply nested hostile fixtures. With `opts.bb` (bb's MCP URL)
// the host page's own MCP client asks bb for the page and the result (see `host/host.js`), the
// host page may connect to bb's origin only, and `opts.show` are show's arguments.
export async function open(browser, opts = {}) {
  const page = await browser.newPage({ viewport: { width: 1040, height: 800 }, colorScheme: opts.colorScheme || "light" });
  const requests = [];
  const toBb = [];
  const errors = [];
  page.on("pageerror", (err) => errors.push(String(err)));
  page.on("console", (msg) => { if (msg.type() === "error") errors.push(msg.text()); });
  const html = await host();
  const bbOrigin = opts.bb ? new URL(opts.bb).origin : null;
  const csp = bbOrigin ? CSP.replace("connect-src 'none'", `connect-src ${bbOrigin}`) : CSP;
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url === HOST_URL) return route.fulfill({ status: 200, contentType: "text/html", headers: { "content-security-policy": csp }, body: html });
    // Only the host page talks to bb; a request from the view's frame is recorded and refused.
    if (bbOrigin && url.startsWith(`${bbOrigin}/`) && route.request().frame() === page.mainFrame()) {
      toBb.push(url);
      return route.continue();
    }
    requests.push(url);
    return route.abort();
  });
  // `opts.answer(params)`: the test answers the view's tool calls itself (refresh_view from fixtures).
  if (opts.answer) await page.exposeFunction("bbAnswer", async (json) => JSON.stringify(await opts.answer(JSON.parse(json))));
  await page.goto(HOST_URL);
  let fromBb = null;
  const mounted = opts.bb
    ? page.evaluate(([u, a, o]) => window.bbHost.viaBb(u, JSON.parse(a), JSON.parse(o)), [opts.bb, JSON.stringify(opts.show || {}), JSON.stringify(opts.mount || {})]).then((t) => { fromBb = JSON.parse(t); })
    : page.evaluate(([h, o]) => window.bbHost.mount(h, JSON.parse(o)), [view(), JSON.stringify(opts.mount || {})]);
  const late = new Promise((_, reject) => setTimeout(() => reject(new Error("the view did not initialize within 15 s")), 15000).unref());
  await Promise.race([mounted, late]);
  const frame = page.frameLocator("iframe#view");
  return { page, frame, requests, toBb, errors, bb: fromBb, log: () => page.evaluate(() => window.bbHost.log) };
}

const ROOT = join(HERE, "../..");
// Where cargo builds: CARGO_TARGET_DIR when set (relative to the repository, as cargo reads it), else target/.
const exe = (name) => resolve(ROOT, process.env.CARGO_TARGET_DIR || "target", "debug", name);
// The first `n` lines a child prints on `stream`, or an error if it exits or takes over 60 s.
function lines(child, stream, n, what) {
  const rl = createInterface({ input: child[stream] });
  const got = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} printed nothing within 60 s`)), 60000);
    child.once("error", (e) => { clearTimeout(timer); reject(e); });
    child.once("exit", (code) => { clearTimeout(timer); reject(new Error(`${what} exited with ${code}: ${got.join(" | ")}`)); });
    rl.on("line", (line) => {
      if (got.length < n) { got.push(line); if (got.length === n) { clearTimeout(timer); child.removeAllListeners("exit"); resolve(got); } }
      else if (stream === "stderr") process.stderr.write(`${what}: ${line}\n`);
    });
  });
}
function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => { child.once("exit", () => done()); child.kill(); });
}

// The local Bitbucket stand-in and bb serving Streamable HTTP against it, both for real, built
// first if absent (tools/test-all.sh builds the workspace before the browser tests). bb admits
// the test host page's origin. `stop()` ends both; call it in `after` (it is safe to call twice).
// `stackArgs` go to bb-stack (e.g. `--data FILE`, a seed of its own); `bbArgs` to `bb ai mcp serve`.
export async function startBb({ stackArgs = [], bbArgs = [] } = {}) {
  if (!existsSync(exe("bb")) || !existsSync(exe("bb-stack"))) {
    execFileSync("cargo", ["build", "-q", "-p", "bb", "-p", "bb-stack"], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
  }
  const children = [];
  const all = async () => { for (const c of children.reverse()) await stop(c); };
  process.once("exit", () => { for (const c of children) if (c.exitCode === null) c.kill(); });
  try {
    const stack = spawn(exe("bb-stack"), ["--port", "0", ...stackArgs], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(stack);
    const [stackUrl, token] = await lines(stack, "stdout", 2, "bb-stack");
    stack.stdout.resume();
    const bb = spawn(exe("bb"), ["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--host", stackUrl.trim(), "--token", token.trim(),
      "--allow-origin", HOST_ORIGIN, "--log-level", "warning", ...bbArgs], { stdio: ["ignore", "ignore", "pipe"] });
    children.push(bb);
    const [mcp] = await lines(bb, "stderr", 1, "bb");
    if (!/^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(mcp.trim())) throw new Error(`bb did not start: ${mcp}`);
    return { mcp: mcp.trim(), stack: stackUrl.trim(), stop: all };
  } catch (err) {
    await all();
    throw err;
  }
}

export async function shot(page, name) {
  const path = join(RESULTS, `${name}.png`);
  // A frame taller than the viewport is painted only where the viewport is: grow it first.
  const height = await page.locator("iframe#view").evaluate((f) => Math.ceil(f.getBoundingClientRect().bottom) + 16);
  await page.setViewportSize({ width: 1040, height: Math.min(Math.max(height, 200), 8000) });
  await page.waitForTimeout(100);
  await page.locator("iframe#view").screenshot({ path });
  return path;
}

// Waits for `check()` to return something truthy, asking every 100 ms, and returns it; fails after
// `ms` naming `what`. Tests wait for the condition itself, never for a fixed time: on a loaded
// machine any fixed wait is a race.
export async function until(what, check, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const got = await check();
    if (got) return got;
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A page's console errors less the 405 of a GET of /mcp that names no session (bb pushes nothing there). */
export const realErrors = (errors) => errors.filter((e) => !/status of 405/.test(e));

/** The trimmed text of each node `locator` finds. */
export const texts = (locator) => locator.evaluateAll((nodes) => nodes.map((n) => n.textContent.trim()));

export function save(name, text) { writeFileSync(join(RESULTS, name), text); }
