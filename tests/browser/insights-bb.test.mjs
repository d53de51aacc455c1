// Code Insights driven by bb itself against the stand-in: the card's Reports as bb sent them (failed first), the
// Code Insights merge check's veto in the one merge verdict, and the diff's annotations on the lines bb placed them
// (data-new), the rest at the file's top. What is drawn is checked against the view data of the same result.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { launch, open, realErrors, shot, startBb } from "./harness.mjs";

let browser;
let bb;
before(async () => {
  bb = await startBb();
  browser = await launch({ loopback: true });
});
after(async () => {
  await browser?.close();
  await bb?.stop();
});

async function show(args, mount = {}, wait = ".bb-card") {
  const v = await open(browser, { bb: bb.mcp, show: args, mount });
  await v.frame.locator(wait).waitFor({ timeout: 15000 });
  return { ...v, data: v.bb.result._meta["bb/view"] };
}

test("BB/api #1 from bb: every report bb sent, failed first, the failed one counted up front", async () => {
  const { page, frame, data, errors, log } = await show({ kind: "pull_request", project: "BB", repo: "api", pr_id: 1 }, { displayMode: "fullscreen", frameHeight: 900, width: 1000 });
  const sent = data.pullRequest.insights.reports;
  assert.ok(sent.length >= 3, "the stand-in seeds a failing, a passing and a pending report");
  const drawn = await frame.locator(".bb-reports .bb-report").evaluateAll((n) => n.map((r) => [r.dataset.key, r.dataset.result]));
  assert.deepEqual(drawn, sent.map((r) => [r.key, r.result || "PENDING"]));
  assert.equal(drawn[0][1], "FAIL");
  const failed = sent.filter((r) => r.result === "FAIL").length;
  assert.equal(await frame.locator('[data-count="failed-reports"]').textContent(), `✕ ${failed} failed report${failed === 1 ? "" : "s"}`);
  assert.equal(await frame.locator('.bb-reports a[href^="javascript"]').count(), 0);
  assert.deepEqual((await log()).pwned, []);
  assert.deepEqual(realErrors(errors), []);
  await frame.locator(".bb-reports").scrollIntoViewIfNeeded();
  await shot(page, "insights-bb-card-api-1");
});

test("OPS/infra #1 from bb: a failed and a missing required report are in the one merge verdict", async () => {
  const { page, frame, data, errors } = await show({ kind: "pull_request", project: "OPS", repo: "infra", pr_id: 1 }, { width: 700 });
  const vetoes = data.pullRequest.mergeCheck.vetoes.filter((v) => /Code Insights/.test(`${v.summary} ${v.detail}`));
  assert.ok(vetoes.length >= 1, JSON.stringify(data.pullRequest.mergeCheck));
  const rows = await frame.locator(".bb-merge .bb-veto-text").evaluateAll((n) => n.map((x) => x.textContent));
  for (const v of vetoes) assert.ok(rows.includes(v.detail || v.summary), `${v.detail} among ${rows}`);
  assert.equal(await frame.locator(".bb-merge").count(), 1, "one verdict");
  assert.equal(await frame.locator(".bb-merge-btn").getAttribute("aria-disabled"), "true");
  assert.deepEqual(realErrors(errors), []);
  await shot(page, "insights-bb-card-infra-1-700");
});

test("BB/api #9's diff from bb: each annotation bb placed on a drawn line is under that line, the others at the file's top", async () => {
  for (const theme of ["light", "dark"]) {
    const { page, frame, data, errors } = await show({ kind: "diff", project: "BB", repo: "api", pr_id: 9 },
      { displayMode: "fullscreen", frameHeight: 900, width: 1100, theme }, ".bb-diffview");
    const withAn = data.diff.diffs.filter((d) => Array.isArray(d.annotations) && d.annotations.length);
    assert.ok(withAn.length >= 1, "the stand-in seeds annotations on #9");
    // Fullscreen draws one file at a time: go to each file that has annotations.
    for (const d of withAn) {
      await frame.locator(`.bb-tbtn[data-path="${d.path}"]`).click();
      await frame.locator(`.bb-file[data-file="${d.path}"]`).waitFor({ timeout: 10000 });
      const drawnNew = new Set(await frame.locator(`tr.bb-dl[data-path="${d.path}"][data-new]`).evaluateAll((n) => n.map((r) => Number(r.dataset.new))));
      const on = d.annotations.filter((a) => drawnNew.has(a.line));
      for (const n of new Set(on.map((a) => a.line))) {
        const under = await frame.locator(`tr.bb-dl[data-path="${d.path}"][data-new="${n}"]`).first().evaluate((r) => {
          let next = r.nextElementSibling;
          while (next && next.classList.contains("bb-dc")) next = next.nextElementSibling;
          return next && next.classList.contains("bb-an-row") ? next.querySelectorAll(".bb-an").length : 0;
        });
        assert.equal(under, on.filter((a) => a.line === n).length, `annotations under new line ${n} of ${d.path}`);
      }
      const top = d.annotations.length - on.length;
      assert.equal(await frame.locator(`.bb-file[data-file="${d.path}"] .bb-an-top .bb-an`).count(), top, `at the top of ${d.path}`);
    }
    assert.deepEqual(realErrors(errors), []);
    await shot(page, `insights-bb-diff-api-9-${theme}`);
  }
});
