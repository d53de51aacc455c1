// Draft reviews (issue #28): the model drafts, the person publishes. A PENDING comment is marked
// Pending with Edit and Delete only; a multi-line comment marks its lines; a suggestion is a small diff
// with Apply; the diff's review bar publishes or discards the drafts; the card counts them and opens the
// diff at the first. Fixtures: diff-review (diff-view with three drafts, two published suggestions and
// two multi-line comments) and pr-review (pr-open with three drafts, one a multi-line suggestion). The
// test host answers the view's tool calls; every button is a tools/call of the model's own tool.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, texts, until } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const HEAD = "c0ffee1e9c72b20d1a5f3e0b7d4c2a9f8e6b5a4d";
const WHERE = { project: "BB", repo: "api", pr_id: 1 };
const said = (text) => ({ content: [{ type: "text", text }] });
const refused = (text) => ({ isError: true, content: [{ type: "text", text }] });
const copy = (x) => JSON.parse(JSON.stringify(x));
// Every comment of a diff's data, wherever it is drawn.
function* allComments(d) {
  for (const x of d.diff.diffs) {
    const stack = [...(x.fileComments || []), ...x.hunks.flatMap((h) => h.lines.flatMap((l) => l.c || []))];
    while (stack.length) { const c = stack.pop(); yield c; stack.push(...(c.replies || [])); }
  }
}
// The test host's answers: `tools[name](args)` for each tool the view calls; refresh_view answers `fresh()`.
function host(tools = {}, fresh = () => fixture("diff-review")) {
  return (p) => {
    if (p.name === "refresh_view") return result(fresh(p.arguments.show));
    if (tools[p.name]) return tools[p.name](p.arguments);
    return refused(`no answer for ${p.name}`);
  };
}
async function diff(mount = {}, answer = host(), edit = (d) => d, name = "diff-review") {
  const data = edit(fixture(name));
  // Full screen as a host draws it: 1000 px wide.
  const v = await open(browser, { answer, colorScheme: mount.theme === "dark" ? "dark" : "light", mount: { input: data.call, result: result(data), width: mount.displayMode ? 1000 : undefined, ...mount } });
  await v.frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
  return { ...v, data };
}
const calls = async (v, name) => (await v.log()).calls.filter((c) => c.name === name).map((c) => c.arguments);
const file = async (v, path) => { await v.frame.locator(`.bb-tbtn[data-path="${path}"]`).click(); };

