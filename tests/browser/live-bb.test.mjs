// Live views against bb and the stand-in, both for real: the test changes Bitbucket through the
// stand-in's control API (/_stack/builds, /_stack/comments, as another user) and watches the view
// follow through refresh_view, forwarded by the test host to bb. bb decides `next`; the host
// compresses time (timeScale) so that bb's 5 s are half a second here.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { launch, open, realErrors, shot, startBb, until } from "./harness.mjs";

let browser;
let bb;
before(async () => {
  // The host compresses time tenfold (SCALE), so bb is asked ten times as often as its `next` says: its real-time
  // rate limit (Bitbucket's 60/5 share) would hold back the refreshes these tests watch. The rate limit's own
  // behaviour is tested in core (refresh.rs) and the shell (bitbucket_rate_limit.rs), in bb's time.
  bb = await startBb({ bbArgs: ["--rate-limit", "off"] });
  browser = await launch({ loopback: true });
});
after(async () => {
  await browser?.close();
  await bb?.stop();
});

const SCALE = 0.1;
const control = async (what, body) => {
  const res = await fetch(`${bb.stack}/_stack/${what}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  assert.ok(res.ok, `${what}: ${res.status} ${await res.text()}`);
};
const refreshes = async (log) => (await log()).calls.filter((c) => c.name === "refresh_view");
const told = async (log) => (await log()).context.map((c) => c.content.map((b) => b.text).join(""));
async function show(args, mount = {}, wait = ".bb-card") {
  const v = await open(browser, { bb: bb.mcp, show: args, mount: { timeScale: SCALE, ...mount }, colorScheme: mount.theme === "dark" ? "dark" : "light" });
  await v.frame.locator(wait).waitFor({ timeout: 15000 });
  const data = v.bb.result._meta["bb/view"];
  assert.ok(data.server.tools.includes("refresh_view"), "bb offers refresh_view to views");
  assert.equal(typeof data.fingerprint, "string");
  return { ...v, data };
}
const PR1 = { kind: "pull_request", project: "BB", repo: "api", pr_id: 1 };

test("a running build turns green in place, with no reload, and the model is told that, and nothing before", async () => {
  await control("builds", { project: "BB", repo: "api", pullRequest: 1, key: "LIVE-1", name: "Live build", state: "INPROGRESS" });
  const v = await show(PR1, { displayMode: "fullscreen" });
  const row = v.frame.locator('.bb-builds .bb-build[data-key="LIVE-1"]');
  assert.equal(await row.getAttribute("data-state"), "INPROGRESS");
  assert.equal(v.data.next, Math.round(v.data.next), "bb's next, scaled by the host");
  await v.frame.locator("body").evaluate(() => { window.sameDocument = true; });
  await until("two refreshes of the unchanged card", async () => (await refreshes(v.log)).length >= 2);
  assert.deepEqual(await told(v.log), [], "nothing changed, so nothing is told");
  const first = (await refreshes(v.log))[0].arguments;
  assert.deepEqual(first, { show: v.data.call, fingerprint: v.data.fingerprint });
  await control("builds", { project: "BB", repo: "api", pullRequest: 1, key: "LIVE-1", state: "SUCCESSFUL" });
  await until("the build turns green", async () => (await row.getAttribute("data-state")) === "SUCCESSFUL");
  assert.equal(await v.frame.locator("body").evaluate(() => window.sameDocument), true, "drawn in place, not reloaded");
  await until("the model is told", async () => (await told(v.log)).length === 1);
  assert.match((await told(v.log))[0], /Build LIVE-1 on PR #1 passed/);
  await row.scrollIntoViewIfNeeded();
  await shot(v.page, "live-bb-build-passed-fullscreen-light");
  await v.page.evaluate(() => window.bbHost.teardown());
  const n = (await refreshes(v.log)).length;
  await v.page.waitForTimeout(2500);
  assert.equal((await refreshes(v.log)).length, n, "nothing is asked after teardown");
  assert.deepEqual(realErrors(v.errors), []);
});

test("a comment added by another user appears in the activity although the pull request's version did not change", async () => {
  const v = await show(PR1, { width: 700, theme: "dark" });
  const version = v.data.pullRequest.version;
  assert.ok(Number.isInteger(version), "the card carries the pull request's version");
  await control("comments", { project: "BB", repo: "api", pullRequest: 1, user: "carol", text: "Seen live from the stand-in." });
  await v.frame.locator(".bb-activity", { hasText: "Seen live from the stand-in." }).waitFor({ timeout: 20000 });
  await until("the model is told", async () => (await told(v.log)).length === 1);
  assert.equal((await told(v.log))[0], "Carol Chen commented");
  // The person is told too, in the same words, through a polite live region, with a way to the comment.
  const line = v.frame.locator(".bb-told-words");
  await until("the person told", async () => (await line.textContent()) === "New: Carol Chen commented");
  assert.equal(await line.getAttribute("aria-live"), "polite");
  assert.equal(await v.frame.locator(".bb-told-go").isVisible(), true);
  await shot(v.page, "live-bb-comment-700-dark");
  assert.deepEqual(realErrors(v.errors), []);
});

test("from bb: the card's Diff tab opens the diff in place, a comment on it is offered rather than swapped, Back returns", async () => {
  const v = await show({ ...PR1, pr_id: 3 });
  if (!v.data.server.kinds.includes("diff")) { assert.equal(await v.frame.locator(".bb-tabs").count(), 0); return; }
  await v.frame.getByRole("button", { name: "Diff", exact: true }).click();
  await v.frame.locator(".bb-diffview").waitFor({ timeout: 20000 });
  assert.deepEqual(await told(v.log), ["The person opened the diff of PR #3 in BB/api"]);
  const line = v.frame.locator('.bb-dl[data-new]:not([data-new=""])').first();
  const path = await line.getAttribute("data-path");
  const n = Number(await line.getAttribute("data-new"));
  const before = await v.frame.locator(".bb-diffview").textContent();
  await control("comments", { project: "BB", repo: "api", pullRequest: 3, user: "bob", text: "A line comment, live.",
    anchor: { path, line: n, lineType: (await line.getAttribute("class")).includes("bb-dl-A") ? "ADDED" : "CONTEXT", fileType: "TO" } });
  await v.frame.locator(".bb-offer").waitFor({ timeout: 20000 });
  assert.equal(await v.frame.locator(".bb-diffview").textContent(), before, "the diff being read is not swapped");
  assert.equal(await v.frame.locator(".bb-live").textContent(), `New: Bob Baker commented on ${path} Show`);
  await shot(v.page, "live-bb-diff-offered-inline");
  await v.frame.getByRole("button", { name: "Show", exact: true }).click();
  await v.frame.locator(".bb-diffview", { hasText: "A line comment, live." }).waitFor({ timeout: 5000 });
  await until("focus on the new comment", async () => v.frame.locator("body").evaluate(() => document.activeElement?.closest?.(".bb-comment")?.textContent.includes("A line comment, live.") === true));
  await v.frame.getByRole("button", { name: "← Back" }).click();
  await v.frame.locator(".bb-card").waitFor();
  // Back on the card, its next refresh finds the comment the diff showed, and says so.
  await until("the card's own change", async () => (await told(v.log)).length === 4);
  assert.deepEqual(await told(v.log), ["The person opened the diff of PR #3 in BB/api", `Bob Baker commented on ${path}`, "The person went back to PR #3 in BB/api", "Bob Baker commented"]);
  assert.deepEqual(realErrors(v.errors), []);
});

test("from bb: a list's State tabs ask list_pull_requests' state, and a row opens its pull request in place", async () => {
  const v = await show({ kind: "pull_requests", project: "BB", repo: "api", state: "OPEN" }, {}, ".bb-list");
  await v.frame.getByRole("button", { name: "Merged", exact: true }).click();
  await v.frame.locator('.bb-tab[data-state="MERGED"][aria-current="page"]').waitFor({ timeout: 20000 });
  const lozenges = await v.frame.locator(".bb-row .bb-row-title > .bb-loz").evaluateAll((n) => n.map((x) => x.textContent));
  assert.ok(lozenges.length > 0 && lozenges.every((w) => w === "Merged"), `merged rows only: ${lozenges}`);
  await shot(v.page, "live-bb-list-merged-inline");
  await v.frame.locator(".bb-row .bb-open-here").first().click();
  await v.frame.locator(".bb-card").waitFor({ timeout: 20000 });
  assert.equal(await v.frame.locator(".bb-meta .bb-loz").textContent(), "Merged");
  const lines = await told(v.log);
  assert.equal(lines[0], "The person opened the merged pull requests of BB/api");
  assert.match(lines[1], /^The person opened PR #\d+ in BB\/api$/);
  assert.deepEqual(realErrors(v.errors), []);
});

test("from bb: Finish review publishes the person's draft through the host, the view redraws in place, and others see it", async () => {
  const v = await show({ kind: "diff", project: "BB", repo: "api", pr_id: 11 }, { displayMode: "fullscreen" }, ".bb-diffview");
  assert.equal(v.data.diff.drafts.count, 1, "alice's one draft on BB/api #11");
  const bar = v.frame.locator(".bb-finish");
  await bar.waitFor({ timeout: 15000 });
  assert.equal(await v.frame.locator(".bb-pending").count(), 1, "the draft is marked Pending");
  const info = await (await fetch(`${bb.stack}/_stack`)).json();
  const bob = info.users.find((u) => u.slug === "bob").token;
  const asBob = () => fetch(`${bb.stack}/rest/api/latest/projects/BB/repos/api/pull-requests/11/comments/1021`, { headers: { authorization: `Bearer ${bob}` } });
  assert.equal((await asBob()).status, 404, "bob cannot see alice's draft");
  await v.frame.locator("body").evaluate(() => { window.sameDocument = true; });
  await bar.getByRole("button", { name: "Publish" }).click();
  await until("the bar is gone", async () => (await v.frame.locator(".bb-finish").count()) === 0);
  await until("the draft is no longer pending", async () => (await v.frame.locator(".bb-pending").count()) === 0);
  assert.equal(await v.frame.locator("body").evaluate(() => window.sameDocument), true, "redrawn in place");
  const call = (await v.log()).calls.find((c) => c.name === "submit_pr_review");
  assert.deepEqual(call.arguments, { project: "BB", repo: "api", pr_id: 11, action: "comment", commit: v.data.diff.head });
  assert.equal((await asBob()).status, 200, "published: bob sees it");
  await shot(v.page, "live-bb-review-published-fullscreen-light");
  assert.deepEqual(realErrors(v.errors), []);
  // Reviewed up to the head without a verdict: the card says Reviewed, not "not reviewed yet".
  const card = await show({ kind: "pull_request", project: "BB", repo: "api", pr_id: 11 }, { width: 700 });
  const alice = card.frame.locator(".bb-reviewer", { hasText: "Alice" });
  assert.equal(await alice.locator(".bb-status").textContent(), "Reviewed");
  await shot(card.page, "live-bb-reviewed-no-verdict-700-light");
});
