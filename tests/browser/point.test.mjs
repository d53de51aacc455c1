// The person points at code and the model sees it (issue 41), through the reference AppBridge host: lines
// selected in a diff or a source view go into the model's context in one ui/update-model-context naming the
// place; "Ask about this" sends one ui/message naming it; a streaming host's partial arguments draw a skeleton,
// then the view; a host without `message` shows no ask. 700 px and full screen, light and dark. "Draft a comment
// here", driven by bb and the stand-in, anchors where Bitbucket draws the selection's last line.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, startBb, until, view } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const HEAD = "1e9c72b20d1f3e5a7c9b1d3f5e7a9c0b2d4f6e8a";
const OLD = "8d2f0c1a9b3e5d7f9a1c3e5b7d9f1a3c5e7b9d1f";
function diffData() {
  const data = fixture("diff-view");
  Object.assign(data.diff, { head: HEAD, expand: { new: HEAD, old: OLD } });
  return data;
}
// Selects, in the view, from the start of `from`'s code to the end of `to`'s (CSS selectors of cells).
function select(frame, from, to) {
  return frame.locator("body").evaluate((b, [a, z]) => {
    const start = document.querySelector(a);
    const end = document.querySelector(z);
    const r = document.createRange();
    r.setStart(start, 0);
    r.setEnd(end, end.childNodes.length);
    const sel = document.getSelection();
    sel.removeAllRanges();
    sel.addRange(r);
  }, [from, to]);
}
const clear = (frame) => frame.locator("body").evaluate(() => document.getSelection().removeAllRanges());
const contexts = async (v) => (await v.log()).context;

for (const [mode, theme] of [["inline", "light"], ["fullscreen", "dark"]]) {
  test(`selected lines of a diff's new side go into the model's context once, and Ask about this names them (${mode}, ${theme})`, async () => {
    const data = diffData();
    const v = await open(browser, { colorScheme: theme, mount: { input: data.call, result: result(data), caps: { message: { text: {} } }, ...(mode === "inline" ? { width: 700 } : { displayMode: "fullscreen" }) } });
    const { frame } = v;
    await frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
    // src/client.rs, new lines 11–13 (two added, one context): from line 11's code to line 13's.
    await select(frame, 'tr.bb-dl[data-path="src/client.rs"][data-new="11"] .bb-dcode', 'tr.bb-dl[data-path="src/client.rs"][data-new="13"] .bb-dcode');
    await until("the context", async () => (await contexts(v)).length === 1);
    const [sent] = await contexts(v);
    assert.deepEqual(sent.structuredContent.selection, { project: "BB", repo: "api", pullRequest: 1,
      path: "src/client.rs", side: "new", from: 11, to: 13, commit: HEAD, linesLeftOut: 0 });
    assert.equal(sent.content[0].text, "The person selected these lines in the view. In BB/api #1, src/client.rs lines 11–13 of the new file at 1e9c72b:\n"
      + "        let req = Request::get(url);\n        self.send_with_retry(req, 3)\n    }");
    // The bar on the selection: Ask about this sends one message naming the place exactly.
    const bar = frame.locator(".bb-point");
    await bar.waitFor({ state: "visible" });
    assert.equal(await bar.locator(".bb-point-where").textContent(), "client.rs lines 11–13 of the new file");
    await shot(v.page, `point-diff-selected-${mode === "inline" ? "700" : "fullscreen"}-${theme}`);
    await bar.getByRole("button", { name: "Ask about this" }).click();
    await until("the message", async () => (await v.log()).messages.length === 1);
    const [asked] = (await v.log()).messages;
    assert.equal(asked.role, "user");
    assert.match(asked.content[0].text, /^In BB\/api #1, src\/client\.rs lines 11–13 of the new file at 1e9c72b:\n```\n {8}let req = Request::get\(url\);\n/);
    assert.equal((await contexts(v)).length, 1, "a click on the bar keeps the selection: nothing more is sent");
    // Cleared: the context is cleared, once.
    await clear(frame);
    await until("cleared", async () => (await contexts(v)).length === 2);
    assert.deepEqual((await contexts(v))[1], { content: [] });
    await until("the bar gone", async () => bar.isHidden());
    assert.deepEqual(v.errors, []);
    await v.page.close();
  });
}

test("the old side, in side-by-side: removed lines are named by their old numbers and the target's commit", async () => {
  const data = diffData();
  const v = await open(browser, { mount: { input: data.call, result: result(data), displayMode: "fullscreen", width: 1000 } });
  const { frame } = v;
  await frame.locator(".bb-pane").waitFor({ timeout: 10000 });
  await frame.locator('.bb-segbtn[data-focus="sbs"]').click();
  await frame.locator('.bb-pane[data-layout="side-by-side"]').waitFor();
  // Row of old line 11 (removed), its left code cell (the second cell).
  await select(frame, 'tr.bb-dl[data-old="11"] td:nth-child(2)', 'tr.bb-dl[data-old="12"] td:nth-child(2)');
  await until("the context", async () => (await contexts(v)).length === 1);
  const s = (await contexts(v))[0].structuredContent.selection;
  assert.deepEqual([s.side, s.from, s.to, s.commit], ["old", 11, 12, OLD]);
  assert.match((await contexts(v))[0].content[0].text, /src\/client\.rs lines 11–12 of the old file at 8d2f0c1:\n {8}self\.send\(Request::get\(url\)\)\n {4}}$/);
  assert.equal(await frame.locator(".bb-point").count(), 0, "no bar: this host takes no messages");
  await v.page.close();
});

