// The threads view (show kind threads, list_pr_comments' answer) driven by bb itself against the stand-in: every
// comment thread of BB/api #1, newest activity first, with replies, tasks, resolved and pending marks and avatars, a
// line comment under the diff lines leading to it as its activity carries them, Bitbucket's counts, the filters,
// and "View in diff" opening the diff in place at the thread; at chat width (700 px) and full screen, light and dark.
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

const THREADS = { kind: "threads", project: "BB", repo: "api", pr_id: 1 };

async function show(args, mount = {}) {
  const v = await open(browser, { bb: bb.mcp, show: args, mount, colorScheme: mount.theme === "dark" ? "dark" : "light" });
  await v.frame.locator(".bb-threadsview").waitFor({ timeout: 15000 });
  assert.ok(v.bb.html === view(), "bb serves the page of this tree (if not, target/debug/bb is stale: cargo build -p bb)");
  return { ...v, data: v.bb.result._meta["bb/view"] };
}

test("show offers threads, with list_pr_comments' arguments and none of its paging", async () => {
  const { data, frame, errors } = await show(THREADS);
  assert.ok(data.server.kinds.includes("threads"), "show offers the threads kind where list_pr_comments is exposed");
  assert.deepEqual(realErrors(errors), []);
  assert.ok(await frame.locator(".bb-thread").count() > 0);
});

test("BB/api #1's threads: newest activity first, each once, with its replies, Bitbucket's counts heading them", async () => {
  for (const [mode, theme] of [["inline", "light"], ["fullscreen", "dark"], ["inline", "dark"], ["fullscreen", "light"]]) {
    const { data, frame, page, errors } = await show(THREADS, mode === "fullscreen" ? { displayMode: "fullscreen", width: 1342, theme } : { width: 700, theme });
    const t = data.threads;
    assert.ok(t.threads.length >= 4, `the seed's threads of #1 (${t.threads.length})`);
    // Newest activity first; each root once.
    const ats = t.threads.map((x) => x.at);
    assert.deepEqual([...ats].sort((a, b) => b - a), ats, "newest activity first");
    const ids = t.threads.map((x) => x.comment.id);
    assert.equal(new Set(ids).size, ids.length, "each thread once");
    // Bitbucket's counts, not a count of what is drawn.
    assert.equal(await frame.locator('[data-count="comments"]').textContent(), `${t.counts.comments} comment${t.counts.comments === 1 ? "" : "s"}`);
    // The thread bob began has alice's reply and bob's answer inside it, not as threads of their own.
    const why = t.threads.find((x) => /Why three attempts/.test(JSON.stringify(x.comment.text)));
    assert.ok(why, "bob's general comment is a thread");
    assert.equal(why.comment.replies.length, 1, "the deleted reply is not drawn");
    assert.equal(why.comment.replies[0].replies.length, 1);
    // Inline, the newest three and "Show N more threads"; full screen, all of them, bob's with its replies.
    if (mode === "fullscreen") {
      assert.equal(await frame.locator(".bb-thread").count(), t.threads.length);
      assert.match(await frame.locator(`.bb-thread[data-thread="${why.comment.id}"]`).textContent(), /Thanks!/);
    } else {
      assert.equal(await frame.locator(".bb-thread").count(), Math.min(3, t.threads.length));
      assert.match(await frame.locator(".bb-thread-list .bb-more").textContent(), /^Show \d+ more threads?$/);
    }
    // Avatars as the card draws them.
    assert.ok(await frame.locator(".bb-thread").first().locator(".bb-avatar .bb-face").count() >= 1);
    assert.deepEqual(realErrors(errors), []);
    await shot(page, `threads-${mode === "inline" ? "700" : "fullscreen"}-${theme}`);
  }
});

test("a line comment comes under the diff lines leading to it, the last its own line, as its activity carries them", async () => {
  const { data, frame } = await show(THREADS, { displayMode: "fullscreen", width: 1342 });
  const constant = data.threads.threads.find((x) => /attempt count a constant/.test(JSON.stringify(x.comment.text)));
  assert.ok(constant, "bob's comment on src/client.rs line 12");
  assert.ok(Array.isArray(constant.lines) && constant.lines.length > 1 && constant.lines.length <= 5);
  const last = constant.lines[constant.lines.length - 1];
  assert.deepEqual([last.t, last.o, last.n], ["ADDED", null, 12], "an added line has no old number, as the diff draws it");
  const li = frame.locator(`.bb-thread[data-thread="${constant.comment.id}"]`);
  assert.match(await li.locator(".bb-tpath").textContent(), /src\/client\.rs · line 12/);
  assert.equal(await li.locator(".bb-tlines tr").count(), constant.lines.length);
  assert.equal(await li.locator(".bb-tlines tr").last().getAttribute("class"), "bb-dl-A bb-tline-at");
  // Its file and line are said once, in the thread's head.
  assert.equal(await li.locator(".bb-anchor").evaluateAll((n) => n.filter((x) => x.offsetParent !== null).length), 0);
  // A comment on a removed line: the old file's line.
  const old = data.threads.threads.find((x) => /drops the original error kind/.test(JSON.stringify(x.comment.text)));
  assert.equal(old.lines[old.lines.length - 1].t, "REMOVED");
  assert.equal(old.lines[old.lines.length - 1].o, 11);
  assert.equal(old.lines[old.lines.length - 1].n, null);
  assert.deepEqual(await frame.locator(`.bb-thread[data-thread="${old.comment.id}"] .bb-tlines tr`).last().locator(".bb-ln").evaluateAll((n) => n.map((x) => x.textContent)), ["11", ""]);
});

