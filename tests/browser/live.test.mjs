// Live views from fixtures: the test host answers the view's refresh_view calls itself, so each
// answer (unchanged, changed, an error, a slow one) is chosen by the test. Against bb and the
// stand-in, see live-bb.test.mjs.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, until } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const NEXT = 600;
// A fixture as bb answers now: a fingerprint, `next`, and refresh_view (and the diff) on offer.
function live(name, edit = (d) => d) {
  const data = fixture(name);
  data.fingerprint = "f1";
  data.next = NEXT;
  data.server.tools = [...data.server.tools, "refresh_view"];
  data.server.kinds = [...new Set([...data.server.kinds, "diff", "pull_request", "pull_requests"])];
  return edit(data);
}
const unchanged = (fingerprint = "f1", next = NEXT) => ({ content: [{ type: "text", text: "Unchanged." }], _meta: { "bb/view": { v: 1, unchanged: true, fingerprint, next, readAt: Date.now() } } });
const refreshes = async (log) => (await log()).calls.filter((c) => c.name === "refresh_view");
async function mount(data, answer, more = {}, wait = ".bb-card") {
  const v = await open(browser, { answer, colorScheme: more.theme === "dark" ? "dark" : "light", mount: { input: data.call, result: result(data), ...more } });
  await v.frame.locator(wait).waitFor({ timeout: 10000 });
  return v;
}

test("an unchanged answer keeps what is drawn and says when bb read Bitbucket; the model is told nothing", async () => {
  const data = live("pr-open");
  const v = await mount(data, () => unchanged("f2"));
  assert.equal(await v.frame.locator(".bb-read").textContent(), "Read from Bitbucket 2 minutes ago");
  await until("two refreshes", async () => (await refreshes(v.log)).length >= 2);
  const calls = await refreshes(v.log);
  assert.deepEqual(calls[0].arguments, { show: data.call, fingerprint: "f1" }, "the show call it answers and its fingerprint");
  assert.equal(calls[1].arguments.fingerprint, "f2", "the fingerprint of the last answer");
  assert.equal(await v.frame.locator(".bb-read").textContent(), "Read from Bitbucket just now");
  assert.deepEqual((await v.log()).context, [], "nothing changed, nothing told");
  assert.deepEqual(v.errors, []);
});

test("a running build turns green in place: no reload, scroll kept, and the model is told in one line", async () => {
  const data = live("pr-open");
  let answer = () => unchanged();
  const v = await mount(data, (p) => answer(p), { height: 420 });
  await v.frame.locator("body").evaluate(() => { window.sameDocument = true; });
  const clip = v.frame.locator(".bb-clip");
  // The frame may still be growing to its first height: scroll once it can hold the position.
  await until("the clip scrolled to 150", () => clip.evaluate((c) => { c.scrollTop = 150; return c.scrollTop === 150; }));
  assert.equal(await v.frame.locator('.bb-build[data-key="CI-INT"]').getAttribute("data-state"), "INPROGRESS");
  // Where the Builds section sits in the frame (its rows reorder when a build passes: failed, then in progress, …).
  const where = () => v.frame.locator('[aria-label="Builds"]').evaluate((b) => Math.round(b.getBoundingClientRect().top - b.closest(".bb-clip").getBoundingClientRect().top));
  const was = await where();
  const changed = live("pr-open", (d) => {
    d.fingerprint = "f2";
    d.pullRequest.builds.items.find((b) => b.key === "CI-INT").state = "SUCCESSFUL";
    d.pullRequest.reviewers.find((r) => r.user === "carol").status = "APPROVED";
    return d;
  });
  answer = () => result(changed, "Changed.");
  await until("the build turns green", async () => (await v.frame.locator('.bb-build[data-key="CI-INT"]').getAttribute("data-state")) === "SUCCESSFUL");
  assert.equal(await v.frame.locator("body").evaluate(() => window.sameDocument), true, "the same document: drawn in place");
  // What the person reads stays where it was, the line told them above it (the frame's scroll anchors it).
  await until("the person told", async () => (await v.frame.locator(".bb-told-words").textContent()) !== "");
  assert.ok(Math.abs((await where()) - was) <= 2, "the scroll position is kept");
  answer = () => unchanged("f2");
  await until("an unchanged answer after", async () => (await refreshes(v.log)).length >= 3);
  const told = (await v.log()).context;
  assert.equal(told.length, 1, "told once, for the one change");
  assert.deepEqual(told[0].content, [{ type: "text", text: "Build CI-INT on PR #1 passed; Carol Reviewer approved" }]);
  await v.frame.locator(".bb-clip").evaluate((c) => { c.scrollTop = 0; });
  await shot(v.page, "live-card-build-passed-inline");
  assert.deepEqual(v.errors, []);
});

