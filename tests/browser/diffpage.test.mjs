// The diff page as a Bitbucket user reads it (issue #40, third pass): line numbers of any width up to five
// digits on one line in every layout and in the source view; counts of a cut file that agree with what is
// drawn and with each other; Show more only where lines are hidden; full screen at a narrow width (the file
// tree hides, side-by-side only where it fits). Inline at 700 px and fullscreen, light and dark.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, texts, until } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });


// Opens `path` from the file tree, shown first where it starts hidden (a narrow full screen).
async function pick(frame, path) {
  if (!(await frame.locator(".bb-tree").isVisible())) await frame.locator(".bb-tree-toggle").click();
  await frame.locator(`.bb-tbtn[data-path="${path}"]`).click();
}
async function mountDiff(data, mount = {}, answer) {
  const v = await open(browser, { answer, colorScheme: mount.theme === "dark" ? "dark" : "light", mount: { input: data.call, result: result(data), ...mount } });
  await v.frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
  return v;
}

// A file's lines moved `by` on both sides (hunk headers, line numbers): a long file's change far down.
function shifted(data, path, by) {
  const d = data.diff.diffs.find((x) => x.path === path);
  for (const h of d.hunks) {
    if (h.old[1]) h.old[0] += by;
    if (h.new[1]) h.new[0] += by;
    for (const l of h.lines) {
      if (Number.isInteger(l.o)) l.o += by;
      if (Number.isInteger(l.n)) l.n += by;
    }
  }
  return data;
}

// Every line number in the view that is not on one line inside its cell: wrapped ("10" over "0"), running
// out of the gutter into the code, or under the gutter's annotation marker.
function gutterFaults(frame) {
  return frame.locator("main").evaluate((main) => {
    const faults = [];
    const range = document.createRange();
    for (const td of main.querySelectorAll("td.bb-ln")) {
      if (td.offsetParent === null) continue;
      const box = td.getBoundingClientRect();
      const mark = td.querySelector(".bb-an-mark");
      const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
      for (let t = walker.nextNode(); t; t = walker.nextNode()) {
        if (!/\d/.test(t.data) || (mark && mark.contains(t))) continue;
        range.selectNodeContents(t);
        const rects = [...range.getClientRects()];
        const tops = new Set(rects.map((r) => Math.round(r.top)));
        const left = Math.min(...rects.map((r) => r.left));
        const right = Math.max(...rects.map((r) => r.right));
        if (tops.size > 1) faults.push(`${t.data} wraps`);
        else if (right > box.right + 0.5 || left < box.left - 0.5) faults.push(`${t.data} leaves its cell`);
        else if (mark && mark.getBoundingClientRect().right > left + 0.5) faults.push(`${t.data} is under the marker`);
      }
    }
    return faults;
  });
}
const numbersDrawn = (frame) => frame.locator("td.bb-ln").evaluateAll((tds) => tds.filter((td) => td.offsetParent !== null).map((td) => td.textContent.replace(/\D/g, "")).filter(Boolean));

// ---- 1. line numbers of any width sit on one line ------------------------------------------------
function longFile() {
  const data = fixture("diff-view");
  shifted(data, "src/client.rs", 99970); // lines 99,980–99,997: five digits
  shifted(data, "docs/retry.md", 996); // an added file's lines 997–999
  return data;
}

test("line numbers up to five digits sit on one line: inline at 700 px, light and dark", async () => {
  for (const theme of ["light", "dark"]) {
    const v = await mountDiff(longFile(), { width: 700, theme, maxHeight: 1400 });
    await v.frame.locator(".bb-foot .bb-grow").click().catch(() => {});
    assert.ok((await numbersDrawn(v.frame)).some((n) => n.length === 5), "five-digit numbers are drawn");
    assert.deepEqual(await gutterFaults(v.frame), []);
    assert.deepEqual(v.errors, []);
    await shot(v.page, `diffpage-gutter-700-${theme}`);
    await v.page.close();
  }
});

