// Tasks of the old kind (Bitbucket before 7.0: an entry of its comment's `tasks` array, with an id of its
// own) on the card, driven by bb against a stand-in that serves 6.10 (its seed's application.version):
// the task is drawn first among its thread's replies, its lozenge says "(old kind)", and it offers no
// Reply and no Resolve (update_pr_comment cannot change it), while its comment keeps its own.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HERE, RESULTS, launch, open, realErrors, shot, startBb } from "./harness.mjs";

let browser;
let bb;
before(async () => {
  const seed = JSON.parse(readFileSync(join(HERE, "../../tools/stack/seed/seed.json"), "utf8"));
  seed.application.version = "6.10.0";
  const file = join(RESULTS, "seed-6.10.json");
  writeFileSync(file, JSON.stringify(seed));
  bb = await startBb({ stackArgs: ["--data", file] });
  browser = await launch({ loopback: true });
});
after(async () => {
  await browser?.close();
  await bb?.stop();
});

const PR1 = { kind: "pull_request", project: "BB", repo: "api", pr_id: 1 };
async function card(mount = {}) {
  const v = await open(browser, { bb: bb.mcp, show: PR1, mount, colorScheme: mount.theme === "dark" ? "dark" : "light" });
  await v.frame.locator(".bb-card").waitFor({ timeout: 15000 });
  await v.page.waitForTimeout(200);
  return { ...v, data: v.bb.result._meta["bb/view"] };
}
// The activity's root comment that starts `text`, in the view data.
function rootOf(data, text) {
  const words = (c) => JSON.stringify(c.text);
  const item = data.pullRequest.activity.items.find((i) => i.comment && words(i.comment).includes(text));
  assert.ok(item, `a thread starting "${text}"`);
  return item.comment;
}

test("a task of the old kind is drawn first in its thread, marked (old kind), with no Reply and no Resolve", async () => {
  const first = await card();
  const root = rootOf(first.data, "Why three attempts").id;
  await first.page.close();
  const res = await fetch(`${bb.stack}/_stack/comments`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ project: "BB", repo: "api", pullRequest: 1, user: "bob", text: "Make the attempts configurable", parent: { id: root }, severity: "BLOCKER" }) });
  assert.ok(res.ok, `${res.status} ${await res.text()}`);

  // At chat width the card puts open tasks up front: the old kind's among them.
  const inline = await card({ width: 700 });
  assert.ok((await inline.frame.locator(".bb-tasks .bb-task-row").allTextContents()).some((t) => t.includes("Make the attempts configurable")), "listed among the open tasks");
  // Counted as listed: a server before 7.0 has no task without a comment, so the stand-in's own top-level
  // task reads (and counts) as a plain comment there.
  const rows = await inline.frame.locator(".bb-tasks .bb-task-row").count();
  assert.equal(await inline.frame.locator('[data-count="tasks"]').textContent(), `☐ ${rows} open task${rows === 1 ? "" : "s"}`, "the count is the tasks listed");
  assert.deepEqual(realErrors(inline.errors), []);
  await shot(inline.page, "old-task-700-light");
  await inline.page.close();

  // Full screen draws the whole activity: the task inside its thread.
  for (const [mount, name] of [[{ displayMode: "fullscreen", width: 1000 }, "old-task-fullscreen-light"], [{ displayMode: "fullscreen", width: 1000, theme: "dark" }, "old-task-fullscreen-dark"]]) {
    const { frame, page, data, errors } = await card(mount);
    const thread = rootOf(data, "Why three attempts");
    assert.equal(thread.replies[0].oldKind, true, "bb sent it first among the replies, as the old kind");
    const comment = frame.locator(`.bb-comment[data-comment="${root}"]`);
    const replies = comment.locator(":scope > .bb-cbody > .bb-replies > li > .bb-comment, :scope > .bb-cbody > .bb-replies > .bb-comment");
    const task = replies.first();
    assert.match(await task.textContent(), /Make the attempts configurable/, "the first reply is the task");
    assert.equal(await task.getAttribute("data-comment"), null, "no comment id of its own");
    assert.equal(await task.locator(".bb-loz").textContent(), "Open task (old kind)");
    assert.ok(await task.evaluate((n) => n.classList.contains("bb-is-task")));
    assert.equal(await task.locator(".bb-act-reply, .bb-act-task, .bb-comment-actions").count(), 0, "no Reply, no Resolve");
    assert.equal(await frame.locator(".bb-comment", { hasText: "Make the attempts configurable" }).count(), 2, "drawn once: the task, inside its root");
    if (data.server.tools.includes("add_pr_comment")) {
      assert.equal(await comment.locator(":scope > .bb-cbody > .bb-comment-actions .bb-act-reply").count(), 1, "its comment keeps Reply");
    }
    assert.deepEqual(realErrors(errors), []);
    await shot(page, name);
    await page.close();
  }
});