test("a draft is marked Pending beside its author and offers Edit and Delete, never Reply or Resolve", async () => {
  const v = await diff({ displayMode: "fullscreen" });
  const { frame } = v;
  await file(v, "src/retry.rs");
  const draft = frame.locator('[data-comment-id="3001"]');
  assert.equal(await draft.locator(":scope > .bb-cbody > .bb-chead .bb-loz").textContent(), "Pending");
  assert.match(await draft.locator(":scope > .bb-cbody > .bb-chead").textContent(), /^Alice Archer Pending /, "beside the author's name");
  assert.equal(await draft.locator(".bb-act-reply, .bb-act-task").count(), 0);
  assert.deepEqual(await texts(draft.locator(":scope > .bb-cbody > .bb-comment-actions > button:visible")), ["Edit", "Delete"]);
  await file(v, "src/client.rs");
  // A pending reply in a published thread: the thread keeps its Reply, the draft has none.
  const thread = frame.locator('[data-comment-id="1006"]');
  assert.equal(await thread.locator(":scope > .bb-cbody > .bb-comment-actions .bb-act-reply").count(), 1);
  const reply = frame.locator('[data-comment-id="3004"]');
  assert.equal(await reply.locator(".bb-pending").textContent(), "Pending");
  assert.equal(await reply.locator(".bb-act-reply").count(), 0);
  assert.equal(await frame.locator('[data-comment-id="1006"] > .bb-cbody .bb-pending').count(), 1, "the published comment is not marked, only its draft reply");
  // Without the tools: a draft shows no buttons at all.
  const bare = await diff({ displayMode: "fullscreen" }, host(), (d) => { d.server.tools = d.server.tools.filter((t) => !/^(update|delete)_pr_comment$/.test(t)); return d; });
  await file(bare, "src/retry.rs");
  assert.equal(await bare.frame.locator('[data-comment-id="3001"] .bb-comment-actions').count(), 0);
  // The card draws drafts alike, and says "lines 12–14" where a one-line comment says "line 12".
  const card = fixture("pr-review");
  const c = await open(browser, { mount: { input: card.call, result: result(card), displayMode: "fullscreen" } });
  await c.frame.locator(".bb-card").waitFor({ timeout: 10000 });
  const pending = c.frame.locator('.bb-act [data-comment="40"]');
  // The sentence names the author: Pending beside that name, once.
  assert.match(await c.frame.locator('.bb-act:has([data-comment="40"]) > .bb-line').textContent(), /^Alice Example\s*Pending commented on a file/);
  assert.equal(await c.frame.locator('.bb-act:has([data-comment="40"]) .bb-pending').count(), 1);
  assert.equal(await pending.locator(".bb-act-reply").count(), 0);
  assert.deepEqual(await texts(pending.locator(":scope > .bb-cbody > .bb-comment-actions > button:visible")), ["Edit", "Delete"]);
  assert.equal(await pending.locator(".bb-anchor").textContent(), "src/lib.rs · lines 12–14");
  assert.equal(await c.frame.locator('[data-comment="20"] > .bb-cbody > .bb-anchor').textContent(), "src/lib.rs · line 12");
  assert.equal(await c.frame.locator('[data-comment="20"] > .bb-cbody > .bb-comment-actions .bb-act-reply').count(), 1);
  // As many drafts drawn as the card counts; the draft task is not among the open tasks.
  assert.equal(await c.frame.locator(".bb-pending-line").textContent(), "3 pending comments");
  assert.equal(await c.frame.locator(".bb-activity .bb-pending").count(), 3);
  assert.equal(await c.frame.locator('[data-comment="41"] .bb-act-reply').count(), 0, "a draft reply: no Reply");
  assert.equal(await c.frame.locator('[data-comment="42"] .bb-act-task').count(), 0, "a draft task: no Resolve");
  assert.equal(await c.frame.locator('.bb-task-list', { hasText: "Update the changelog" }).count(), 0);
  assert.deepEqual([...v.errors, ...bare.errors, ...c.errors], []);
});