test("line numbers up to five digits sit on one line: fullscreen, unified and side-by-side, at 1000 and 700 px", async () => {
  for (const width of [1000, 700]) {
    const v = await mountDiff(longFile(), { displayMode: "fullscreen", width, theme: width === 700 ? "dark" : "light" });
    await pick(v.frame, "src/client.rs");
    assert.deepEqual(await gutterFaults(v.frame), [], `${width}: unified`);
    const sbs = v.frame.getByRole("button", { name: "Side-by-side diff" });
    if (await sbs.count()) {
      await sbs.click();
      assert.equal(await v.frame.locator("table.bb-sbs").count(), 1);
      assert.deepEqual(await gutterFaults(v.frame), [], `${width}: side-by-side`);
    }
    await shot(v.page, `diffpage-gutter-fullscreen-${width}`);
    await pick(v.frame, "docs/retry.md");
    assert.deepEqual(await gutterFaults(v.frame), [], `${width}: the added file`);
    assert.deepEqual(v.errors, []);
    await v.page.close();
  }
});

test("the source view's line numbers up to five digits sit on one line, inline and fullscreen", async () => {
  for (const mode of [{ width: 700 }, { displayMode: "fullscreen", width: 1000, theme: "dark" }]) {
    const data = fixture("file-view");
    const by = 99999 - data.file.end;
    for (const l of data.file.lines) l.n += by;
    Object.assign(data.file, { start: data.file.start + by, end: 99999, last: true, total: 99999 });
    const v = await open(browser, { colorScheme: mode.theme || "light", mount: { input: data.call, result: result(data), ...mode } });
    await v.frame.locator(".bb-fileview").waitFor({ timeout: 10000 });
    assert.ok((await numbersDrawn(v.frame)).includes("99999"));
    assert.deepEqual(await gutterFaults(v.frame), []);
    await shot(v.page, `diffpage-gutter-file-${mode.displayMode || "inline"}`);
    await v.page.close();
  }
});

// ---- 6. Show more only where lines are hidden --------------------------------------------------
// bb's answer to a read of lines [start_line, start_line + line_count) of src/client.rs (74 lines).
function fileWindow(show) {
  const data = fixture("file-client");
  const lines = data.file.lines.filter((l) => l.n >= show.start_line && l.n < show.start_line + show.line_count);
  const end = lines.length ? lines[lines.length - 1].n : show.start_line - 1;
  Object.assign(data.file, { at: show.at, start: show.start_line, lines, end, last: end >= 74, total: end >= 74 ? 74 : null });
  data.call = show;
  return result(data);
}
// diff-expand with two short files changed at their ends, as a diff with 10 lines of context draws them: a
// 17-line file whose last line changed (old 16 lines), and a 16-line one whose hunk ends 4 lines after its change.
function shortFiles() {
  const data = fixture("diff-expand");
  const ctx = (from, to, by = 0) => Array.from({ length: to - from + 1 }, (_, i) => ({ o: from + i, n: from + i + by, s: `let v${from + i} = ${from + i};` }));
  const files = [
    { path: "src/seventeen.rs", hunks: [{ context: null, old: [6, 11], new: [6, 12], truncated: false,
      lines: [...ctx(6, 15), { t: "R", o: 16, s: "}" }, { t: "A", n: 16, s: "    done();" }, { t: "A", n: 17, s: "}" }] }] },
    { path: "src/sixteen.rs", hunks: [{ context: null, old: [2, 15], new: [2, 15], truncated: false,
      lines: [...ctx(2, 11), { t: "R", o: 12, s: "old();" }, { t: "A", n: 12, s: "new();" }, ...ctx(13, 16)] }] },
  ];
  for (const f of files) {
    data.diff.files.unshift({ path: f.path, srcPath: null, type: "MODIFY", comments: 0, conflicted: false });
    data.diff.diffs.unshift({ path: f.path, srcPath: f.path, binary: false, truncated: false, language: "Rust", fileComments: [], outdatedComments: 0, contextLines: 10, hunks: f.hunks });
  }
  // src/client.rs with 3 lines of context (as compare reads it): 3 after its last change, so the file may go on.
  data.diff.diffs.find((d) => d.path === "src/client.rs").contextLines = 3;
  return data;
}
const expandRows = (frame, path) => frame.locator(`.bb-file[data-file="${path}"] tr.bb-expand`).evaluateAll((rows) => rows.map((r) => `${r.dataset.gap}:${r.dataset.from}-${r.dataset.to || ""}`));