test("a source view's lines 20–23, and a long selection cut at the byte cap with the rest said", async () => {
  const data = fixture("file-view");
  // Lines 30–40 long (450 characters each): a selection of them all is past the 4,000-byte cap.
  for (const l of data.file.lines) if (l.n >= 30) { l.s = `// ${String(l.n).padStart(3, "0")} ${"x".repeat(443)}`; delete l.r; }
  const v = await open(browser, { mount: { input: data.call, result: result(data), width: 700, caps: { message: { text: {} } } } });
  const { frame } = v;
  await frame.locator(".bb-fileview").waitFor({ timeout: 10000 });
  await select(frame, "tr#L20 .bb-dcode", "tr#L23 .bb-dcode");
  await until("the context", async () => (await contexts(v)).length === 1);
  const s = (await contexts(v))[0].structuredContent.selection;
  assert.deepEqual([s.path, s.side, s.from, s.to, s.ref], ["src/client.rs", "new", 20, 23, "feature/retry"]);
  assert.match((await contexts(v))[0].content[0].text, /^The person selected these lines in the view\. In BB\/api, src\/client\.rs lines 20–23 at feature\/retry:\n/);
  assert.equal(await frame.locator(".bb-point").getByRole("button", { name: "Draft a comment here" }).count(), 0, "a file is no pull request");
  // Lines 1–40 hold a 12,000-character line (8): past the cap, whole lines are kept and the rest said.
  await select(frame, "tr#L1 .bb-dcode", "tr#L40 .bb-dcode");
  await until("the second context", async () => (await contexts(v)).length === 2);
  const big = (await contexts(v))[1];
  assert.ok(new TextEncoder().encode(big.content[0].text).length < 4400, "within the cap");
  assert.ok(big.structuredContent.selection.linesLeftOut > 0);
  assert.match(big.content[0].text, /\n\(… \d+ more lines selected, not carried here\)$/);
  await v.page.close();
});

