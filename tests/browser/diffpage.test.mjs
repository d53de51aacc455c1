// The diff page as a Bitbucket user reads it (issue #40, third pass): line numbers of any width up to five
// digits on one line in every layout and in the source view; counts of a cut file that agree with what is
// drawn and with each other; Show more only where lines are hidden; full screen at a narrow width (the file
// tree hides, side-by-side only where it fits). Inline at 700 px and fullscreen, light and dark.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, until } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const texts = (locator) => locator.evaluateAll((nodes) => nodes.map((n) => n.textContent.trim()));

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
    await v.frame.locator('.bb-tbtn[data-path="src/client.rs"]').click();
    assert.deepEqual(await gutterFaults(v.frame), [], `${width}: unified`);
    const sbs = v.frame.getByRole("button", { name: "Side-by-side diff" });
    if (await sbs.count()) {
      await sbs.click();
      assert.equal(await v.frame.locator("table.bb-sbs").count(), 1);
      assert.deepEqual(await gutterFaults(v.frame), [], `${width}: side-by-side`);
    }
    await shot(v.page, `diffpage-gutter-fullscreen-${width}`);
    await v.frame.locator('.bb-tbtn[data-path="docs/retry.md"]').click();
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
