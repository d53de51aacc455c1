// The person confirms what cannot be undone (issue 51, item 7): bb asks through MCP elicitation
// (elicitation/create, form mode) during a tools/call, the model's or one the view makes through the
// host (the card's Merge). The test host draws the question as a modal form (host/host.js: the message
// as text, each boolean an unticked checkbox with its title, Accept / Decline / Cancel); the view says
// "Waiting for your confirmation" beside the button meanwhile, and when the answer says the person did
// not confirm (_meta["bb/confirmation"] == "declined") it says nothing changed and stays as it was.
//
// The first tests need no bb: the host's form against a question given by hand, and the view against
// answers the test gives. The last two run the card's Merge through the host against bb and the
// stand-in; they see a form only once merge_pull_request asks on this build, and skip (saying so) when
// the pull request merges with no question put.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { RESULTS, fixture, launch, open, result, shot, startBb, until } from "./harness.mjs";

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

const QUESTION = {
  mode: "form",
  message: "Merge pull request #11 <img src=x onerror=\"window.pwned=1\"> “Add <b>retries</b>” from feature/retry into main? This cannot be undone.",
  requestedSchema: {
    type: "object",
    properties: { confirm: { type: "boolean", title: "Merge #11 into main", description: "Tick to confirm. Leave it, or decline, and nothing changes." } },
    required: ["confirm"],
  },
};
const DECLINED = {
  content: [{ type: "text", text: "The person declined: nothing was merged. Do not call merge_pull_request again unless they ask." }],
  _meta: { "bb/confirmation": "declined" },
};
const ask = (page, q = QUESTION) => page.evaluate((j) => window.bbHost.elicit(j), JSON.stringify(q)).then(JSON.parse);

test("the host draws bb's question as a form: the message as text, the box unticked, and each button answers its action", async () => {
  const data = fixture("pr-open");
  const { page, errors } = await open(browser, { mount: { input: data.call, result: result(data) } });
  const form = page.locator("#bb-elicit");
  const answered = ask(page);
  await form.waitFor({ timeout: 5000 });
  assert.equal(await form.locator(".bb-elicit-message").textContent(), QUESTION.message, "the message exactly, as text");
  assert.equal(await form.locator("img, b").count(), 0, "never parsed as HTML");
  const box = form.locator('.bb-elicit-field input[type="checkbox"][data-key="confirm"]');
  assert.equal(await box.isChecked(), false, "unticked: a habit click on Accept passes over it");
  assert.equal(await form.locator(".bb-elicit-title").textContent(), "Merge #11 into main");
  await page.screenshot({ path: join(RESULTS, "confirm-form-light.png") });
  await form.locator(".bb-elicit-accept").click();
  assert.deepEqual(await answered, { action: "accept", content: { confirm: false } }, "Accept with the box left: bb writes nothing");

  const ticked = ask(page);
  await box.check();
  await form.locator(".bb-elicit-accept").click();
  assert.deepEqual(await ticked, { action: "accept", content: { confirm: true } });
  const declined = ask(page);
  await form.locator(".bb-elicit-decline").click();
  assert.deepEqual(await declined, { action: "decline" });
  const cancelled = ask(page);
  await form.locator(".bb-elicit-cancel").click();
  assert.deepEqual(await cancelled, { action: "cancel" });
  const escaped = ask(page);
  await form.waitFor({ timeout: 5000 });
  await page.keyboard.press("Escape");
  assert.deepEqual(await escaped, { action: "cancel" }, "Escape dismisses: cancel");
  assert.equal(await form.count(), 0, "the form goes once answered");
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(errors, []);
  assert.equal((await page.evaluate(() => window.bbHost.log)).elicitations.length, 5);

  // As the host answers by itself for tests that press write buttons.
  for (const how of ["accept", "decline", "cancel"]) {
    await page.evaluate((h) => window.bbHost.setConfirm(h), how);
    const got = await ask(page);
    assert.equal(got.action, how);
    if (how === "accept") assert.deepEqual(got.content, { confirm: true }, "auto-accept ticks the box");
  }
});

test("the host's form in dark", async () => {
  const data = fixture("pr-open");
  const { page } = await open(browser, { colorScheme: "dark", mount: { input: data.call, result: result(data), theme: "dark" } });
  const answered = ask(page);
  await page.locator("#bb-elicit").waitFor({ timeout: 5000 });
  await page.screenshot({ path: join(RESULTS, "confirm-form-dark.png") });
  await page.locator("#bb-elicit .bb-elicit-cancel").click();
  assert.equal((await answered).action, "cancel");
});