test("a pull request's diff offers Draft a comment here; a comment thread has Ask about this; a host without message shows neither", async () => {
  const data = diffData();
  data.server.tools = [...data.server.tools, "add_pr_comment"];
  const v = await open(browser, { mount: { input: data.call, result: result(data), width: 700, caps: { message: { text: {} } } } });
  const { frame } = v;
  await frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
  await select(frame, 'tr.bb-dl[data-new="11"] .bb-dcode', 'tr.bb-dl[data-new="12"] .bb-dcode');
  await frame.locator(".bb-point").waitFor({ state: "visible" });
  await frame.getByRole("button", { name: "Draft a comment here" }).click();
  await until("the message", async () => (await v.log()).messages.length === 1);
  assert.match((await v.log()).messages[0].content[0].text, /add_pr_comment \(project BB, repo api, pr_id 1, path src\/client\.rs, line 12, from_line 11, line_type ADDED, pending true\)/);
  await clear(frame);
  const ask = frame.locator('[data-comment-id="1006"] .bb-act-ask');
  assert.equal(await ask.count(), 1, "on the thread's first comment, not on each reply");
  await ask.focus();
  await v.page.keyboard.press("Enter");
  await until("the thread's message", async () => (await v.log()).messages.length === 2);
  assert.match((await v.log()).messages[1].content[0].text, /^In BB\/api #1, about the comment thread #1006 by [^\n]+ on src\/client\.rs line 12:\n> /);
  await shot(v.page, "point-thread-ask-700-light");
  await v.page.close();
  // No message capability: no bar, no thread action; the context still goes.
  const plain = await open(browser, { mount: { input: data.call, result: result(data), width: 700 } });
  await plain.frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
  assert.equal(await plain.frame.locator(".bb-act-ask").count(), 0);
  await select(plain.frame, 'tr.bb-dl[data-new="11"] .bb-dcode', 'tr.bb-dl[data-new="12"] .bb-dcode');
  await until("the context", async () => (await contexts(plain)).length === 1);
  assert.equal(await plain.frame.locator(".bb-point:not([hidden])").count(), 0);
  await plain.page.close();
  // No context capability either: nothing is sent.
  const none = await open(browser, { mount: { input: data.call, result: result(data), width: 700, noContext: true } });
  await none.frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
  await select(none.frame, 'tr.bb-dl[data-new="11"] .bb-dcode', 'tr.bb-dl[data-new="12"] .bb-dcode');
  await none.page.waitForTimeout(600);
  assert.deepEqual(await contexts(none), []);
  await none.page.close();
});

// Issue 54 item 8: a drag in one half of a side-by-side diff selects (and highlights) that half only, and the bar names
// the side. src/client.rs: old 11 removed beside new 11 added, new 12 added alone, old 12 / new 13 context.
for (const theme of ["light", "dark"]) {
  test(`side-by-side, a drag selects in the half it starts in only, and the bar names the side (${theme})`, async () => {
    const data = diffData();
    const v = await open(browser, { colorScheme: theme, mount: { theme, input: data.call, result: result(data), displayMode: "fullscreen", width: 1000, caps: { message: { text: {} } } } });
    const { frame, page } = v;
    await frame.locator(".bb-pane").waitFor({ timeout: 10000 });
    await frame.locator('.bb-segbtn[data-focus="sbs"]').click();
    await frame.locator('.bb-pane[data-layout="side-by-side"]').waitFor();
    const drag = async (from, to) => {
      const a = await frame.locator(from).boundingBox();
      const b = await frame.locator(to).boundingBox();
      await page.mouse.move(a.x + 16, a.y + a.height / 2); // past the sign, which takes no selection
      await page.mouse.down();
      await page.mouse.move(b.x + b.width - 3, b.y + b.height / 2, { steps: 6 });
      await page.mouse.up();
      return frame.locator("body").evaluate(() => String(document.getSelection()));
    };
    const bar = frame.locator(".bb-point-where");
    const left = await drag('tr.bb-dl[data-old="11"] td:nth-child(2)', 'tr.bb-dl[data-old="12"] td:nth-child(2)');
    assert.match(left, /self\.send\(Request::get\(url\)\)/, "the old line is selected");
    assert.doesNotMatch(left, /let req = Request::get\(url\);|send_with_retry/, `nothing of the new half: ${JSON.stringify(left)}`);
    await until("the bar names the old side", async () => (await bar.textContent().catch(() => "")) === "client.rs lines 11–12 of the old file");
    // The new half's cells are drawn unselected: they cannot be selected while the old half is.
    assert.equal(await frame.locator('tr.bb-dl[data-new="11"] td:nth-child(4)').evaluate((td) => getComputedStyle(td).userSelect), "none");
    await shot(page, `point-sbs-old-half-${theme}`);
    const right = await drag('tr.bb-dl[data-new="11"] td:nth-child(4)', 'tr.bb-dl[data-new="13"] td:nth-child(4)');
    assert.match(right, /let req = Request::get\(url\);/);
    assert.doesNotMatch(right, /self\.send\(Request::get\(url\)\)/, `nothing of the old half: ${JSON.stringify(right)}`);
    await until("the bar names the new side", async () => (await bar.textContent().catch(() => "")) === "client.rs lines 11–13 of the new file");
    assert.deepEqual(v.errors, []);
    await page.close();
  });
}

for (const theme of ["light", "dark"]) {
  test(`a streaming host's partial arguments draw the kind's skeleton, no taller than the view, then the view (${theme})`, async () => {
    const data = fixture("pr-open");
    const v = await open(browser, { colorScheme: theme, mount: { width: 700, theme, hold: true, partials: [{ kind: "pull_request" }, { kind: "pull_request", project: "BB", repo: "api" }] } });
    const { frame } = v;
    await frame.locator('.bb-skel[data-kind="pull_request"]').waitFor({ timeout: 10000 });
    await until("the repository named", async () => (await frame.locator(".bb-skel-head").textContent()) === "BB/api");
    await v.page.evaluate(() => window.bbHost.sendPartial({ kind: "pull_request", project: "BB", repo: "api", pr_id: 1 }));
    await until("the id named", async () => (await frame.locator(".bb-skel-head").textContent()) === "BB/api #1");
    await shot(v.page, `point-skeleton-700-${theme}`);
    const skeletonHeight = await frame.locator("main").evaluate((m) => m.getBoundingClientRect().height);
    await v.page.evaluate((args) => window.bbHost.sendInput(JSON.parse(args)), JSON.stringify(data.call));
    assert.equal(await frame.locator(".bb-skel").count(), 1, "still drawn until the result");
    await v.page.evaluate((r) => window.bbHost.sendResult(JSON.parse(r)), JSON.stringify(result(data)));
    await frame.locator(".bb-card").waitFor({ timeout: 10000 });
    assert.equal(await frame.locator(".bb-skel").count(), 0);
    const viewHeight = await frame.locator("main").evaluate((m) => m.getBoundingClientRect().height);
    assert.ok(skeletonHeight <= viewHeight, `the skeleton (${skeletonHeight} px) is no taller than the view (${viewHeight} px)`);
    assert.deepEqual((await v.log()).calls, [], "partial arguments are never acted on");
    assert.deepEqual(v.errors, []);
    await v.page.close();
  });
}

// Driven by bb against the stand-in. src/client.rs of BB/api #1 reads (type old/new): C 1–10, R 11/–, A –/11, A –/12,
// C 12/13, C 13/14, C 14/15, R 15/–, A –/16, C 16/17. Each selection's "Draft a comment here" names an anchor; a
// pending draft made with exactly those arguments is drawn on the selection's last line, its range marked, and is
// not counted among the outdated comments.
test("Draft a comment here anchors on the selection's last line, its type and side: added, context, mixed, removed, either half", async () => {
  const bb = await startBb({ bbArgs: ["--allow-writes"] });
  const live = await launch({ loopback: true });
  const row = (side, n) => `tr.bb-dl[data-path="src/client.rs"][data-${side}="${n}"]`;
  const code = (side, n) => `${row(side, n)} .bb-dcode`;
  const left = (n) => `${row("old", n)} td:nth-child(2)`;
  const right = (n) => `${row("new", n)} td:nth-child(4)`;
  // [name, layout, selection start, end, the arguments expected, where it is drawn: side and number of its last line, the range's rows]
  const cases = [
    ["added only", "unified", code("new", 11), code("new", 12), "line 12, from_line 11, line_type ADDED", ["new", 12], ["new", [11, 12]]],
    ["context only", "unified", code("new", 13), code("new", 14), "line 14, from_line 13, line_type CONTEXT", ["new", 14], ["new", [13, 14]]],
    ["added then context", "unified", code("new", 11), code("new", 14), "line 14, from_line 11, line_type CONTEXT", ["new", 14], ["new", [11, 12, 13, 14]]],
    ["removed", "unified", code("old", 11), code("old", 11), "line 11, line_type REMOVED", ["old", 11], null],
    ["context then removed", "unified", code("old", 9), code("old", 11), "line 11, from_line 9, line_type REMOVED", ["old", 11], ["old", [9, 10, 11]]],
    ["context, left half", "side-by-side", left(12), left(13), "line 14, from_line 13, line_type CONTEXT", ["new", 14], ["new", [13, 14]]],
    ["removed, left half", "side-by-side", left(11), left(11), "line 11, line_type REMOVED", ["old", 11], null],
    ["added then context, right half", "side-by-side", right(11), right(13), "line 13, from_line 11, line_type CONTEXT", ["new", 13], ["new", [11, 12, 13]]],
  ];
  // Each draft's text names its case, none a prefix of another's.
  const label = (name) => `[draft: ${name}]`;
  const show = { kind: "diff", project: "BB", repo: "api", pr_id: 1 };
  const mount = { displayMode: "fullscreen", width: 1000, caps: { message: { text: {} } } };
  const layout = async (frame, name) => {
    await frame.locator('.bb-tbtn[data-path="src/client.rs"]').click();
    if (name === "side-by-side") await frame.getByRole("button", { name: "Side-by-side diff" }).click();
    await frame.locator(`.bb-pane[data-layout="${name}"]`).waitFor();
  };
  try {
    const v = await open(live, { bb: bb.mcp, show, mount });
    await v.frame.locator(".bb-diffview").waitFor({ timeout: 15000 });
    assert.ok(v.bb.html === view(), "bb serves the page of this tree (if not, bb is stale: cargo build -p bb)");
    const outdatedBefore = v.bb.result._meta["bb/view"].diff.outdatedComments ?? 0;
    let shown = null;
    for (const [name, how, from, to, args] of cases) {
      if (how !== shown) { await layout(v.frame, how); shown = how; }
      // The last case's bar goes first, so the bar seen next is this selection's.
      await clear(v.frame);
      await v.frame.locator(".bb-point").waitFor({ state: "hidden" });
      const before = (await v.log()).messages.length;
      await select(v.frame, from, to);
      const draftButton = v.frame.locator(".bb-point").getByRole("button", { name: "Draft a comment here" });
      await draftButton.waitFor({ state: "visible" });
      await draftButton.click();
      await until(`the message (${name})`, async () => (await v.log()).messages.length === before + 1);
      const text = (await v.log()).messages[before].content[0].text;
      const m = text.match(/add_pr_comment \(project (\S+), repo (\S+), pr_id (\d+), path ([^,]+), (line \d+(?:, from_line \d+)?, line_type \w+), pending true\)\.$/);
      assert.ok(m, `${name}: the message names add_pr_comment's arguments: ${text}`);
      assert.equal(m[5], args, `${name}: ${text}`);
      const [, project, repo, prId, path] = m;
      const call = { project, repo, pr_id: Number(prId), path, text: label(name), pending: true };
      for (const part of m[5].split(", ")) {
        const [k, val] = part.split(" ");
        call[k] = k === "line_type" ? val : Number(val);
      }
      const made = JSON.parse(await v.page.evaluate((j) => window.bbHost.callBb(j), JSON.stringify({ name: "add_pr_comment", arguments: call })));
      assert.notEqual(made.isError, true, `${name}: ${JSON.stringify(made.content)}`);
      await clear(v.frame);
    }
    await v.page.close();
    // Opened again: each draft on its lines, none outdated.
    const again = await open(live, { bb: bb.mcp, show, mount });
    await again.frame.locator(".bb-diffview").waitFor({ timeout: 15000 });
    const data = again.bb.result._meta["bb/view"];
    assert.equal(data.diff.outdatedComments ?? 0, outdatedBefore, "no draft is counted among the outdated comments");
    const lines = data.diff.diffs.find((d) => d.path === "src/client.rs").hunks.flatMap((h) => h.lines);
    for (const how of ["unified", "side-by-side"]) {
      await layout(again.frame, how);
      for (const [name, , , , , [side, n], covered] of cases) {
        const on = lines.find((l) => (l.c || []).some((c) => JSON.stringify(c).includes(JSON.stringify(label(name)).slice(1, -1))));
        assert.ok(on, `${name}: bb placed the draft on a line`);
        assert.equal(side === "old" ? on.o : on.n, n, `${name}: on ${side} line ${n}`);
        const drawn = again.frame.locator(".bb-comment", { hasText: label(name) });
        assert.equal(await drawn.count(), 1, `${name}: drawn once (${how})`);
        const at = await drawn.evaluate((c) => {
          let r = c.closest("tr.bb-dc").previousElementSibling;
          while (r && !r.classList.contains("bb-dl")) r = r.previousElementSibling;
          return { old: Number(r.dataset.old) || null, new: Number(r.dataset.new) || null };
        });
        assert.equal(at[side], n, `${name}: drawn right after ${side} line ${n} (${how})`);
        if (covered) {
          const [s, ns] = covered;
          for (const k of ns) {
            const spans = await again.frame.locator(row(s, k)).first().getAttribute("data-span");
            assert.ok((spans || "").split(" ").includes(s), `${name}: ${s} line ${k} is marked as covered (${how})`);
          }
        }
      }
      if (how === "unified") {
        await shot(again.page, "point-draft-on-context-lines");
      }
    }
    assert.equal(await again.frame.locator('.bb-dnote[data-note="outdated"]').count(), outdatedBefore ? 1 : 0);
    assert.deepEqual(again.errors.filter((e) => !/status of 405/.test(e)), []);
    await again.page.close();
  } finally {
    await live.close();
    await bb.stop();
  }
});

// ---- driven by bb against the stand-in: the ref as chosen and the commit it resolved to, never "null" -------
test("the bar and the model's context name the ref as chosen and the commit it resolved to, and never say null: a file on the default branch, on a branch, and a compare", async () => {
  const bb = await startBb();
  const lo = await launch({ loopback: true });
  try {
    const caps = { message: { text: {} } };
    const pick = async (args, wait, from, to) => {
      const v = await open(lo, { bb: bb.mcp, show: args, mount: { width: 700, caps } });
      await v.frame.locator(wait).waitFor({ timeout: 15000 });
      await select(v.frame, from, to);
      await until("the context", async () => (await contexts(v)).length === 1);
      const bar = v.frame.locator(".bb-point");
      await bar.waitFor({ state: "visible" });
      await bar.getByRole("button", { name: "Ask about this" }).click();
      await until("the message", async () => (await v.log()).messages.length === 1);
      const [sent] = await contexts(v);
      const said = [await bar.textContent(), sent.content[0].text, JSON.stringify(sent.structuredContent), (await v.log()).messages[0].content[0].text];
      for (const s of said) assert.doesNotMatch(s, /null|undefined/, s);
      return { v, sel: sent.structuredContent.selection, text: sent.content[0].text, data: v.bb.result._meta["bb/view"] };
    };
    // Cargo.toml on the default branch: named main, at the commit main's head is.
    const main = await pick({ kind: "file", project: "BB", repo: "api", path: "Cargo.toml" }, ".bb-fileview", "tr#L2 .bb-dcode", "tr#L3 .bb-dcode");
    const head = main.data.file.commit;
    assert.match(head, /^[0-9a-f]{40}$/, "the view data carries the default branch's commit");
    assert.equal(main.sel.ref, "main");
    assert.equal(main.sel.commit, head);
    assert.match(main.text, new RegExp(`Cargo\\.toml lines 2–3 at main \\(${head.slice(0, 7)}\\):\\n`));
    await main.v.page.close();
    // On a branch the person named: that name, as given.
    const branch = await pick({ kind: "file", project: "BB", repo: "api", path: "Cargo.toml", at: "feature/retry" }, ".bb-fileview", "tr#L2 .bb-dcode", "tr#L3 .bb-dcode");
    assert.equal(branch.sel.ref, "feature/retry");
    assert.match(branch.text, /Cargo\.toml lines 2–3 at feature\/retry[ :(]/);
    await branch.v.page.close();
    // A compare's new side: the ref as asked, whole, and its head (the newest commit it has that main lacks).
    const cmp = await pick({ kind: "compare", project: "BB", repo: "api", from_ref: "feature/retry", to_ref: "main" }, ".bb-diffview",
      "tr.bb-dl-A .bb-dcode", "tr.bb-dl-A .bb-dcode");
    const tip = cmp.data.diff.commits.items[0].id;
    assert.equal(cmp.sel.ref, "feature/retry");
    assert.equal(cmp.sel.commit, tip);
    assert.match(cmp.text, new RegExp(`of the new file at feature/retry \\(${tip.slice(0, 7)}\\):\\n`));
    await cmp.v.page.close();
  } finally {
    await lo.close();
    await bb.stop();
  }
});