test("a new comment appears in the activity, fullscreen, with the document's scroll kept", async () => {
  const data = live("pr-open");
  let answer = () => unchanged();
  const v = await mount(data, (p) => answer(p), { displayMode: "fullscreen", frameHeight: 600 });
  await v.frame.locator("body").evaluate(() => window.scrollTo(0, 300));
  assert.equal(await v.frame.locator("body").evaluate(() => window.scrollY), 300);
  const changed = live("pr-open", (d) => {
    d.fingerprint = "f2";
    d.pullRequest.activity.items.unshift({ id: 99, action: "COMMENTED", commentAction: "ADDED", user: "dave", at: Date.now(),
      comment: { id: 500, author: "dave", at: Date.now(), text: [{ t: "p", c: ["Looks good now."] }], replies: [] } });
    return d;
  });
  answer = () => { answer = () => unchanged("f2"); return result(changed); };
  await v.frame.locator('[data-comment="500"]').waitFor({ timeout: 8000 });
  assert.match(await v.frame.locator('[data-comment="500"]').textContent(), /Looks good now\./);
  assert.equal(await v.frame.locator("body").evaluate(() => window.scrollY), 300);
  await until("told", async () => (await v.log()).context.length >= 1);
  assert.deepEqual((await v.log()).context.map((c) => c.content[0].text), ["Dave Doe commented"]);
});

test("while the person writes in the view a change waits, and is drawn once they leave the box, their words kept", async () => {
  const data = live("pr-open");
  let answer = () => unchanged();
  const v = await mount(data, (p) => answer(p), { displayMode: "fullscreen" });
  const box = v.frame.locator(".bb-editor").last();
  await box.click();
  await v.page.keyboard.type("Half a thought");
  answer = () => result(live("pr-open", (d) => { d.fingerprint = "f2"; d.pullRequest.builds.items.find((b) => b.key === "CI-INT").state = "FAILED"; return d; }));
  await until("the changed answer", async () => (await refreshes(v.log)).length >= 2);
  assert.equal(await v.frame.locator('.bb-build[data-key="CI-INT"]').getAttribute("data-state"), "INPROGRESS", "not drawn under the caret");
  await v.page.mouse.click(1030, 790);
  await until("drawn once focus left", async () => (await v.frame.locator('.bb-build[data-key="CI-INT"]').getAttribute("data-state")) === "FAILED");
  assert.equal(await v.frame.locator(".bb-editor").last().textContent(), "Half a thought");
  assert.deepEqual((await v.log()).context.map((c) => c.content[0].text), ["Build CI-INT on PR #1 failed"]);
});

test("a changed diff is offered, not swapped, until the person asks for it", async () => {
  const data = live("diff-view");
  const changed = live("diff-view", (d) => { d.fingerprint = "f2"; d.diff.diffs[0].hunks[0].lines[0].s = "    pub fn fetch(&self, url: &str) -> Result<Response> {"; return d; });
  const v = await mount(data, () => result(changed), {}, ".bb-diffview");
  const first = v.frame.locator(".bb-dl").first();
  const before = await first.textContent();
  await v.frame.locator(".bb-offer").waitFor({ timeout: 8000 });
  assert.equal(await v.frame.locator(".bb-live").textContent(), "This diff has changed Show the new version");
  assert.equal(await first.textContent(), before, "what the person reads stays");
  assert.deepEqual((await v.log()).context, [], "nothing new is drawn, so nothing is told");
  await shot(v.page, "live-diff-offered-inline");
  await v.frame.getByRole("button", { name: "Show the new version" }).click();
  assert.match(await v.frame.locator(".bb-dl").first().textContent(), /pub fn fetch/);
  assert.equal(await v.frame.locator(".bb-offer").count(), 0);
  await until("told", async () => (await v.log()).context.length === 1);
  assert.equal((await v.log()).context[0].content[0].text, "The diff of PR #1 changed");
});

