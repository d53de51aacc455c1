// Actions in place (ADR-101): what the person does in a view is a tools/call of the model's own tool,
// through the host, to bb, to the stand-in; the view is read again and drawn in place, the model is
// told in one line, and on failure the person's words stay where they wrote them.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, realErrors, result, shot, startBb } from "./harness.mjs";

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

// Approve and Needs work ask the person first (issue 51): the test host answers bb's question by itself,
// accepting with the box ticked (mount.confirm "accept"; --confirm off is not on this branch).
const card = async (pr_id, opts = {}) => {
  const mount = Object.assign({ confirm: "accept" }, opts.mount);
  const v = await open(browser, { bb: bb.mcp, show: { kind: "pull_request", project: "BB", repo: "api", pr_id }, ...opts, mount });
  await v.frame.locator(".bb-card").waitFor({ timeout: 15000 });
  return v;
};
// The view's calls to tools, as the host passed them on, by name.
const calls = async (v, name) => (await v.log()).calls.filter((c) => c && c.name === name);

test("Approve calls submit_pr_review through the host, and the card shows it without a reload", async () => {
  const v = await card(2);
  const { frame, page, errors } = v;
  const approve = frame.locator(".bb-act-approve");
  assert.equal(await approve.textContent(), "Approve");
  assert.equal(await frame.locator(".bb-act-request_changes").textContent(), "Needs work");
  assert.deepEqual(await frame.locator(".bb-action-buttons button").allTextContents(), ["Needs work", "Approve", "Merge"], "Bitbucket's order");
  assert.equal(await frame.locator(".bb-merge-btn").getAttribute("aria-disabled"), "true", "a draft's Merge is shown, vetoed");
  assert.equal(await approve.getAttribute("aria-pressed"), "false");
  assert.equal(await frame.locator(".bb-act-merge").count(), 0, "merge_pull_request is not exposed without --allow-writes");
  await page.evaluate(() => { window.__marker = "same page"; });
  await approve.click();
  await frame.locator(".bb-reviewer", { hasText: "Approved" }).filter({ hasText: "Alice" }).waitFor({ timeout: 15000 });
  const taken = frame.locator(".bb-act-withdraw");
  assert.equal(await taken.textContent(), "Approve", "as Bitbucket's button, pressed once approved");
  assert.equal(await taken.getAttribute("aria-pressed"), "true");
  assert.equal(await taken.getAttribute("title"), "Remove approval");
  const sent = await calls(v, "submit_pr_review");
  assert.equal(sent.length, 1);
  assert.deepEqual(sent[0].arguments, { project: "BB", repo: "api", pr_id: 2, action: "approve" });
  assert.equal(await page.evaluate(() => window.__marker), "same page", "drawn in place, not reloaded");
  const told = (await v.log()).context;
  assert.ok(told.some((m) => JSON.stringify(m).includes("The person approved PR #2.")), JSON.stringify(told));
  assert.deepEqual(realErrors(errors), []);
  await shot(page, "actions-approved");
});

test("the author is offered no review, as on Bitbucket's page", async () => {
  // The stand-in's user (alice) wrote #1; bb knows whom it acts as from Bitbucket's X-AUSERNAME.
  const v = await card(1);
  assert.equal(v.bb.result._meta["bb/view"].pullRequest.you, "alice");
  assert.equal(await v.frame.locator(".bb-act-approve, .bb-act-request_changes, .bb-act-withdraw").count(), 0);
});

test("Bitbucket refusing an action is said in its words beside the buttons", async () => {
  // The card reads the person's drafts (…/review) as it opens: the fault is set once it is drawn, for the review.
  const v = await card(6);
  const faults = `${bb.stack}/_stack/faults`;
  const post = await fetch(faults, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ kind: "status", status: 409, count: 1, pathPrefix: "/rest/api/latest/projects/BB/repos/api/pull-requests/6/review" }) });
  assert.ok(post.ok);
  await v.frame.locator(".bb-act-approve").click();
  const problem = v.frame.locator(".bb-action-bar .bb-action-problem");
  await problem.waitFor({ state: "visible", timeout: 15000 });
  assert.match(await problem.textContent(), /^Bitbucket refused: /);
  assert.equal(await v.frame.locator(".bb-act-approve").isEnabled(), true, "the button works again");
  await shot(v.page, "actions-refused");
});

test("a comment that fails keeps the person's words and says why; sent again, it lands in the activity", async () => {
  const v = await card(3, { mount: { displayMode: "fullscreen" } });
  const { frame, page } = v;
  const words = "Please rename <b>this</b> & check ../../etc/passwd";
  const box = frame.locator('[data-composer="new"] .bb-editor');
  await box.click();
  await box.pressSequentially(words);
  const faults = `${bb.stack}/_stack/faults`;
  const post = await fetch(faults, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ kind: "status", status: 500, count: 1, pathPrefix: "/rest/api/latest/projects/BB/repos/api/pull-requests/3/comments" }) });
  assert.ok(post.ok);
  await frame.locator('[data-composer="new"] button', { hasText: "Comment" }).click();
  const problem = frame.locator('[data-composer="new"] .bb-action-problem');
  await problem.waitFor({ state: "visible", timeout: 15000 });
  assert.ok((await problem.textContent()).length > 10, "bb's words for what went wrong");
  assert.equal(await box.innerText(), words, "the words are kept");
  await shot(page, "actions-comment-failed");
  await frame.locator('[data-composer="new"] button', { hasText: "Comment" }).click();
  await frame.locator(".bb-activity .bb-comment", { hasText: "Please rename <b>this</b>" }).first().waitFor({ timeout: 15000 });
  assert.equal(await frame.locator(".bb-activity b").count(), 0, "the person's text is drawn as text");
  assert.equal(await frame.locator('[data-composer="new"] .bb-editor').innerText(), "", "sent: the box is empty again");
  const sent = await calls(v, "add_pr_comment");
  assert.equal(sent.length, 2, "once failed, once sent: never retried by itself");
  assert.equal(sent[1].arguments.text, words);
});

