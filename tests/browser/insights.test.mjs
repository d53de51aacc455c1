// Code Insights as Bitbucket's pull request page draws them: the card's Reports (failed first, pending, passed, data
// fields formatted, links only through the host, annotations counted by severity), and the diff's
// annotations under their lines (data-new), marked in the gutter and the file list, the rest at the file's top;
// hostile text stays text. Inline at a chat's width and fullscreen, light and dark.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, texts, until } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const HOSTILE = `<img src=x onerror="parent.postMessage({pwned:1},'*')"> ${"long ".repeat(20000)}`;

function withReports() {
  const data = fixture("pr-open");
  data.pullRequest.insights = {
    reports: [
      { key: "sonar", title: "SonarQube", result: "FAIL", reporter: "SonarQube 10.4", url: "https://sonar.example.com/p/api", details: "Quality gate failed: 2 new bugs.",
        data: [{ title: "Coverage", text: "83.2%", url: null }, { title: "Bugs", text: "2", url: null },
          { title: "Dashboard", text: "Open dashboard", url: "https://sonar.example.com/d" }, { title: "Evil", text: "click", url: "javascript:alert(1)" }],
        dataMore: 0, annotations: { HIGH: 2, MEDIUM: 1, LOW: 0 } },
      { key: "coverage", title: "Coverage", result: "PASS", reporter: null, url: null, details: null, data: [{ title: "Lines", text: "91.0%", url: null }], dataMore: 0, annotations: null },
      { key: "lint", title: "Lint", result: "PASS", data: [], annotations: null },
      { key: "deps", title: "Dependencies", result: "PASS", data: [], annotations: null },
      { key: "hostile", title: HOSTILE, result: null, reporter: HOSTILE, url: "javascript:alert(1)", details: HOSTILE, data: [], dataMore: 3, annotations: { HIGH: 0, MEDIUM: 0, LOW: 500 } },
    ],
    annotations: { total: 503, HIGH: 2, MEDIUM: 1, LOW: 500 },
  };
  return data;
}

function withAnnotations() {
  const data = fixture("diff-view");
  const d = data.diff.diffs[0]; // src/client.rs; its hunk draws new lines 10..
  const drawn = d.hunks.flatMap((h) => h.lines).filter((l) => Number.isInteger(l.n)).map((l) => l.n);
  const line = drawn[1];
  d.annotations = [
    { line, severity: "HIGH", type: "BUG", message: "Possible panic on an empty response.", url: "https://sonar.example.com/i/1", report: "sonar", reportTitle: "SonarQube" },
    { line, severity: "LOW", type: "CODE_SMELL", message: HOSTILE, url: "javascript:alert(1)", report: "sonar", reportTitle: "SonarQube" },
    { line: 900, severity: "MEDIUM", type: "VULNERABILITY", message: "Past the lines this diff shows.", url: null, report: "sec", reportTitle: "Security" },
    { line: 0, severity: "LOW", type: null, message: "On the file as a whole.", url: null, report: "sec", reportTitle: "Security" },
  ];
  d.annotationsMore = 46;
  data.diff.files[0].annotations = 50;
  return { data, line };
}

test("the card's Reports: failed first, then pending, then passed, fields formatted, links through the host only", async () => {
  const data = withReports();
  const { page, frame, errors, log } = await open(browser, { mount: { width: 700, input: data.call, result: result(data) } });
  await frame.locator(".bb-reports").waitFor({ timeout: 10000 });
  // Up front, beside the failed builds: the failed report counted.
  assert.equal(await frame.locator('[data-count="failed-reports"]').textContent(), "✕ 1 failed report");
  const rows = frame.locator(".bb-reports .bb-report");
  // The failed one pinned, then three more, pending before passed; the rest behind Show more.
  assert.deepEqual(await rows.evaluateAll((n) => n.map((r) => r.dataset.result)), ["FAIL", "PENDING", "PASS", "PASS"]);
  assert.equal(await frame.locator(".bb-reports .bb-more").textContent(), "Show 1 more report");
  assert.match(await rows.nth(0).textContent(), /^✕ FailedSonarQubeSonarQube 10\.4/);
  assert.deepEqual(await texts(rows.nth(0).locator(".bb-field dt")), ["Coverage", "Bugs", "Dashboard", "Evil"]);
  assert.deepEqual(await texts(rows.nth(0).locator(".bb-field dd")), ["83.2%", "2", "Open dashboard", "click"]);
  assert.equal(await rows.nth(0).locator(".bb-field dd a").count(), 1, "only the http(s) field is a link");
  assert.equal(await rows.nth(0).locator(".bb-report-an").textContent(), "Annotations: 2 high · 1 medium");
  assert.equal(await frame.locator(".bb-an-total").textContent(), "503 annotations: 2 high · 1 medium · 500 low");
  // The hostile report (pending): its title is text, cut; its javascript: link is no link.
  assert.equal(await rows.nth(1).locator("a").count(), 0);
  assert.equal(await rows.nth(1).locator("img").count(), 0);
  assert.ok((await rows.nth(1).locator(".bb-build-name").textContent()).length <= 300);
  assert.deepEqual((await log()).pwned, []);
  assert.deepEqual(errors, []);
  await frame.locator(".bb-reports").scrollIntoViewIfNeeded();
  await shot(page, "insights-card-inline-light");
});