// A comment by bob on the second file's line 2: what another person adds while the diff is open.
function commented(d) {
  d.fingerprint = "f2";
  const line = d.diff.diffs[1].hunks[0].lines[1];
  line.c = [{ id: 4242, author: "bob", at: 1764936000000, edited: false, state: "OPEN", task: false, replies: [],
    anchor: { line: 2, lineType: "ADDED", path: d.diff.diffs[1].path }, text: [{ t: "p", c: ["Should this back off on 503 as well?"] }] }];
  return d;
}

for (const [mode, theme] of [["inline", "light"], ["fullscreen", "dark"]]) {
  test(`a new comment on an open diff is named with its file, and Show goes to it (${mode}, ${theme})`, async () => {
    const data = live("diff-view");
    const changed = live("diff-view", commented);
    const path = changed.diff.diffs[1].path;
    let asked = 0; // bob's comment once; after that bb finds the state the page holds
    const v = await mount(data, () => (asked++ === 0 ? result(changed) : unchanged("f2")), mode === "inline" ? { width: 700, theme } : { displayMode: "fullscreen", theme }, ".bb-diffview");
    await v.frame.locator(".bb-offer").waitFor({ timeout: 8000 });
    assert.equal(await v.frame.locator(".bb-live").textContent(), `New: Bob Baker commented on ${path} Show`);
    assert.equal(await v.frame.locator("[data-comment-id='4242']").count(), 0, "not swapped under the person's reading");
    await shot(v.page, `live-diff-comment-offered-${mode === "inline" ? "700" : "fullscreen"}-${theme}`);
    await v.frame.getByRole("button", { name: "Show", exact: true }).click();
    // The new version is drawn (full screen on the comment's file) and focus is on the comment.
    await until("focus on the new comment", async () => v.frame.locator("body").evaluate(() => document.activeElement?.dataset?.commentId === "4242"));
    assert.equal(await v.frame.locator(".bb-offer").count(), 0);
    if (mode === "fullscreen") assert.equal(await v.frame.locator(".bb-pane").getAttribute("data-path"), path);
    await until("told", async () => (await v.log()).context.length === 1);
    assert.equal((await v.log()).context[0].content[0].text, `Bob Baker commented on ${path}`);
    await shot(v.page, `live-diff-comment-shown-${mode === "inline" ? "700" : "fullscreen"}-${theme}`);
    assert.deepEqual(v.errors, []);
  });
}

test("classes that come after the answer (a template lexer, a deadline) are drawn in place: nothing offered, nothing told", async () => {
  // One read's times for both: two fixtures moved to "now" a millisecond apart would differ in text.
  const coloured = live("diff-view", (d) => { d.fingerprint = "f2"; return d; });
  const plain = JSON.parse(JSON.stringify(coloured));
  plain.fingerprint = "f1";
  for (const f of plain.diff.diffs) for (const h of f.hunks || []) for (const l of h.lines || []) { delete l.r; l.p = "template"; }
  // The classes come only once the plain drawing is checked: on a loaded machine a first refresh may come first.
  let ready = false;
  const v = await mount(plain, () => (ready ? result(coloured) : unchanged("f1")), {}, ".bb-diffview");
  assert.equal(await v.frame.locator('[class*="bb-tk-"]').count(), 0, "drawn plain first");
  ready = true;
  await until("the classes", async () => (await v.frame.locator('[class*="bb-tk-"]').count()) > 0);
  assert.equal(await v.frame.locator(".bb-offer").count(), 0, "the same text is not a changed diff");
  assert.deepEqual((await v.log()).context, [], "nothing the person reads changed, so nothing is told");
});

