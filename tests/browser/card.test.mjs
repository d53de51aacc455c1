// The pull request card: what it draws from the fixtures, inline and fullscreen, light and dark.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, texts } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function card(name, mount = {}, edit = (d) => d) {
  const data = edit(fixture(name));
  const v = await open(browser, { mount: { input: data.call, result: result(data), ...mount } });
  await v.frame.locator(".bb-card").waitFor({ timeout: 10000 });
  return { ...v, data };
}

test("an open pull request is drawn as Bitbucket's page: title, lozenge, branches, reviewers in order, counts", async () => {
  const { frame, page, errors } = await card("pr-open");
  assert.equal(await frame.locator(".bb-title").textContent(), "Add paging to the pull request list");
  assert.equal(await frame.locator(".bb-meta .bb-loz").textContent(), "Open");
  assert.equal(await frame.locator(".bb-meta > .bb-name").textContent(), "Alice Example");
  assert.deepEqual(await texts(frame.locator(".bb-meta .bb-branch bdi")), ["feature/paging", "main"]);
  assert.deepEqual(await texts(frame.locator(".bb-meta .bb-branch .bb-sr")), ["source branch:", "target branch:"], "each branch says its role");
  assert.equal(await frame.locator(".bb-read").textContent(), "Read from Bitbucket 2 minutes ago");
  // Approved, then Needs work, then the rest; ties by display name.
  assert.deepEqual(await texts(frame.locator(".bb-reviewer > .bb-name")), ["Bob Builder", "Erin Approver", "Carol Reviewer", "Dave Doe"]);
  assert.deepEqual(await texts(frame.locator(".bb-reviewer > .bb-status")), ["Approved", "Approved", "Needs work"], "no word for a reviewer who has not reviewed, as Bitbucket");
  assert.deepEqual(await texts(frame.locator(".bb-reviewer .bb-badge")), ["✓", "✓", "!"], "a badge for Approved and Needs work, none for not yet");
  assert.equal(await frame.locator(".bb-reviewer img").count(), 2, "avatars as data: images where bb sent one");
  assert.deepEqual(await texts(frame.locator(".bb-reviewer .bb-initials")), ["CR", "DD"], "initials where it sent none");
  assert.deepEqual(await frame.locator(".bb-reviewer").evaluateAll((n) => n.map((x) => x.dataset.status)), ["APPROVED", "APPROVED", "NEEDS_WORK", "UNAPPROVED"]);
  assert.equal(await frame.locator('[data-count="comments"]').textContent(), "7 comments");
  assert.equal(await frame.locator('[data-count="tasks"]').textContent(), "☐ 2 open tasks");
  assert.equal(await frame.locator('[data-count="failed-builds"]').textContent(), "✕ 1 failed build");
  // Bitbucket's counts are of the whole (8 builds); the page lists the 6 the result carries.
  assert.deepEqual(await texts(frame.locator(".bb-build-count")), ["✓ 4 successful", "✕ 1 failed", "◔ 1 in progress", "? 2 unknown"]);
  assert.equal(await frame.locator(".bb-shown").textContent(), "4 of 8 builds shown", "three builds and the pinned failed one are drawn");
  assert.deepEqual(await texts(frame.locator(".bb-missing li")), ["Commits: not read (Bitbucket answered 403)."]);
  assert.match(await frame.locator(".bb-older").textContent(), /Older activity/);
  assert.deepEqual(errors, []);
  await shot(page, "card-open-inline-light");
});

