// Hostile text everywhere draws as text: no script from data runs (a canary), no image but a
// data: one is made, no link leaves except through the host to a web address, nothing is fetched.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, texts } from "./harness.mjs";

const vis = (t) => t.replace(/[\u202A-\u202E\u2066-\u2069]/g, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase()}⟩`);

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// Fails the test if anything from the data ran: a message to the host, a global in the frame
// or the host, or a request.
async function noCanary(v) {
  await v.page.waitForTimeout(300);
  const log = await v.log();
  assert.deepEqual(log.pwned, [], "a script from the data posted to the host");
  assert.equal(await v.page.evaluate(() => window.__pwned), undefined, "a script set a global in the host");
  assert.equal(await v.frame.locator("html").evaluate(() => window.__pwned), undefined, "a script set a global in the view");
  assert.deepEqual(v.requests, [], "the view fetched nothing");
  const srcs = await v.frame.locator("img").evaluateAll((imgs) => imgs.map((i) => i.getAttribute("src")));
  for (const src of srcs) assert.match(src, /^data:image\//, "only data: images");
  assert.equal(await v.frame.locator("main :is(script, iframe, object, embed, [onerror], [onclick], [onload], [style]:not(.bb-clip))").count(), 0, "no element from the data's tags or attributes");
  for (const url of log.links) assert.match(url, /^https?:\/\//, "links only to web addresses");
  return log;
}

async function clickEveryLink(v) {
  const count = await v.frame.locator("a").count();
  for (let i = 0; i < count; i++) await v.frame.locator("a").nth(i).click({ force: true, timeout: 2000 }).catch(() => {});
  return count;
}

test("a hostile pull request draws as text and runs nothing", async () => {
  const data = fixture("pr-hostile");
  const v = await open(browser, { mount: { input: data.call, result: result(data) } });
  await v.frame.locator(".bb-card").waitFor({ timeout: 10000 });
  const title = await v.frame.locator(".bb-title").textContent();
  const shown = data.pullRequest.title.replace(/[\u202A-\u202E\u2066-\u2069]/g, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase()}⟩`);
  assert.equal(title, shown, "the 100 KB title, script tags and all, is text; its bidi controls drawn as marked tokens");
  assert.ok(title.length > 100000);
  assert.deepEqual(await texts(v.frame.locator(".bb-title .bb-bidi").first()), ["⟨U+202E⟩"]);
  assert.match(await v.frame.locator(".bb-meta > .bb-name").textContent(), /^Mallory <img src=x onerror=/);
  assert.equal(await v.frame.locator(".bb-missing li").first().textContent(), data.missing[0]);
  assert.match(await v.frame.locator('[data-need="veto"]').textContent(), /<img src=x/, "the veto's detailed message, as text");
  assert.match(await v.frame.locator('[data-need="veto"]').getAttribute("title"), /<script>/, "its summary in the tooltip");
  assert.equal(await v.frame.locator('.bb-build[data-state="FAILED"] .bb-build-name').textContent(), data.pullRequest.builds.items[0].name);
  // The mallory avatar points at a web address, trudy's at javascript:, eve's at a data: page: initials.
  assert.equal(await v.frame.locator(".bb-meta .bb-initials").textContent(), "<b");
  // Bidi controls are drawn visibly, each as a marked token, inside their own isolate.
  assert.ok(await v.frame.locator(".bb-branch bdi").count() >= 2);
  assert.match(await v.frame.locator(".bb-meta .bb-branch bdi").first().textContent(), /^~MALLORY\/api:feature\/⟨U\+202E⟩gnp\.exe⟨U\+202C⟩ ⟨U\+2066⟩isolate⟨U\+2069⟩/);
  assert.equal(await v.frame.locator("main").evaluate((m) => /[\u202A-\u202E\u2066-\u2069]/.test(m.textContent)), false, "no bidi control is left in the text");
  const height = await v.page.locator("iframe#view").evaluate((f) => f.getBoundingClientRect().height);
  assert.ok(height <= 610, `a 100 KB title keeps the inline view bounded (${height})`);
  assert.ok(await v.frame.locator(".bb-title").evaluate((t) => t.getBoundingClientRect().height) < 120, "inline, the title is cut at three lines");
  assert.ok((await v.frame.locator(".bb-title").getAttribute("title")).length <= 1100, "its tooltip holds the start of it");
  await shot(v.page, "hostile-card-inline");
  await v.frame.locator(".bb-mode").click();
  await v.frame.locator("main.bb-fullscreen").waitFor();
  // Fullscreen caps the field too: a 100 KB title does not make the card 11,000 px tall; its button reads the rest.
  const tall = await v.frame.locator(".bb-title").evaluate((t) => t.getBoundingClientRect().height);
  assert.ok(tall < 300, `the fullscreen title is cut (${tall} px)`);
  const whole = v.frame.getByRole("button", { name: "Show the whole title" });
  await whole.waitFor();
  await whole.click();
  const opened = await v.frame.locator(".bb-title").evaluate((t) => [t.getBoundingClientRect().height, t.scrollHeight]);
  assert.ok(opened[0] < 500 && opened[1] > 5000, `the whole title scrolls in a box of its own (${opened})`);
  // Links from the data: only web addresses are links; javascript:, data:, vbscript:, mailto: are text.
  const hrefs = await v.frame.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
  for (const href of hrefs) assert.match(href, /^https:\/\/example\.com\//);
  assert.equal(await v.frame.locator("a", { hasText: "javascript link" }).count(), 0);
  assert.ok(await v.frame.locator("span.bb-link", { hasText: /^javascript link$/ }).count() >= 1, "its text stays");
  const clicked = await clickEveryLink(v);
  assert.ok(clicked >= 2);
  const log = await noCanary(v);
  assert.ok(log.links.includes("https://example.com/safe?q=%3Cscript%3E"));
  assert.equal(await v.frame.locator(".bb-card").count(), 1, "the frame did not navigate");
  assert.match(await v.frame.locator(".bb-card").textContent(), /Further replies are in Bitbucket\./, "deep reply chains stop");
  // Unknown tags draw their text: the script element's body is shown, not run.
  assert.match(await v.frame.locator(".bb-desc").textContent(), /parent\.postMessage\(\{pwned:'tag'\}/);
});