test("an error keeps the view, says it could not update, and asks again after the answer's next", async () => {
  const data = live("pr-open");
  const v = await mount(data, () => ({ isError: true, content: [{ type: "text", text: "Bitbucket is unavailable. Try again later." }], _meta: { "bb/view": { v: 1, next: NEXT } } }));
  await v.frame.locator(".bb-live-bad").waitFor({ timeout: 8000 });
  assert.equal(await v.frame.locator(".bb-live").textContent(), "Could not update: Bitbucket is unavailable.");
  assert.equal(await v.frame.locator(".bb-card").count(), 1, "the view is kept");
  await until("a second ask", async () => (await refreshes(v.log)).length >= 2);
  await shot(v.page, "live-card-error-inline");
});

test("next: null asks nothing; a slow answer is not asked twice", async () => {
  const still = await mount(live("pr-merged", (d) => { d.next = null; return d; }), () => unchanged());
  await still.page.waitForTimeout(NEXT * 3);
  assert.equal((await refreshes(still.log)).length, 0);
  const slow = await mount(live("pr-open"), () => new Promise((r) => setTimeout(() => r(unchanged()), NEXT * 4)));
  await until("the first ask", async () => (await refreshes(slow.log)).length >= 1);
  await slow.page.waitForTimeout(NEXT * 3);
  assert.equal((await refreshes(slow.log)).length, 1, "one question in flight at a time");
});

test("nothing is asked while the frame is hidden or scrolled away, and a question that came due is asked on return", async () => {
  for (const how of ["display", "scroll"]) {
    const v = await mount(live("pr-open"), () => unchanged());
    await v.page.evaluate((h) => window.bbHost.hide(h), how);
    // On a loaded machine the first question may have gone before the frame was hidden: count from the hiding.
    const asked = (await refreshes(v.log)).length;
    await v.page.waitForTimeout(NEXT * 4);
    assert.equal((await refreshes(v.log)).length, asked, `nothing asked while hidden (${how})`);
    await v.page.evaluate(() => window.bbHost.unhide());
    await until(`an ask once shown again (${how})`, async () => (await refreshes(v.log)).length === asked + 1, 10000);
  }
});

test("nothing is asked after teardown", async () => {
  const v = await mount(live("pr-open"), () => unchanged());
  await until("the first ask", async () => (await refreshes(v.log)).length >= 1);
  await v.page.evaluate(() => window.bbHost.teardown());
  const n = (await refreshes(v.log)).length;
  await v.page.waitForTimeout(NEXT * 4);
  assert.equal((await refreshes(v.log)).length, n);
});

test("the card's Diff tab opens the diff in place; Back returns to the card and keeps it current", async () => {
  const card = live("pr-open");
  const diff = live("diff-view", (d) => { d.fingerprint = "d1"; return d; });
  const v = await mount(card, (p) => (p.arguments.fingerprint ? unchanged(p.arguments.fingerprint) : p.arguments.show.kind === "diff" ? result(diff) : result(card)));
  assert.deepEqual(await v.frame.locator(".bb-tab").evaluateAll((n) => n.map((t) => [t.textContent, t.getAttribute("aria-current")])), [["Overview", "page"], ["Diff", null], ["Commits", null]]);
  await v.frame.getByRole("button", { name: "Diff", exact: true }).click();
  await v.frame.locator(".bb-diffview").waitFor({ timeout: 8000 });
  const opened = (await refreshes(v.log)).find((c) => !c.arguments.fingerprint);
  assert.deepEqual(opened.arguments, { show: { kind: "diff", project: "BB", repo: "api", pr_id: 1 } }, "another show call and no fingerprint");
  assert.equal(await v.frame.locator('.bb-tab[aria-current="page"]').textContent(), "Diff");
  await shot(v.page, "live-nav-diff-inline");
  await until("the diff is kept current", async () => (await refreshes(v.log)).some((c) => c.arguments.fingerprint === "d1"));
  await v.frame.getByRole("button", { name: "← Back" }).click();
  await v.frame.locator(".bb-card").waitFor();
  assert.equal(await v.frame.locator(".bb-back").count(), 0, "nothing further back");
  const n = (await refreshes(v.log)).length;
  await until("the card is kept current again", async () => (await refreshes(v.log)).slice(n).some((c) => c.arguments.fingerprint === "f1"));
  assert.deepEqual((await v.log()).context.map((c) => c.content[0].text), ["The person opened the diff of PR #1 in BB/api", "The person went back to PR #1 in BB/api"]);
  assert.deepEqual(v.errors, []);
});

