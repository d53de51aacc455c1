// The page beside Bitbucket's own (issue #40), from fixtures: one order of the verdicts, Bitbucket's
// (Needs work, Approve), and a verdict given drawn as Bitbucket draws it (filled with its colour, white
// text) with enough contrast in light and dark; Bitbucket's words where bb's reached the person; what
// Bitbucket's page has that the card lacked; the layout of titles and threads.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, until } from "./harness.mjs";

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
