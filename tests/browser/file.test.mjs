// The source view (show kind file): Bitbucket's source page drawn from the view data (hand-written
// fixtures in the contract's shapes), inline at 700 px and fullscreen, light and dark; line selection;
// Show more appending the next window read through refresh_view; Blame in full screen; a binary file
// and an empty one. The test host answers the page's refresh_view calls from the fixtures.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, texts, until } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const calls = async (v) => (await v.log()).calls.filter((c) => c.name === "refresh_view").map((c) => c.arguments);
// The file as bb would answer for a window of it: lines [start, start + count) of file-client.json.
function windowOf(call) {
  const whole = fixture("file-client");
  const data = fixture("file-view");
  const start = call.start_line || 1;
  const count = call.line_count || 40;
  const lines = whole.file.lines.filter((l) => l.n >= start && l.n < start + count);
  const end = lines.length ? lines[lines.length - 1].n : start - 1;
  const last = end >= whole.file.end;
  data.call = call;
  Object.assign(data.file, { start, lines, end, last, total: last ? whole.file.end : null, blame: null });
  return result(data);
}
async function show(name, mount = {}, answer) {
  const data = fixture(name);
  const v = await open(browser, { answer, colorScheme: mount.theme === "dark" ? "dark" : "light", mount: { input: data.call, result: result(data), ...mount } });
  await v.frame.locator(".bb-fileview").waitFor({ timeout: 10000 });
  return { ...v, data };
}
// Every text line the view's bottom edge crosses (the frame's edge, or the inline clip's).
function cutLines(frame) {
  return frame.locator("body").evaluate(() => {
    const main = document.querySelector("main");
    const clip = document.querySelector(".bb-clip") || main;
    const edge = Math.min(clip.getBoundingClientRect().bottom, window.innerHeight);
    const cut = [];
    const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (!t.data.trim() || t.parentElement.closest(".bb-sr")) continue;
      range.selectNodeContents(t);
      for (const r of range.getClientRects()) if (r.top < edge - 0.5 && r.bottom > edge + 0.5) cut.push(t.data.slice(0, 40));
    }
    return cut;
  });
}

test("inline at 700 px: the path as breadcrumbs, the ref, Lines 1–40, Open in Bitbucket through the host, highlighted code", async () => {
  for (const theme of ["light", "dark"]) {
    const { frame, page, data, errors, log } = await show("file-view", { width: 700, theme });
    assert.equal(await frame.locator(".bb-crumbs").textContent(), " api / src / client.rs");
    assert.equal(await frame.locator(".bb-crumb-file").textContent(), "client.rs");
    assert.equal(await frame.locator(".bb-fref bdi").textContent(), "feature/retry");
    assert.equal(await frame.locator('[data-count="lines"]').textContent(), "Lines 1–40", "the file's length is not known yet");
    assert.equal(await frame.locator("tr.bb-sl").count(), 40, "every line carried, once");
    assert.equal(await frame.locator("tr#L1 .bb-dcode").textContent(), "use std::io;");
    assert.deepEqual(await texts(frame.locator("tr#L1 .bb-tk-kw")), ["use"], "code from the runs");
    assert.deepEqual(await texts(frame.locator("tr#L9 .bb-tk-kw")), ["pub", "struct"]);
    // The long line bb cut says so, with its full length.
    const cut = frame.locator("tr#L8 .bb-line-cut");
    assert.equal(await cut.getAttribute("data-cut"), "12000");
    assert.match(await cut.getAttribute("title"), /^This line has 12,000 characters; the first 306 are shown$/);
    // Inline: no blame column and no Blame.
    assert.equal(await frame.locator(".bb-blame, .bb-blame-btn").count(), 0);
    assert.equal(await frame.locator(".bb-file-more").isHidden(), false, "Show more is there (below the frame's edge)");
    assert.deepEqual(await cutLines(frame), [], "nothing cut mid-line at the frame's edge");
    await frame.locator(".bb-open-file").click();
    assert.deepEqual((await log()).links, [data.file.url], "opened through the host");
    assert.deepEqual(errors, []);
    await shot(page, `file-700-${theme}`);
    await page.close();
  }
});