test("a list opens a pull request in place and another state through its State tabs; Bitbucket's page stays a link", async () => {
  const list = live("list-open");
  const merged = live("list-open", (d) => { d.list.filter = "MERGED"; d.call = { ...d.call, state: "MERGED" }; d.list.items = d.list.items.slice(0, 3).map((i) => ({ ...i, state: "MERGED" })); return d; });
  const card = live("pr-open");
  const v = await mount(list, (p) => (p.arguments.fingerprint ? unchanged(p.arguments.fingerprint)
    : p.arguments.show.kind === "pull_request" ? result(card) : result(merged)), {}, ".bb-list");
  assert.deepEqual(await v.frame.locator(".bb-states .bb-tab").evaluateAll((n) => n.map((t) => t.textContent)), ["Open", "Merged", "Declined", "All"]);
  await v.frame.locator(".bb-row .bb-out").first().click();
  assert.equal((await v.log()).links.length, 1, "the arrow opens Bitbucket's page through the host");
  await v.frame.getByRole("button", { name: "Merged", exact: true }).click();
  await v.frame.locator('.bb-states .bb-tab[data-state="MERGED"][aria-current="page"]').waitFor({ timeout: 8000 });
  assert.equal(await v.frame.locator(".bb-row").count(), 3);
  const asked = (await refreshes(v.log)).find((c) => !c.arguments.fingerprint).arguments.show;
  assert.deepEqual(asked, { ...list.call, state: "MERGED" }, "list_pull_requests' state argument");
  await v.frame.locator(".bb-row .bb-open-here").first().click();
  await v.frame.locator(".bb-card").waitFor({ timeout: 8000 });
  await shot(v.page, "live-nav-card-from-list-inline");
  await v.frame.getByRole("button", { name: "← Back" }).click();
  await v.frame.locator(".bb-list").waitFor();
  await v.frame.getByRole("button", { name: "← Back" }).click();
  await v.frame.locator('.bb-states .bb-tab[data-state="OPEN"][aria-current="page"]').waitFor();
  assert.deepEqual((await v.log()).context.map((c) => c.content[0].text), [
    "The person opened the merged pull requests of BB/api", `The person opened PR #${merged.list.items[0].id} in BB/api`,
    "The person went back to the merged pull requests of BB/api", "The person went back to the open pull requests of BB/api"]);
  assert.deepEqual(v.errors, []);
});

test("only kinds the server offers are opened: no tabs without the diff, no state tabs without refresh_view", async () => {
  const data = live("pr-open", (d) => { d.server.kinds = ["pull_request", "pull_requests"]; return d; });
  const v = await mount(data, () => unchanged());
  assert.equal(await v.frame.locator(".bb-tabs").count(), 0);
  const plain = fixture("list-open");
  const w = await open(browser, { mount: { input: plain.call, result: result(plain) } });
  await w.frame.locator(".bb-list").waitFor();
  assert.equal(await w.frame.locator(".bb-states, .bb-open-here, .bb-out").count(), 0);
  assert.equal(await w.frame.locator(".bb-filter").textContent(), "State: Open");
});

test("screenshots: a live card and list at 700 px and fullscreen, light and dark", async () => {
  for (const theme of ["light", "dark"]) {
    for (const [name, wait] of [["pr-open", ".bb-card"], ["list-open", ".bb-list"]]) {
      const inline = await mount(live(name), () => unchanged(), { width: 700, theme }, wait);
      await shot(inline.page, `live-${name}-700-${theme}`);
      const full = await mount(live(name), () => unchanged(), { displayMode: "fullscreen", theme }, wait);
      await shot(full.page, `live-${name}-fullscreen-${theme}`);
    }
  }
});