test("the activity is newest first, with comments, nested replies, tasks and Outdated comments", async () => {
  const { frame } = await card("pr-open", { displayMode: "fullscreen" });
  const actions = await frame.locator(".bb-activity > li").evaluateAll((n) => n.map((x) => x.dataset.action));
  assert.deepEqual(actions, ["AUTO_MERGE_REQUESTED", "COMMENTED", "COMMENTED", "REVIEWED", "COMMENTED", "APPROVED", "RESCOPED", "COMMENTED", "UPDATED", "APPROVED", "OPENED"]);
  const sentences = await texts(frame.locator(".bb-activity > li > .bb-line"));
  assert.match(sentences[0], /Alice Example requested auto-merge an hour ago$/);
  assert.match(sentences[1], /Erin Approver replied to a comment 2 hours ago$/, "a reply whose thread is not on the page");
  assert.match(sentences[2], /Carol Reviewer commented on a file /);
  assert.match(sentences[3], /Carol Reviewer marked the pull request as needs work/);
  assert.match(sentences[5], /Bob Builder marked the pull request as approved/);
  assert.match(sentences[6], /Alice Example updated the pull request by adding 2 commits and removing 1 commit yesterday$/);
  assert.match(sentences[7], /Dave Doe commented 2 days ago$/);
  assert.match(sentences[8], /Alice Example updated the reviewers/);
  assert.deepEqual(await texts(frame.locator('.bb-act[data-action="UPDATED"] .bb-rev-change')), ["Added 2 reviewers: Dave Doe, Erin Approver", "Removed 1 reviewer: CI Bot (service)"]);
  assert.match(sentences[10], /Alice Example opened the pull request 3 days ago/);
  assert.doesNotMatch(sentences.join("\n"), /updated the pull request \d|updated the pull request$/m, "never a generic sentence");
  // The author is not repeated under "X commented": the sentence names them once.
  assert.equal(await frame.locator('.bb-act > [data-comment="30"] > .bb-cbody > .bb-chead .bb-name').count(), 0);
  assert.equal(await frame.locator('.bb-act > [data-comment="30"] > .bb-avatar').count(), 0);
  // Bob's comment → Alice's reply → Bob's reply → Bob's task, nested in that order.
  const deepest = frame.locator('[data-comment="20"] [data-comment="21"] [data-comment="22"] [data-comment="23"]');
  assert.equal(await deepest.locator(".bb-loz").textContent(), "Open task");
  assert.equal(await frame.locator('[data-comment="30"] .bb-moved').textContent(), "Outdated");
  assert.equal(await frame.locator('[data-comment="10"] .bb-loz').first().textContent(), "Resolved task");
  assert.match(await frame.locator('[data-comment="21"] > .bb-cbody > .bb-chead').textContent(), /edited/);
});

test("inline, the card is one screen high, grows a step at a time, and never hides what needs the person", async () => {
  const { frame, page, log } = await card("pr-open");
  const height = await page.locator("iframe#view").evaluate((f) => f.getBoundingClientRect().height);
  assert.ok(height <= 610, `inline height ${height}`);
  assert.ok((await log()).sizes.every((h) => h <= 610), "every size the view asked for is bounded");
  // Before any click: the conflict, both vetoes, every open task and the failed build are drawn.
  assert.equal(await frame.locator('[data-need="conflict"]').count(), 1);
  assert.equal(await frame.locator('[data-need="veto"]').count(), 2);
  assert.equal(await frame.locator('[data-need="task"]').count(), 2);
  assert.equal(await frame.locator('.bb-build[data-state="FAILED"]').count(), 1, "the failed build (the last of six) is drawn");
  assert.equal(await frame.locator(".bb-build").count(), 4, "three builds and the pinned failed one");
  assert.equal(await frame.locator(".bb-activity > li.bb-act").count(), 4);
  const more = frame.locator(".bb-activity > li > .bb-more");
  assert.equal(await more.textContent(), "Show 7 more activities");
  // Below the frame's edge: the keyboard reaches it, and the frame grows (or scrolls) to show it.
  await more.focus();
  await more.press("Enter");
  assert.equal(await frame.locator(".bb-activity > li.bb-act").count(), 11);
  assert.equal(await frame.locator(".bb-activity > li.bb-act").nth(4).evaluate((n) => n === document.activeElement), true, "focus is on the first item it revealed");
  assert.equal(await frame.locator(".bb-activity > li > .bb-more").count(), 0);
  const after = await page.locator("iframe#view").evaluate((f) => f.getBoundingClientRect().height);
  assert.ok(after <= 610, "growing stays within what the host allows (600)");
});