test("a hostile list draws as text and runs nothing", async () => {
  const data = fixture("list-hostile");
  const v = await open(browser, { mount: { result: result(data) } });
  await v.frame.locator(".bb-list").waitFor({ timeout: 10000 });
  assert.equal(await v.frame.locator(".bb-list-title").textContent(), data.list.heading);
  assert.equal(await v.frame.locator(".bb-row").count(), 2);
  assert.equal(await v.frame.locator(".bb-row-link").first().textContent(), vis(data.list.items[0].title));
  assert.equal(await v.frame.locator(".bb-tally").textContent(), "2 pull requests shown · more exist in Bitbucket", "a string count is not believed");
  await clickEveryLink(v);
  const log = await noCanary(v);
  assert.deepEqual(log.links, ["https://example.com/pr/2"]);
  await shot(v.page, "hostile-list-inline");
});

test("a result without view data, or of an unknown version or kind, is shown as its text", async () => {
  for (const meta of [undefined, { v: 2, kind: "pull_request" }, { v: 1, kind: "__proto__" }, { v: 1, kind: "diff" }]) {
    const r = { content: [{ type: "text", text: "PR #1 <script>parent.postMessage({pwned:'text'},'*')</script>" }], _meta: meta ? { "bb/view": meta } : undefined };
    const v = await open(browser, { mount: { result: r } });
    await v.frame.locator(".bb-text").waitFor({ timeout: 10000 });
    assert.equal(await v.frame.locator(".bb-text").textContent(), r.content[0].text);
    await noCanary(v);
  }
});

test("a message from any window but the parent is ignored", async () => {
  const v = await open(browser, { mount: { input: { kind: "pull_request" } } });
  await v.frame.getByText("Waiting for the result…").waitFor();
  await v.page.evaluate((r) => window.bbHost.spoof(JSON.parse(r)), JSON.stringify(result(fixture("pr-open"))));
  await v.page.waitForTimeout(500);
  assert.equal(await v.frame.locator(".bb-card").count(), 0, "a sibling frame cannot draw a view");
  assert.equal(await v.frame.getByText("Waiting for the result…").count(), 1);
});