// The view while bb waits for the person, and when they decline: answers given by the test.
const mergeable = () => {
  const d = fixture("pr-open");
  d.server.tools = ["get_pull_request", "show", "refresh_view", "submit_pr_review", "add_pr_comment", "merge_pull_request"];
  d.pullRequest.version = 4;
  d.pullRequest.mergeCheck = { canMerge: true, conflicted: false, outcome: "CLEAN", vetoes: [] };
  return d;
};
for (const [name, mount, colorScheme] of [
  ["700-light", { width: 700 }, "light"],
  ["700-dark", { width: 700, theme: "dark" }, "dark"],
  ["full-light", { displayMode: "fullscreen" }, "light"],
  ["full-dark", { displayMode: "fullscreen", theme: "dark" }, "dark"],
]) {
  test(`while bb asks, the view says it waits; declined, it says nothing was merged and stays as it was (${name})`, async () => {
    const d = mergeable();
    let release;
    const gate = new Promise((r) => { release = r; });
    const asked = [];
    const v = await open(browser, { colorScheme, mount: Object.assign({ input: d.call, result: result(d) }, mount),
      answer: async (params) => { asked.push(params.name); if (params.name === "merge_pull_request") { await gate; return DECLINED; } return result(d); } });
    const { frame, page, errors } = v;
    await frame.locator(".bb-card").waitFor({ timeout: 15000 });
    const merge = frame.locator(".bb-act-merge");
    await merge.click();
    const waiting = frame.locator(".bb-action-bar .bb-waiting");
    await waiting.waitFor({ timeout: 5000 });
    assert.equal(await waiting.textContent(), "Waiting for your confirmation");
    assert.equal(await merge.isDisabled(), true, "pressed once");
    await shot(page, `confirm-waiting-${name}`);
    release();
    const note = frame.locator(".bb-action-bar .bb-action-problem");
    await note.waitFor({ state: "visible", timeout: 5000 });
    assert.equal(await note.textContent(), "Not merged: you declined.");
    assert.equal(await note.evaluate((n) => n.classList.contains("bb-not-confirmed")), true, "a note, not an error");
    assert.equal(await waiting.count(), 0, "no longer waiting");
    assert.equal(await merge.isEnabled(), true, "Merge can be pressed again");
    assert.equal(await frame.locator(".bb-meta .bb-loz").first().textContent(), "Open", "the pull request as it was");
    assert.deepEqual(asked, ["merge_pull_request"], "nothing read again after a decline");
    assert.deepEqual((await v.log()).context, [], "the model is not told of a change that did not happen");
    assert.deepEqual(errors, []);
    await shot(page, `confirm-declined-${name}`);
  });
}

// The card's Merge through the host to bb: the host's form, then the person's answer.
// The merges bb asked the stand-in for (its request counts).
const merges = async (id) => ((await (await fetch(`${bb.stack}/_stack/requests`)).json()).requests[`POST /rest/api/latest/projects/BB/repos/api/pull-requests/${id}/merge`] || 0);
async function pressMerge(t, id, mount) {
  const v = await open(browser, { bb: bb.mcp, show: { kind: "pull_request", project: "BB", repo: "api", pr_id: id }, mount, colorScheme: mount.theme === "dark" ? "dark" : "light" });
  await v.frame.locator(".bb-card").waitFor({ timeout: 15000 });
  // The test before saw no question and merged it: nothing left to ask about.
  if (await merges(id)) { t.skip("merge_pull_request does not ask on this build yet: the test before merged it with no question"); return null; }
  await v.frame.locator(".bb-act-merge").click();
  const form = v.page.locator("#bb-elicit");
  // Either bb asks (the form), or this build's merge_pull_request does not ask yet and the card shows Merged.
  const seen = await until("the form, or the merge", async () =>
    ((await form.count()) ? "form" : null) || ((await v.frame.locator(".bb-meta .bb-loz", { hasText: "Merged" }).count()) ? "merged" : null));
  if (seen === "merged") { t.skip("merge_pull_request does not ask on this build yet: it merged with no question"); return null; }
  const message = await form.locator(".bb-elicit-message").textContent();
  assert.match(message, new RegExp(`#${id}\\b`), "the message names the pull request");
  assert.match(await form.locator(".bb-elicit-title").textContent(), new RegExp(`^Merge #${id} into \\S+`));
  assert.equal(await form.locator('input[type="checkbox"]').isChecked(), false);
  assert.equal(await v.frame.locator(".bb-action-bar .bb-waiting").textContent(), "Waiting for your confirmation");
  return { v, form };
}

test("declined in the host's form: bb merges nothing, and the view says so and stays as it was", async (t) => {
  const got = await pressMerge(t, 11, { width: 700 });
  if (!got) return;
  const { v, form } = got;
  await v.page.screenshot({ path: join(RESULTS, "confirm-bb-form.png") });
  await form.locator(".bb-elicit-decline").click();
  const note = v.frame.locator(".bb-action-bar .bb-action-problem");
  await note.waitFor({ state: "visible", timeout: 15000 });
  assert.equal(await note.textContent(), "Not merged: you declined.");
  assert.equal(await merges(11), 0, "bb asked Bitbucket for no merge");
  assert.equal(await v.frame.locator(".bb-meta .bb-loz").first().textContent(), "Open");
  await shot(v.page, "confirm-bb-declined-700-light");
});

test("accepted with the box ticked: the pull request merges and the card shows Merged", async (t) => {
  const got = await pressMerge(t, 11, { displayMode: "fullscreen", theme: "dark" });
  if (!got) return;
  const { v, form } = got;
  await form.locator('input[type="checkbox"]').check();
  await form.locator(".bb-elicit-accept").click();
  await v.frame.locator(".bb-meta .bb-loz", { hasText: "Merged" }).waitFor({ timeout: 20000 });
  assert.equal(await merges(11), 1, "merged once");
  await shot(v.page, "confirm-bb-merged-full-dark");
});