test("fullscreen, requested through the host, shows everything the result carries", async () => {
  const { frame, page, log } = await card("pr-open", { theme: "dark" });
  await frame.locator(".bb-mode").click();
  await frame.locator("main.bb-fullscreen").waitFor();
  assert.deepEqual((await log()).modeRequests, ["fullscreen"]);
  assert.equal(await frame.locator(".bb-more").count(), 0, "no Show more buttons");
  assert.equal(await frame.locator(".bb-build").count(), 6);
  assert.equal(await frame.locator(".bb-activity > li").count(), 11);
  assert.equal(await frame.locator("[data-comment]").count(), 9, "every comment and reply, each once");
  assert.equal(await frame.locator(".bb-desc .bb-md > *").count(), 9, "every block of the description");
  assert.equal(await frame.locator(".bb-desc table").count(), 1);
  await page.waitForTimeout(200);
  await shot(page, "card-open-fullscreen-dark");
  await frame.locator(".bb-mode").click();
  await frame.locator("main.bb-inline").waitFor();
  assert.deepEqual((await log()).modeRequests, ["fullscreen", "inline"]);
});

test("without fullscreen among the host's display modes, no fullscreen button is offered", async () => {
  const { frame } = await card("pr-open", { availableDisplayModes: ["inline"] });
  assert.equal(await frame.locator(".bb-mode").count(), 0);
});

test("links open only through the host's ui/open-link, and only to web addresses", async () => {
  const { frame, page, log } = await card("pr-open", { displayMode: "fullscreen" });
  await frame.locator(".bb-id").click();
  await frame.locator(".bb-build-name", { hasText: "Unit tests" }).click();
  await frame.locator(".bb-link", { hasText: "the paging notes" }).click();
  assert.equal(await frame.locator("a", { hasText: "mail the team" }).count(), 0, "mailto is drawn as text");
  assert.deepEqual((await log()).links, [
    "https://git.example.com/bitbucket/projects/BB/repos/api/pull-requests/1",
    "https://ci.example.com/unit/7",
    "https://example.com/docs/paging",
  ]);
  assert.equal(await frame.locator(".bb-card").count(), 1, "the frame did not navigate");
  assert.equal(page.url(), "http://host.invalid/");
});

test("merged, declined and draft pull requests draw their lozenges and what they carry", async () => {
  const merged = await card("pr-merged");
  assert.equal(await merged.frame.locator(".bb-meta .bb-loz").textContent(), "Merged");
  // The merge commit beside when it merged, by its short hash, to its page only through the host.
  assert.equal(await merged.frame.locator(".bb-dates").textContent(), "Merged 32 minutes ago in commit 1e9c72b20d1");
  assert.equal(await merged.frame.locator(".bb-merge-commit .bb-hash").getAttribute("title"), "1e9c72b20d1f4a8e9b0c3d2e1f0a9b8c7d6e5f40");
  await merged.frame.locator(".bb-merge-commit-link").click();
  assert.deepEqual((await merged.log()).links, ["https://git.example.com/bitbucket/projects/BB/repos/api/commits/1e9c72b20d1f4a8e9b0c3d2e1f0a9b8c7d6e5f40"]);
  const bare = await card("pr-merged", {}, (d) => { delete d.pullRequest.mergeCommit; return d; });
  assert.equal(await bare.frame.locator(".bb-dates").textContent(), "Merged 32 minutes ago", "an older Bitbucket names no merge commit");
  assert.equal(await merged.frame.locator(".bb-merge").count(), 0, "a merged pull request shows no merge checks");
  assert.equal(await merged.frame.locator('[data-count="tasks"]').textContent(), "☐ All tasks resolved");
  assert.match(await merged.frame.locator(".bb-activity > li").first().textContent(), /^Bob Builder merged feature\/avatar-cache to main in commit 1e9c72b20d1 /);
  await shot(merged.page, "card-merged");

  const declined = await card("pr-declined");
  assert.equal(await declined.frame.locator(".bb-meta .bb-loz").textContent(), "Declined");
  assert.deepEqual(await texts(declined.frame.locator(".bb-missing li")), ["Activity: not read (Bitbucket answered 403).", "Builds: not read (Bitbucket answered 503)."]);
  assert.deepEqual(await texts(declined.frame.locator(".bb-meta .bb-branch bdi")), ["~DAVE/api:rewrite", "BB/api:main"], "a fork names its repository");
  // The header wraps cleanly: the state and the id stay together, no separator is left on a line of its own.
  const mids = await declined.frame.locator(".bb-meta .bb-state > *").evaluateAll((n) => n.map((x) => { const r = x.getBoundingClientRect(); return (r.top + r.bottom) / 2; }));
  assert.equal(mids.length, 2);
  assert.ok(Math.abs(mids[0] - mids[1]) < 4, `Declined and its id on one line: ${mids}`);
  assert.equal(await declined.frame.locator(".bb-meta .bb-divider").count(), 0);
  assert.match(await declined.frame.locator(".bb-desc").textContent(), /No description for this pull request\./);
  assert.equal(await declined.frame.locator('[aria-label="Builds"]').count(), 0);
  assert.equal(await declined.frame.locator(".bb-summary").count(), 0, "unknown counts are not drawn as zero");
  await shot(declined.page, "card-declined");

  const draft = await card("pr-draft", { theme: "dark" });
  assert.equal(await draft.frame.locator(".bb-meta .bb-loz").textContent(), "Draft");
  assert.equal(await draft.frame.locator(".bb-reviewers").textContent(), "No reviewers");
  assert.equal(await draft.frame.locator('[data-count="tasks"]').textContent(), "☐ No open tasks");
  assert.equal(await draft.frame.locator('[data-count="comments"]').textContent(), "0 comments");
  await shot(draft.page, "card-draft-dark");
});