test("Edit opens the draft's Markdown in a box; Save calls update_pr_comment and the view is redrawn in place; a refusal keeps the words", async () => {
  let refuse = true;
  const edited = (show) => {
    const d = fixture("diff-review");
    for (const c of allComments(d)) if (c.id === 3001) c.text = [{ t: "p", c: ["Cap it at 6.4 s."] }];
    d.call = show;
    return d;
  };
  const v = await diff({ displayMode: "fullscreen" }, host({
    update_pr_comment: () => (refuse ? refused("Bitbucket refused: the comment changed since it was read. Read it again.") : said("Updated comment 3001.")),
  }, edited));
  const { frame, page } = v;
  await file(v, "src/retry.rs");
  await page.evaluate(() => { window.__marker = "same page"; });
  const draft = frame.locator('[data-comment-id="3001"]');
  await draft.locator(".bb-act-edit").click();
  const box = frame.locator('[data-composer="edit-3001"] .bb-editor');
  assert.equal(await box.innerText(), "Say the cap in the doc comment, and shift rather than `pow`:\n\n```suggestion\n/// How long to wait before attempt `n` (0-based): at most 6.4 s.\npub fn backoff(n: u32) -> Duration {\n    Duration::from_millis(100 << n.min(6))\n```",
    "the Markdown as the model wrote it, its suggestion fenced");
  assert.equal(await box.evaluate((b) => b === document.activeElement), true);
  assert.equal(await draft.locator(":scope > .bb-cbody > .bb-cap").isVisible(), false, "the box takes the text's place");
  assert.equal(await draft.locator(".bb-act-edit, .bb-act-delete").first().isVisible(), false, "and its buttons' while it is open");
  await page.evaluate(() => scrollTo(0, 0));
  await shot(page, "review-edit-fullscreen-light");
  // Cancel closes it and the text is back.
  await frame.locator('[data-composer="edit-3001"] button', { hasText: "Cancel" }).click();
  assert.equal(await frame.locator('[data-composer="edit-3001"]').count(), 0);
  assert.equal(await draft.locator(":scope > .bb-cbody > .bb-cap").isVisible(), true);
  await draft.locator(".bb-act-edit").click();
  await box.fill("Cap it at 6.4 s.");
  await frame.locator('[data-composer="edit-3001"] button', { hasText: "Save" }).click();
  const problem = frame.locator('[data-composer="edit-3001"] .bb-action-problem');
  await problem.waitFor({ state: "visible", timeout: 10000 });
  assert.equal(await problem.textContent(), "Bitbucket refused: the comment changed since it was read.", "bb's words, beside the comment");
  assert.equal(await box.innerText(), "Cap it at 6.4 s.", "the person's words are kept");
  assert.equal((await calls(v, "refresh_view")).length, 0, "nothing else changed");
  refuse = false;
  await frame.locator('[data-composer="edit-3001"] button', { hasText: "Save" }).click();
  await until("the redraw", async () => (await frame.locator('[data-comment-id="3001"] .bb-md').textContent()) === "Cap it at 6.4 s.");
  assert.deepEqual(await calls(v, "update_pr_comment"), [{ ...WHERE, comment_id: 3001, text: "Cap it at 6.4 s." }, { ...WHERE, comment_id: 3001, text: "Cap it at 6.4 s." }]);
  assert.deepEqual(await calls(v, "refresh_view"), [{ show: v.data.call }], "read again with the view's call");
  assert.equal(await frame.locator('[data-composer="edit-3001"]').count(), 0, "the box is gone");
  assert.equal(await page.evaluate(() => window.__marker), "same page", "drawn in place, not reloaded");
  assert.ok((await v.log()).context.some((m) => JSON.stringify(m).includes("The person edited a pending comment on PR #1.")));
  assert.deepEqual(v.errors, []);
});

test("Delete asks first, then calls delete_pr_comment; a refusal is said beside the comment and nothing else changes", async () => {
  let refuse = true;
  const without = (show) => {
    const d = fixture("diff-review");
    for (const c of allComments(d)) c.replies = (c.replies || []).filter((r) => r.id !== 3004);
    d.diff.drafts.count = 2;
    d.call = show;
    return d;
  };
  const v = await diff({ displayMode: "fullscreen" }, host({ delete_pr_comment: () => (refuse ? refused("Bitbucket answered 404: the comment is gone.") : said("Deleted comment 3004.")) }, without));
  const { frame } = v;
  await file(v, "src/client.rs");
  const draft = frame.locator('[data-comment-id="3004"]');
  await draft.locator(".bb-act-delete").click();
  const ask = draft.locator(".bb-confirm");
  assert.equal(await ask.isVisible(), true);
  assert.match(await ask.textContent(), /^Delete this pending comment\? Delete Cancel$/);
  assert.equal(await draft.locator(".bb-act-delete").isVisible(), false);
  assert.equal((await calls(v, "delete_pr_comment")).length, 0, "nothing is deleted before the person confirms");
  await ask.getByRole("button", { name: "Cancel" }).click();
  assert.equal(await ask.isVisible(), false);
  await draft.locator(".bb-act-delete").click();
  await draft.locator(".bb-act-delete-yes").click();
  const problem = draft.locator(":scope > .bb-cbody > .bb-comment-actions > .bb-action-problem");
  await problem.waitFor({ state: "visible", timeout: 10000 });
  assert.equal(await problem.textContent(), "Bitbucket answered 404: the comment is gone.");
  assert.equal(await frame.locator('[data-comment-id="3004"]').count(), 1, "the draft is still drawn");
  assert.equal(await frame.locator(".bb-finish-count").textContent(), "3 pending comments");
  assert.equal((await calls(v, "refresh_view")).length, 0);
  refuse = false;
  await draft.locator(".bb-act-delete-yes").click();
  await until("the redraw without it", async () => (await frame.locator('[data-comment-id="3004"]').count()) === 0);
  assert.deepEqual(await calls(v, "delete_pr_comment"), [{ ...WHERE, comment_id: 3004 }, { ...WHERE, comment_id: 3004 }]);
  assert.equal(await frame.locator(".bb-finish-count").textContent(), "2 pending comments");
  assert.deepEqual(v.errors, []);
});