for (const theme of ["light", "dark"]) {
  test(`${theme}, fullscreen: every report drawn, none pinned away`, async () => {
    const data = withReports();
    const { page, frame, errors, log } = await open(browser, { colorScheme: theme, mount: { theme, displayMode: "fullscreen", frameHeight: 900, width: 1000, input: data.call, result: result(data) } });
    await frame.locator(".bb-reports").waitFor({ timeout: 10000 });
    const rows = frame.locator(".bb-reports .bb-report");
    assert.deepEqual(await rows.evaluateAll((n) => n.map((r) => r.dataset.result)), ["FAIL", "PENDING", "PASS", "PASS", "PASS"]);
    await rows.nth(0).locator(".bb-build-name").click();
    await until("the report's link opened through the host", async () => (await log()).links.length === 1);
    assert.deepEqual((await log()).links, ["https://sonar.example.com/p/api"]);
    assert.deepEqual(errors, []);
    await frame.locator(".bb-reports").scrollIntoViewIfNeeded();
    await shot(page, `insights-card-full-${theme}`);
  });
}

test("a card without Code Insights draws no Reports section", async () => {
  const data = fixture("pr-open");
  const { frame } = await open(browser, { mount: { input: data.call, result: result(data) } });
  await frame.locator(".bb-card").waitFor({ timeout: 10000 });
  assert.equal(await frame.locator(".bb-reports").count(), 0);
});

// Where each annotation button's count is drawn against its line number: every count whole inside its button, every
// number clear of the button, both on one line.
function markFaults(frame) {
  return frame.locator("main").evaluate((main) => {
    const faults = [];
    const range = document.createRange();
    for (const mark of main.querySelectorAll(".bb-an-mark")) {
      if (mark.offsetParent === null) continue;
      const box = mark.getBoundingClientRect();
      range.selectNodeContents(mark);
      const text = range.getBoundingClientRect();
      if (text.left < box.left - 0.5 || text.right > box.right + 0.5 || text.height > box.height + 0.5) faults.push(`count ${mark.textContent} spills`);
      const td = mark.closest("td");
      const number = [...td.childNodes].find((n) => n.nodeType === 3 && n.data.trim());
      range.selectNodeContents(number);
      const rects = [...range.getClientRects()];
      if (new Set(rects.map((r) => Math.round(r.top))).size > 1) faults.push(`${number.data} wraps`);
      if (rects.some((r) => r.left < box.right - 0.5)) faults.push(`${number.data} runs into its button`);
    }
    return faults;
  });
}

