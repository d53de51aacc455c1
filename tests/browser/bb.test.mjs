// The view driven by bb itself: the local Bitbucket stand-in (bb-stack) and `bb ai mcp serve --http`
// run for real; the test host page's own MCP client (declaring the UI extension) reads
// ui://bb/view from bb, calls `show`, and mounts the page through the reference AppBridge. What is
// drawn is checked against the view data bb sent in the same result's _meta.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { launch, open, realErrors, shot, startBb, texts, view } from "./harness.mjs";

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

// Bidi controls are drawn as marked tokens (⟨U+202E⟩): what bb sent, as the page shows it.
const vis = (t) => (typeof t === "string" ? t.replace(/[\u202A-\u202E\u2066-\u2069]/g, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase()}⟩`) : t);
// The host page's SDK client opens a GET stream that bb answers 405 (it has nothing to push): the
// browser logs that as a failed load. Every other error counts.
const STATE_WORDS = { OPEN: "Open", MERGED: "Merged", DECLINED: "Declined" };
// A reviewer with no verdict: "Reviewed" when they have seen the head, else no word (Bitbucket draws none).
const REVIEW_WORDS = { APPROVED: "Approved", NEEDS_WORK: "Needs work", UNAPPROVED: "" };
const REVIEW_ORDER = { APPROVED: 0, NEEDS_WORK: 1, UNAPPROVED: 2 };

async function show(args, mount = {}, wait = ".bb-card") {
  const v = await open(browser, { bb: bb.mcp, show: args, mount });
  await v.frame.locator(wait).waitFor({ timeout: 15000 });
  const data = v.bb.result._meta["bb/view"];
  assert.ok(data && data.v === 1, "bb sent view data in the result's _meta");
  assert.equal(v.bb.uri, "ui://bb/view");
  assert.equal(v.bb.mimeType, "text/html;profile=mcp-app");
  assert.ok(v.bb.html === view(), "bb serves the page of this tree (if not, target/debug/bb is stale: cargo build -p bb)");
  assert.ok(v.toBb.length > 0, "the host page talked to bb");
  assert.deepEqual(v.requests, [], "nothing else was requested, by the host page or the view");
  return { ...v, data };
}
const pr = (pr_id, mount) => show({ kind: "pull_request", project: "BB", repo: "api", pr_id }, mount);

// Reviewers as Bitbucket orders them: Approved, Needs work, then the rest; ties by display name.
function reviewersOf(data) {
  const name = (slug) => (data.users[slug] && data.users[slug].name) || slug;
  return [...data.pullRequest.reviewers]
    .sort((a, b) => REVIEW_ORDER[a.status] - REVIEW_ORDER[b.status] || name(a.user).localeCompare(name(b.user)))
    .map((r) => [vis(name(r.user)), REVIEW_WORDS[r.status] || (r.reviewed ? "Reviewed" : "")]);
}

async function header(frame, data) {
  const p = data.pullRequest;
  assert.equal(await frame.locator(".bb-title").textContent(), vis(p.title));
  const word = p.state === "OPEN" && p.draft ? "Draft" : STATE_WORDS[p.state];
  assert.equal(await frame.locator(".bb-meta .bb-loz").textContent(), word);
  assert.equal(await frame.locator(".bb-meta > .bb-name").textContent(), vis(data.users[p.author].name));
  assert.deepEqual(await texts(frame.locator(".bb-meta .bb-branch bdi")), [vis(p.source.branch), vis(p.target.branch)]);
  const drawn = await frame.locator(".bb-reviewer").evaluateAll((n) => n.map((x) => [x.querySelector(".bb-name").textContent, x.querySelector(".bb-status")?.textContent ?? ""]));
  assert.deepEqual(drawn, reviewersOf(data));
}

test("BB/api #1 from bb: title, Open, reviewers Approved / Needs work / not yet, counts, failed and required builds up front", async () => {
  const { frame, page, errors, data } = await pr(1);
  const p = data.pullRequest;
  await header(frame, data);
  assert.deepEqual(reviewersOf(data).map((r) => r[1]), ["Approved", "Needs work", ""], "the stack's PR has one of each");
  // Comment 1005 sits on a removed line: its number is the old file's, and the activity says so (full screen
  // draws the whole activity).
  const whole = await pr(1, { displayMode: "fullscreen" });
  assert.equal(await whole.frame.locator('[data-comment="1005"] > .bb-cbody > .bb-anchor').textContent(), "src/client.rs · line 11 of the old file");
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  assert.equal(await frame.locator('[data-count="comments"]').textContent(), plural(p.counts.comments, "comment", "comments"));
  assert.equal(await frame.locator('[data-count="tasks"]').textContent(), `☐ ${plural(p.counts.openTasks, "open task", "open tasks")}`);
  assert.ok(p.counts.openTasks > 0 && p.builds.counts.failed > 0);
  assert.equal(await frame.locator('[data-count="failed-builds"]').textContent(), `✕ ${plural(p.builds.counts.failed, "failed build", "failed builds")}`);
  assert.equal(await frame.locator('[data-need="task"]').count(), p.counts.openTasks, "every open task up front");
  // Required builds, as bb's view data says: "1 of 6 required builds passed", each key that does not pass up front.
  const req = p.builds.requirements;
  assert.equal(req.summary, "1 of 6 required builds passed");
  assert.equal(await frame.locator(".bb-builds-head .bb-req-summary").textContent(), req.summary);
  assert.equal(await frame.locator('[data-count="required-builds"]').count(), 0, "said once, in the Builds heading");
  // One verdict: the stand-in's merge check and bb's builds line say the same, and Merge is shown, vetoed.
  const [passed, total] = req.summary.match(/^(\d+) of (\d+)/).slice(1).map(Number);
  const vetoes = await texts(frame.locator(".bb-merge .bb-veto-text"));
  assert.ok(vetoes.includes(`You need ${total - passed} more successful required builds before this pull request can be merged.`), vetoes.join("\n"));
  assert.ok(vetoes.includes(`You need to resolve ${plural(p.counts.openTasks, "open task", "open tasks")} before this pull request can be merged.`), vetoes.join("\n"));
  const merge = frame.getByRole("button", { name: "Merge", exact: true });
  assert.equal(await merge.getAttribute("aria-disabled"), "true");
  assert.equal(await merge.getAttribute("title"), "This pull request can't be merged. Click for details.");
  const blocking = req.keys.filter((k) => k.state !== "SUCCESSFUL").map((k) => [k.key, k.state]);
  assert.ok(blocking.some(([, s]) => s === "MISSING") && blocking.some(([, s]) => s === "FAILED"));
  // Each key that does not pass is drawn without a click: a build of its own marked Required, or the key itself when it has none.
  const under = (b) => b.reportsUnder || b.key;
  for (const [key, state] of blocking) {
    const own = p.builds.items.filter((b) => under(b) === key);
    const row = own.length ? frame.locator(`.bb-builds > li.bb-build[data-key="${own[0].key}"]`) : frame.locator(`.bb-builds > li.bb-req-key[data-key="${key}"]`);
    assert.equal(await row.count(), 1, `${key} (${state}) is drawn without a click`);
  }
  if (blocking.some(([, s]) => s === "MISSING")) assert.equal(await frame.locator('.bb-req-key[data-state="MISSING"] .bb-build-state').first().textContent(), "○ Not yet run");
  assert.equal(await frame.locator('.bb-builds .bb-build[data-state="FAILED"]').count(), p.builds.items.filter((b) => b.state === "FAILED").length);
  const required = p.builds.items.filter((b) => b.required === true).length;
  const more = frame.getByRole("button", { name: /^Show \d+ more builds?$/ });
  if (await more.count()) await more.press("Enter");
  assert.equal(await frame.locator(".bb-builds .bb-build:not(.bb-req-key) .bb-loz", { hasText: "Required" }).count(), required, "each required build is marked");
  assert.deepEqual(realErrors(errors), []);
  await frame.locator(".bb-title").scrollIntoViewIfNeeded();
  await shot(page, "bb-card-api-1-inline");
});

test("BB/api #1 from bb, fullscreen: the activity newest first, as bb sent it; every required key", async () => {
  const { frame, page, data } = await pr(1, { displayMode: "fullscreen", theme: "dark" });
  const items = data.pullRequest.activity.items;
  const at = items.map((i) => i.at);
  assert.deepEqual(at, [...at].sort((a, b) => b - a), "bb sends the activity newest first");
  assert.deepEqual(await frame.locator(".bb-activity > li").evaluateAll((n) => n.map((x) => x.dataset.action)), items.map((i) => i.action));
  assert.match(await frame.locator(".bb-activity > li").last().textContent(), /opened the pull request/);
  const under = (b) => b.reportsUnder || b.key;
  const lone = data.pullRequest.builds.requirements.keys.filter((k) => !data.pullRequest.builds.items.some((b) => under(b) === k.key));
  assert.equal(await frame.locator(".bb-builds > li.bb-build").count(), data.pullRequest.builds.items.length + lone.length, "each build once, and each required key without one");
  await page.waitForTimeout(200);
  await shot(page, "bb-card-api-1-fullscreen-dark");
});

test("BB/api #4 (merged), #5 (declined) and #2 (draft) from bb draw their lozenges, reviewers and counts", async () => {
  for (const [id, word] of [[4, "Merged"], [5, "Declined"], [2, "Draft"]]) {
    const { frame, page, errors, data } = await pr(id);
    await header(frame, data);
    assert.equal(await frame.locator(".bb-meta .bb-loz").textContent(), word);
    const p = data.pullRequest;
    if (p.state !== "OPEN") assert.equal(await frame.locator(".bb-merge").count(), 0, "a closed pull request shows no merge checks");
    const closed = { MERGED: "Merged", DECLINED: "Declined" }[p.state];
    if (closed) assert.match(await frame.locator(".bb-dates").textContent(), new RegExp(`^${closed} `));
    if (p.builds && p.builds.requirements && p.state === "OPEN") {
      assert.equal(await frame.locator(".bb-req-summary").textContent(), p.builds.requirements.summary);
    } else {
      assert.equal(await frame.locator(".bb-req-summary, .bb-req-key").count(), 0, "the merge check speaks only for an open pull request");
    }
    const first = p.activity.items[0];
    assert.equal(await frame.locator(".bb-activity > li").first().getAttribute("data-action"), first.action, "newest first");
    assert.deepEqual(realErrors(errors), []);
    await shot(page, `bb-card-api-${id}-${word.toLowerCase()}`);
  }
});

test("BB/api #7 from bb: hostile text is drawn as text, and no script from the data runs", async () => {
  const { frame, page, errors, data, log } = await pr(7, { displayMode: "fullscreen" });
  assert.match(data.pullRequest.title, /<script>/);
  assert.equal(await frame.locator(".bb-title").textContent(), vis(data.pullRequest.title), "the title's markup is text");
  assert.equal(await frame.locator("script").count(), 1, "only the page's own script");
  assert.equal(await frame.locator(".bb-card img:not(.bb-face), .bb-card b, .bb-card iframe, .bb-card object").count(), 0);
  await page.waitForTimeout(300);
  assert.deepEqual((await log()).pwned, [], "the canary did not fire");
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await frame.locator("body").evaluate(() => window.__pwned), undefined);
  assert.deepEqual(realErrors(errors), []);
  await shot(page, "bb-card-api-7-hostile");
});

test("BB/cli open with limit 5 from bb: five rows as bb sent them, and \"5 shown · more exist\"", async () => {
  const { frame, page, errors, data } = await show({ kind: "pull_requests", project: "BB", repo: "cli", limit: 5 }, {}, ".bb-list");
  const list = data.list;
  assert.equal(list.shown, 5);
  assert.equal(list.more, true);
  assert.equal(await frame.locator(".bb-list-title").textContent(), list.heading || list.title);
  assert.equal(await frame.locator(".bb-row").count(), list.items.length);
  assert.deepEqual(await texts(frame.locator(".bb-row-link")), list.items.map((i) => vis(i.title)));
  assert.deepEqual(await texts(frame.locator(".bb-row .bb-row-title > .bb-loz")), list.items.map((i) => (i.draft ? "Draft" : STATE_WORDS[i.state])));
  assert.deepEqual(await frame.locator(".bb-row").evaluateAll((n) => n.map((x) => x.dataset.id)), list.items.map((i) => `#${i.id}`));
  // Each row's reviewers: Approved and Needs work in their avatar's title, as bb's data says.
  const name = (slug) => data.users[slug].name;
  const expected = list.items.map((i) => [...i.reviewers].sort((a, b) => REVIEW_ORDER[a.status] - REVIEW_ORDER[b.status] || name(a.user).localeCompare(name(b.user)))
    .map((r) => vis(r.status === "UNAPPROVED" ? name(r.user) : `${name(r.user)}: ${REVIEW_WORDS[r.status]}`)));
  assert.deepEqual(await frame.locator(".bb-row").evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll(".bb-row-reviewers .bb-avatar")].map((a) => a.title))), expected.map((e) => e.slice(0, 3)), "three avatars, the rest folded into +N");
  assert.equal(await frame.locator(".bb-tally").textContent(), "5 pull requests shown · more exist in Bitbucket");
  assert.deepEqual(realErrors(errors), []);
  await shot(page, "bb-list-cli-limit-5");
});

