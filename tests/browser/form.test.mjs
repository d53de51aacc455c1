// The pull request form against bb and the stand-in (ADR-101): the model drafts, the person fills it
// in with bb's suggestions, previews the description, and submits; create_pull_request goes through
// the host and nothing is created before. After creation the new pull request's card opens in place
// and the model is told; a pull request already open is shown with a way to it.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { launch, open, realErrors, shot, startBb, until } from "./harness.mjs";

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

const POSTS = "POST /rest/api/latest/projects/BB/repos/api/pull-requests";
const posts = async () => ((await (await fetch(`${bb.stack}/_stack/requests`)).json()).requests[POSTS] || 0);
const calls = async (v, name) => (await v.log()).calls.filter((c) => c && c.name === name);
const told = async (v) => (await v.log()).context.map((c) => c.content.map((b) => b.text).join(""));
const DRAFT = { kind: "pull_request_form", project: "BB", repo: "api", from_ref: "docs/typo",
  title: "Fix typos in the docs", description: "Fixes *two* typos.", reviewers: ["dave"] };
async function form(args = DRAFT, mount = {}) {
  const v = await open(browser, { bb: bb.mcp, show: args, mount, colorScheme: mount.theme === "dark" ? "dark" : "light" });
  await v.frame.locator(".bb-form").waitFor({ timeout: 15000 });
  return v;
}

test("the form shows the draft with the default reviewers marked, and nothing is created while the person writes", async () => {
  const before = await posts();
  const v = await form(DRAFT, { width: 700 });
  const { frame, page } = v;
  assert.equal(await frame.locator("#bb-f-from").inputValue(), "docs/typo");
  assert.equal(await frame.locator("#bb-f-to").inputValue(), "main", "the default branch");
  assert.equal(await frame.locator("#bb-f-title").inputValue(), DRAFT.title);
  const chips = frame.locator(".bb-f-chip");
  assert.equal(await chips.count(), 3, "dave, and the default reviewers bob and carol");
  assert.equal(await chips.filter({ hasText: "Default" }).count(), 2);
  assert.equal(await frame.locator(".bb-f-commit").count() > 0, true, "the commits the pull request would hold");
  await frame.locator("#bb-f-title").fill("Fix the typos");
  await frame.locator("#bb-f-desc").fill("Nothing yet");
  await page.waitForTimeout(1500);
  assert.equal(await posts(), before, "nothing is created before Create");
  assert.equal((await calls(v, "create_pull_request")).length, 0);
  assert.equal((await calls(v, "refresh_view")).length, 0, "a form is never read again by itself");
  assert.deepEqual(realErrors(v.errors), []);
  await shot(page, "form-inline-light");
});

test("branches and people are suggested as the person types, and the description previews as bb draws Markdown", async () => {
  const v = await form(DRAFT, { width: 700, theme: "dark" });
  const { frame, page } = v;
  await frame.locator("#bb-f-to").fill("rel");
  await frame.locator('#bb-f-to-list option[value="release/v1"]').waitFor({ state: "attached", timeout: 10000 });
  const asked = await calls(v, "suggest_form_values");
  assert.ok(asked.some((c) => c.arguments.want === "branches" && c.arguments.text === "rel"), JSON.stringify(asked));
  await frame.locator("#bb-f-to").fill("release/v1");
  await frame.locator(".bb-f-chip", { hasText: "Bob" }).waitFor({ state: "detached", timeout: 10000 });
  // The chip goes when the default reviewers' answer is drawn; the commits are asked for on their
  // own and may come later: wait for both asks rather than read the log at that moment.
  const pairOf = async () => (await calls(v, "suggest_form_values")).filter((c) => c.arguments.to_ref === "release/v1").map((c) => c.arguments.want).sort();
  await until("the new pair's reviewers and commits asked for", async () => (await pairOf()).length >= 2);
  assert.deepEqual(await pairOf(), ["commits", "reviewers"], "a new pair brings its default reviewers and commits");
  assert.equal(await frame.locator(".bb-f-chip", { hasText: "Dave" }).count(), 1, "the person's reviewers stay");
  await frame.locator("#bb-f-to").fill("main");
  await frame.locator(".bb-f-chip", { hasText: "Bob" }).waitFor({ timeout: 10000 });
  await frame.locator("#bb-f-people").fill("erin");
  await frame.locator('#bb-f-people-list option[value="erin"]').waitFor({ state: "attached", timeout: 10000 });
  await frame.locator("#bb-f-people").press("Enter");
  await frame.locator(".bb-f-chip", { hasText: "Erin" }).waitFor({ timeout: 5000 });
  await frame.locator("#bb-f-desc").fill("Some **bold** words and <b>tags</b>");
  await frame.locator(".bb-tab", { hasText: "Preview" }).click();
  await frame.locator(".bb-f-preview strong", { hasText: "bold" }).waitFor({ timeout: 10000 });
  assert.equal(await frame.locator(".bb-f-preview b").count(), 0, "text is never parsed as HTML");
  await shot(page, "form-inline-dark-preview");
  await frame.locator(".bb-tab", { hasText: "Write" }).click();
  assert.equal(await frame.locator("#bb-f-desc").inputValue(), "Some **bold** words and <b>tags</b>", "the words are kept");
  assert.deepEqual(realErrors(v.errors), []);
});