test("Show more is not offered below a last hunk where the file ends, and is where it may go on: inline at 700 px and fullscreen", async () => {
  for (const mode of [{ width: 700, maxHeight: 3000 }, { displayMode: "fullscreen", width: 1000, theme: "dark" }]) {
    const v = await mountDiff(shortFiles(), mode, (p) => fileWindow(p.arguments.show));
    const { frame } = v;
    for (const layout of mode.displayMode ? ["unified", "side-by-side"] : ["unified"]) {
      if (mode.displayMode) await pick(frame, "src/seventeen.rs");
      if (layout === "side-by-side") await frame.getByRole("button", { name: "Side-by-side diff" }).click();
      // The 17-line file: above its hunk lines 1–5, nothing below (its last line changed).
      assert.deepEqual(await expandRows(frame, "src/seventeen.rs"), ["0:1-5"], layout);
      if (mode.displayMode) await pick(frame, "src/sixteen.rs");
      // The 16-line file: line 1 above, nothing below (4 lines after its change, of 10 that would be drawn).
      assert.deepEqual(await expandRows(frame, "src/sixteen.rs"), ["0:1-1"], layout);
      if (mode.displayMode) await pick(frame, "src/client.rs");
      await until("the row below, once the lines past the hunk came", async () => (await expandRows(frame, "src/client.rs")).includes("end:50-"));
      assert.deepEqual(await expandRows(frame, "src/client.rs"), ["0:1-9", "1:18-44", "end:50-"], `${layout}: the file goes on below`);
    }
    if (!mode.displayMode) await v.frame.locator('.bb-file[data-file="src/sixteen.rs"]').scrollIntoViewIfNeeded();
    await shot(v.page, `diffpage-show-more-end-${mode.displayMode || "700"}`);
    assert.deepEqual(v.errors, []);
    await v.page.close();
  }
});

// A 16-line file whose one change (line 6) has 10 lines of context after it, as many as the diff puts around a
// change: the diff cannot tell whether the file ends at line 16 (it does), as with the stand-in's Cargo.toml.
function endsUnsaid() {
  const data = fixture("diff-expand");
  const ctx = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => ({ o: from + i, n: from + i, s: `key${from + i} = ${from + i}` }));
  const hunks = [{ context: null, old: [1, 16], new: [1, 16], truncated: false,
    lines: [...ctx(1, 5), { t: "R", o: 6, s: "version = 1" }, { t: "A", n: 6, s: "version = 2" }, ...ctx(7, 16)] }];
  data.diff.files.unshift({ path: "Cargo.toml", srcPath: null, type: "MODIFY", comments: 0, conflicted: false });
  data.diff.diffs.unshift({ path: "Cargo.toml", srcPath: "Cargo.toml", binary: false, truncated: false, language: null, fileComments: [], outdatedComments: 0, contextLines: 10, hunks });
  data.diff.diffs.find((d) => d.path === "src/client.rs").contextLines = 3;
  return data;
}
// bb's answer for Cargo.toml: it ends at line 16 (a read past it carries no lines); src/client.rs as fileWindow.
function windows(show) {
  if (show.path !== "Cargo.toml") return fileWindow(show);
  const data = fixture("file-client");
  Object.assign(data.file, { path: "Cargo.toml", at: show.at, start: show.start_line, lines: [], end: 16, last: true, total: 16, language: null });
  data.call = show;
  return result(data);
}