for (const theme of ["light", "dark"]) {
  test(`${theme}: a marker in the new side's gutter opens its line's annotations and closes them, by mouse and keyboard; the others at the file's top`, async () => {
    const { data, line } = withAnnotations();
    const { page, frame, errors, log } = await open(browser, { colorScheme: theme, mount: { theme, width: 700, input: data.call, result: result(data) } });
    await frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
    const row = frame.locator(`tr.bb-dl[data-path="src/client.rs"][data-new="${line}"]`);
    assert.equal(await row.count(), 1);
    // The marker sits in the new side's gutter (the second), with the count, in the most severe's colour.
    const mark = row.locator("td.bb-ln").nth(1).locator(".bb-an-mark");
    assert.equal(await mark.textContent(), "2");
    assert.equal(await mark.getAttribute("title"), "2 annotations (high)");
    assert.equal(await mark.getAttribute("data-severity"), "HIGH");
    assert.equal(await row.locator("td.bb-ln").first().locator(".bb-an-mark").count(), 0, "nothing on the old side");
    // The row after the line (or after its comment threads) holds its annotations, most severe first, closed.
    const under = frame.locator(`tr.bb-an-row[data-line="${line}"]`);
    const follows = await row.evaluate((r, id) => {
      let next = r.nextElementSibling;
      while (next && next.classList.contains("bb-dc")) next = next.nextElementSibling;
      return next && next.id === id;
    }, await under.getAttribute("id"));
    assert.equal(follows, true);
    assert.equal(await under.isVisible(), false, "closed: the code is not buried");
    assert.equal(await mark.getAttribute("aria-expanded"), "false");
    await mark.click();
    assert.equal(await under.isVisible(), true);
    assert.equal(await mark.getAttribute("aria-expanded"), "true");
    assert.deepEqual(await under.locator(".bb-an").evaluateAll((n) => n.map((a) => a.dataset.severity)), ["HIGH", "LOW"]);
    await shot(page, `insights-diff-open-inline-${theme}`);
    await mark.click();
    assert.equal(await under.isVisible(), false, "a second click closes them");
    // By keyboard: Enter opens, Escape inside closes and gives the focus back to the marker.
    await mark.focus();
    await page.keyboard.press("Enter");
    assert.equal(await under.isVisible(), true);
    await under.locator(".bb-an a").first().focus();
    await page.keyboard.press("Escape");
    assert.equal(await under.isVisible(), false);
    assert.equal(await mark.evaluate((m) => m === document.activeElement), true);
    assert.deepEqual(await markFaults(frame), []);
    await mark.click();
    const top = frame.locator('[data-file="src/client.rs"] .bb-an-top');
    // 2 carried annotations are on lines not drawn: one closed line, so the code stays on the first screen; the 46 bb did not carry are said apart, never
    // counted among those off the lines shown (they may well be on them).
    assert.equal(await top.locator("summary").textContent(), "2 annotations not on the lines shown here");
    assert.equal(await top.evaluate((d) => d.open), false);
    assert.equal(await row.evaluate((r) => r.getBoundingClientRect().bottom < window.innerHeight), true, "the annotated line is on the first screen");
    await top.locator("summary").click();
    assert.deepEqual(await top.locator(".bb-an").evaluateAll((n) => n.map((a) => a.dataset.severity)), ["MEDIUM", "LOW"]);
    assert.match(await top.textContent(), /line 900/);
    assert.match(await top.textContent(), /this file/);
    assert.equal(await top.locator('[data-note="annotations-more"]').textContent(), "46 more annotations on this file are only in Bitbucket, not marked here.");
    assert.equal(await frame.locator('.bb-flist [data-mark="annotations"]').first().textContent(), "●50 annotations");
    // Hostile text is text; its javascript: link is no link.
    assert.equal(await frame.locator(".bb-an img").count(), 0);
    assert.equal(await frame.locator('.bb-an a[href^="javascript"]').count(), 0);
    assert.deepEqual((await log()).pwned, []);
    assert.deepEqual(errors, []);
    await top.locator("summary").click();
    await shot(page, `insights-diff-inline-${theme}`);
  });
}

// Many annotations (as a 500-annotation report leaves on a file: the 50 carried, on every line drawn), two-digit
// counts, five-digit line numbers: the code's rows stay together, each marker's count inside it.
function crowded() {
  const data = fixture("diff-view");
  const d = data.diff.diffs[0];
  for (const h of d.hunks) {
    h.old[0] += 99970;
    h.new[0] += 99970;
    for (const l of h.lines) { if (Number.isInteger(l.o)) l.o += 99970; if (Number.isInteger(l.n)) l.n += 99970; }
  }
  const lines = d.hunks.flatMap((h) => h.lines).filter((l) => Number.isInteger(l.n)).map((l) => l.n);
  d.annotations = Array.from({ length: 50 }, (_, i) => ({ line: lines[i < 12 ? 0 : 1 + (i % (lines.length - 1))], severity: ["LOW", "MEDIUM", "HIGH"][i % 3],
    type: "CODE_SMELL", message: `Code smell ${i + 1}`, url: null, report: "sonar", reportTitle: "SonarQube" }));
  d.annotationsMore = 450;
  data.diff.files[0].annotations = 500;
  return { data, first: lines[0] };
}

