// Code Insights as Bitbucket's pull request page draws them: the card's Reports (failed first, pending, passed, data
// fields formatted, links only through the host, annotations counted by severity), and the diff's
// annotations under their lines (data-new), marked in the gutter and the file list, the rest at the file's top;
// hostile text stays text. Inline at a chat's width and fullscreen, light and dark.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, until } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const texts = (locator) => locator.evaluateAll((nodes) => nodes.map((n) => n.textContent.trim()));
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

for (const theme of ["light", "dark"]) {
  test(`${theme}: annotations under their line with a gutter marker, the others at the file's top, the file list counts them`, async () => {
    const { data, line } = withAnnotations();
    const { page, frame, errors, log } = await open(browser, { colorScheme: theme, mount: { theme, width: 700, input: data.call, result: result(data) } });
    await frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
    const row = frame.locator(`tr.bb-dl[data-path="src/client.rs"][data-new="${line}"]`);
    assert.equal(await row.count(), 1);
    // The row right after the line (or after its comment threads) holds its annotations, the most severe first.
    const under = await row.evaluate((r) => {
      let next = r.nextElementSibling;
      while (next && next.classList.contains("bb-dc")) next = next.nextElementSibling;
      return next && next.classList.contains("bb-an-row") ? [...next.querySelectorAll(".bb-an")].map((a) => a.dataset.severity) : null;
    });
    assert.deepEqual(under, ["HIGH", "LOW"]);
    assert.equal(await row.locator(".bb-an-mark").getAttribute("title"), "2 annotations (high)");
    const top = frame.locator('[data-file="src/client.rs"] .bb-an-top');
    // 48 annotations are on lines not drawn: one closed line, so the code stays on the first screen.
    assert.equal(await top.locator("summary").textContent(), "48 annotations not on the lines shown here");
    assert.equal(await top.evaluate((d) => d.open), false);
    assert.equal(await row.evaluate((r) => r.getBoundingClientRect().bottom < window.innerHeight), true, "the annotated line is on the first screen");
    await top.locator("summary").click();
    assert.deepEqual(await top.locator(".bb-an").evaluateAll((n) => n.map((a) => a.dataset.severity)), ["MEDIUM", "LOW"]);
    assert.match(await top.textContent(), /line 900/);
    assert.match(await top.textContent(), /this file/);
    assert.match(await top.textContent(), /46 more annotations on this file in Bitbucket\./);
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

test("fullscreen, side by side: the annotation is under the new side of its line", async () => {
  const { data, line } = withAnnotations();
  const { page, frame, errors } = await open(browser, { mount: { displayMode: "fullscreen", frameHeight: 900, width: 1100, input: data.call, result: result(data) } });
  await frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
  const sbs = frame.locator('.bb-segbtn[data-focus="sbs"]');
  if (await sbs.count()) await sbs.click();
  await frame.locator("table.bb-sbs").waitFor({ timeout: 10000 });
  const row = frame.locator(`table.bb-sbs tr.bb-dl[data-new="${line}"]`);
  assert.equal(await row.locator(".bb-an-mark").count(), 1);
  assert.equal(await frame.locator("table.bb-sbs .bb-an-row .bb-an").count(), 2);
  assert.deepEqual(errors, []);
  await shot(page, "insights-diff-full-sbs-light");
});