test("a multi-line comment marks exactly its lines in the gutter, unified and side-by-side; its thread is under the last", async () => {
  const v = await diff({ displayMode: "fullscreen" });
  const { frame } = v;
  const spanned = () => frame.locator("tr.bb-dl[data-span]").evaluateAll((rows) => rows.map((r) => `${r.dataset.old || "-"}:${r.dataset.new || "-"} ${r.dataset.span}`));
  await file(v, "src/retry.rs");
  assert.deepEqual(await spanned(), ["-:4 new", "-:5 new", "-:6 new"]);
  assert.equal(await frame.locator("td.bb-lspan").count(), 3, "one gutter cell a line, the new side's");
  assert.equal(await frame.locator('tr.bb-dl[data-new="6"] + tr.bb-dc [data-comment-id="3001"]').count(), 1, "the thread under line 6");
  assert.equal(await frame.locator('tr.bb-dl[data-new="4"] + tr.bb-dc, tr.bb-dl[data-new="5"] + tr.bb-dc').count(), 0, "and drawn once");
  // src/client.rs: Carol's comment covers new 11–12; the removed old 11 between is not on that side.
  await file(v, "src/client.rs");
  assert.deepEqual(await spanned(), ["-:11 new", "-:12 new"]);
  await frame.getByRole("button", { name: "Side-by-side diff" }).click();
  assert.deepEqual(await spanned(), ["11:11 new", "-:12 new"], "beside the removed line, only the new half");
  assert.deepEqual(await frame.locator("td.bb-lspan").evaluateAll((cells) => cells.map((c) => [c.cellIndex, c.textContent])), [[2, "11"], [2, "12"]]);
  // A range that starts on the other side (fromType REMOVED): every line drawn from the first to the last.
  const mixed = await diff({ displayMode: "fullscreen" }, host(), (d) => {
    const line = d.diff.diffs[0].hunks[0].lines.find((l) => l.n === 12 && l.t === "A");
    Object.assign(line.c.find((c) => c.id === 3003).anchor, { from: 11, fromType: "REMOVED" });
    return d;
  });
  await file(mixed, "src/client.rs");
  assert.deepEqual(await mixed.frame.locator("tr.bb-dl[data-span]").evaluateAll((rows) => rows.map((r) => `${r.dataset.old || "-"}:${r.dataset.new || "-"} ${r.dataset.span}`)),
    ["11:- old", "-:11 new", "-:12 new"]);
  assert.deepEqual([...v.errors, ...mixed.errors], []);
});

