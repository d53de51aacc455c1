// Hostile text everywhere draws as text: no script from data runs (a canary), no image but a
// data: one is made, no link leaves except through the host to a web address, nothing is fetched.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot } from "./harness.mjs";

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
  assert.equal(await v.frame.locator("main :is(script, iframe, object, embed, [onerror], [onclick], [onload], [style])").count(), 0, "no element from the data's tags or attributes");
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
  assert.equal(title, data.pullRequest.title, "the 100 KB title, script tags and all, is text");
  assert.ok(title.length > 100000);
  assert.match(await v.frame.locator(".bb-meta > .bb-name").textContent(), /^Mallory <img src=x onerror=/);
  assert.equal(await v.frame.locator(".bb-missing li").first().textContent(), data.missing[0]);
  assert.match(await v.frame.locator('[data-need="veto"]').textContent(), /<script>/);
  assert.equal(await v.frame.locator('.bb-build[data-state="FAILED"] .bb-build-name').textContent(), data.pullRequest.builds.items[0].name);
  // The mallory avatar points at a web address, trudy's at javascript:, eve's at a data: page: initials.
  assert.equal(await v.frame.locator(".bb-meta .bb-initials").textContent(), "<b");
  // Bidi controls stay inside their own isolate.
  assert.ok(await v.frame.locator(".bb-branch bdi").count() >= 2);
  const height = await v.page.locator("iframe#view").evaluate((f) => f.getBoundingClientRect().height);
  assert.ok(height <= 610, `a 100 KB title keeps the inline view bounded (${height})`);
  await shot(v.page, "hostile-card-inline");
  await v.frame.getByRole("button", { name: "Full screen" }).click();
  await v.frame.locator("main.bb-fullscreen").waitFor();
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
  assert.equal(await v.frame.locator(".bb-list-title").textContent(), data.list.title);
  assert.equal(await v.frame.locator(".bb-row").count(), 2);
  assert.equal(await v.frame.locator(".bb-row-link").first().textContent(), data.list.items[0].title);
  assert.equal(await v.frame.locator(".bb-tally").textContent(), "2 shown · more exist", "a string count is not believed");
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
