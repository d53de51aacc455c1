// The page beside Bitbucket's own, driven by bb and the stand-in for real (issue #40): what a
// person does and then reads is what Bitbucket's page would show, in its words. An applied
// suggestion is marked Applied, with no Apply and no −/+ box of identical lines.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { RESULTS, launch, open, realErrors, shot, startBb, until } from "./harness.mjs";

let browser;
let bb;
before(async () => {
  bb = await startBb({ bbArgs: ["--allow-writes"] });
  browser = await launch({ loopback: true });
});
after(async () => {
  await browser?.close();
  await bb?.stop();
});

const calls = async (v, name) => (await v.log()).calls.filter((c) => c && c.name === name);
// apply_pr_suggestion asks the person first (issue 51): the test host answers bb's question by itself,
// accepting with the box ticked (mount.confirm "accept"; --confirm off is not on this branch).
async function show(args, mount = {}, wait = ".bb-card") {
  mount = Object.assign({ confirm: "accept" }, mount);
  const v = await open(browser, { bb: bb.mcp, show: args, mount, colorScheme: mount.theme === "dark" ? "dark" : "light" });
  await v.frame.locator(wait).waitFor({ timeout: 15000 });
  return { ...v, data: v.bb.result._meta["bb/view"] };
}
// Inline, the card is one shape with Show more: grown until `node` is inside what it shows.
async function reveal(frame, node) {
  for (let i = 0; i < 30; i++) {
    const inside = await node.evaluate((n) => { const clip = n.closest(".bb-clip"); return !clip || n.getBoundingClientRect().bottom <= clip.getBoundingClientRect().bottom; });
    if (inside || !(await frame.locator(".bb-grow").count())) return;
    await frame.locator(".bb-grow").click();
  }
}
const PR11 = { project: "BB", repo: "api", pr_id: 11 };
// bob's one-line suggestion on src/paging.rs line 23, in the stand-in's seed.
const bobs = (frame) => frame.locator(".bb-comment", { has: frame.locator(".bb-suggest") }).filter({ hasText: "Build the fallback page" }).first();

test("an applied suggestion is marked Applied, with no Apply and no box of identical − and + lines, on the diff and the card", async () => {
  const v = await show({ kind: "diff", ...PR11 }, { displayMode: "fullscreen", width: 1000 }, ".bb-diffview");
  const { frame, page } = v;
  const pick = frame.locator('.bb-tbtn[data-path="src/paging.rs"]');
  if (await pick.count()) await pick.click();
  const box = bobs(frame).locator(".bb-suggest");
  await box.waitFor({ timeout: 10000 });
  assert.equal(await box.locator(".bb-act-apply").count(), 1, "offered before it is applied");
  await box.locator(".bb-act-apply").click();
  await until("the suggestion drawn as applied", async () => (await bobs(frame).locator('.bb-suggest[data-applied="true"]').count()) === 1);
  const applied = bobs(frame).locator(".bb-suggest");
  assert.equal(await applied.locator(".bb-act-apply").count(), 0, "no Apply once applied");
  assert.equal(await applied.locator(".bb-applied").textContent(), "Applied");
  assert.equal(await applied.locator("tr.bb-dl-R, tr.bb-dl-A").count(), 0, "no − and + lines that read the same");
  assert.deepEqual(await applied.locator("tr .bb-dcode").allTextContents(), [" " + "    self.next_page_start.or_else(|| Some(self.start + self.size))"]);
  const note = applied.locator(".bb-said");
  assert.match(await note.textContent(), /^Suggestion applied: committed to \S+\.$/, "the person's words, not the tool's sentence for the model");
  assert.equal((await calls(v, "apply_pr_suggestion")).length, 1);
  assert.deepEqual(realErrors(v.errors), []);
  await shot(page, "parity-suggestion-applied-fullscreen-light");

  // The card, at chat width and dark: the same suggestion, applied, no Apply.
  for (const [mount, name] of [[{ width: 700, theme: "dark" }, "700-dark"], [{ displayMode: "fullscreen", width: 1000, theme: "dark" }, "fullscreen-dark"]]) {
    const c = await show({ kind: "pull_request", ...PR11 }, { ...mount, maxHeight: 4000 });
    const s = c.data.pullRequest.activity.items.map((i) => i.comment).filter(Boolean).flatMap((x) => x.suggestions || []);
    assert.ok(s.some((x) => x.applied === true), "bb's view data says it was applied");
    const more = c.frame.locator(".bb-more-row button, .bb-more");
    while (!(await bobs(c.frame).count()) && (await more.count())) await more.first().click();
    const cardBox = bobs(c.frame).locator(".bb-suggest");
    assert.equal(await cardBox.getAttribute("data-applied"), "true");
    assert.equal(await cardBox.locator(".bb-act-apply").count(), 0);
    assert.equal(await cardBox.locator("tr.bb-dl-R, tr.bb-dl-A").count(), 0);
    await reveal(c.frame, bobs(c.frame));
    await shot(c.page, `parity-suggestion-applied-card-${name}`);
    await bobs(c.frame).screenshot({ path: join(RESULTS, `parity-suggestion-applied-card-${name}-thread.png`) });
    await c.page.close();
  }
});