test("a line number selects its line, shift+click a range, the same line again clears it; nothing navigates", async () => {
  const { frame, page, requests, log } = await show("file-view", { displayMode: "fullscreen" });
  const selected = () => frame.locator("tr.bb-sel").evaluateAll((rows) => rows.map((r) => r.id));
  await frame.locator("tr#L12 .bb-lnum").click();
  assert.deepEqual(await selected(), ["L12"]);
  assert.equal(await frame.locator("tr#L12 .bb-lnum").getAttribute("aria-pressed"), "true");
  await frame.locator("tr#L15 .bb-lnum").click({ modifiers: ["Shift"] });
  assert.deepEqual(await selected(), ["L12", "L13", "L14", "L15"]);
  await frame.locator("tr#L20 .bb-lnum").click();
  assert.deepEqual(await selected(), ["L20"]);
  await frame.locator("tr#L20 .bb-lnum").click();
  assert.deepEqual(await selected(), []);
  await frame.locator("tr#L3 .bb-lnum").click();
  assert.equal(await frame.locator("body").evaluate(() => location.href), "about:srcdoc", "the page did not navigate");
  assert.deepEqual(requests, []);
  assert.deepEqual((await log()).links, []);
  assert.equal(await frame.locator("tr#L3").evaluate((r) => getComputedStyle(r.querySelector(".bb-dcode")).backgroundColor !== getComputedStyle(document.querySelector("tr#L4 .bb-dcode")).backgroundColor), true, "the selected line is marked");
  await shot(page, "file-selected-fullscreen-light");
  await page.close();
});

test("Show more reads the next window with refresh_view and appends it under the lines read; a failure says so and can be retried", async () => {
  let fail = true;
  const v = await show("file-view", { displayMode: "fullscreen" }, (params) => {
    if (fail) return { isError: true, content: [{ type: "text", text: "Bitbucket answered 503. Try again later." }] };
    return windowOf(params.arguments.show);
  });
  const { frame, data } = v;
  await frame.locator("tr#L1").evaluate((r) => { r.keep = "the row the person read"; });
  const more = frame.locator(".bb-file-more");
  await more.click();
  await until("the failure", async () => !(await frame.locator(".bb-fproblem").isHidden()));
  assert.equal(await frame.locator(".bb-fproblem").textContent(), "Could not read more lines: Bitbucket answered 503.");
  assert.equal(await more.isEnabled(), true, "the control stays to retry");
  fail = false;
  await more.click();
  await frame.locator("tr#L60").waitFor({ timeout: 10000 });
  assert.deepEqual(await calls(v), [{ show: { ...data.call, start_line: 41 } }, { show: { ...data.call, start_line: 41 } }], "the call with start_line: end + 1, twice");
  assert.equal(await frame.locator("tr.bb-sl").count(), 74, "41 to 74 appended: the file ends at 74");
  assert.equal(await frame.locator("tr#L1").evaluate((r) => r.keep), "the row the person read", "the lines read were not drawn again");
  assert.deepEqual(await frame.locator("tr.bb-sl").evaluateAll((rows) => rows.map((r) => Number(r.dataset.line))), Array.from({ length: 74 }, (_, i) => i + 1));
  assert.equal(await frame.locator('[data-count="lines"]').textContent(), "Lines 1–74 of 74");
  assert.equal(await more.isHidden(), true, "the file ends here: no more to show");
  assert.equal(await frame.locator(".bb-fproblem").isHidden(), true);
  assert.equal(await frame.locator("tr#L41 .bb-lnum").evaluate((b) => b === document.activeElement), true, "focus on the first new line");
  // A redraw (back to inline) draws what was appended.
  await v.page.evaluate(() => window.bbHost.setContext({ displayMode: "inline" }));
  await frame.locator(".bb-clip tr#L74").waitFor({ state: "attached", timeout: 10000 });
  assert.deepEqual(v.errors, []);
  await v.page.close();
});

