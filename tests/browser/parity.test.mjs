// The page beside Bitbucket's own (issue #40), from fixtures: one order of the verdicts, Bitbucket's
// (Needs work, Approve), and a verdict given drawn as Bitbucket draws it (filled with its colour, white
// text) with enough contrast in light and dark; Bitbucket's words where bb's reached the person; what
// Bitbucket's page has that the card lacked; the layout of titles and threads.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { RESULTS, fixture, launch, open, result, shot, until } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const said = (text) => ({ content: [{ type: "text", text }] });
const refused = (text) => ({ isError: true, content: [{ type: "text", text }] });
const calls = async (v, name) => (await v.log()).calls.filter((c) => c.name === name).map((c) => c.arguments);
// `tools[name](args)` answers the view's tool calls; refresh_view answers `fresh(show)`.
const host = (tools = {}, fresh = null) => (p) => {
  if (p.name === "refresh_view" && fresh) return result(fresh(p.arguments.show));
  if (tools[p.name]) return tools[p.name](p.arguments);
  return refused(`no answer for ${p.name}`);
};
async function mount(data, { width = 700, theme = "light", displayMode, answer, wait = ".bb-card", maxHeight = 4000 } = {}) {
  const v = await open(browser, { answer, colorScheme: theme, mount: { input: data.call, result: result(data), width: displayMode ? 1000 : width, theme, displayMode, maxHeight } });
  await v.frame.locator(wait).waitFor({ timeout: 10000 });
  return v;
}
const MODES = [["700", { width: 700 }], ["fullscreen", { displayMode: "fullscreen" }]];

// The colour and the background of `node`, and their contrast; the background's contrast with the page's.
function looks(node) {
  const rgb = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number); return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 }; };
  const lum = ({ r, g, b }) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return Math.round(((Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05)) * 100) / 100; };
  const behind = (n) => { for (; n; n = n.parentElement) { const c = rgb(getComputedStyle(n).backgroundColor); if (c.a === 1) return c; } return { r: 255, g: 255, b: 255, a: 1 }; };
  const fg = rgb(getComputedStyle(node).color);
  const bg = behind(node);
  return { color: `${fg.r},${fg.g},${fg.b}`, text: ratio(fg, bg), fill: ratio(bg, behind(node.parentElement.closest(".bb-card, .bb-finish, #view") || document.body)) };
}

test("one order of the verdicts, Bitbucket's, and a verdict given filled with its colour and white text, in light and dark", async () => {
  for (const theme of ["light", "dark"]) {
    for (const [you, verdict] of [["bob", "approve"], ["carol", "request_changes"]]) {
      for (const [mode, m] of MODES) {
        const data = fixture("pr-review");
        data.pullRequest.you = you;
        const v = await mount(data, { ...m, theme });
        const bar = v.frame.locator(".bb-action-buttons button");
        assert.deepEqual((await bar.allTextContents()).slice(0, 2), ["Needs work", "Approve"], "Bitbucket's order on the card");
        const pressed = v.frame.locator('.bb-action-buttons button[aria-pressed="true"]');
        assert.equal(await pressed.getAttribute("data-verdict"), verdict);
        const got = await pressed.evaluate(looks);
        assert.equal(got.color, "255,255,255", `${theme} ${verdict}: white text on the pressed button`);
        assert.ok(got.text >= 4.5, `${theme} ${verdict}: text ${got.text}:1`);
        assert.ok(got.fill >= 3, `${theme} ${verdict}: the fill stands out from the page, ${got.fill}:1`);
        if (mode === "700") await shot(v.page, `parity-verdict-${verdict}-${mode}-${theme}`);
        await v.page.close();
      }
    }
    // The Finish review bar: the same order, and the chosen verdict pressed as strongly.
    const d = fixture("diff-review");
    const v = await mount(d, { displayMode: "fullscreen", theme, wait: ".bb-finish" });
    const seg = v.frame.locator(".bb-finish .bb-verdict");
    assert.deepEqual(await seg.allTextContents(), ["Needs work", "Approve", "Comment"], "Bitbucket's order in Finish review");
    for (const verdict of ["approve", "request_changes"]) {
      await v.frame.locator(`.bb-finish .bb-verdict[data-verdict="${verdict}"]`).click();
      const got = await v.frame.locator('.bb-finish .bb-verdict[aria-pressed="true"]').evaluate(looks);
      assert.equal(got.color, "255,255,255", `${theme} ${verdict} in Finish review`);
      assert.ok(got.text >= 4.5 && got.fill >= 3, `${theme} ${verdict} in Finish review: ${JSON.stringify(got)}`);
    }
    await shot(v.page, `parity-finish-review-fullscreen-${theme}`);
    await v.page.close();
  }
});