for (const mode of [{ width: 700 }, { displayMode: "fullscreen", width: 1000, frameHeight: 900, theme: "dark" }]) {
  test(`${mode.displayMode || "inline at 700 px"}: 500 annotations leave the code readable, two-digit counts fit their marker`, async () => {
    const { data, first } = crowded();
    const { page, frame, errors } = await open(browser, { colorScheme: mode.theme || "light", mount: { ...mode, input: data.call, result: result(data) } });
    await frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
    const file = frame.locator('.bb-file[data-file="src/client.rs"]');
    assert.equal(await file.locator("tr.bb-an-row:not([hidden])").count(), 0, "every line's annotations closed");
    // Issue 54 item 5: the 50 carried are all on drawn lines, marked; the 450 not carried are not said to be off the
    // lines shown (they may sit on them), only that Bitbucket has them.
    assert.equal(await file.locator(".bb-an-top").count(), 0, "no annotation is off the lines shown");
    assert.doesNotMatch(await file.textContent(), /not on the lines shown/);
    assert.equal(await file.locator('[data-note="annotations-more"]').textContent(), "450 more annotations on this file are only in Bitbucket, not marked here.");
    const many = file.locator(`tr.bb-dl[data-new="${first}"] .bb-an-mark`);
    assert.ok(["9+", "12"].includes(await many.textContent()));
    assert.equal(await many.getAttribute("title"), "12 annotations (high)");
    assert.deepEqual(await markFaults(frame), []);
    // The code's rows follow each other with nothing between them but comment threads.
    const between = await file.locator("tbody").evaluate((b) => [...b.children].filter((r) => r.offsetParent !== null && !/bb-dl|bb-dc|bb-hunk/.test(r.className)).length);
    assert.equal(between, 0);
    await many.click();
    assert.deepEqual(await file.locator(`tr.bb-an-row[data-line="${first}"] .bb-an`).evaluateAll((n) => n.map((a) => a.dataset.severity)),
      [...Array(4).fill("HIGH"), ...Array(4).fill("MEDIUM"), ...Array(4).fill("LOW")], "most severe first");
    assert.deepEqual(errors, []);
    await shot(page, `insights-diff-many-${mode.displayMode || "700"}`);
  });
}

test("fullscreen, side by side: the marker is in the new half's gutter, and the annotations open on the new half only", async () => {
  const { data, line } = withAnnotations();
  const { page, frame, errors } = await open(browser, { mount: { displayMode: "fullscreen", frameHeight: 900, width: 1100, input: data.call, result: result(data) } });
  await frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
  const sbs = frame.locator('.bb-segbtn[data-focus="sbs"]');
  if (await sbs.count()) await sbs.click();
  await frame.locator("table.bb-sbs").waitFor({ timeout: 10000 });
  const row = frame.locator(`table.bb-sbs tr.bb-dl[data-new="${line}"]`);
  const gutters = row.locator("td.bb-ln");
  assert.equal(await gutters.nth(0).locator(".bb-an-mark").count(), 0);
  assert.equal(await gutters.nth(1).locator(".bb-an-mark").count(), 1);
  await gutters.nth(1).locator(".bb-an-mark").click();
  const under = frame.locator(`table.bb-sbs tr.bb-an-row[data-line="${line}"]`);
  assert.equal(await under.locator(".bb-an").count(), 2);
  assert.equal(await under.locator(".bb-an-old .bb-an").count(), 0);
  // The annotations' cell starts where the new half does.
  const [half, cell] = await Promise.all([gutters.nth(1).evaluate((td) => td.getBoundingClientRect().left), under.locator(".bb-an-new").evaluate((td) => td.getBoundingClientRect().left)]);
  assert.ok(Math.abs(half - cell) < 1.5, `the new half (${half}) and the annotations (${cell})`);
  assert.deepEqual(await markFaults(frame), []);
  assert.deepEqual(errors, []);
  await shot(page, "insights-diff-full-sbs-light");
});