test("Blame in full screen: read with refresh_view, drawn as a column grouped by commit; toggled off and on without reading again", async () => {
  for (const theme of ["light", "dark"]) {
    const blamed = fixture("file-blame");
    const v = await show("file-view", { displayMode: "fullscreen", theme }, () => result(blamed));
    const { frame, data, page } = v;
    const button = frame.getByRole("button", { name: "Blame" });
    assert.equal(await button.getAttribute("aria-pressed"), "false");
    assert.equal(await frame.locator(".bb-blame").count(), 0);
    await button.click();
    await frame.locator('table[data-blame="shown"]').waitFor({ timeout: 10000 });
    assert.deepEqual(await calls(v), [{ show: { ...data.call, blame: true } }]);
    assert.equal(await frame.getByRole("button", { name: "Blame" }).getAttribute("aria-pressed"), "true");
    // One cell each line; who, which commit and when at the first line of each group.
    assert.equal(await frame.locator("td.bb-blame").count(), 40);
    const groups = await frame.locator("td.bb-blame-first").evaluateAll((cells) => cells.map((c) => ({
      line: Number(c.parentElement.dataset.line), name: c.querySelector(".bb-blame-name").textContent,
      commit: c.querySelector(".bb-blame-commit").textContent, subject: c.title, face: c.querySelector(".bb-avatar").textContent })));
    assert.deepEqual(groups.map((g) => [g.line, g.name, g.commit, g.subject]), [
      [1, "Alice Archer", "9f3a1c0e5b7", "Add the HTTP client"],
      [10, "Carol <b>Cole</b>", "4c2e8a6b0d1", "Split get from send"],
      [11, "Bob Baker", "1e9c72b20d1", "Retry requests with backoff"],
      [13, "Alice Archer", "9f3a1c0e5b7", "Add the HTTP client"],
      [18, "Bob Baker", "1e9c72b20d1", "Retry requests with backoff"],
      [31, "Alice Archer", "9f3a1c0e5b7", "Add the HTTP client"],
    ]);
    assert.equal(groups[1].face, "C<", "initials from the name Bitbucket sent, as text, for an author bb has no user for");
    assert.equal(await frame.locator("td.bb-blame-first .bb-avatar img").count(), 5, "the avatars bb sent");
    assert.match(await frame.locator("tr#L11 td.bb-blame-first time").getAttribute("title"), /20\d\d/, "the full date as its title");
    await shot(page, `file-blame-fullscreen-${theme}`);
    // Off and on again: drawn from the data, no second read.
    await frame.getByRole("button", { name: "Blame" }).click();
    await until("the column gone", async () => (await frame.locator(".bb-blame").count()) === 0);
    await frame.getByRole("button", { name: "Blame" }).click();
    await until("the column back", async () => (await frame.locator("td.bb-blame").count()) === 40);
    assert.equal((await calls(v)).length, 1);
    // Inline: the column as chosen in full screen, compact (the avatar and the date), and Blame to turn it off.
    await page.evaluate(() => window.bbHost.setContext({ displayMode: "inline" }));
    await until("inline", async () => (await frame.locator(".bb-clip").count()) === 1);
    assert.equal(await frame.locator('table[data-blame="compact"] td.bb-blame').count(), 40);
    assert.equal(await frame.locator(".bb-blame-name, .bb-blame-commit").count(), 0, "name and commit in the title");
    assert.equal(await frame.locator("tr#L11 td.bb-blame-first").getAttribute("title"), "Bob Baker · 1e9c72b20d1 · Retry requests with backoff");
    assert.equal(await frame.getByRole("button", { name: "Blame" }).getAttribute("aria-pressed"), "true");
    assert.deepEqual(v.errors, []);
    await page.close();
  }
});

// Every blame group's date (and, in full screen, its commit) whole, inside its cell: the name gives way first.
const blameCut = (frame) => frame.locator("td.bb-blame-first").evaluateAll((cells) => cells.filter((c) => {
  const box = c.getBoundingClientRect();
  return [...c.querySelectorAll("time, .bb-blame-commit")].some((t) => t.getBoundingClientRect().right > box.right + 0.5 || t.scrollWidth > t.clientWidth + 0.5);
}).map((c) => c.parentElement.dataset.line));