test("the person reads Bitbucket's words, not the tools' sentences for the model: a published review, a discarded one, a plain file", async () => {
  for (const [mode, m] of MODES) {
    for (const theme of ["light", "dark"]) {
      const published = (show) => { const d = fixture("diff-review"); d.diff.drafts = { count: 0, first: null }; d.call = show; return d; };
      const v = await mount(fixture("diff-review"), { ...m, theme, wait: ".bb-finish",
        answer: host({ submit_pr_review: () => said("Published 3 pending comments and approved PR #11 in BB/api as alice, with your summary comment.") }, published) });
      await v.frame.locator('.bb-finish .bb-verdict[data-verdict="approve"]').click();
      await v.frame.locator(".bb-act-publish").click();
      const note = v.frame.locator(".bb-review-said");
      await note.waitFor({ timeout: 10000 });
      assert.equal(await note.textContent(), "Your review is published. You approved this pull request.");
      const all = await v.frame.locator("body").innerText();
      assert.doesNotMatch(all, /as alice|PR #11 in BB\/api|highlighting/, "none of bb's sentences for the model");
      await shot(v.page, `parity-words-published-${mode}-${theme}`);
      await v.page.close();
    }
  }
  const gone = (show) => { const d = fixture("diff-review"); d.diff.drafts = { count: 0, first: null }; d.call = show; return d; };
  const d = await mount(fixture("diff-review"), { wait: ".bb-finish", answer: host({ discard_pr_review: () => said("Discarded 3 pending comments of PR #1 in BB/api as alice.") }, gone) });
  await d.frame.locator(".bb-act-discard").click();
  await d.frame.locator(".bb-act-discard-yes").click();
  await until("the words", async () => (await d.frame.locator(".bb-review-said").count()) === 1);
  assert.equal(await d.frame.locator(".bb-review-said").textContent(), "Your pending comments were discarded.");
  await d.page.close();
});

test("a draft pull request says so with Mark as ready, which is update_pull_request with draft false, and the card redraws as ready", async () => {
  for (const [mode, m, theme] of [["700", { width: 700 }, "light"], ["fullscreen", { displayMode: "fullscreen" }, "dark"]]) {
    const data = fixture("pr-draft");
    data.server.tools.push("update_pull_request", "refresh_view");
    const ready = (show) => { const d = fixture("pr-draft"); d.server.tools.push("update_pull_request", "refresh_view"); d.pullRequest.draft = false; d.call = show; return d; };
    const v = await mount(data, { ...m, theme, answer: host({ update_pull_request: () => said("Marked PR #4 in BB/api as ready for review.") }, ready) });
    const note = v.frame.locator(".bb-draft-note");
    assert.match(await note.textContent(), /This pull request is a draft\./);
    // One account of what it takes: the notice says publish, as the merge check's veto does (issue 54 item 10).
    assert.match(await note.textContent(), /can't be merged until it is published: Mark as ready publishes it\./);
    assert.doesNotMatch(await note.textContent(), /ready for review/);
    const button = note.locator(".bb-act-ready");
    assert.equal(await button.textContent(), "Mark as ready");
    await shot(v.page, `parity-draft-${mode}-${theme}`);
    await button.click();
    await until("the card redrawn as ready", async () => (await v.frame.locator(".bb-draft-note").count()) === 0);
    assert.deepEqual(await calls(v, "update_pull_request"), [{ project: "BB", repo: "api", pr_id: 4, draft: false }]);
    assert.equal(await v.frame.locator(".bb-meta .bb-loz").textContent(), "Open");
    assert.ok((await v.log()).context.some((c) => JSON.stringify(c).includes("The person marked PR #4 as ready for review.")));
    assert.deepEqual(v.errors, []);
    await v.page.close();
  }
  // Not without the tool: the notice still says it is a draft.
  const plain = await mount(fixture("pr-draft"));
  assert.equal(await plain.frame.locator(".bb-draft-note .bb-act-ready").count(), 0);
  assert.equal(await plain.frame.locator(".bb-draft-note").count(), 1);
  await plain.page.close();
});

test("an empty filtered list says Bitbucket's \"No pull requests match\" and \"Try modifying your filter criteria\", with a way to all of them", async () => {
  for (const [mode, m, theme] of [["700", { width: 700 }, "light"], ["fullscreen", { displayMode: "fullscreen" }, "dark"]]) {
    const data = fixture("list-open");
    data.list.items = [];
    data.list.more = false;
    data.server.tools.push("refresh_view");
    const all = (show) => { const d = fixture("list-open"); d.call = show; d.list.filter = "ALL"; return d; };
    const v = await mount(data, { ...m, theme, wait: ".bb-list", answer: host({}, all) });
    assert.equal(await v.frame.locator(".bb-empty-head").textContent(), "No pull requests match");
    assert.equal(await v.frame.locator(".bb-empty-hint").textContent(), "Try modifying your filter criteria or view all pull requests.");
    await shot(v.page, `parity-list-empty-${mode}-${theme}`);
    await v.frame.locator(".bb-view-all").click();
    await until("all pull requests", async () => (await v.frame.locator(".bb-row").count()) > 0);
    assert.equal((await calls(v, "refresh_view"))[0].show.state, "ALL");
    await v.page.close();
  }
});

test("layout as Bitbucket's: \"edited\" after the date on the activity's line; a multi-line comment grouped under a line says its lines; a collapsed thread stays collapsed when the view is drawn again", async () => {
  for (const [mode, m, theme] of [["700", { width: 700 }, "light"], ["fullscreen", { displayMode: "fullscreen" }, "dark"]]) {
    // Carol's comment on a file (activity 18 of pr-open), edited: her own, so the activity's line is its head.
    const data = fixture("pr-open");
    data.pullRequest.activity.items.find((i) => i.id === 18).comment.edited = true;
    const v = await mount(data, { ...m, theme });
    const item = v.frame.locator(".bb-act").filter({ has: v.frame.locator(".bb-edited") }).first();
    await item.waitFor({ state: "attached", timeout: 10000 });
    const edited = item.locator(":scope > .bb-line > .bb-edited");
    assert.equal(await edited.textContent(), "edited", "on the activity's line");
    const top = (l) => l.evaluate((n) => Math.round(n.getBoundingClientRect().top));
    assert.ok(Math.abs((await top(edited)) - (await top(item.locator(":scope > .bb-line > .bb-time").last()))) <= 4, "beside the date, not on a line of its own");
    assert.equal(await item.locator(".bb-comment .bb-chead", { hasText: "edited" }).count(), 0, "not again under it");
    await v.page.close();

    // diff-review: under src/client.rs line 12, Bob's one-line comment and Carol's on lines 11–12 (a suggestion).
    const fresh = (show) => { const d = fixture("diff-review"); d.call = show; return d; };
    const w = await mount(fixture("diff-review"), { ...m, theme, wait: ".bb-diffview",
      answer: host({ add_pr_comment: () => said("Replied to comment #1005 on PR #1 in BB/api as alice.") }, fresh) });
    const pick = w.frame.locator('.bb-tbtn[data-path="src/client.rs"]');
    if (await pick.count()) await pick.click();
    const carol = w.frame.locator('[data-comment-id="3003"]');
    assert.equal(await carol.locator(":scope > .bb-cbody > .bb-chead .bb-crange").textContent(), "· lines 11–12");
    assert.equal(await w.frame.locator('[data-comment-id="1006"] > .bb-cbody > .bb-chead .bb-crange').count(), 0, "a one-line comment says nothing more");
    if (mode === "fullscreen") await carol.screenshot({ path: `${RESULTS}/parity-range-${mode}-${theme}.png` });
    // Collapse the thread of line 12, then reply on another line: the redraw keeps it collapsed.
    const group = w.frame.locator("details.bb-threads", { has: w.frame.locator('[data-comment-id="3003"]') });
    // Inline, the diff is one shape that may hide these lines below its fold: pressed as a person's click would.
    const press = (l) => l.evaluate((n) => n.click());
    await press(group.locator(":scope > summary"));
    assert.equal(await group.evaluate((d) => d.open), false);
    const other = w.frame.locator('[data-comment-id="1005"]');
    await press(other.locator(":scope > .bb-cbody > .bb-comment-actions .bb-act-reply"));
    await other.locator(".bb-editor").evaluate((b) => { b.textContent = "Agreed."; b.dispatchEvent(new Event("input")); });
    await press(other.locator('.bb-editor-buttons button:text-is("Reply")'));
    await until("the redraw", async () => (await calls(w, "refresh_view")).length === 1);
    await until("drawn again", async () => (await w.frame.locator('[data-comment-id="1005"] .bb-editor').count()) === 0);
    const again = w.frame.locator("details.bb-threads", { has: w.frame.locator('[data-comment-id="3003"]') });
    assert.equal(await again.evaluate((d) => d.open), false, "still collapsed after the redraw");
    assert.equal(await w.frame.locator("details.bb-threads", { has: w.frame.locator('[data-comment-id="1005"]') }).evaluate((d) => d.open), true, "the others stay open");
    await shot(w.page, `parity-collapsed-${mode}-${theme}`);
    assert.deepEqual(w.errors, []);
    await w.page.close();
  }
});