test("Reply opens a box under the comment and the reply lands inside its thread", async () => {
  const v = await card(1, { mount: { displayMode: "fullscreen" } });
  const { frame, page } = v;
  const thread = frame.locator(".bb-activity .bb-comment[data-comment]").first();
  const id = Number(await thread.getAttribute("data-comment"));
  await thread.locator(".bb-act-reply").first().click();
  const box = frame.locator(`[data-composer="reply-${id}"] .bb-editor`);
  await box.click();
  await box.pressSequentially("Agreed.");
  await frame.locator(`[data-composer="reply-${id}"] button`, { hasText: "Reply" }).click();
  await frame.locator(`.bb-comment[data-comment="${id}"] .bb-comment`, { hasText: "Agreed." }).first().waitFor({ timeout: 15000 });
  const sent = await calls(v, "add_pr_comment");
  assert.equal(sent[0].arguments.reply_to, id);
  await shot(page, "actions-replied");
});

test("an action is offered only where its tool is exposed, and Merge only when the merge check allows it", async () => {
  const data = fixture("pr-open");
  const draw = async (d) => {
    const v = await open(browser, { mount: { input: d.call, result: result(d) } });
    await v.frame.locator(".bb-card").waitFor({ timeout: 15000 });
    return v;
  };
  const readOnly = JSON.parse(JSON.stringify(data));
  readOnly.server.tools = ["get_pull_request", "show", "refresh_view"];
  let v = await draw(readOnly);
  assert.equal(await v.frame.locator(".bb-action-bar button:not(.bb-merge-btn), .bb-composer, .bb-comment-actions").count(), 0, "nothing to do without the tools");
  assert.equal(await v.frame.locator(".bb-action-bar .bb-merge-btn[aria-disabled='true']").count(), 1, "but Merge is shown, vetoed by the conflict");
  const all = JSON.parse(JSON.stringify(data));
  all.server.tools = ["get_pull_request", "show", "refresh_view", "submit_pr_review", "add_pr_comment", "merge_pull_request"];
  all.pullRequest.version = 4;
  all.pullRequest.mergeCheck = { canMerge: true, conflicted: false, outcome: "CLEAN", vetoes: [] };
  v = await draw(all);
  assert.equal(await v.frame.locator(".bb-act-merge").textContent(), "Merge");
  assert.ok(await v.frame.locator('[data-composer="new"]').count() === 1);
  await shot(v.page, "actions-offered");
  for (const theme of ["light", "dark"]) {
    const full = await open(browser, { colorScheme: theme, mount: { input: all.call, result: result(all), displayMode: "fullscreen", theme } });
    await full.frame.locator(".bb-card").waitFor({ timeout: 15000 });
    await shot(full.page, `actions-offered-fullscreen-${theme}`);
  }
  const dark = await open(browser, { colorScheme: "dark", mount: { input: all.call, result: result(all), theme: "dark" } });
  await dark.frame.locator(".bb-card").waitFor({ timeout: 15000 });
  await shot(dark.page, "actions-offered-dark");
  const blocked = JSON.parse(JSON.stringify(all));
  blocked.pullRequest.mergeCheck = { canMerge: false, conflicted: true, outcome: "CONFLICTED", vetoes: [] };
  v = await draw(blocked);
  assert.equal(await v.frame.locator(".bb-act-merge").count(), 0, "a merge the check forbids is not offered");
  assert.equal(await v.frame.locator(".bb-merge-btn").getAttribute("aria-disabled"), "true", "but Merge is shown, vetoed");
  assert.equal(await v.frame.locator(".bb-merge-link").count(), 0);
  const merged = JSON.parse(JSON.stringify(all));
  merged.pullRequest.state = "MERGED";
  v = await draw(merged);
  assert.equal(await v.frame.locator(".bb-action-bar, .bb-composer").count(), 0, "nothing to approve or merge once merged");
});

test("Reply under a comment of the diff view: the reply lands in its thread on the line", async () => {
  const v = await open(browser, { bb: bb.mcp, show: { kind: "diff", project: "BB", repo: "api", pr_id: 1 }, mount: { displayMode: "fullscreen" } });
  await v.frame.locator(".bb-diffview").waitFor({ timeout: 15000 });
  // Fullscreen shows one file at a time: the one whose lines carry comments.
  await v.frame.getByRole("button", { name: /client\.rs/ }).or(v.frame.locator("text=client.rs")).first().click();
  const thread = v.frame.locator(".bb-comment[data-comment-id]").first();
  const id = Number(await thread.getAttribute("data-comment-id"));
  await thread.locator(".bb-act-reply").first().click();
  const box = v.frame.locator(`[data-composer="reply-${id}"] .bb-editor`);
  await box.click();
  await box.pressSequentially("Fixed on this line.");
  await v.frame.locator(`[data-composer="reply-${id}"] button`, { hasText: "Reply" }).click();
  await v.frame.locator(`.bb-comment[data-comment-id="${id}"] .bb-comment`, { hasText: "Fixed on this line." }).first().waitFor({ timeout: 15000 });
  const sent = await calls(v, "add_pr_comment");
  assert.equal(sent[0].arguments.reply_to, id);
  assert.deepEqual([sent[0].arguments.project, sent[0].arguments.repo, sent[0].arguments.pr_id], ["BB", "api", 1]);
  await shot(v.page, "actions-diff-replied");
});