test("show with blame: true opens with the blame column: avatars as the card's, the date never cut, at 700 px and full screen", async () => {
  for (const theme of ["light", "dark"]) {
    for (const mode of ["inline", "fullscreen"]) {
      const blamed = fixture("file-blame");
      assert.equal(blamed.call.blame, true);
      const v = await open(browser, { colorScheme: theme, mount: { input: blamed.call, result: result(blamed), ...(mode === "inline" ? { width: 700 } : { displayMode: "fullscreen" }) } });
      const { frame, page } = v;
      await frame.locator(".bb-fileview").waitFor({ timeout: 10000 });
      assert.equal(await frame.locator(`table[data-blame="${mode === "inline" ? "compact" : "shown"}"] td.bb-blame`).count(), 40, `${mode}: the column, as asked`);
      assert.equal(await frame.getByRole("button", { name: "Blame" }).getAttribute("aria-pressed"), "true");
      assert.equal(await frame.locator("td.bb-blame-first .bb-avatar img").count(), 5, "the avatars bb sent, not initials");
      assert.deepEqual(await blameCut(frame), [], `${mode} ${theme}: no date cut`);
      await shot(page, `file-blame-opened-${mode === "inline" ? "700" : "fullscreen"}-${theme}`);
      assert.deepEqual(v.errors, []);
      await page.close();
    }
  }
  // A wide frame (1,342 px, where the date was cut): the whole name, commit and date.
  const blamed = fixture("file-blame");
  const v = await open(browser, { mount: { input: blamed.call, result: result(blamed), displayMode: "fullscreen" } });
  await v.page.setViewportSize({ width: 1342, height: 800 });
  await v.frame.locator('table[data-blame="shown"]').waitFor({ timeout: 10000 });
  assert.deepEqual(await blameCut(v.frame), []);
  await v.page.close();
});

// Issue 54 item 7: a commit older than a month (its date then a day, the time in its title), at 1,342 px and at 1,000 px
// full screen and 700 px inline, light and dark: the name whole (an ordinary one), the date whole or cut with an
// ellipsis, never clipped mid-text, and every row one code line high, a group's first as tall as the others.
test("blame: an old commit's day, the author's name whole at 1,342 and 1,000 px, the date never clipped at 700 px, every row as high as the others", async () => {
  const modes = [["fullscreen", 1342, "light"], ["fullscreen", 1000, "dark"], ["inline", 700, "light"], ["inline", 700, "dark"]];
  for (const [mode, width, theme] of modes) {
    const blamed = fixture("file-blame");
    for (const b of blamed.file.blame) if (b.author === "alice") b.at -= 400 * 86400000;
    const v = await open(browser, { colorScheme: theme, mount: { theme, input: blamed.call, result: result(blamed), width, ...(mode === "fullscreen" ? { displayMode: "fullscreen" } : {}) } });
    const { frame, page } = v;
    await frame.locator("td.bb-blame-first").first().waitFor({ timeout: 10000 });
    const seen = await frame.locator("table.bb-source").evaluate((t) => {
      const cells = [...t.querySelectorAll("td.bb-blame-first")];
      const clipped = (e) => e.scrollWidth > e.clientWidth + 0.5 && getComputedStyle(e).textOverflow !== "ellipsis";
      const outside = (e, c) => e.getBoundingClientRect().right > c.getBoundingClientRect().right + 0.5;
      // Rows whose code is one short line: the same height, group starts or not.
      const heights = [...t.querySelectorAll("tr.bb-sl")].filter((r) => r.querySelector(".bb-scode").textContent.length < 30)
        .map((r) => ({ start: r.classList.contains("bb-blame-start"), h: r.getBoundingClientRect().height }));
      return {
        names: cells.map((c) => c.querySelector(".bb-blame-name")).filter(Boolean).filter((n) => n.scrollWidth > n.clientWidth + 0.5).map((n) => n.textContent),
        dates: cells.map((c) => c.querySelector("time")).filter((d) => clipped(d) || outside(d, d.closest("td"))).map((d) => d.textContent),
        old: t.querySelector("tr#L1 time").textContent, title: t.querySelector("tr#L1 time").title,
        heights: [...new Set(heights.map((x) => Math.round(x.h * 2) / 2))], starts: heights.filter((x) => x.start).length,
      };
    });
    const what = `${mode} ${width} px ${theme}`;
    assert.doesNotMatch(seen.old, /:|ago/, `${what}: an old commit's date is its day (${seen.old})`);
    assert.match(seen.title, /\d:\d\d/, "the time in its title");
    assert.deepEqual(seen.dates, [], `${what}: no date clipped mid-text`);
    if (mode === "fullscreen") assert.deepEqual(seen.names.filter((n) => !n.includes("<b>")), [], `${what}: every ordinary name whole`);
    assert.ok(seen.starts > 1, "group starts among the rows measured");
    assert.equal(seen.heights.length, 1, `${what}: every one-line row as high as the others (${seen.heights})`);
    assert.deepEqual(await blameCut(frame), [], `${what}: no date or commit cut`);
    await shot(page, `file-blame-old-${width}-${theme}`);
    await page.close();
  }
});