test("Show more is not drawn under the last line of a short file whose diff ends as the file does, and is where the file goes on", async () => {
  for (const mode of [{ width: 700, maxHeight: 4000 }, { displayMode: "fullscreen", width: 1000 }]) {
    const v = await mountDiff(endsUnsaid(), mode, (p) => windows(p.arguments.show));
    const { frame } = v;
    if (mode.displayMode) await pick(frame, "src/client.rs");
    await until("src/client.rs's Show more below", async () => (await expandRows(frame, "src/client.rs")).includes("end:50-"));
    assert.deepEqual(await expandRows(frame, "src/client.rs"), ["0:1-9", "1:18-44", "end:50-"], "the file goes on below");
    if (mode.displayMode) await pick(frame, "Cargo.toml");
    await until("Cargo.toml's lines read past", async () => (await v.log()).calls.some((c) => c.name === "refresh_view" && c.arguments.show.path === "Cargo.toml"));
    // The read past the last hunk has settled when its hidden placeholder row is gone.
    await until("Cargo.toml's read past settled", async () => (await frame.locator('.bb-file[data-file="Cargo.toml"] tr.bb-expand-wait').count()) === 0);
    assert.deepEqual(await expandRows(frame, "Cargo.toml"), [], "nothing below line 16: the file ends there");
    assert.equal(await frame.locator('.bb-file[data-file="Cargo.toml"] tr.bb-dl').count(), 17);
    // Clicking src/client.rs's Show more draws the lines read already, without reading them again.
    const before = (await v.log()).calls.filter((c) => c.name === "refresh_view").length;
    if (mode.displayMode) await pick(frame, "src/client.rs");
    await frame.locator('.bb-file[data-file="src/client.rs"] tr.bb-expand[data-gap="end"] .bb-expand-btn').evaluate((b) => b.click());
    await until("lines 50–69", async () => (await expandRows(frame, "src/client.rs")).includes("end:70-"));
    assert.equal((await v.log()).calls.filter((c) => c.name === "refresh_view").length, before);
    assert.deepEqual(v.errors, []);
    await v.page.close();
  }
});

// ---- 4. a cut file's counts agree with what is drawn and with each other -----------------------
// A 12,000-line added file Bitbucket cut at 10,000 lines, of which the view's share kept 4,000 (6,000 left out);
// and a changed file whose share ended inside its first hunk (1,000 of its 1,500 lines) and before its second.
function cutFiles() {
  const data = fixture("diff-view");
  const added = Array.from({ length: 4000 }, (_, i) => ({ t: "A", n: i + 1, s: `row(${i + 1});` }));
  const context = Array.from({ length: 1000 }, (_, i) => ({ o: i + 1, n: i + 1, s: `keep(${i + 1});` }));
  data.diff.files.unshift({ path: "data/big.rs", srcPath: null, type: "ADD", comments: 0, conflicted: false },
    { path: "data/long.rs", srcPath: "data/long.rs", type: "MODIFY", comments: 0, conflicted: false });
  data.diff.diffs.unshift(
    { path: "data/big.rs", srcPath: null, binary: false, truncated: true, leftOut: 6000, language: "Rust", fileComments: [], outdatedComments: 0,
      hunks: [{ context: null, old: [0, 0], new: [1, 12000], truncated: true, lines: added }] },
    { path: "data/long.rs", srcPath: "data/long.rs", binary: false, truncated: false, leftOut: 521, language: "Rust", fileComments: [], outdatedComments: 0,
      hunks: [{ context: null, old: [1, 1500], new: [1, 1500], truncated: false, lines: context },
        { context: "fn tail()", old: [2000, 10], new: [2000, 11], truncated: false, lines: [] }] });
  return data;
}
const said = (locator) => locator.evaluateAll((nodes) => nodes.map((n) => n.textContent.replace(/\s+/g, " ").trim()));
// No sentence of the file counts lines without the separator, nor a side the hunk does not have.
async function countsAlike(frame, path) {
  const sentences = await said(frame.locator(`.bb-file[data-file="${path}"] :is(.bb-dmsg, .bb-hunk-cut, .bb-dnote)`));
  for (const s of sentences) {
    assert.doesNotMatch(s, /\d{4}/, `"${s}": counts with a thousands separator`);
    assert.doesNotMatch(s, /\b0 of its 0\b/, `"${s}"`);
  }
  return sentences;
}