test("fullscreen, light and dark", async () => {
  for (const theme of ["light", "dark"]) {
    const v = await form(DRAFT, { displayMode: "fullscreen", theme });
    await v.page.waitForTimeout(300);
    await shot(v.page, `form-fullscreen-${theme}`);
  }
});

test("Create calls create_pull_request through the host, the new card opens in place, and the model is told", async () => {
  const before = await posts();
  const v = await form(DRAFT);
  const { frame, page } = v;
  await page.evaluate(() => { window.__marker = "same page"; });
  await frame.locator(".bb-f-create").click();
  await frame.locator(".bb-card").waitFor({ timeout: 15000 });
  assert.equal(await frame.locator(".bb-title").first().textContent(), DRAFT.title);
  assert.equal(await page.evaluate(() => window.__marker), "same page", "opened in place");
  assert.equal(await posts(), before + 1, "one pull request created");
  const sent = await calls(v, "create_pull_request");
  assert.equal(sent.length, 1);
  assert.deepEqual(sent[0].arguments.reviewers, ["dave", "bob", "carol"]);
  assert.equal(sent[0].arguments.default_reviewers, false, "the reviewers are the form's");
  assert.ok((await told(v)).some((t) => /The person created PR #\d+ in BB\/api/.test(t)), JSON.stringify(await told(v)));
  await shot(page, "form-created-card");
});

test("a pull request already open is said as soon as both branches are chosen, Create waits, and there is a way to it", async () => {
  // The test before created docs/typo → main: the form says so before the person presses anything.
  const before = await posts();
  const v = await form(DRAFT);
  const { frame, page } = v;
  const exists = frame.locator(".bb-f-exists");
  await exists.waitFor({ timeout: 15000 });
  assert.match(await exists.textContent(), /^A pull request from these branches is already open: #\d+ Fix typos in the docs/);
  assert.equal(await frame.locator(".bb-f-create").isDisabled(), true, "Create waits");
  await frame.locator("#bb-f-desc").fill("My own words");
  assert.equal(await posts(), before, "nothing is posted");
  await shot(page, "form-duplicate");
  // Another target: no pull request between those branches, and Create is back.
  await frame.locator("#bb-f-to").fill("release/v1");
  await until("the notice goes with the pair", async () => (await frame.locator(".bb-f-exists").count()) === 0);
  assert.equal(await frame.locator(".bb-f-create").isDisabled(), false);
  assert.equal(await frame.locator("#bb-f-desc").inputValue(), "My own words", "the person's text is kept");
  await frame.locator("#bb-f-to").fill("main");
  await exists.waitFor({ timeout: 15000 });
  await frame.locator(".bb-f-open").click();
  await frame.locator(".bb-card").waitFor({ timeout: 15000 });
  assert.equal(await frame.locator(".bb-title").first().textContent(), DRAFT.title);
});

test("an empty field is named and marked, and nothing is sent", async () => {
  const before = await posts();
  const v = await form({ ...DRAFT, from_ref: "feature/parser", to_ref: "release/v1" });
  const { frame, page } = v;
  await frame.locator("#bb-f-title").fill("");
  await frame.locator(".bb-f-create").click();
  const problem = frame.locator(".bb-f-problem");
  await problem.waitFor({ timeout: 5000 });
  assert.equal(await problem.textContent(), "The title cannot be empty.");
  assert.equal(await frame.locator("#bb-f-title").getAttribute("aria-invalid"), "true");
  assert.equal(await posts(), before);
  await shot(page, "form-empty-title");
});

test("a reviewer who cannot review and branches without changes are refused in Bitbucket's words, and nothing is lost", async () => {
  const before = await posts();
  const v = await form({ kind: "pull_request_form", project: "BB", repo: "api", from_ref: "release/v2", to_ref: "main", title: "Release two" });
  const { frame, page } = v;
  await frame.locator("#bb-f-people").fill("nobody");
  await frame.locator("#bb-f-people").press("Enter");
  await frame.locator(".bb-f-chip", { hasText: "nobody" }).waitFor({ timeout: 5000 });
  await frame.locator(".bb-f-create").click();
  const problem = frame.locator(".bb-f-problem");
  await problem.waitFor({ timeout: 15000 });
  assert.match(await problem.textContent(), /nobody is not a user\./i);
  assert.equal(await frame.locator("#bb-f-title").inputValue(), "Release two");
  assert.equal(await frame.locator(".bb-f-create").isEnabled(), true, "Create works again");
  await shot(page, "form-reviewer-refused");
  const same = await form({ kind: "pull_request_form", project: "BB", repo: "api", from_ref: "main", to_ref: "docs/typo", title: "Nothing" });
  assert.match(await same.frame.locator(".bb-f-changes").textContent(), /There are no changes between these branches\./);
  await same.frame.locator(".bb-f-create").click();
  await same.frame.locator(".bb-f-problem").waitFor({ timeout: 15000 });
  assert.match(await same.frame.locator(".bb-f-problem").textContent(), /There are no changes to merge from main to docs\/typo/);
  assert.equal(await posts(), before + 2, "each refused once, nothing created");
});

test("without refresh_view the created pull request is said with its link, and Done asks the host to close the form", async () => {
  const own = await startBb({ bbArgs: ["--exclude", "refresh_view"] });
  try {
    const v = await open(browser, { bb: own.mcp, show: { ...DRAFT, from_ref: "docs/typo", title: "Fix typos, from a form that stays" }, mount: { width: 700 } });
    const { frame, page } = v;
    await frame.locator(".bb-form").waitFor({ timeout: 15000 });
    await frame.locator(".bb-f-create").click();
    await frame.locator(".bb-f-done").waitFor({ timeout: 15000 });
    assert.match(await frame.locator(".bb-f-done").textContent(), /^Pull request #\d+ created\. Open it in Bitbucket/);
    assert.match(await frame.locator(".bb-f-done .bb-f-web").getAttribute("href"), /\/projects\/BB\/repos\/api\/pull-requests\/\d+$/);
    assert.equal(await frame.locator(".bb-f-create").isDisabled(), true, "created once: Create does not create another");
    // What was sent stays as sent: every field read only, no reviewer to remove (issue 54 item 9).
    for (const id of ["#bb-f-from", "#bb-f-to", "#bb-f-title", "#bb-f-desc", "#bb-f-people", "#bb-f-draft"]) {
      assert.equal(await frame.locator(id).isEditable(), false, `${id} is read only once created`);
    }
    assert.equal(await frame.locator(".bb-f-chip .bb-link-button").filter({ visible: true }).count(), 0, "no × on the reviewers");
    assert.equal(await frame.getByRole("button", { name: "Done" }).isEnabled(), true, "Done still closes it");
    assert.equal((await v.log()).teardownRequests, 0, "nothing closes by itself");
    await shot(page, "form-created-done-700-light");
    await frame.getByRole("button", { name: "Done" }).click();
    await until("the host asked to close the form", async () => (await v.log()).teardownRequests === 1);
    assert.deepEqual(realErrors(v.errors), []);
    await page.close();
  } finally {
    await own.stop();
  }
});

test("the code owners of the changed files are offered beside the default reviewers, each saying why (issue 54 item 15)", async () => {
  for (const theme of ["light", "dark"]) {
    for (const mount of [{ width: 700 }, { displayMode: "fullscreen" }]) {
      const v = await form({ kind: "pull_request_form", project: "BB", repo: "api", from_ref: "feature/retry", to_ref: "main" }, { ...mount, theme });
      const { frame, page } = v;
      // BB/api's .bitbucket/CODEOWNERS on main: src/** @dave, docs/ frank@example.invalid; feature/retry changes both.
      const owners = frame.locator(".bb-f-chip").filter({ has: frame.locator(".bb-f-owner") });
      await owners.first().waitFor({ timeout: 15000 });
      assert.deepEqual(await owners.evaluateAll((n) => n.map((c) => [c.querySelector("bdi").textContent, c.querySelector(".bb-f-why").textContent])),
        [["Dave Diaz", "owns src/**"], ["Frank Fischer", "owns docs/"]]);
      assert.equal(await frame.locator(".bb-f-chip").filter({ hasText: "Default" }).count(), 2, "beside the default reviewers bob and carol");
      const drawn = v.bb.result._meta["bb/view"].form;
      assert.deepEqual(drawn.codeOwners.map((o) => o.why), ["owns src/**", "owns docs/"]);
      assert.match(v.bb.result.content[0].text, /code owners of the changed files: dave \(owns src\/\*\*\), frank \(owns docs\/\)\./);
      assert.deepEqual(realErrors(v.errors), []);
      await shot(page, `form-code-owners-${mount.width ? "700" : "full"}-${theme}`);
      await page.close();
    }
  }
});