test("a suggestion is a small diff of removed and added lines; Apply calls apply_pr_suggestion only on a published comment of an open pull request", async () => {
  const applied = (show) => { const d = fixture("diff-review"); d.call = show; return d; };
  const v = await diff({ displayMode: "fullscreen" }, host({ apply_pr_suggestion: () => said("Applied the suggestion in commit 9f8e7d6c5b4a on feature/retry.") }, applied));
  const { frame, page } = v;
  await file(v, "src/client.rs");
  const one = frame.locator('[data-comment-id="3002"] .bb-suggest');
  assert.equal(await one.locator(".bb-suggest-head strong").textContent(), "Suggested change");
  assert.deepEqual(await one.locator("tr").evaluateAll((rows) => rows.map((r) => [r.className, ...[...r.cells].map((c) => c.textContent)])), [
    ["bb-dl-R", "16", "", "-removed:         self.transport.execute(req).map_err(Error::from)"],
    ["bb-dl-A", "", "16", "+added:         self.transport.execute(req).map_err(Error::Transport)"]]);
  assert.equal(await frame.locator('[data-comment-id="3002"] pre').count(), 0, "drawn as the suggestion, not also as code");
  // bb did not see the old lines: which lines it replaces, in words, above the proposed ones.
  const unseen = frame.locator('[data-comment-id="3003"] .bb-suggest');
  assert.equal(await unseen.locator(".bb-suggest-head strong").textContent(), "Suggested change for lines 11–12");
  assert.deepEqual(await unseen.locator("tr").evaluateAll((rows) => rows.map((r) => r.className)), ["bb-dl-A"]);
  assert.equal(await unseen.locator(".bb-act-apply").count(), 1);
  await one.locator(".bb-act-apply").click();
  const note = frame.locator('[data-comment-id="3002"] .bb-said');
  await until("the redraw", async () => (await calls(v, "refresh_view")).length === 1);
  await note.waitFor({ state: "visible", timeout: 10000 });
  assert.equal(await note.textContent(), "Suggestion applied: committed to feature/retry.", "in the person's words, kept across the redraw");
  assert.deepEqual(await calls(v, "apply_pr_suggestion"), [{ ...WHERE, comment_id: 3002, index: 0 }]);
  await shot(page, "review-applied-fullscreen-light");
  // A draft's suggestion: no Apply.
  await file(v, "src/retry.rs");
  const draft = frame.locator('[data-comment-id="3001"] .bb-suggest');
  assert.equal(await draft.locator("tr.bb-dl-R").count(), 3);
  assert.deepEqual(await draft.locator("tr.bb-dl-A td:nth-child(2)").evaluateAll((c) => c.map((x) => x.textContent)), ["4", "5", "6"]);
  assert.equal(await draft.locator(".bb-act-apply").count(), 0, "not on a PENDING comment");
  // Not without the tool, nor once merged.
  for (const edit of [(d) => { d.server.tools = d.server.tools.filter((t) => t !== "apply_pr_suggestion"); return d; }, (d) => { d.diff.state = "MERGED"; return d; }]) {
    const w = await diff({ displayMode: "fullscreen" }, host(), edit);
    await file(w, "src/client.rs");
    assert.equal(await w.frame.locator(".bb-suggest").count(), 2);
    assert.equal(await w.frame.locator(".bb-act-apply").count(), 0);
    await w.page.close();
  }
  // No entry for a ```suggestion block (missing or short): it stays a code block, its text all there.
  const short = await diff({ displayMode: "fullscreen" }, host(), (d) => {
    for (const c of allComments(d)) { if (c.id === 3002) delete c.suggestions; if (c.id === 3003) c.suggestions = []; }
    return d;
  });
  await file(short, "src/client.rs");
  assert.equal(await short.frame.locator(".bb-suggest").count(), 0);
  assert.equal(await short.frame.locator('[data-comment-id="3002"] pre.bb-code').textContent(), "        self.transport.execute(req).map_err(Error::Transport)\n");
  assert.equal(await short.frame.locator('[data-comment-id="3003"] pre.bb-code').getAttribute("data-lang"), "suggestion");
  assert.deepEqual([...v.errors, ...short.errors], []);
});