test("a cut 12,000-line file: every count agrees with the lines drawn and with the others, fullscreen at 1000 and 700 px", async () => {
  for (const width of [1000, 700]) {
    // A host's full-screen pane: the frame as high as the screen, the view scrolling inside it.
    const v = await mountDiff(cutFiles(), { displayMode: "fullscreen", width, frameHeight: 640, theme: width === 700 ? "dark" : "light" });
    const { frame } = v;
    await pick(frame, "data/big.rs");
    await shot(v.page, `diffpage-counts-fullscreen-${width}-top`);
    const big = frame.locator('.bb-file[data-file="data/big.rs"]');
    assert.equal(await big.locator("tr.bb-dl").count(), 4000);
    assert.equal(await big.locator(".bb-dmsg-warn").textContent(), "The diff for this file is too large to render in full4,000 of its 12,000 lines are shown. Open it in Bitbucket.");
    assert.equal(await big.locator(".bb-hunk-range").textContent(), "@@ -0,0 +1,12000 @@");
    assert.equal(await big.locator(".bb-hunk-range").getAttribute("title"), "New lines 1–12,000");
    assert.deepEqual(await said(big.locator(".bb-hunk-cut")), ["This hunk is cut: 4,000 of its 12,000 lines are shown."]);
    await countsAlike(frame, "data/big.rs");
    assert.deepEqual(await gutterFaults(frame), []);
    await big.locator(".bb-hunk-cut").evaluate((r) => r.scrollIntoView({ block: "center" }));
    await shot(v.page, `diffpage-counts-fullscreen-${width}-end`);
    await pick(frame, "data/long.rs");
    const long = frame.locator('.bb-file[data-file="data/long.rs"]');
    assert.equal(await long.locator("tr.bb-dl").count(), 1000);
    assert.match(await long.locator(".bb-dmsg-warn").textContent(), /1,000 of its 1,521 lines are shown\./);
    // The hunk the share ended in says so by its own counts; the one it carries no line of is not drawn.
    assert.deepEqual(await said(long.locator(".bb-hunk-cut")), ["This hunk is cut: 1,000 of its 1,500 new lines and 1,000 of its 1,500 old lines are shown."]);
    assert.deepEqual(await said(long.locator(".bb-hunk-range")), ["@@ -1,1500 +1,1500 @@"]);
    await countsAlike(frame, "data/long.rs");
    assert.deepEqual(v.errors, []);
    await v.page.close();
  }
});

test("a cut 12,000-line file inline at 700 px: what is drawn here, what full screen draws and what is left, all agreeing", async () => {
  for (const theme of ["light", "dark"]) {
    const v = await mountDiff(cutFiles(), { width: 700, theme });
    const { frame } = v;
    const big = frame.locator('.bb-file[data-file="data/big.rs"]');
    const drawn = await big.locator("tr.bb-dl").count();
    assert.equal(drawn, 120);
    // One sentence, one total (issue 54 item 6): the diff's count says what is drawn of Bitbucket's whole (the
    // 12,000 lines of data/big.rs, data/long.rs's 1,521, the other files' 25) and what full screen shows; the
    // file's own message only that it is cut.
    assert.equal(await big.locator(".bb-dmsg-warn .bb-dmsg-more").textContent(), "Open it in Bitbucket.");
    assert.equal(await frame.locator(".bb-tally-lines").textContent(), "120 of 13,546 lines drawn here, from 1 of 5 files; full screen shows 5,025 of them, one file at a time.");
    assert.equal(await big.locator('[data-note="rest"]').textContent(), "3,880 more lines of this file are not drawn here.");
    await countsAlike(frame, "data/big.rs");
    assert.deepEqual(v.errors, []);
    await shot(v.page, `diffpage-counts-700-${theme}`);
    await v.page.close();
  }
});

// ---- 9. full screen at 700 px: the file tree hides, side-by-side only where it fits --------------
// Every place a code cell's text goes on to the next row between two characters of one identifier.
function midWordBreaks(frame) {
  return frame.locator(".bb-pane").evaluate((pane) => {
    const faults = [];
    const range = document.createRange();
    for (const td of pane.querySelectorAll("td.bb-dcode")) {
      let prev = null;
      const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT, { acceptNode: (t) => (t.parentElement.closest(".bb-sr, .bb-sign") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT) });
      for (let t = walker.nextNode(); t; t = walker.nextNode()) {
        for (let i = 0; i < t.data.length; i++) {
          if (!t.data[i].trim()) { prev = null; continue; }
          range.setStart(t, i);
          range.setEnd(t, i + 1);
          const top = Math.round(range.getBoundingClientRect().top);
          if (prev && top > prev.top + 2 && /[\p{L}\p{N}_]/u.test(prev.ch) && /[\p{L}\p{N}_]/u.test(t.data[i])) faults.push(`${prev.ch}|${t.data[i]} in "${td.textContent.trim().slice(0, 60)}"`);
          prev = { top, ch: t.data[i] };
        }
      }
    }
    return faults;
  });
}