test("a window opened past line 1 offers the lines before it: read with refresh_view, drawn above, kept by a refresh of the same text", async () => {
  for (const [mode, theme] of [["inline", "light"], ["fullscreen", "dark"]]) {
    // The model showed lines 30–74 (the file's end): Show lines 1–29 reads them.
    const opened = JSON.parse(JSON.stringify(windowOf({ ...fixture("file-view").call, start_line: 30, line_count: 60 })));
    const data = opened._meta["bb/view"];
    Object.assign(data, { fingerprint: "f1", next: 600 });
    const same = JSON.parse(JSON.stringify(data));
    same.fingerprint = "f2";
    let refreshes = 0;
    const v = await open(browser, { colorScheme: theme, mount: { input: data.call, result: opened, ...(mode === "inline" ? { width: 700 } : { displayMode: "fullscreen" }) },
      answer: (p) => (p.arguments.fingerprint ? (refreshes++, result(same)) : windowOf(p.arguments.show)) });
    const { frame } = v;
    await frame.locator(".bb-fileview").waitFor({ timeout: 10000 });
    assert.equal(await frame.locator('[data-count="lines"]').textContent(), "Lines 30–74 of 74");
    const earlier = frame.locator(".bb-file-earlier");
    assert.equal(await earlier.textContent(), "Show lines 1–29");
    if (mode === "inline") {
      // About a screen of code in the frame (the edge walked up to a line or two of it once).
      const seen = await frame.locator("body").evaluate(() => {
        const edge = document.querySelector(".bb-clip").getBoundingClientRect().bottom;
        return [...document.querySelectorAll("tr.bb-sl")].filter((r) => r.getBoundingClientRect().bottom <= edge + 0.5).length;
      });
      assert.ok(seen >= 20, `${seen} lines in the inline frame`);
    }
    await earlier.click();
    await frame.locator("tr#L1").waitFor({ timeout: 10000 });
    assert.deepEqual((await calls(v)).filter((a) => !a.fingerprint), [{ show: { ...data.call, start_line: 1, line_count: 29 } }]);
    assert.deepEqual(await frame.locator("tr.bb-sl").evaluateAll((rows) => rows.map((r) => Number(r.dataset.line))), Array.from({ length: 74 }, (_, i) => i + 1), "every line once, in order");
    assert.equal(await frame.locator('[data-count="lines"]').textContent(), "Lines 1–74 of 74");
    assert.equal(await earlier.count(), 1);
    assert.equal(await frame.locator(".bb-file-earlier").isHidden(), true, "line 1 is drawn: nothing earlier");
    assert.equal(await frame.locator("tr#L1 .bb-lnum").evaluate((b) => b === document.activeElement), true, "focus on the first new line");
    // bb's next read of the window (lines 30–74, the same text): the earlier lines stay, nothing is offered.
    const seen = refreshes;
    await until("a refresh", async () => refreshes > seen + 1);
    assert.equal(await frame.locator("tr.bb-sl").count(), 74);
    assert.equal(await frame.locator(".bb-offer").count(), 0);
    await shot(v.page, `file-earlier-${mode === "inline" ? "700" : "fullscreen"}-${theme}`);
    assert.deepEqual(v.errors, []);
    await v.page.close();
  }
});