test("the reviewer inbox from bb: every row bb sent, its title and the count it gives", async () => {
  const { frame, page, errors, data } = await show({ kind: "pull_requests", inbox: true }, { displayMode: "fullscreen" }, ".bb-list");
  const list = data.list;
  assert.ok(list.items.length > 0, "the stack's reviewer inbox is not empty");
  assert.equal(await frame.locator(".bb-list-title").textContent(), list.heading || list.title);
  assert.equal(await frame.locator(".bb-row").count(), list.items.length, "fullscreen shows every row");
  assert.deepEqual(await texts(frame.locator(".bb-row-link")), list.items.map((i) => vis(i.title)));
  const n = list.items.length;
  const tally = Number.isInteger(list.total) && list.total > n ? `${n} of ${list.total} shown`
    : `${n} ${n === 1 ? "pull request" : "pull requests"} shown${list.more === true ? " · more exist in Bitbucket" : ""}`;
  assert.equal(await frame.locator(".bb-tally").textContent(), tally, "the count says what is drawn");
  assert.deepEqual(realErrors(errors), []);
  await page.waitForTimeout(200);
  await shot(page, "bb-list-reviewer-inbox");
});

test("an error view offers to try again, and trying again through show draws the pull request", async () => {
  const faults = `${bb.stack}/_stack/faults`;
  const post = (body) => fetch(faults, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  // Every read of pull request #3 fails, through bb's retries, until the faults are taken away.
  assert.ok((await post({ kind: "status", status: 503, count: 1000, pathPrefix: "/rest/api/latest/projects/BB/repos/api/pull-requests/3" })).ok);
  const args = { kind: "pull_request", project: "BB", repo: "api", pr_id: 3 };
  const v = await open(browser, { bb: bb.mcp, show: args });
  await v.frame.locator(".bb-problem").waitFor({ timeout: 20000 });
  assert.match(await v.frame.locator(".bb-problem").textContent(), /try again later/);
  await shot(v.page, "bb-error-retry-inline");
  assert.ok((await fetch(faults, { method: "DELETE" })).ok);
  await v.frame.locator(".bb-retry").click();
  await v.frame.locator(".bb-card").waitFor({ timeout: 20000 });
  assert.equal(await v.frame.locator(".bb-title").count(), 1);
});