test("the review bar counts the drafts; Publish sends the verdict, the summary and the commit, all waits while it is out, and the view redraws without the bar", async () => {
  let release;
  const held = new Promise((r) => { release = r; });
  const published = (show) => {
    const d = fixture("diff-review");
    for (const c of allComments(d)) if (c.state === "PENDING") c.state = "OPEN";
    d.diff.drafts = { count: 0, first: null };
    d.call = show;
    return d;
  };
  const v = await diff({ displayMode: "fullscreen" }, host({ submit_pr_review: async () => { await held; return said("Published 3 comments and approved PR #1."); } }, published));
  const { frame, page } = v;
  const bar = frame.locator(".bb-finish");
  assert.equal(await bar.locator(".bb-finish-count").textContent(), "3 pending comments");
  assert.equal(await frame.locator(".bb-pane .bb-is-pending, .bb-tree .bb-is-pending").count(), 1, "docs/retry.md, the tree's first file, has the file draft");
  assert.deepEqual(await texts(bar.locator(".bb-verdict")), ["Needs work", "Approve", "Comment"]);
  assert.deepEqual(await bar.locator(".bb-verdict").evaluateAll((b) => b.map((x) => x.getAttribute("aria-pressed"))), ["false", "false", "true"], "Comment (no verdict) until the person chooses");
  await bar.locator('.bb-verdict[data-verdict="approve"]').click();
  assert.deepEqual(await bar.locator(".bb-verdict").evaluateAll((b) => b.map((x) => x.getAttribute("aria-pressed"))), ["false", "true", "false"]);
  await bar.locator(".bb-summary-box").fill("Looks good once the cap is in.");
  await shot(page, "review-bar-fullscreen-light");
  await page.evaluate(() => { window.__marker = "same page"; });
  await bar.locator(".bb-act-publish").click();
  await until("the call", async () => (await calls(v, "submit_pr_review")).length === 1);
  assert.deepEqual(await bar.locator("button").evaluateAll((b) => b.filter((x) => x.offsetParent).map((x) => [x.textContent, x.disabled])),
    [["Needs work", true], ["Approve", true], ["Comment", true], ["Publish", true], ["Discard", true]], "nothing can be pressed twice");
  release();
  await until("the bar gone", async () => (await frame.locator(".bb-finish").count()) === 0);
  assert.deepEqual(await calls(v, "submit_pr_review"), [{ ...WHERE, action: "approve", comment: "Looks good once the cap is in.", commit: HEAD }]);
  assert.deepEqual(await calls(v, "refresh_view"), [{ show: v.data.call }]);
  assert.equal(await frame.locator(".bb-review-said").textContent(), "Your review is published. You approved this pull request.", "in Bitbucket's words, where the bar was");
  assert.equal(await frame.locator(".bb-pending").count(), 0, "nothing is pending any more");
  assert.equal(await page.evaluate(() => window.__marker), "same page");
  assert.ok((await v.log()).context.some((m) => JSON.stringify(m).includes("The person published their review of PR #1 and approved it.")));
  await shot(page, "review-published-fullscreen-light");
  assert.deepEqual(v.errors, []);
});

test("in full screen the review bar stays atop the file pane while the person scrolls; the file tree keeps its place", async () => {
  const v = await diff({ displayMode: "fullscreen", frameHeight: 600 });
  const { frame, page } = v;
  await file(v, "src/client.rs");
  const top = (sel) => frame.locator(sel).evaluate((n) => Math.round(n.getBoundingClientRect().top));
  assert.ok(await top(".bb-finish") > 100, "below the title at first");
  await frame.locator("html").evaluate(() => scrollTo(0, 700));
  assert.equal(await top(".bb-finish"), 0, "held at the top");
  assert.equal(await top(".bb-tree"), 0, "the tree beside it, not under it");
  assert.ok(await frame.locator(".bb-finish").evaluate((bar) => bar.getBoundingClientRect().left >= document.querySelector(".bb-tree").getBoundingClientRect().right), "over the pane only");
  await shot(page, "review-bar-sticky-fullscreen-light");
  assert.deepEqual(v.errors, []);
});