for (const theme of ["light", "dark"]) {
  test(`${theme}, full screen at 700 px: Hide/Show file tree, unified where side-by-side does not fit, no identifier cut`, async () => {
    const v = await mountDiff(fixture("diff-view"), { displayMode: "fullscreen", width: 700, theme });
    const { frame, page } = v;
    const toggle = frame.locator(".bb-tree-toggle");
    // At 700 px the tree would take a third of the width: it starts hidden, a click away.
    assert.equal(await toggle.textContent(), "Show file tree");
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    assert.equal(await frame.locator(".bb-tree").isVisible(), false);
    assert.equal(await frame.locator(".bb-pane").getAttribute("data-path"), "src/client.rs");
    // Side-by-side is not offered (its halves would hold under 40 columns): the file is unified.
    assert.equal(await frame.getByRole("button", { name: "Side-by-side diff" }).count(), 0);
    assert.equal(await frame.locator(".bb-pane").getAttribute("data-layout"), "unified");
    assert.deepEqual(await midWordBreaks(frame), []);
    await shot(page, `diffpage-fullscreen-700-${theme}`);
    await toggle.click();
    assert.equal(await frame.locator(".bb-tree").isVisible(), true);
    assert.equal(await frame.locator(".bb-tree-toggle").textContent(), "Hide file tree");
    assert.equal(await frame.locator(".bb-tree-toggle").getAttribute("aria-expanded"), "true");
    assert.equal(await frame.locator(".bb-tree-toggle").evaluate((b) => b === document.activeElement), true, "the toggle keeps the focus");
    assert.equal(await frame.getByRole("button", { name: "Side-by-side diff" }).count(), 0);
    assert.deepEqual(await midWordBreaks(frame), []);
    await pick(frame, "src/retry.rs");
    assert.equal(await frame.locator(".bb-pane").getAttribute("data-path"), "src/retry.rs");
    await shot(page, `diffpage-fullscreen-700-tree-${theme}`);
    await frame.locator(".bb-tree-toggle").click();
    assert.equal(await frame.locator(".bb-tree").isVisible(), false);
    assert.deepEqual(v.errors, []);
    await page.close();
  });
}

test("full screen at 1000 px: the tree shown and hidden on request, side-by-side offered, code cut only between identifiers; narrowed to 700 px, unified", async () => {
  const v = await mountDiff(fixture("diff-view"), { displayMode: "fullscreen", width: 1000 });
  const { frame, page } = v;
  assert.equal(await frame.locator(".bb-tree").isVisible(), true);
  assert.equal(await frame.locator(".bb-tree-toggle").textContent(), "Hide file tree");
  await pick(frame, "src/client.rs");
  await frame.getByRole("button", { name: "Side-by-side diff" }).click();
  assert.equal(await frame.locator(".bb-pane").getAttribute("data-layout"), "side-by-side");
  assert.deepEqual(await midWordBreaks(frame), []);
  await shot(page, "diffpage-fullscreen-1000-sbs");
  await frame.locator(".bb-tree-toggle").click();
  assert.equal(await frame.locator(".bb-tree").isVisible(), false);
  assert.equal(await frame.locator(".bb-pane").getAttribute("data-layout"), "side-by-side", "the layout chosen stays");
  await frame.locator(".bb-tree-toggle").click();
  // The host's pane narrows to 700 px: side-by-side no longer fits, and the file is unified until it does again.
  await page.evaluate(() => { document.querySelector("iframe#view").style.width = "700px"; });
  await until("unified at 700 px", async () => (await frame.locator(".bb-pane").getAttribute("data-layout")) === "unified");
  assert.equal(await frame.getByRole("button", { name: "Side-by-side diff" }).count(), 0);
  assert.deepEqual(await midWordBreaks(frame), []);
  await page.evaluate(() => { document.querySelector("iframe#view").style.width = "1000px"; });
  await until("side-by-side again", async () => (await frame.locator(".bb-pane").getAttribute("data-layout")) === "side-by-side");
  assert.deepEqual(v.errors, []);
  await page.close();
});