test("the filters narrow what is drawn, never Bitbucket's counts; Mine is the person's own threads", async () => {
  const { data, frame, page, errors } = await show(THREADS, { displayMode: "fullscreen", width: 1342 });
  const all = data.threads.threads.length;
  const comments = await frame.locator('[data-count="comments"]').textContent();
  assert.deepEqual(await texts(frame.locator(".bb-tfilters .bb-segbtn")), [`All ${all}`, ...(await texts(frame.locator(".bb-tfilters .bb-segbtn"))).slice(1)]);
  await frame.locator('.bb-tfilters [data-filter="unresolved"]').click();
  await until("the view to follow", async () => (await frame.locator('.bb-tfilters [data-filter="unresolved"]').getAttribute("aria-pressed")) === "true");
  const unresolved = await frame.locator(".bb-thread").count();
  assert.equal(await frame.locator(".bb-thread.bb-is-resolved").count(), 0, "no resolved thread under Unresolved");
  assert.ok(unresolved <= all);
  await frame.locator('.bb-tfilters [data-filter="mine"]').click();
  await until("the view to follow", async () => (await frame.locator('.bb-tfilters [data-filter="mine"]').getAttribute("aria-pressed")) === "true");
  const you = data.threads.you;
  const mine = data.threads.threads.filter((x) => JSON.stringify(x.comment).includes(`"author":"${you}"`)).length;
  assert.equal(await frame.locator(".bb-thread").count(), mine, `the threads ${you} wrote in`);
  assert.equal(await frame.locator('[data-count="comments"]').textContent(), comments, "the counts stay Bitbucket's");
  await frame.locator('.bb-tfilters [data-filter="tasks"]').click();
  await until("the view to follow", async () => (await frame.locator('.bb-tfilters [data-filter="tasks"]').getAttribute("aria-pressed")) === "true");
  for (const li of await frame.locator(".bb-thread").all()) assert.ok(await li.locator(".bb-loz.bb-open").count() >= 1, "each has an open task");
  assert.deepEqual(realErrors(errors), []);
  await shot(page, "threads-filter-tasks-fullscreen-light");
});

test("View in diff opens the diff in place at the thread, its file chosen, and Back returns to the threads", async () => {
  for (const mode of ["fullscreen", "inline"]) {
    const { data, frame, page, errors } = await show(THREADS, mode === "fullscreen" ? { displayMode: "fullscreen", width: 1342 } : { width: 700 });
    // Full screen, bob's comment on src/client.rs line 12; inline, the first thread drawn that is on a line.
    const constant = data.threads.threads.find((x) => /attempt count a constant/.test(JSON.stringify(x.comment.text)));
    // Inline, the newest three are general comments: the person asks for more first.
    if (mode === "inline") {
      await frame.locator(".bb-foot .bb-grow").click();
      await frame.locator(".bb-thread-list .bb-more").click();
    }
    const li = mode === "fullscreen" ? frame.locator(`.bb-thread[data-thread="${constant.comment.id}"]`) : frame.locator(".bb-thread:has(.bb-thread-open)").first();
    const id = await li.getAttribute("data-thread");
    await li.locator(".bb-thread-open").click();
    await frame.locator(".bb-diffview").waitFor({ timeout: 15000 });
    const target = frame.locator(`[data-comment-id="${id}"]`).first();
    await until("the view to follow", async () => (await target.count()) === 1 && (await target.evaluate((n) => n === document.activeElement)));
    const box = await target.boundingBox();
    assert.ok(box && box.y >= 0 && box.y < 800, `the thread is in view (${JSON.stringify(box)})`);
    await shot(page, `threads-view-in-diff-${mode}`);
    await frame.locator(".bb-back").click();
    await frame.locator(".bb-threadsview").waitFor({ timeout: 15000 });
    assert.deepEqual(realErrors(errors), []);
  }
});

test("BB/api #7's threads: hostile text is drawn as text, and no script from the data runs", async () => {
  const { data, frame, page, errors, log } = await show({ kind: "threads", project: "BB", repo: "api", pr_id: 7 }, { displayMode: "fullscreen", width: 1342 });
  assert.ok(data.threads.threads.length >= 1, "#7 has comments");
  assert.equal(await frame.locator("script").count(), 1, "only the page's own script");
  assert.equal(await frame.locator(".bb-threadsview img:not(.bb-face), .bb-threadsview iframe, .bb-threadsview object").count(), 0);
  assert.deepEqual((await log()).pwned, [], "the canary did not fire");
  assert.equal(await frame.locator("body").evaluate(() => window.__pwned), undefined);
  assert.deepEqual(realErrors(errors), []);
  await shot(page, "threads-hostile-fullscreen");
});
