// Shared by the browser tests: the view page from the Rust crate, the test host bundled with
// esbuild, headless Debian Chromium through playwright-core, and the fixtures.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium } from "playwright-core";

export const HERE = dirname(fileURLToPath(import.meta.url));
export const RESULTS = join(HERE, "results");
mkdirSync(RESULTS, { recursive: true });

const HOST_URL = "http://host.invalid/";
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

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
  });
}

// Opens the test host and mounts the view. Options travel as JSON text: Playwright's own
// argument serializer stalls on the deeply nested hostile fixtures.
export async function open(browser, opts = {}) {
  const page = await browser.newPage({ viewport: { width: 1040, height: 800 }, colorScheme: opts.colorScheme || "light" });
  const requests = [];
  const errors = [];
  page.on("pageerror", (err) => errors.push(String(err)));
  page.on("console", (msg) => { if (msg.type() === "error") errors.push(msg.text()); });
  const html = await host();
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url === HOST_URL) return route.fulfill({ status: 200, contentType: "text/html", headers: { "content-security-policy": CSP }, body: html });
    requests.push(url);
    return route.abort();
  });
  await page.goto(HOST_URL);
  const mounted = page.evaluate(([h, o]) => window.bbHost.mount(h, JSON.parse(o)), [view(), JSON.stringify(opts.mount || {})]);
  const late = new Promise((_, reject) => setTimeout(() => reject(new Error("the view did not initialize within 15 s")), 15000).unref());
  await Promise.race([mounted, late]);
  const frame = page.frameLocator("iframe#view");
  return { page, frame, requests, errors, log: () => page.evaluate(() => window.bbHost.log) };
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

export function save(name, text) { writeFileSync(join(RESULTS, name), text); }