test("a binary file and an empty one: one line each, in Bitbucket's words", async () => {
  const bin = await show("file-binary", { width: 700 });
  assert.equal(await bin.frame.locator(".bb-fmsg").textContent(), "This file can't be viewed in your browser. Open it in Bitbucket.");
  assert.equal(await bin.frame.locator(".bb-fref bdi").textContent(), "default branch");
  assert.equal(await bin.frame.locator(".bb-crumbs").textContent(), " api / docs / logo.png");
  assert.equal(await bin.frame.locator("table, .bb-file-more").count(), 0);
  assert.equal(await bin.frame.locator("a").count(), 1, "Open in Bitbucket once");
  assert.equal(await bin.frame.locator('[data-count="lines"]').count(), 0, "no lines to count");
  await bin.frame.locator(".bb-fmsg a").click();
  assert.deepEqual((await bin.log()).links, [bin.data.file.url]);
  await shot(bin.page, "file-binary-700-light");
  const empty = await show("file-empty", { displayMode: "fullscreen" });
  assert.equal(await empty.frame.locator(".bb-fmsg").textContent(), "This file is empty.");
  assert.equal(await empty.frame.locator("table, .bb-file-more, .bb-blame-btn").count(), 0);
  assert.deepEqual([...bin.errors, ...empty.errors], []);
  await bin.page.close();
  await empty.page.close();
});

test("an error answer names the file and opens its source page in Bitbucket", async () => {
  const data = fixture("file-view");
  const error = { v: 1, kind: "file", readAt: data.readAt, server: data.server, call: data.call, users: {},
    error: { message: "The path src/client.rs does not exist at feature/retry.", url: "http://stack.test/bitbucket/projects/BB/repos/api/browse?at=feature%2Fretry" } };
  const v = await open(browser, { mount: { input: data.call, result: { isError: true, content: [{ type: "text", text: error.error.message }], _meta: { "bb/view": error } } } });
  await v.frame.locator(".bb-problem").waitFor({ timeout: 10000 });
  assert.equal(await v.frame.locator(".bb-problem-title").textContent(), "bb could not show src/client.rs");
  assert.equal(await v.frame.locator(".bb-open-in").getAttribute("href"), error.error.url);
  await v.page.close();
});

test("kept current: a changed file is offered, not swapped; a refresh of the same text keeps the lines Show more appended", async () => {
  const data = fixture("file-view");
  Object.assign(data, { fingerprint: "f1", next: 600 });
  const unchanged = { content: [{ type: "text", text: "Unchanged." }], _meta: { "bb/view": { v: 1, unchanged: true, fingerprint: "f1", next: 600, readAt: Date.now() } } };
  const same = fixture("file-view");
  Object.assign(same, { fingerprint: "f2", next: 600 });
  for (const l of same.file.lines) { delete l.r; l.p = "deadline"; }
  const changed = fixture("file-view");
  Object.assign(changed, { fingerprint: "f3", next: null });
  changed.file.lines[0].s = "use std::fs;";
  let refresh = () => unchanged;
  const v = await open(browser, { mount: { input: data.call, result: result(data), displayMode: "fullscreen" },
    answer: (p) => (p.arguments.fingerprint ? refresh() : windowOf(p.arguments.show)) });
  const { frame } = v;
  await frame.locator(".bb-fileview").waitFor({ timeout: 10000 });
  const asked = async () => (await calls(v)).filter((a) => a.fingerprint).length;
  await frame.locator(".bb-file-more").click();
  await frame.locator("tr#L74").waitFor({ timeout: 10000 });
  // The same lines, only their classes changed: nothing offered, the appended lines stay.
  refresh = () => result(same);
  const before = await asked();
  await until("a refresh with the same text", async () => (await asked()) > before + 1);
  assert.equal(await frame.locator("tr.bb-sl").count(), 74);
  assert.equal(await frame.locator(".bb-offer").count(), 0);
  // A changed line: offered; what the person reads stays until they ask.
  refresh = () => result(changed);
  await frame.locator(".bb-offer").waitFor({ timeout: 10000 });
  assert.match(await frame.locator(".bb-live").textContent(), /^This file has changed Show the new version$/);
  assert.equal(await frame.locator("tr#L1 .bb-dcode").textContent(), "use std::io;");
  await frame.locator(".bb-offer").click();
  await until("the new version", async () => (await frame.locator("tr#L1 .bb-dcode").textContent()) === "use std::fs;");
  assert.equal(await frame.locator("tr.bb-sl").count(), 40, "the new version is bb's window");
  await until("told", async () => (await v.log()).context.length === 1);
  assert.equal((await v.log()).context[0].content[0].text, "src/client.rs at feature/retry changed");
  assert.deepEqual(v.errors, []);
  await v.page.close();
});
