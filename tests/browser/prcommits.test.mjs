// The pull request page's Commits tab (Overview, Diff, Commits, as Bitbucket's page has them), driven by bb against
// the stand-in: the diff of BB/api #1 carries its first page of commits; Commits lists them newest first, linked to
// Bitbucket, Diff comes back without a call, and the card's Commits tab opens the diff in place at its Commits tab;
// at chat width (700 px) and full screen, light and dark.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { launch, open, realErrors, shot, startBb, texts, until, view } from "./harness.mjs";

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

const DIFF = { kind: "diff", project: "BB", repo: "api", pr_id: 1 };

async function show(args, mount, wait) {
  const v = await open(browser, { bb: bb.mcp, show: args, mount, colorScheme: mount.theme === "dark" ? "dark" : "light" });
  await v.frame.locator(wait).waitFor({ timeout: 15000 });
  assert.ok(v.bb.html === view(), "bb serves the page of this tree (if not, target/debug/bb is stale: cargo build -p bb)");
  return { ...v, data: v.bb.result._meta["bb/view"] };
}

test("the diff's Commits tab lists the pull request's commits, newest first, linked to Bitbucket; Diff again", async () => {
  for (const [mode, theme] of [["inline", "light"], ["fullscreen", "dark"], ["inline", "dark"], ["fullscreen", "light"]]) {
    const { data, frame, page, errors } = await show(DIFF, mode === "fullscreen" ? { displayMode: "fullscreen", width: 1342, theme } : { width: 700, theme }, ".bb-diffview");
    const c = data.diff.commits;
    assert.ok(Array.isArray(c.items) && c.items.length >= 2, "the stand-in's PR #1 has commits");
    assert.deepEqual(await texts(frame.locator('nav.bb-tabs[aria-label="Pull request"] .bb-tab')), ["Overview", "Diff", "Commits"]);
    assert.equal(await frame.locator('.bb-tab[data-kind="diff"]').getAttribute("aria-current"), "page");
    const calls = (await page.evaluate(() => window.bbHost.log.calls)).length;
    await frame.locator('.bb-tab[data-kind="commits"]').click();
    await frame.locator(".bb-commits").waitFor({ timeout: 5000 });
    assert.equal(await frame.locator('.bb-tab[data-kind="commits"]').getAttribute("aria-current"), "page");
    assert.equal(await frame.locator(".bb-file").count(), 0, "the diff is not drawn under the Commits tab");
    assert.match(await frame.locator(".bb-dtab").textContent(), /Commits/);
    const shown = Math.min(c.items.length, mode === "inline" ? 10 : c.items.length);
    assert.equal(await frame.locator(".bb-cmt").count(), shown);
    assert.deepEqual(await texts(frame.locator(".bb-cmt .bb-hash").first()), [c.items[0].short]);
    assert.match(c.items[0].url, /\/projects\/BB\/repos\/api\/commits\/[0-9a-f]{40}$/);
    assert.ok(c.items.every((x, i, all) => i === 0 || x.at <= all[i - 1].at), "newest first");
    assert.equal((await page.evaluate(() => window.bbHost.log.calls)).length, calls, "switching tabs calls nothing");
    await shot(page, `prcommits-${mode === "inline" ? "700" : "fullscreen"}-${theme}`);
    await frame.locator('.bb-tab[data-kind="diff"]').click();
    await frame.locator(".bb-file").first().waitFor({ timeout: 5000 });
    assert.equal(await frame.locator(".bb-commits").count(), 0);
    assert.deepEqual(realErrors(errors), []);
  }
});

test("the card's Commits tab opens the diff in place at its Commits tab, and Back returns to the Overview", async () => {
  const { frame, page, errors } = await show({ kind: "pull_request", project: "BB", repo: "api", pr_id: 1 }, { width: 700 }, ".bb-card");
  assert.deepEqual(await texts(frame.locator('nav.bb-tabs[aria-label="Pull request"] .bb-tab')), ["Overview", "Diff", "Commits"]);
  await frame.locator('.bb-tab[data-kind="commits"]').click();
  await frame.locator(".bb-commits").waitFor({ timeout: 15000 });
  assert.equal(await frame.locator('.bb-tab[data-kind="commits"]').getAttribute("aria-current"), "page");
  await until("the model told what the person opened", async () => (await page.evaluate(() => JSON.stringify(window.bbHost.log.context))).includes("opened the commits of PR #1 in BB/api"));
  // The Diff tab from the card draws the diff, whatever tab was chosen before.
  await frame.locator(".bb-back").click();
  await frame.locator(".bb-card").waitFor({ timeout: 15000 });
  await frame.locator('.bb-tab[data-kind="diff"]').click();
  await frame.locator(".bb-file").first().waitFor({ timeout: 15000 });
  assert.equal(await frame.locator(".bb-commits").count(), 0);
  assert.deepEqual(realErrors(errors), []);
});