test("light and dark follow the host's theme, and the host's style variables win", async () => {
  const { frame, page } = await card("pr-open");
  const colours = () => frame.locator("body").evaluate((b) => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color]);
  const light = await colours();
  await page.evaluate(() => window.bbHost.setContext({ theme: "dark" }));
  await frame.locator("html[data-theme=dark]").waitFor();
  const dark = await colours();
  assert.notEqual(light[0], dark[0]);
  assert.notEqual(light[1], dark[1]);
  await page.evaluate(() => window.bbHost.setContext({ styles: { variables: { "--color-background-primary": "rgb(1, 2, 3)", "--color-text-primary": "rgb(250, 240, 230)" } } }));
  await frame.locator("html[style*='--color-background-primary']").waitFor();
  assert.deepEqual(await colours(), ["rgb(1, 2, 3)", "rgb(250, 240, 230)"]);
});

test("with no theme from the host, the system's preference decides", async () => {
  const data = fixture("pr-draft");
  const bg = async (colorScheme) => {
    const v = await open(browser, { colorScheme, mount: { result: result(data) } });
    await v.frame.locator(".bb-card").waitFor();
    await v.page.evaluate(() => 0);
    return v.frame.locator("body").evaluate((b) => getComputedStyle(b).backgroundColor);
  };
  // The test host always sends a theme; clear it in the frame to see the fallback.
  const v = await open(browser, { colorScheme: "dark", mount: { result: result(data) } });
  await v.frame.locator(".bb-card").waitFor();
  const fallback = await v.frame.locator("html").evaluate((h) => { delete h.dataset.theme; h.style.colorScheme = ""; return getComputedStyle(document.body).backgroundColor; });
  assert.equal(fallback, "rgb(29, 33, 37)");
  assert.equal(await bg("light"), "rgb(255, 255, 255)");
});