test("a change is told to the person in one line, in the model's words, read out politely, with a button to the changed item", async () => {
  const data = live("pr-open");
  let answer = () => unchanged();
  const v = await mount(data, (p) => answer(p), { width: 700 });
  const words = v.frame.locator(".bb-told-words");
  assert.equal(await words.getAttribute("aria-live"), "polite", "the live region is in the page before its words");
  assert.equal(await words.textContent(), "");
  const changed = live("pr-open", (d) => {
    d.fingerprint = "f2";
    d.pullRequest.builds.items.find((b) => b.key === "CI-INT").state = "FAILED";
    d.pullRequest.activity.items.unshift({ id: 99, action: "COMMENTED", commentAction: "ADDED", user: "dave", at: Date.now(),
      comment: { id: 500, author: "dave", at: Date.now(), text: [{ t: "p", c: ["Looks good now."] }], replies: [] } });
    return d;
  });
  answer = () => { answer = () => unchanged("f2"); return result(changed); };
  await until("the line", async () => (await words.textContent()) === "New: Build CI-INT on PR #1 failed · Dave Doe commented");
  assert.deepEqual((await v.log()).context.map((c) => c.content[0].text), ["Build CI-INT on PR #1 failed; Dave Doe commented"], "the same words as the model's");
  assert.equal(await words.isVisible(), true);
  await shot(v.page, "live-change-line-700-light");
  await v.frame.locator(".bb-told-go").click();
  await until("focus on the changed build", () => v.frame.locator('.bb-build[data-key="CI-INT"]').evaluate((b) => b === document.activeElement));
  await until("the line taken away once used", async () => (await words.textContent()) === "");
  assert.equal(await v.frame.locator(".bb-told-go").isHidden(), true);
  assert.deepEqual(v.errors, []);
});

test("a changed list says which row changed, and its button goes to that row", async () => {
  const data = live("list-open");
  let answer = () => unchanged();
  const v = await mount(data, (p) => answer(p), { theme: "dark", displayMode: "fullscreen" }, ".bb-list");
  const changed = JSON.parse(JSON.stringify(data));
  changed.fingerprint = "f2";
  changed.list.items[20].counts.comments += 1;
  answer = () => { answer = () => unchanged("f2"); return result(changed); };
  const words = v.frame.locator(".bb-told-words");
  await until("the line", async () => (await words.textContent()) === `New: ${data.list.title} changed`);
  await shot(v.page, "live-change-line-list-fullscreen-dark");
  await v.frame.locator(".bb-told-go").click();
  await until("focus on the row", () => v.frame.locator(`.bb-row[data-id="#${data.list.items[20].id}"]`).evaluate((r) => r === document.activeElement));
});

test("a scanner finishing updates its report in place and is told to the person and the model", async () => {
  const reports = (result) => ({ reports: [{ key: "sonar", title: "SonarQube", result, data: [{ title: "Bugs", text: result ? "2" : "…", url: null }], annotations: null }], annotations: null });
  const data = live("pr-open", (d) => { d.pullRequest.insights = reports(null); return d; });
  let answer = () => unchanged();
  const v = await mount(data, (p) => answer(p), { displayMode: "fullscreen" });
  const row = v.frame.locator('.bb-report[data-key="sonar"]');
  assert.equal(await row.getAttribute("data-result"), "PENDING");
  const changed = live("pr-open", (d) => { d.fingerprint = "f2"; d.pullRequest.insights = reports("FAIL"); return d; });
  answer = () => { answer = () => unchanged("f2"); return result(changed); };
  const words = v.frame.locator(".bb-told-words");
  await until("the line", async () => (await words.textContent()) === "New: Report SonarQube failed");
  assert.equal(await row.getAttribute("data-result"), "FAIL");
  assert.equal(await v.frame.locator('[data-count="failed-reports"]').textContent(), "✕ 1 failed report");
  assert.deepEqual((await v.log()).context.map((c) => c.content[0].text), ["Report SonarQube failed"]);
  await v.frame.locator(".bb-told-go").click();
  await until("focus on the report", () => row.evaluate((r) => r === document.activeElement));
  assert.deepEqual(v.errors, []);
});
