// The pull request list: rows as Bitbucket's list draws them, its heading in Bitbucket's words, and
// counts that agree with the rows drawn.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, texts, until } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function list(mount = {}, edit = (d) => d) {
  const data = edit(fixture("list-open"));
  const v = await open(browser, { mount: { input: data.call, result: result(data), ...mount } });
  await v.frame.locator(".bb-list").waitFor({ timeout: 10000 });
  return { ...v, data };
}

test("rows carry title, #id, author, branches, build status, conflict and needs-work marks, reviewers, counts and age", async () => {
  const { frame, page, data, errors } = await list();
  assert.equal(await frame.locator(".bb-list-title").textContent(), "Pull requests");
  assert.equal(await frame.locator(".bb-filter").textContent(), "State: Open");
  assert.equal(await frame.locator(".bb-list-repo").textContent(), "BB/api");
  assert.doesNotMatch(await frame.locator(".bb-list").textContent(), /state OPEN|newest first/);
  const first = frame.locator(".bb-row").first();
  assert.equal(await first.locator(".bb-row-link").textContent(), data.list.items[0].title);
  assert.equal(await first.locator(".bb-loz").textContent(), "Open");
  assert.match(await first.locator(".bb-row-sub").textContent(), /^Alice Example - #100, 49 minutes ago source branch: feature\/topic-100→target branch: main$/);
  assert.equal(await first.locator(".bb-build-mark").textContent(), "✕ 1 failed build");
  // #99: a failed build, a conflict, a needs-work review, five reviewers of which three are drawn and two fold into +2.
  const row99 = frame.locator('.bb-row[data-id="#99"]');
  assert.deepEqual(await texts(row99.locator(".bb-row-marks > *")), ["✕ 1 failed build", "⚠ Conflict", "! Needs work"]);
  assert.equal(await row99.locator(".bb-row-reviewers .bb-avatar").count(), 3);
  assert.equal(await row99.locator(".bb-fold [aria-hidden]").textContent(), "+2");
  // Reviewers and their status are text in the accessibility tree, the folded ones too.
  assert.deepEqual(await texts(row99.locator(".bb-row-reviewers .bb-sr")), ["Bob Builder: Approved", "Erin Approver: Approved", "Carol Reviewer: Needs work", "CI Bot, Dave Doe"]);
  // #98: success, conflict; 150 comments shown as Bitbucket caps them.
  const third = frame.locator('.bb-row[data-id="#98"]');
  assert.equal(await third.locator(".bb-build-mark").textContent(), "✓ 4 successful builds");
  assert.equal(await third.locator('[data-mark="conflict"]').count(), 1);
  assert.deepEqual(await third.locator(".bb-row-reviewers .bb-avatar").evaluateAll((n) => n.map((a) => a.title)), ["Erin Approver: Approved", "Dave Doe"]);
  assert.equal(await third.locator('[data-count="comments"] [aria-hidden]').last().textContent(), "99+");
  assert.equal(await third.locator('[data-count="comments"]').getAttribute("title"), "150 comments");
  assert.equal(await third.locator('[data-count="tasks"]').textContent(), "☐ 2 open tasks");
  assert.equal(await frame.locator('.bb-row[data-id="#97"] .bb-loz').textContent(), "Draft");
  assert.equal(await frame.locator('.bb-row[data-id="#97"] .bb-build-mark').count(), 0, "no build totals, no mark");
  assert.equal(await frame.locator('.bb-row[data-id="#94"] .bb-build-mark').textContent(), "◔ 1 build in progress");
  assert.deepEqual(errors, []);
  await shot(page, "list-inline-light");
});

// The rows wholly inside the inline frame, and whether the frame's edge cuts through any row.
const onScreen = (frame) => frame.locator(".bb-clip").evaluate((clip) => {
  const c = clip.getBoundingClientRect();
  const rows = [...clip.querySelectorAll(".bb-row")].map((r) => r.getBoundingClientRect());
  return { whole: rows.filter((r) => r.top >= c.top - 0.5 && r.bottom <= c.bottom + 1).length, cut: rows.filter((r) => r.top < c.bottom - 1 && r.bottom > c.bottom + 1).length };
});

test("Show more grows the inline frame, as the card's, and the count says how many rows are on screen, never one cut in half", async () => {
  const { frame, page } = await list({ theme: "dark", maxHeight: 1400 });
  assert.equal(await frame.locator(".bb-row").count(), 25, "every row is drawn; the frame shows what fits");
  assert.equal(await frame.locator(".bb-more").count(), 0, "no second Show more inside the list");
  const tallyTop = await frame.locator(".bb-tally").evaluate((t) => t.getBoundingClientRect().top);
  const firstRow = await frame.locator(".bb-row").first().evaluate((r) => r.getBoundingClientRect().top);
  assert.ok(tallyTop < firstRow, "the line stands under the heading, where the person looks");
  let seen = 0;
  for (let step = 0; step < 3; step++) {
    const now = await onScreen(frame);
    assert.equal(now.cut, 0, "the frame's edge falls between rows");
    assert.ok(now.whole > seen && now.whole < 25, `${now.whole} rows on screen`);
    await until(`the count of ${now.whole}`, async () => (await frame.locator(".bb-tally").textContent()) === `${now.whole} of 25 shown · more exist in Bitbucket`);
    if (step === 0) await shot(page, "list-inline-dark-count");
    seen = now.whole;
    if (step === 2) break;
    await frame.getByRole("button", { name: "Show more" }).click();
    await until("the frame grown", async () => (await onScreen(frame)).whole > seen);
  }
  assert.equal(await frame.locator(".bb-scroll-note").textContent(), "Scroll for the rest", "grown as far as the host allows");
  await page.evaluate(() => window.bbHost.setContext({ displayMode: "fullscreen" }));
  await frame.locator("main.bb-fullscreen").waitFor();
  assert.equal(await frame.locator(".bb-tally").textContent(), "25 pull requests shown · more exist in Bitbucket");
  await page.waitForTimeout(200);
  await shot(page, "list-fullscreen-dark");
});

test("a list that fits says nothing of a count, and one that does not says how many of all are on screen", async () => {
  const short = await list({}, (d) => { d.list.items = d.list.items.slice(0, 2); d.list.shown = 2; d.list.more = false; return d; });
  await until("the rows counted", async () => (await short.frame.locator(".bb-tally").textContent()) === "2 pull requests shown");
  assert.equal(await short.frame.locator(".bb-tally").isHidden(), true);
  const { frame } = await list({}, (d) => { d.list.items = d.list.items.slice(0, 9); d.list.shown = 9; d.list.more = false; return d; });
  const { whole } = await onScreen(frame);
  await until("the rows counted", async () => (await frame.locator(".bb-tally").textContent()) === `${whole} of 9 shown`);
});

test("a row's title opens the pull request, its branches their branch, its author their profile, all through the host", async () => {
  const { frame, log } = await list();
  const first = frame.locator(".bb-row").first();
  await first.locator(".bb-row-link").click();
  await first.locator(".bb-branch").first().click();
  await first.locator(".bb-row-sub .bb-name").click();
  assert.deepEqual((await log()).links, [
    "https://git.example.com/bitbucket/projects/BB/repos/api/pull-requests/100",
    "https://git.example.com/bitbucket/projects/BB/repos/api/browse?at=refs%2Fheads%2Ffeature/topic-100",
    "https://git.example.com/bitbucket/users/alice",
  ]);
});

// A hostile title of 100 KB: words, a run with no space to break at, and bidi controls.
const HUGE = `Hostile ${"long title words ".repeat(3000)}${"x".repeat(40000)} \u202eevil\u202c ${"end ".repeat(2000)}`.slice(0, 102400);
async function hugeList(mount, opened) {
  return list(mount, (d) => {
    d.server.tools.push("refresh_view"); // rows open here: the title is in a button, which is one box
    d.list.items[1].title = HUGE;
    d.list.items[2].title = "y".repeat(102400);
    if (!opened) d.server.tools = d.server.tools.filter((t) => t !== "refresh_view");
    return d;
  });
}
const rowHeights = (frame) => frame.locator(".bb-row").evaluateAll((rows) => rows.map((r) => Math.round(r.getBoundingClientRect().height)));

for (const opened of [true, false]) {
  test(`a 100 KB title is cut at three lines as the card cuts it, every row stays a few lines high, and Show the whole title reveals it (${opened ? "opened here" : "a link"})`, async () => {
    const { frame, page, errors } = await hugeList({ width: 700, theme: opened ? "light" : "dark" }, opened);
    const heights = await rowHeights(frame);
    assert.ok(Math.max(...heights) < 160, `rows ${heights}`);
    const row = frame.locator(".bb-row").nth(1);
    const clamp = row.locator(".bb-clamp");
    const text = await clamp.textContent();
    assert.ok(text.startsWith("Hostile long title words") && text.length > 90000, `the whole title is in the row, cut where it is drawn: ${text.slice(0, 40)} ${text.length}`);
    const lines = await clamp.evaluate((c) => Math.round(c.getBoundingClientRect().height / parseFloat(getComputedStyle(c).lineHeight)));
    assert.equal(lines, 3, "three lines, as the card");
    const show = row.getByRole("button", { name: "Show the whole title" });
    assert.equal(await frame.locator(".bb-row").nth(0).getByRole("button", { name: "Show the whole title" }).count(), 0, "a short title offers nothing");
    await shot(page, `list-longtitle-700-${opened ? "light" : "dark"}`);
    await show.click();
    assert.equal(await row.getByRole("button", { name: "Show less of the title" }).getAttribute("aria-expanded"), "true");
    assert.ok(await clamp.evaluate((c) => c.classList.contains("bb-cap-open") && c.scrollHeight > c.clientHeight + 100), "the whole title scrolls in its box");
    assert.ok((await rowHeights(frame))[1] < 500, "and the box is bounded");
    {
      await page.evaluate((theme) => window.bbHost.setContext({ displayMode: "fullscreen", theme }), opened ? "dark" : "light");
      await frame.locator("main.bb-fullscreen").waitFor();
      const full = await rowHeights(frame);
      assert.ok(Math.max(...full.filter((_, i) => i !== 1)) < 180, `rows ${full}`);
      await shot(page, `list-longtitle-fullscreen-${opened ? "dark" : "light"}`);
    }
    assert.deepEqual(errors, []);
  });
}