test("a refused Publish is said in the bar, the drafts untouched; Comment publishes without a verdict and without an empty summary", async () => {
  let refuse = true;
  const v = await diff({}, host({ submit_pr_review: () => (refuse ? refused("The pull request changed since this diff was read: read it again before publishing.") : said("Published 3 comments.")) }));
  const { frame, page } = v;
  const bar = frame.locator(".bb-finish");
  await bar.locator(".bb-act-publish").click();
  const problem = bar.locator(".bb-action-problem");
  await problem.waitFor({ state: "visible", timeout: 10000 });
  assert.equal(await problem.textContent(), "The pull request changed since this diff was read: read it again before publishing.");
  assert.equal(await bar.locator(".bb-finish-count").textContent(), "3 pending comments");
  assert.equal(await frame.locator(".bb-is-pending").count(), 3, "the drafts are all still drawn");
  assert.equal(await bar.locator(".bb-act-publish").isEnabled(), true);
  assert.equal((await calls(v, "refresh_view")).length, 0);
  await shot(page, "review-refused-700-light");
  refuse = false;
  await bar.locator(".bb-act-publish").click();
  await until("two calls", async () => (await calls(v, "submit_pr_review")).length === 2);
  assert.deepEqual(await calls(v, "submit_pr_review"), [{ ...WHERE, action: "comment", commit: HEAD }, { ...WHERE, action: "comment", commit: HEAD }]);
  // No head in the data: no commit sent.
  const old = await diff({}, host({ submit_pr_review: () => said("Published.") }), (d) => { delete d.diff.head; return d; });
  await old.frame.locator(".bb-act-publish").click();
  await until("the call", async () => (await calls(old, "submit_pr_review")).length === 1);
  assert.deepEqual(await calls(old, "submit_pr_review"), [{ ...WHERE, action: "comment" }]);
  assert.deepEqual([...v.errors, ...old.errors], []);
});

test("Discard asks first, then calls discard_pr_review; no bar without drafts or without submit_pr_review, no Discard without its tool", async () => {
  const gone = (show) => {
    const d = fixture("diff-review");
    d.diff.drafts = { count: 0, first: null };
    d.call = show;
    return d;
  };
  const v = await diff({}, host({ discard_pr_review: () => said("Discarded 3 pending comments.") }, gone));
  const { frame } = v;
  const bar = frame.locator(".bb-finish");
  await bar.locator(".bb-act-discard").click();
  assert.match(await bar.locator(".bb-confirm").textContent(), /^Discard all 3 pending comments\? Discard Cancel$/);
  assert.equal((await calls(v, "discard_pr_review")).length, 0);
  await shot(v.page, "review-discard-700-light");
  await bar.locator(".bb-act-discard-yes").click();
  await until("the bar gone", async () => (await frame.locator(".bb-finish").count()) === 0);
  assert.deepEqual(await calls(v, "discard_pr_review"), [WHERE]);
  assert.equal(await frame.locator(".bb-review-said").textContent(), "Your pending comments were discarded.");
  const cases = [
    [(d) => { d.diff.drafts.count = 0; return d; }, 0, 0],
    [(d) => { d.diff.drafts = null; return d; }, 0, 0],
    [(d) => { d.server.tools = d.server.tools.filter((t) => t !== "submit_pr_review"); return d; }, 0, 0],
    [(d) => { d.server.tools = d.server.tools.filter((t) => t !== "discard_pr_review"); return d; }, 1, 0],
    [(d) => { d.diff.drafts.count = 1; d.diff.state = "MERGED"; return d; }, 1, 1],
  ];
  for (const [edit, bars, discards] of cases) {
    const w = await diff({}, host(), edit);
    assert.equal(await w.frame.locator(".bb-finish").count(), bars);
    assert.equal(await w.frame.locator(".bb-act-discard").count(), discards);
    if (bars) assert.equal(await w.frame.locator(".bb-verdict").count(), edit.toString().includes("MERGED") ? 0 : 3, "a verdict only while open");
    await w.page.close();
  }
  assert.deepEqual(v.errors, []);
});