test("a_card_with_a_failed_and_a_missing_required_build_shows_both_up_front_with_the_summary", async () => {
  const { frame, page, errors, data } = await card("pr-required");
  assert.equal(data.pullRequest.builds.requirements.summary, "1 of 3 required builds passed");
  // Inline, before any click: the summary once, in the builds header beside the rows it counts, and both keys that block.
  assert.equal(await frame.locator(".bb-builds-head .bb-req-summary").textContent(), "1 of 3 required builds passed");
  assert.ok(await frame.locator(".bb-builds-head .bb-req-summary").isVisible());
  assert.equal(await frame.locator('[data-count="required-builds"]').count(), 0, "not again in the counts line");
  assert.equal((await frame.locator(".bb-card").textContent()).split("required builds passed").length - 1, 1, "the summary is said once on the card");
  // Each build once, failed first, then the required key with no build, then the rest in Bitbucket's order.
  const rows = frame.locator(".bb-builds > li.bb-build");
  assert.deepEqual(await rows.evaluateAll((n) => n.map((x) => [x.dataset.key, x.dataset.state])), [
    ["CI-UNIT-7", "FAILED"], ["CI-SECURITY", "MISSING"], ["CI-LINT-7", "SUCCESSFUL"], ["CI-DOCS", "SUCCESSFUL"], ["CI-AUDIT", "SUCCESSFUL"],
  ]);
  assert.deepEqual(await texts(rows), [
    "✕ FailedUnit testsRequiredCI-UNIT-7 · 3 failed · 1 min 1 s · 120 passed, 3 failed, 1 skipped",
    "○ Not yet runCI-SECURITYRequired",
    "✓ SuccessfulLintRequiredCI-LINT-7 · clean · 21 s", "✓ SuccessfulDocsCI-DOCS · 45 s", "✓ SuccessfulAuditCI-AUDIT · 9 s",
  ]);
  assert.deepEqual(await texts(frame.locator(".bb-waits")), ["The merge check waits for a build under the required key with no build yet."], "said once, under the list");
  assert.equal(await frame.locator('[data-need="required-build"]').count(), 1);
  assert.equal(await frame.locator(".bb-required").count(), 0, "no second list of the same builds");
  assert.equal(await frame.getByRole("button", { name: "Show 1 more build", exact: true }).count(), 1, "only a passing build waits behind Show more, said in the singular");
  assert.deepEqual(errors, []);
  await shot(page, "card-required-inline-light");

  // Fullscreen: every build, still each once.
  await frame.locator(".bb-mode").click();
  await frame.locator("main.bb-fullscreen").waitFor();
  assert.equal(await frame.locator(".bb-builds > li.bb-build").count(), 6);
  const names = await texts(frame.locator(".bb-builds > li.bb-build .bb-build-name"));
  assert.equal(new Set(names).size, names.length, "no build drawn twice");
  await page.waitForTimeout(200);
  await shot(page, "card-required-fullscreen");
});

test("builds are ordered failed, in progress, missing, the rest; the missing note is said once; a nameless build shows its key once", async () => {
  const data = fixture("pr-required");
  const b = data.pullRequest.builds;
  b.items.splice(1, 0, { key: "LIVE-1", name: null, state: "INPROGRESS", url: "https://ci.example.com/live/1", description: null, duration: null, testResults: null, reportsUnder: "LIVE-1", required: false });
  b.items[0].description = "a long description that makes the row wrap at seven hundred pixels, so the detail goes on a line of its own under the name and never under the state";
  b.requirements.keys.push({ key: "CI-E2E", state: "MISSING" });
  b.requirements.summary = "1 of 4 required builds passed";
  b.shown = b.total = 6;
  const v = await open(browser, { mount: { input: data.call, result: result(data), displayMode: "fullscreen" } });
  await v.frame.locator(".bb-card").waitFor({ timeout: 10000 });
  await v.page.setViewportSize({ width: 700, height: 800 });
  const rows = v.frame.locator(".bb-builds > li.bb-build");
  assert.deepEqual(await rows.evaluateAll((n) => n.map((x) => x.dataset.state)), ["FAILED", "INPROGRESS", "MISSING", "MISSING", "SUCCESSFUL", "SUCCESSFUL", "SUCCESSFUL", "SUCCESSFUL"]);
  assert.equal(await v.frame.locator('.bb-build[data-key="LIVE-1"]').textContent(), "◔ In progressLIVE-1", "its key once, as its name");
  assert.equal(await v.frame.locator(".bb-waits").count(), 1);
  assert.equal(await v.frame.locator(".bb-waits").textContent(), "The merge check waits for a build under each required key with no build yet.");
  assert.equal(await v.frame.getByText("waits for a build").count(), 1, "not per row");
  // The wrapped row: its detail starts where its name starts, not under the state.
  const lint = v.frame.locator('.bb-build[data-key="CI-LINT-7"]');
  const [name, detail] = await Promise.all([lint.locator(".bb-build-name").boundingBox(), lint.locator(".bb-build-detail").boundingBox()]);
  assert.ok(detail.y > name.y, "the row wrapped");
  assert.ok(Math.abs(detail.x - name.x) < 1, `detail at ${detail.x}, name at ${name.x}`);
  assert.deepEqual(v.errors, []);
  await shot(v.page, "card-builds-order-700");
});