test("a source branch that does not exist: the form marks Source and says so once, in words, not HTTP's; choosing another clears it", async () => {
  for (const [mount, name] of [[{ width: 700 }, "700-light"], [{ displayMode: "fullscreen", width: 1000, theme: "dark" }, "fullscreen-dark"]]) {
    const v = await show({ kind: "pull_request_form", project: "BB", repo: "api", from_ref: "nope", title: "Anything" }, mount, ".bb-form");
    const { frame, page } = v;
    const source = frame.locator("#bb-f-from");
    assert.equal(await source.getAttribute("aria-invalid"), "true", "the Source field is marked");
    const error = frame.locator("#bb-f-from-error");
    assert.equal(await error.textContent(), 'Branch "nope" does not exist in BB/api.');
    assert.equal(await source.getAttribute("aria-describedby"), "bb-f-from-error");
    const all = await frame.locator("body").innerText();
    assert.equal(all.split("does not exist").length - 1, 1, `said once: ${all}`);
    assert.doesNotMatch(all, /404|found nothing|HTTP/, "no HTTP words");
    assert.equal(await frame.locator(".bb-missing").count(), 0, "nothing listed as not read");
    await shot(page, `parity-form-bad-source-${name}`);
    await source.fill("docs/typo");
    await until("the mark gone", async () => (await source.getAttribute("aria-invalid")) === null);
    assert.equal(await error.count(), 0);
    await until("the commits of the new pair", async () => (await frame.locator(".bb-f-commit").count()) > 0);
    assert.deepEqual(realErrors(v.errors), []);
    await page.close();
  }
});

test("a file that does not exist is said in Bitbucket's words, not bb's HTTP ones", async () => {
  for (const [mount, name] of [[{ width: 700 }, "700-light"], [{ displayMode: "fullscreen", width: 1000, theme: "dark" }, "fullscreen-dark"]]) {
    const v = await show({ kind: "file", project: "BB", repo: "api", path: "src/nope.rs" }, mount, ".bb-problem");
    const text = await v.frame.locator(".bb-problem").innerText();
    assert.match(text, /The path "src\/nope\.rs" does not exist at revision/);
    assert.doesNotMatch(text, /found nothing|404/);
    assert.match(v.bb.result.content[0].text, /404|does not exist/, "the model's text keeps what it needs");
    await shot(v.page, `parity-missing-file-${name}`);
    await v.page.close();
  }
});

test("a file shown at the default branch names the branch on its ref chip, not \"default branch\"", async () => {
  for (const [mount, name] of [[{ width: 700 }, "700-light"], [{ displayMode: "fullscreen", width: 1000, theme: "dark" }, "fullscreen-dark"]]) {
    const v = await show({ kind: "file", project: "BB", repo: "api", path: "src/paging.rs" }, mount, ".bb-fref");
    assert.equal(await v.frame.locator(".bb-fref bdi").textContent(), "main");
    assert.doesNotMatch(await v.frame.locator("body").innerText(), /default branch/);
    await shot(v.page, `parity-file-ref-${name}`);
    await v.page.close();
  }
});