test("the card says how many comments are pending and opens the diff in place at the first", async () => {
  for (const mode of [{}, { displayMode: "fullscreen" }]) {
    const card = fixture("pr-review");
    // The host answers with diff-review, whose first draft is on src/retry.rs, line 6.
    card.pullRequest.drafts.first = { path: "src/retry.rs", line: 6 };
    const v = await open(browser, { answer: host(), mount: { input: card.call, result: result(card), ...mode } });
    const { frame } = v;
    await frame.locator(".bb-card").waitFor({ timeout: 10000 });
    const line = frame.locator(".bb-pending-line");
    assert.equal(await line.textContent(), "3 pending comments");
    assert.equal(await line.evaluate((p) => p.previousElementSibling.classList.contains("bb-action-bar")), true, "by the review buttons");
    if (!mode.displayMode) await shot(v.page, "review-card-700-light");
    await line.getByRole("button").click();
    await frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
    assert.deepEqual(await calls(v, "refresh_view"), [{ show: { kind: "diff", ...WHERE } }]);
    // The first draft (src/retry.rs, line 6) has the focus, its file open in full screen.
    await until("the first draft in view", async () => frame.locator("html").evaluate(() => document.activeElement && document.activeElement.dataset.commentId === "3001"));
    if (mode.displayMode) assert.equal(await frame.locator(".bb-pane").getAttribute("data-path"), "src/retry.rs");
    const box = await frame.locator('[data-comment-id="3001"]').boundingBox();
    assert.ok(box && box.y >= 0, "on screen");
    const told = (await v.log()).context.map((c) => c.content[0].text);
    assert.deepEqual(told, ["The person opened the diff of PR #1 in BB/api at their first pending comment"]);
    assert.deepEqual(v.errors, []);
    await v.page.close();
  }
  // A general comment first (first null): the first pending comment drawn.
  const card = fixture("pr-review");
  card.pullRequest.drafts.first = null;
  const v = await open(browser, { answer: host(), mount: { input: card.call, result: result(card), displayMode: "fullscreen" } });
  await v.frame.locator(".bb-pending-link").click();
  await until("a draft in view", async () => v.frame.locator("html").evaluate(() => Boolean(document.activeElement && document.activeElement.classList.contains("bb-is-pending"))));
  await v.page.close();
  // One: "1 pending comment"; none or unread: nothing.
  for (const [drafts, words] of [[{ count: 1, first: null }, "1 pending comment"], [{ count: 0, first: null }, null], [null, null]]) {
    const d = fixture("pr-review");
    d.pullRequest.drafts = drafts;
    const w = await open(browser, { mount: { input: d.call, result: result(d) } });
    await w.frame.locator(".bb-card").waitFor({ timeout: 10000 });
    assert.deepEqual(await texts(w.frame.locator(".bb-pending-line")), words ? [words] : []);
    await w.page.close();
  }
});

test("screenshots: a diff with drafts, a multi-line comment and suggestions, at 700 px and full screen, light and dark", async () => {
  for (const theme of ["light", "dark"]) {
    const inline = await diff({ width: 700, theme, maxHeight: 2400 });
    await inline.frame.locator(".bb-finish").waitFor();
    // Drawn once the suggestions are: the last thing the diff draws.
    await inline.frame.locator(".bb-suggest").first().waitFor();
    await shot(inline.page, `review-diff-700-${theme}`);
    for (const path of ["src/retry.rs", "src/client.rs"]) {
      const full = await diff({ displayMode: "fullscreen", theme });
      await file(full, path);
      await full.frame.locator(`.bb-pane[data-path="${path}"] .bb-file`).waitFor();
      await shot(full.page, `review-diff-${path.replace(/\W/g, "-")}-fullscreen-${theme}`);
      assert.deepEqual(full.errors, []);
      await full.page.close();
    }
    const card = fixture("pr-review");
    const c = await open(browser, { colorScheme: theme, mount: { input: card.call, result: result(card), theme, displayMode: "fullscreen", width: 1000 } });
    await c.frame.locator(".bb-card").waitFor({ timeout: 10000 });
    await shot(c.page, `review-card-fullscreen-${theme}`);
    assert.deepEqual([...inline.errors, ...c.errors], []);
    await inline.page.close();
    await c.page.close();
  }
});