test("Merge is always shown on an open pull request: vetoed and pointing to its issues, working, or Merge in Bitbucket", async () => {
  const draw = async (d, mount = {}) => {
    const v = await open(browser, { mount: { input: d.call, result: result(d), ...mount } });
    await v.frame.locator(".bb-card").waitFor({ timeout: 10000 });
    return v;
  };
  // Vetoed: one verdict. The button names what the Merge issues panel lists, and takes the person there.
  const vetoed = await draw(fixture("pr-required"));
  const merge = vetoed.frame.getByRole("button", { name: "Merge", exact: true });
  assert.equal(await merge.count(), 1, "Merge drawn once");
  assert.equal(await merge.getAttribute("aria-disabled"), "true");
  const panel = vetoed.frame.locator(".bb-merge");
  assert.equal(await merge.getAttribute("aria-describedby"), await panel.getAttribute("id"));
  assert.equal(await merge.getAttribute("title"), "Not all required builds are successful yet", "Bitbucket's tooltip: the one veto's summary");
  await merge.click({ force: true }); // aria-disabled: Playwright would wait for it to be enabled
  assert.equal(await panel.evaluate((p) => p === document.activeElement), true);
  assert.equal(await vetoed.frame.locator(".bb-merge-link").count(), 0);
  assert.deepEqual((await vetoed.log()).calls.filter((c) => c && c.name === "merge_pull_request"), [], "a vetoed Merge calls nothing");
  await shot(vetoed.page, "card-merge-vetoed");

  // Allowed, and merge_pull_request exposed: the working button.
  const allowed = fixture("pr-required");
  allowed.pullRequest.mergeCheck = { canMerge: true, conflicted: false, outcome: "CLEAN", vetoes: [] };
  allowed.pullRequest.version = 2;
  allowed.pullRequest.builds.requirements = null;
  allowed.server.tools.push("merge_pull_request");
  const working = await draw(allowed);
  assert.equal(await working.frame.locator(".bb-act-merge").textContent(), "Merge");
  assert.equal(await working.frame.locator(".bb-act-merge").getAttribute("aria-disabled"), null);
  assert.equal(await working.frame.locator(".bb-merge, .bb-merge-btn, .bb-merge-link").count(), 0, "no issues, no second Merge");

  // Allowed, but merge_pull_request not exposed: Merge in Bitbucket, opened through the host.
  const elsewhere = JSON.parse(JSON.stringify(allowed));
  elsewhere.server.tools = elsewhere.server.tools.filter((t) => t !== "merge_pull_request");
  for (const theme of ["light", "dark"]) {
    const v = await draw(elsewhere, { theme, displayMode: "fullscreen" });
    const go = v.frame.locator(".bb-action-bar .bb-merge-link");
    assert.equal(await go.textContent(), "Merge in Bitbucket");
    assert.equal(await v.frame.getByRole("button", { name: "Merge", exact: true }).count(), 0);
    await go.click();
    assert.deepEqual((await v.log()).links, [elsewhere.pullRequest.url]);
    assert.equal(await v.frame.locator(".bb-card").count(), 1, "the frame did not navigate");
    assert.deepEqual(v.errors, []);
    await shot(v.page, `card-merge-in-bitbucket-${theme}`);
  }
  // Closed: no Merge at all.
  const merged = await draw(fixture("pr-merged"));
  assert.equal(await merged.frame.locator(".bb-merge-btn, .bb-merge-link, .bb-act-merge").count(), 0);
});

test("when bb cannot tell the requirements (null), the card says nothing about them", async () => {
  const data = fixture("pr-required");
  data.pullRequest.builds.requirements = null;
  data.pullRequest.mergeCheck = null; // Bitbucket's own veto words may say "required"; the card's must not
  // Even if a build claims to be required, with no requirements there is no mark.
  const v = await open(browser, { mount: { input: data.call, result: result(data), displayMode: "fullscreen" } });
  await v.frame.locator(".bb-card").waitFor({ timeout: 10000 });
  assert.equal(await v.frame.locator(".bb-build").count(), 5, "the builds are drawn");
  assert.equal(await v.frame.locator(".bb-required, .bb-req-summary, [data-count='required-builds']").count(), 0);
  assert.equal(await v.frame.getByText("Required", { exact: false }).count(), 0, "no Required lozenge, no summary");
  assert.doesNotMatch(await v.frame.locator(".bb-card").textContent(), /required/i);
  const open_ = await card("pr-open", { displayMode: "fullscreen" });
  assert.doesNotMatch(await open_.frame.locator('[aria-label="Builds"]').textContent(), /required/i);
  assert.equal(await open_.frame.locator(".bb-required, .bb-req-summary, [data-count='required-builds']").count(), 0);
});

