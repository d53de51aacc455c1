// A read-only bb (`--read-only`, issue 52) exposes no tool that changes Bitbucket, so its views draw no
// button whose tool is not exposed: no Approve, Needs work or Merge, no comment box, no Reply, Edit or
// Delete, no Apply, no Finish review — even when the operator also asked for writes.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { launch, open, shot, startBb } from "./harness.mjs";

let browser;
let bb;
before(async () => {
  bb = await startBb({ bbArgs: ["--read-only", "--toolsets", "all", "--allow-writes", "--tools", "add_pr_comment,merge_pull_request"] });
  browser = await launch({ loopback: true });
});
after(async () => {
  await browser?.close();
  await bb?.stop();
});

const WRITE_BUTTONS = ".bb-action-buttons button, .bb-act-approve, .bb-act-request_changes, .bb-act-merge, .bb-merge-btn, " +
  ".bb-act-discard, .bb-act-apply, .bb-comment-form, textarea";

test("a read-only server's card and diff offer no action, only what reads", async () => {
  const card = await open(browser, { bb: bb.mcp, show: { kind: "pull_request", project: "BB", repo: "api", pr_id: 11 } });
  await card.frame.locator(".bb-card").waitFor({ timeout: 15000 });
  const tools = card.bb.result._meta["bb/view"].server.tools;
  for (const write of ["add_pr_comment", "merge_pull_request", "submit_pr_review", "update_pull_request", "delete_pr_comment"]) {
    assert.ok(!tools.includes(write), `${write} is not exposed: ${tools}`);
  }
  assert.deepEqual(card.bb.result._meta["bb/view"].server.asks, [], "nothing asks: nothing writes");
  assert.equal(await card.frame.locator(WRITE_BUTTONS).count(), 0, "no button of a write");
  await shot(card.page, "readonly-card");

  const diff = await open(browser, { bb: bb.mcp, show: { kind: "diff", project: "BB", repo: "api", pr_id: 1 } });
  await diff.frame.locator(".bb-diff, .bb-file").first().waitFor({ timeout: 15000 });
  assert.equal(await diff.frame.locator(WRITE_BUTTONS).count(), 0, "no button of a write in the diff");
  await shot(diff.page, "readonly-diff");
});