test("a card with no builds draws no empty Builds heading; an empty listing says No builds", async () => {
  const base = fixture("pr-draft");
  const none = structuredClone(base);
  none.pullRequest.builds = { counts: { successful: 0, failed: 0, inProgress: 0, cancelled: 0, unknown: 0 }, items: [], shown: null, total: null, requirements: null };
  let v = await open(browser, { mount: { result: result(none) } });
  await v.frame.locator(".bb-card").waitFor();
  assert.equal(await v.frame.locator('[aria-label="Builds"]').count(), 0, "nothing known, nothing said");
  assert.equal(await v.frame.getByText("Builds", { exact: true }).count(), 0);

  const empty = structuredClone(base);
  empty.pullRequest.builds = { counts: { successful: 0, failed: 0, inProgress: 0, cancelled: 0, unknown: 0 }, items: [], shown: 0, total: 0, requirements: null };
  v = await open(browser, { mount: { result: result(empty) } });
  await v.frame.locator(".bb-card").waitFor();
  assert.equal(await v.frame.locator('[aria-label="Builds"]').textContent(), "No builds");
  assert.equal(await v.frame.locator('[aria-label="Builds"] h3').count(), 0, "no empty heading");
});

test("a new pull request's required builds, none run yet, are drawn not yet run and neutral: no pink rows, no red count (issue 54 item 9)", async () => {
  const data = fixture("pr-required");
  const b = data.pullRequest.builds;
  const keys = ["CI-UNIT", "CI-LINT", "CI-SECURITY", "CI-DOCS", "CI-AUDIT", "CI-E2E"];
  b.items = [];
  b.counts = {};
  b.shown = b.total = 0;
  b.requirements.keys = keys.map((key) => ({ key, state: "MISSING" }));
  b.requirements.summary = "0 of 6 required builds passed";
  for (const theme of ["light", "dark"]) {
    for (const mount of [{ width: 700 }, { displayMode: "fullscreen" }]) {
      const v = await open(browser, { colorScheme: theme, mount: { input: data.call, result: result(data), theme, ...mount } });
      await v.frame.locator(".bb-card").waitFor({ timeout: 10000 });
      const rows = v.frame.locator(".bb-builds > li.bb-build");
      assert.equal(await rows.count(), 6, "every required key, up front");
      assert.deepEqual(await texts(rows.locator(".bb-build-state")), Array(6).fill("○ Not yet run"));
      // Neutral: neither the failed rows' background nor the failed colour, on the rows or the count.
      const look = await v.frame.locator("body").evaluate(() => {
        const probe = document.createElement("span");
        probe.className = "bb-build bb-bad";
        document.body.append(probe);
        const bad = getComputedStyle(probe).backgroundColor;
        probe.remove();
        const rowBgs = [...document.querySelectorAll(".bb-builds > li.bb-build")].map((r) => getComputedStyle(r).backgroundColor);
        const summary = document.querySelector(".bb-req-summary");
        const muted = getComputedStyle(document.querySelector(".bb-build-state")).color;
        return { bad, rowBgs, summaryNeed: summary.classList.contains("bb-need"), summaryColor: getComputedStyle(summary).color, muted };
      });
      assert.ok(look.rowBgs.every((c) => c !== look.bad), `no row in the failed background: ${look.rowBgs}`);
      assert.equal(look.summaryNeed, false, "the count is not marked as failing");
      assert.equal(await v.frame.locator(".bb-req-summary").textContent(), "0 of 6 required builds passed");
      assert.equal(await v.frame.locator(".bb-waits").textContent(), "The merge check waits for a build under each required key with no build yet.");
      assert.deepEqual(v.errors, []);
      await shot(v.page, `card-builds-not-yet-run-${mount.width ? "700" : "full"}-${theme}`);
      await v.page.close();
    }
  }
});
