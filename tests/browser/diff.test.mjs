// The diff view: Bitbucket's Diff tab drawn from the view data (fixtures built from the core's
// snapshot cases "diff view" and "diff view large", and a hostile one), inline and fullscreen,
// unified and side-by-side, comments on their lines, light and dark; Show more between hunks (the test
// host answers its refresh_view reads from the file fixture) and the iterative review choice.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, startBb, texts, until, view } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function diff(name, mount = {}) {
  const data = fixture(name);
  // Full screen as a host draws it: 1000 px wide (side-by-side needs the room).
  const v = await open(browser, { mount: { input: data.call, result: result(data), width: mount.displayMode ? 1000 : undefined, ...mount } });
  await v.frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
  return { ...v, data };
}
const frameHeight = (page) => page.locator("iframe#view").evaluate((f) => f.getBoundingClientRect().height);
// The element right after the row of a code line, and what it holds.
const nextRow = (frame, selector) => frame.locator(selector).evaluate((row) => {
  const next = row.nextElementSibling;
  return next ? { cls: next.className, ids: [...next.querySelectorAll("[data-comment-id]")].map((c) => c.dataset.commentId) } : null;
});

test("inline: the file list with change types and comment marks, then the first hunks, unified", async () => {
  const { frame, page, errors } = await diff("diff-view");
  assert.deepEqual(await texts(frame.locator(".bb-flist .bb-fbtn bdi")), ["src/client.rs", "src/retry.rs", "docs/retry.md"]);
  assert.deepEqual(await texts(frame.locator(".bb-flist .bb-ctl-loz")), ["Modified", "Added", "Added"]);
  assert.deepEqual(await frame.locator(".bb-flist .bb-fbtn").evaluateAll((n) => n.map((b) => b.classList[1])), ["bb-ct-mod", "bb-ct-add", "bb-ct-add"]);
  // The badge counts what the file's threads show (4 threads, one with a reply: 5), not a count of its own.
  assert.deepEqual(await texts(frame.locator(".bb-flist .bb-dmark-comments")), ["5 comments", "1 comment"]);
  assert.equal(await frame.locator(".bb-flist .bb-fbtn").first().getAttribute("title"), "client.rs has comments");
  assert.equal(await frame.locator('[data-count="files"]').textContent(), "3 files changed");
  assert.equal(await frame.locator(".bb-read").textContent(), "Read from Bitbucket 2 minutes ago");
  // All 25 lines fit the first budget: every file is drawn, unified.
  assert.equal(await frame.locator("table.bb-sbs").count(), 0);
  assert.equal(await frame.locator("tr.bb-dl").count(), 25);
  assert.equal(await frame.locator(".bb-tally-lines").textContent(), "25 lines in 3 files.");
  // Gutters: a removed line has only its old number, an added one only its new one.
  const removed = frame.locator('tr.bb-dl-R[data-path="src/client.rs"][data-old="11"]');
  assert.equal(await removed.count(), 1);
  assert.equal(await removed.getAttribute("data-new"), null);
  assert.deepEqual(await texts(removed.locator(".bb-ln")), ["11", ""]);
  const added = frame.locator('tr.bb-dl-A[data-path="src/client.rs"][data-new="11"]');
  assert.equal(await added.getAttribute("data-old"), null);
  // Code drawn from the runs: "    pub fn get(" has kw "pub", kw "fn", fn "get".
  const first = frame.locator('tr[data-path="src/client.rs"][data-old="10"][data-new="10"] .bb-dcode');
  assert.deepEqual(await texts(first.locator(".bb-tk-kw")), ["pub", "fn", "str"], "keywords from the runs");
  assert.equal(await first.locator(".bb-tk-fn").first().textContent(), "get");
  assert.equal((await first.textContent()).replace(/^\s/, ""), "    pub fn get(&self, url: &str) -> Result<Response> {");
  // The Markdown file went plain (a template lexer): Bitbucket says nothing of highlighting, nor does the page (issue #40).
  assert.equal(await frame.locator('[data-note="plain"]').count(), 0);
  assert.deepEqual(errors, []);
  await page.waitForTimeout(150);
  await shot(page, "diff-view-inline-light");
});

test("comments sit in the row right after their line, by Bitbucket's placement", async () => {
  const { frame } = await diff("diff-view", { displayMode: "fullscreen" });
  assert.equal(await frame.locator(".bb-pane").getAttribute("data-path"), "src/client.rs", "where the inline view starts");
  await frame.locator('.bb-tbtn[data-path="src/client.rs"]').click();
  // Comment 1009 was written on the old side's line 16 (a context line, new 17).
  assert.deepEqual(await nextRow(frame, 'tr.bb-dl[data-path="src/client.rs"][data-old="16"]'), { cls: "bb-dc", ids: ["1009"] });
  assert.equal(await frame.locator('tr.bb-dl[data-path="src/client.rs"][data-old="16"]').getAttribute("data-new"), "17");
  assert.deepEqual(await nextRow(frame, 'tr.bb-dl-R[data-path="src/client.rs"][data-old="11"]'), { cls: "bb-dc", ids: ["1005"] });
  assert.deepEqual(await nextRow(frame, 'tr.bb-dl-A[data-path="src/client.rs"][data-new="12"]'), { cls: "bb-dc", ids: ["1006", "1007"] }, "the reply inside its thread");
  assert.deepEqual(await nextRow(frame, 'tr.bb-dl[data-path="src/client.rs"][data-new="15"]'), { cls: "bb-dc", ids: ["1008"] });
  assert.equal(await frame.locator("[data-comment-id]").count(), 5, "src/client.rs is shown: its five comments");
  assert.equal(await frame.locator('[data-comment-id="1007"]').evaluate((n) => n.parentElement.closest("[data-comment-id]").dataset.commentId), "1006");
  // Markdown in a comment is drawn as the card draws it: inline code as <code>.
  assert.equal(await frame.locator('[data-comment-id="1008"] .bb-md code').textContent(), "send");
  assert.match(await frame.locator('[data-comment-id="1006"] > .bb-cbody > .bb-chead').textContent(), /Bob Baker/);
  assert.equal(await frame.locator('[data-comment-id="1006"] > .bb-avatar img').count(), 1, "the avatar bb sent");
  // Collapsible: the thread folds to its summary and opens again.
  const thread = frame.locator('tr.bb-dc:has([data-comment-id="1009"]) details.bb-threads');
  assert.match(await thread.locator("summary").textContent(), /1 comment$/);
  await thread.locator("summary").click();
  assert.equal(await thread.evaluate((d) => d.open), false);
  assert.equal(await frame.locator('[data-comment-id="1009"]').isVisible(), false);
  await thread.locator("summary").click();
  assert.equal(await frame.locator('[data-comment-id="1009"]').isVisible(), true);
  // Diff options: Hide comments hides every thread of the file, and shows them again.
  await frame.getByRole("button", { name: "Hide comments" }).click();
  assert.equal(await frame.locator('[data-comment-id="1005"]').isVisible(), false);
  assert.equal(await frame.getByRole("button", { name: "Hide comments" }).getAttribute("aria-pressed"), "true");
  await frame.getByRole("button", { name: "Hide comments" }).click();
  assert.equal(await frame.locator('[data-comment-id="1005"]').isVisible(), true);
  // The file comment sits at the top of its file.
  await frame.locator('.bb-tbtn[data-path="src/retry.rs"]').click();
  const top = frame.locator('.bb-file[data-file="src/retry.rs"] > .bb-fcomments [data-comment-id="1010"]');
  assert.equal(await top.count(), 1);
  assert.equal(await frame.locator('.bb-file[data-file="src/retry.rs"] > .bb-fcomments').evaluate((n) => Boolean(n.nextElementSibling && n.nextElementSibling.querySelector("table"))), true, "above the lines");
});

test("inline growth: Show more grows the frame, and more lines are drawn on request", async () => {
  const { frame, page, log } = await diff("diff-large", { maxHeight: 1400 });
  const before = await frameHeight(page);
  assert.ok(before <= 600, `one screen high at first (${before})`);
  assert.match(await frame.locator(".bb-tally-lines").textContent(), /^120 of 832 lines drawn here, from 4 of 7 files; full screen shows them all/);
  const grow = frame.locator(".bb-foot .bb-grow");
  assert.equal(await grow.isVisible(), true, "Show more is visible below the frame's edge");
  await grow.click();
  const after = await until("the frame grew", async () => { const h = await frameHeight(page); return h > before + 100 ? h : null; });
  assert.ok((await log()).sizes.some((h) => h > before + 100), "the view told the host its new size");
  // Nothing cut mid-line: the clip's edge is between text lines.
  const cut = await frame.locator(".bb-clip").evaluate((clip) => {
    const bottom = clip.getBoundingClientRect().bottom;
    const range = document.createRange();
    const walker = document.createTreeWalker(clip, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (!t.data.trim()) continue;
      range.selectNodeContents(t);
      for (const r of range.getClientRects()) if (r.top < bottom - 0.5 && r.bottom > bottom + 0.5) return true;
    }
    return false;
  });
  assert.equal(cut, false, "no line of text crosses the edge");
  const rows = await frame.locator("tr.bb-dl").count();
  assert.equal(rows, 120);
  // The lines button ends the drawn lines, below the frame's edge until the frame has grown to it.
  await frame.locator(".bb-more-lines").evaluate((b) => b.click());
  assert.equal(await frame.locator("tr.bb-dl").count(), 320);
  assert.match(await frame.locator(".bb-tally-lines").textContent(), /^320 of 832 lines/);
  await page.setViewportSize({ width: 1040, height: 800 });
});

test("fullscreen: one file at a time, the tree beside it, previous and next, tree clicks", async () => {
  const { frame, page, errors } = await diff("diff-large", { displayMode: "fullscreen" });
  const pane = frame.locator(".bb-pane");
  // Full screen opens at the file the inline view starts with, the first Bitbucket lists; previous and next follow
  // the tree, which keeps Bitbucket's order (a folder where its first file is).
  assert.equal(await pane.getAttribute("data-path"), "backup/run.py");
  assert.equal(await frame.locator(".bb-file").count(), 1, "one file at a time");
  assert.deepEqual(await texts(frame.locator(".bb-tlist > .bb-tdir > .bb-tdir-name")), ["backup", "deploy"]);
  assert.deepEqual(await texts(frame.locator('.bb-tlist > .bb-tdir:first-child .bb-tname')), ["run.py", "main.go", "Backup.java", "big.py", "big.go", "Big.java"]);
  await frame.locator(".bb-next").click();
  assert.equal(await pane.getAttribute("data-path"), "backup/main.go");
  assert.equal(await frame.locator(".bb-next").evaluate((b) => b === document.activeElement), true, "Next file keeps focus for the next press");
  await frame.locator(".bb-next").press("Enter");
  assert.equal(await pane.getAttribute("data-path"), "backup/Backup.java");
  assert.equal(await frame.locator("tr.bb-dl").count(), 3, "every line of the file");
  await frame.locator(".bb-prev").click();
  await frame.locator(".bb-prev").click();
  await frame.locator(".bb-prev").click();
  assert.equal(await pane.getAttribute("data-path"), "deploy/backup.yaml", "previous from the first is the last");
  assert.equal(await frame.locator(".bb-fpos").textContent(), "7 of 7");
  assert.equal(await frame.locator('tr.bb-dl[data-path="deploy/backup.yaml"]').count(), 120);
  await frame.locator('.bb-tbtn[data-path="backup/big.py"]').click();
  assert.equal(await pane.getAttribute("data-path"), "backup/big.py");
  assert.equal(await frame.locator('.bb-tbtn[aria-current="true"]').getAttribute("data-path"), "backup/big.py");
  assert.equal(await frame.locator('tr.bb-dl[data-path="backup/big.py"]').count(), 300);
  assert.equal(await frame.locator(".bb-fpos").textContent(), "4 of 7");
  // An added file: no side-by-side (as Bitbucket).
  assert.equal(await frame.getByRole("button", { name: "Side-by-side diff" }).count(), 0);
  assert.deepEqual(errors, []);
});

test("unified and side-by-side: removed beside added, comments on their side", async () => {
  const { frame, page } = await diff("diff-view", { displayMode: "fullscreen", theme: "dark" });
  await frame.locator('.bb-tbtn[data-path="docs/retry.md"]').click();
  assert.equal(await frame.getByRole("button", { name: "Side-by-side diff" }).count(), 0, "not offered for the added docs/retry.md");
  await frame.locator('.bb-tbtn[data-path="src/client.rs"]').click();
  assert.equal(await frame.locator(".bb-pane").getAttribute("data-layout"), "unified");
  await frame.getByRole("button", { name: "Side-by-side diff" }).click();
  assert.equal(await frame.locator(".bb-pane").getAttribute("data-layout"), "side-by-side");
  assert.equal(await frame.getByRole("button", { name: "Side-by-side diff" }).getAttribute("aria-pressed"), "true");
  const table = frame.locator("table.bb-sbs");
  assert.equal(await table.count(), 1);
  // Old 11 (removed) beside new 11 (added); old 15 beside new 16.
  assert.equal(await table.locator('tr.bb-dl[data-old="11"]').getAttribute("data-new"), "11");
  assert.equal(await table.locator('tr.bb-dl[data-old="15"]').getAttribute("data-new"), "16");
  assert.equal(await table.locator('tr.bb-dl[data-old="16"]').getAttribute("data-new"), "17");
  // The added line 12 has nothing beside it.
  assert.equal(await table.locator('tr.bb-dl[data-new="12"]').getAttribute("data-old"), null);
  assert.equal(await table.locator('tr.bb-dl[data-new="12"] .bb-none').count(), 2);
  // Threads after their row, on the side they were written on.
  assert.deepEqual(await nextRow(frame, 'table.bb-sbs tr.bb-dl[data-old="16"]'), { cls: "bb-dc", ids: ["1009"] });
  assert.equal(await frame.locator('.bb-dc-old [data-comment-id="1009"]').count(), 1, "written on the old side");
  assert.equal(await frame.locator('.bb-dc-old [data-comment-id="1005"]').count(), 1, "on a removed line");
  assert.equal(await frame.locator('.bb-dc-new [data-comment-id="1006"]').count(), 1, "on an added line");
  assert.equal(await frame.locator('.bb-dc-new [data-comment-id="1008"]').count(), 1, "on a context line, new side");
  await page.waitForTimeout(150);
  await shot(page, "diff-view-sbs-fullscreen-dark");
  // The choice holds across files where it is offered, and is not offered for added ones.
  await frame.locator(".bb-next").click();
  assert.equal(await frame.locator(".bb-pane").getAttribute("data-layout"), "unified");
  assert.equal(await frame.getByRole("button", { name: "Side-by-side diff" }).count(), 0, "src/retry.rs is added: no side-by-side");
  await frame.getByRole("button", { name: "Previous file" }).click();
  assert.equal(await frame.locator(".bb-pane").getAttribute("data-layout"), "side-by-side");
  await frame.getByRole("button", { name: "Unified diff" }).click();
  assert.equal(await frame.locator("table.bb-unified").count(), 1);
});

test("Bitbucket's words for binary, too large, truncated, renamed, copied, deleted, conflicted and unread files", async () => {
  const { frame } = await diff("diff-hostile", { displayMode: "fullscreen" });
  const pane = frame.locator(".bb-pane");
  const show = async (path) => { await frame.locator(`.bb-tbtn[data-path="${path}"]`).click(); return (await pane.locator(".bb-file").textContent()).replace(/\s+/g, " "); };
  assert.match(await show("assets/logo.png"), /Binary file.*This file can't be viewed in your browser\./);
  assert.match(await show("data/huge.csv"), /The diff for this file is too large to render/);
  const cut = await show("data/cut.sql");
  assert.match(cut, /Bitbucket truncated it: 5 lines are shown/);
  assert.match(cut, /Bitbucket truncated this hunk: 5 of its 900 new lines and 5 of its 900 old lines are shown\./);
  assert.match(await show("src/new_name.rs"), /Renamed.*Renamed from 'src\/old_name\.rs'.*The contents for this file have not changed/);
  assert.equal(await pane.locator(".bb-ctl-loz").getAttribute("title"), "Renamed from 'src/old_name.rs'");
  assert.match(await show("lib/moved.rs"), /Moved.*src\/moved\.rs → lib\/moved\.rs/);
  assert.match(await show("docs/copy.md"), /Copied.*docs\/orig\.md → docs\/copy\.md/);
  assert.match(await show("src/broken.rs"), /bb could not read the diff of this file\.\s*Bitbucket answered 500: <b>Internal<\/b> ⟨U\+202E⟩error/);
  assert.match(await show("old/gone.txt"), /Deleted/);
  assert.equal(await frame.getByRole("button", { name: "Side-by-side diff" }).count(), 0, "no side-by-side for a deleted file");
  assert.match(await show("a/b/c/deep.txt"), /The added file is empty/);
  assert.match(await show("web/<b>index</b>.html"), /This file has a merge conflict\..*2 outdated comments are in the activity/);
  assert.equal(await frame.locator('.bb-tbtn[data-path="web/<b>index</b>.html"]').getAttribute("title"), "b>.html has comments and a merge conflict");
  // Chains of single-child directories are one node; directories before files.
  assert.ok((await texts(frame.locator(".bb-tdir-name"))).includes("a/b/c"));
  // The file past what bb carried, and more files than listed, in Bitbucket's words.
  // A path's bidi control is written out in its attributes, as in its text.
  assert.match(await show("⟨U+202E⟩txt.exe"), /bb did not carry the diff of this file/);
  assert.equal(await frame.locator('[data-note="files-more"]').textContent(), "This pull request is too large to render. Showing the first 11 files.");
  assert.match(await frame.locator('[data-note="not-carried"]').textContent(), /^1 file is listed without its diff/);
});

test("inline, a file whose lines are not drawn here opens in full screen at that file", async () => {
  const { frame, log } = await diff("diff-large");
  assert.equal(await frame.locator('.bb-file[data-file="backup/big.py"]').count(), 0);
  await frame.locator('.bb-fbtn[data-path="backup/big.py"]').click();
  await frame.locator("main.bb-fullscreen").waitFor();
  assert.deepEqual((await log()).modeRequests, ["fullscreen"]);
  assert.equal(await frame.locator(".bb-pane").getAttribute("data-path"), "backup/big.py");
  assert.equal(await frame.locator('.bb-tbtn[aria-current="true"]').getAttribute("data-path"), "backup/big.py");
});

// Fails the test if anything from the data ran or became an element.
async function noCanary(v) {
  await v.page.waitForTimeout(300);
  const log = await v.log();
  assert.deepEqual(log.pwned, [], "a script from the data posted to the host");
  assert.equal(await v.page.evaluate(() => window.__pwned), undefined, "a script set a global in the host");
  assert.equal(await v.frame.locator("html").evaluate(() => window.__pwned), undefined, "a script set a global in the view");
  assert.deepEqual(v.requests, [], "the view fetched nothing");
  for (const src of await v.frame.locator("img").evaluateAll((imgs) => imgs.map((i) => i.getAttribute("src")))) assert.match(src, /^data:image\//);
  assert.equal(await v.frame.locator("main :is(script, iframe, object, embed, b, [onerror], [onclick], [onload], [style]:not(.bb-clip))").count(), 0, "no element from the data's tags or attributes");
  for (const url of log.links) assert.match(url, /^https?:\/\//, "links only to web addresses");
}

test("hostile code, paths and comments are drawn as text: nothing runs, no element is made of them", async () => {
  for (const mode of ["inline", "fullscreen"]) {
    const v = await diff("diff-hostile", { displayMode: mode, width: mode === "inline" ? 700 : 1000 });
    const { frame, page } = v;
    if (mode === "fullscreen") await frame.locator('.bb-tbtn[data-path="web/<b>index</b>.html"]').click();
    const row = (o, n) => frame.locator(`tr.bb-dl[data-path="web/<b>index</b>.html"]${o ? `[data-old="${o}"]` : ""}${n ? `[data-new="${n}"]` : ":not([data-new])"}`);
    assert.equal(await row(1, 1).locator(".bb-dcode").textContent(), ` </script><script>window.__pwned=5;parent.postMessage({pwned:"code"},"*")</script>`);
    assert.equal(await row(1, 1).locator(".bb-tk-tag").count(), 2, "the runs still colour it");
    // CRLF: the carriage return is a visible symbol, not a line break.
    assert.equal(await row(2, null).locator(".bb-ctl").textContent(), "CR");
    assert.equal(await row(2, null).locator(".bb-ctl").getAttribute("title"), "Carriage return (a CRLF line ending)");
    assert.match(await row(2, null).locator(".bb-dcode").textContent(), /^-removed: <img src=x onerror="window.__pwned=6">CR$/);
    // Bidi controls are drawn visibly, in code as in comments and titles.
    assert.match(await row(null, 3).textContent(), /\/\/ ⟨U\+202E⟩ } ⟨U\+2066⟩if \(isAdmin\)⟨U\+2069⟩ ⟨U\+2066⟩ begin admins only/);
    assert.equal(await row(null, 3).locator(".bb-bidi").count(), 4);
    // NUL and ESC as symbols; a tab stays a tab.
    assert.match(await row(null, 5).textContent(), /tab\thereNULnulESCesc/);
    // The 3,000-character line: drawn whole, plain, wrapped inside the frame, and the file says why it is plain.
    const long = row(null, 4).locator(".bb-dcode");
    assert.equal(await long.locator(".bb-longline").textContent(), `+added: x = "${"A".repeat(2993)}";`, "all 3,000 characters");
    assert.equal(await long.evaluate((td) => td.scrollWidth <= td.clientWidth + 1), true, "no sideways overflow");
    if (mode === "fullscreen") {
      const whole = long.getByRole("button", { name: "Show the whole line" });
      assert.equal(await whole.isVisible(), true, "a line that long is cut at four rows, the rest a click away");
      const before = await long.evaluate((td) => td.getBoundingClientRect().height);
      await whole.click();
      assert.ok(await long.evaluate((td) => td.getBoundingClientRect().height) > before);
    }
    assert.equal(await frame.locator('[data-note="plain"]').count(), 0, "nothing said of highlighting");
    // Astral characters are counted as one character each: the runs land on their letters.
    assert.equal(await row(3, 6).locator(".bb-dcode").textContent(), " 😀 emoji 𝒳 astral");
    // Comments and their Markdown are text; a javascript: link is not a link.
    for (const id of ["2001", "2002", "2003"]) {
      const c = frame.locator(`[data-comment-id="${id}"]`).first();
      assert.match(await c.locator(":scope > .bb-cbody > .bb-cap").textContent(), /<\/script><script>window.__pwned=1;.*<img src=x onerror="window.__pwned=2"> ⟨U\+202E⟩gnp\.exe/);
    }
    assert.deepEqual(await nextRow(frame, 'tr.bb-dl[data-path="web/<b>index</b>.html"][data-new="3"]'), { cls: "bb-dc", ids: ["2001", "2002"] });
    assert.equal(await frame.locator('a:has-text("click me")').count(), 0);
    assert.match(await frame.locator(".bb-dtitle").textContent(), /^<img src=x onerror="window.__pwned=4"> Hostile ⟨U\+202E⟩exe\.gnp diff/);
    assert.match(await frame.locator('[data-comment-id="2001"] > .bb-cbody > .bb-chead').textContent(), /Erin <img src=x onerror="window.__pwned=9"> ⟨U\+202E⟩Evans/);
    const hunk = await frame.locator(".bb-hunk-context").first().textContent();
    assert.equal(hunk, "<script>window.__pwned=8</script>");
    await frame.locator(".bb-link", { hasText: "ok link" }).first().evaluate((a) => a.click());
    await noCanary(v);
    assert.ok((await v.log()).links.includes("https://example.com/ok"));
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, `diff-hostile-${mode}`);
  }
});

test("screenshots: inline at about 700 px and fullscreen, light and dark", async () => {
  for (const theme of ["light", "dark"]) {
    for (const name of ["diff-view", "diff-large"]) {
      const inline = await diff(name, { theme, width: 700, colorScheme: theme });
      await inline.page.waitForTimeout(150);
      assert.ok(await frameHeight(inline.page) <= 610);
      await shot(inline.page, `shot-${name}-700-${theme}`);
      const full = await diff(name, { theme, displayMode: "fullscreen", width: 1000 });
      if (name === "diff-view") {
        await full.frame.locator('.bb-tbtn[data-path="src/client.rs"]').click();
        await full.frame.getByRole("button", { name: "Side-by-side diff" }).click();
      }
      await full.page.waitForTimeout(150);
      await shot(full.page, `shot-${name}-fullscreen-${theme}`);
      assert.deepEqual([...inline.errors, ...full.errors], []);
    }
  }
});

// Driven by bb itself against the stand-in: every line bb sent is drawn once, on its file's page,
// with its numbers, and every thread in the row right after its line.
test("from bb: show kind diff draws every line bb sent, and each thread right after its line", async () => {
  const bb = await startBb();
  const live = await launch({ loopback: true });
  try {
    const v = await open(live, { bb: bb.mcp, show: { kind: "diff", project: "BB", repo: "api", pr_id: 1 }, mount: { displayMode: "fullscreen", width: 1000 } });
    await v.frame.locator(".bb-diffview").waitFor({ timeout: 15000 });
    assert.ok(v.bb.html === view(), "bb serves the page of this tree (if not, target/debug/bb is stale: cargo build -p bb)");
    assert.deepEqual(v.requests, [], "nothing else was requested");
    const data = v.bb.result._meta["bb/view"];
    assert.equal(data.kind, "diff");
    const carried = data.diff.diffs.filter((d) => Array.isArray(d.hunks) && d.hunks.length);
    assert.ok(carried.length >= 2);
    let threads = 0;
    for (const d of carried) {
      await v.frame.locator(`.bb-tbtn[data-path="${d.path}"]`).click();
      const drawn = await v.frame.locator("tr.bb-dl").evaluateAll((rows) => rows.map((r) => ({
        path: r.dataset.path, o: r.dataset.old ? Number(r.dataset.old) : null, n: r.dataset.new ? Number(r.dataset.new) : null,
        after: r.nextElementSibling && r.nextElementSibling.classList.contains("bb-dc") ? [...r.nextElementSibling.querySelectorAll("[data-comment-id]")].map((c) => Number(c.dataset.commentId)) : [],
      })));
      const ids = (list) => { const out = []; const stack = [...(list || [])].reverse(); while (stack.length) { const c = stack.pop(); out.push(c.id); stack.push(...[...(c.replies || [])].reverse()); } return out; };
      const sent = d.hunks.flatMap((h) => h.lines).map((l) => ({ path: d.path, o: l.o ?? null, n: l.n ?? null, after: ids(l.c) }));
      assert.deepEqual(drawn, sent, `${d.path}: every line, in order, with its numbers and threads`);
      threads += sent.filter((l) => l.after.length).length;
      for (const c of d.fileComments || []) assert.equal(await v.frame.locator(`.bb-fcomments [data-comment-id="${c.id}"]`).count(), 1);
    }
    assert.ok(threads >= 4, "the stand-in's line comments were drawn");
    assert.deepEqual(v.errors.filter((e) => !/status of 405/.test(e)), []);
  } finally {
    await live.close();
    await bb.stop();
  }
});

test("a file past the view's share says how many of its lines are only in Bitbucket: in full screen on the file, inline in the one count", async () => {
  const data = fixture("diff-view");
  // Every file: fullscreen opens on one of them.
  for (const d of data.diff.diffs) d.leftOut = 6000;
  const carried = data.diff.diffs.reduce((n, d) => n + d.hunks.reduce((m, h) => m + h.lines.length, 0), 0);
  const n = (x) => Number(String(x).replace(/,/g, ""));
  for (const mode of [{}, { displayMode: "fullscreen" }]) {
    const v = await open(browser, { mount: { input: data.call, result: result(data), ...mode } });
    await v.frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
    const warn = v.frame.locator(".bb-dmsg-warn", { hasText: "too large to render in full" }).first();
    await warn.waitFor({ timeout: 10000 });
    assert.match(await warn.textContent(), /Open it in Bitbucket\.$/);
    if (mode.displayMode) {
      // What is drawn of all the file's lines: those carried and the 6,000 left out, counted alike.
      const [, drawn, all] = /(\d[\d,]*) of its (\d[\d,]*) lines are shown(?: here)?[.;]/.exec(await warn.textContent()) || [];
      const file = warn.locator("xpath=ancestor::section[contains(@class, 'bb-file')]");
      assert.equal(n(drawn), await file.locator("tr.bb-dl").count(), "the count drawn is the rows drawn");
      assert.equal(n(all), n(drawn) + 6000);
    } else {
      // Inline: one sentence, one total (Bitbucket's, the left-out lines counted); the file's own message counts nothing.
      assert.doesNotMatch(await warn.textContent(), /\d/);
      const tally = await v.frame.locator(".bb-tally-lines").textContent();
      assert.equal(tally, `${carried} of ${(carried + 18000).toLocaleString("en-US")} lines drawn here, from 3 of 3 files.`);
    }
    await shot(v.page, `diff-left-out-${mode.displayMode || "inline"}`);
  }
});

// Issue 54 item 6: a file of 12,000 lines of which the view carries 4,000, beside a small one; inline draws 120.
test("inline, a file cut at the view's share and a small one: one sentence with one total says what is drawn and what full screen shows", async () => {
  const data = fixture("diff-view");
  const [big] = data.diff.diffs;
  const lines = Array.from({ length: 4000 }, (_, i) => ({ t: "A", n: i + 1, s: `line ${i + 1}` }));
  big.hunks = [{ old: [0, 0], new: [1, 12000], lines }];
  big.leftOut = 8000;
  data.diff.files[0].type = "ADD";
  const others = data.diff.diffs.slice(1).reduce((m, d) => m + d.hunks.reduce((k, h) => k + h.lines.length, 0), 0);
  const v = await open(browser, { mount: { input: data.call, result: result(data), width: 700 } });
  await v.frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
  const tally = await v.frame.locator(".bb-tally-lines").textContent();
  assert.equal(tally, `120 of ${(12000 + others).toLocaleString("en-US")} lines drawn here, from 1 of 3 files; full screen shows ${(4000 + others).toLocaleString("en-US")} of them, one file at a time.`);
  const said = await v.frame.locator(".bb-files").evaluate((b) => b.textContent);
  assert.doesNotMatch(said, /full screen shows/, "no second account of what full screen shows");
  assert.doesNotMatch(said, /12,000/, "no second total");
  await shot(v.page, "diff-one-total-700-light");
  await v.page.close();
});

// ---- Show more between hunks, and the iterative review choice (fixture diff-expand: src/client.rs in two
// hunks, new 10–17 and 45–49, old 10–16 and 44–47; the file at the new commit is file-client, 74 lines) ----
const reads = async (v) => (await v.log()).calls.filter((c) => c.name === "refresh_view").map((c) => c.arguments.show);
// bb's answer to a read of lines [start_line, start_line + line_count) of the file.
function fileWindow(show) {
  const data = fixture("file-client");
  const lines = data.file.lines.filter((l) => l.n >= show.start_line && l.n < show.start_line + show.line_count);
  const end = lines.length ? lines[lines.length - 1].n : show.start_line - 1;
  Object.assign(data.file, { at: show.at, start: show.start_line, lines, end, last: end >= 74, total: end >= 74 ? 74 : null });
  data.call = show;
  return result(data);
}
async function expandable(mount = {}, answer = (p) => fileWindow(p.arguments.show), name = "diff-expand") {
  const data = fixture(name);
  const v = await open(browser, { answer, colorScheme: mount.theme === "dark" ? "dark" : "light", mount: { input: data.call, result: result(data), width: mount.displayMode ? 1000 : undefined, ...mount } });
  await v.frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
  if (!mount.displayMode) return { ...v, data };
  await v.frame.locator('.bb-tbtn[data-path="src/client.rs"]').click();
  return { ...v, data };
}
// The numbers of the rows of src/client.rs, old and new, in order; x marks a line Show more drew.
const numbers = (frame) => frame.locator('tr.bb-dl[data-path="src/client.rs"]').evaluateAll((rows) => rows.map((r) =>
  `${r.dataset.old || "-"}:${r.dataset.new || "-"}${r.classList.contains("bb-dl-x") ? "x" : ""}`));
const gaps = (frame) => frame.locator('.bb-file[data-file="src/client.rs"] tr.bb-expand').evaluateAll((rows) => rows.map((r) => `${r.dataset.gap}:${r.dataset.from}-${r.dataset.to || ""}`));
const range = (from, to, offset) => Array.from({ length: to - from + 1 }, (_, i) => `${from + i - offset}:${from + i}x`);

test("Show more above, between and below the hunks reads the file at the diff's commit and draws context with both numbers", async () => {
  const v = await expandable({ displayMode: "fullscreen" });
  const { frame, data } = v;
  const at = data.diff.expand.new;
  const read = (start_line, line_count) => ({ kind: "file", project: "BB", repo: "api", path: "src/client.rs", at, start_line, line_count });
  const row = (gap) => frame.locator(`.bb-file[data-file="src/client.rs"] tr.bb-expand[data-gap="${gap}"] .bb-expand-btn`);
  // Above the first hunk (lines 1–9), between the hunks (18–44), below the last (from 50, its end unknown: drawn
  // once the lines a first click reads came, read ahead).
  await until("the row below", async () => (await gaps(frame)).includes("end:50-"));
  assert.deepEqual(await gaps(frame), ["0:1-9", "1:18-44", "end:50-"]);
  assert.deepEqual(await texts(frame.locator('.bb-file[data-file="src/client.rs"] tr.bb-expand')), ["⋯ Show more Lines 1–9 not shown", "⋯ Show more Lines 18–44 not shown", "⋯ Show more"]);
  const hunk = await numbers(frame);
  // Above: the whole gap is under 20 lines; numbered alike on both sides (the first hunk starts at 10 on both).
  await row("0").click();
  await until("lines 1–9", async () => (await gaps(frame))[0] !== "0:1-9");
  assert.deepEqual(await numbers(frame), [...range(1, 9, 0), ...hunk]);
  assert.equal(await frame.locator('tr.bb-dl-x[data-new="1"] .bb-dcode').textContent(), " use std::io;");
  assert.deepEqual(await texts(frame.locator('tr.bb-dl-x[data-new="9"] .bb-tk-kw')), ["pub", "struct"], "highlighted from the answer's runs");
  // Between: 20 lines, those nearest the hunk below (25–44), old = new − 1; the rest (18–24) still a row.
  await row("1").click();
  await until("lines 25–44", async () => (await gaps(frame)).includes("1:18-24"));
  // Ctrl+click: the whole rest of the gap.
  await row("1").click({ modifiers: ["Control"] });
  await until("lines 18–24", async () => !(await gaps(frame)).some((g) => g.startsWith("1:")));
  // Below: 20 lines from 50 (old = new − 2), then the rest: the answer says the file ends at 74, and the row goes.
  await row("end").click();
  await until("lines 50–69", async () => (await gaps(frame)).includes("end:70-"));
  await row("end").click();
  await until("the end of the file", async () => (await gaps(frame)).length === 0);
  const all = await numbers(frame);
  assert.deepEqual(all.slice(0, 9), range(1, 9, 0));
  assert.deepEqual(all.filter((n) => n.endsWith("x")), [...range(1, 9, 0), ...range(18, 44, 1), ...range(50, 74, 2)], "every line once, numbered on both sides");
  assert.deepEqual(all.filter((n) => !n.endsWith("x")), hunk.filter((n) => !n.endsWith("x")), "the diff's own lines as they were");
  assert.deepEqual(await reads(v), [read(50, 20), read(1, 9), read(25, 20), read(18, 7), read(70, 20)]);
  // Side-by-side draws what was read, on both sides.
  await frame.getByRole("button", { name: "Side-by-side diff" }).click();
  const sbs = frame.locator('table.bb-sbs tr.bb-dl-x[data-new="30"]');
  assert.deepEqual(await texts(sbs.locator(".bb-ln")), ["29", "30"]);
  assert.equal(await frame.locator("table.bb-sbs tr.bb-dl-x").count(), 9 + 27 + 25);
  assert.equal((await reads(v)).length, 5, "nothing read again");
  assert.deepEqual(v.errors, []);
  await v.page.close();
});

test("expanding above the lines the person reads keeps them where they are on screen", async () => {
  for (const layout of ["unified", "side-by-side"]) {
    const v = await expandable({ displayMode: "fullscreen", frameHeight: 500 });
    const { frame } = v;
    if (layout === "side-by-side") await frame.getByRole("button", { name: "Side-by-side diff" }).click();
    const second = frame.locator('.bb-file[data-file="src/client.rs"] tr.bb-hunk').nth(1);
    // The second hunk in the middle of the screen, the Show more above it on screen too.
    await second.evaluate((r) => scrollBy(0, r.getBoundingClientRect().top - 260));
    const before = await second.evaluate((r) => r.getBoundingClientRect().top);
    assert.ok(before > 100 && before < 460, `the hunk on screen (${before})`);
    assert.ok(await frame.locator('tr.bb-expand[data-gap="1"]').evaluate((r) => r.getBoundingClientRect().top > 0), "its Show more on screen above it");
    await frame.locator('tr.bb-expand[data-gap="1"] .bb-expand-btn').click({ modifiers: ["Meta"] });
    await until("the gap read", async () => (await frame.locator('tr.bb-expand[data-gap="1"]').count()) === 0);
    const after = await second.evaluate((r) => r.getBoundingClientRect().top);
    assert.ok(Math.abs(after - before) < 1.5, `${layout}: the hunk stayed at ${before} (now ${after})`);
    assert.equal(await frame.locator('tr.bb-dl-x[data-new="18"]').count(), 1, "Cmd+click read the whole gap");
    await v.page.close();
  }
});

test("a read that fails says so on its row, and the row stays to try again", async () => {
  let fail = true;
  const v = await expandable({ displayMode: "fullscreen" }, (p) => (fail ? { isError: true, content: [{ type: "text", text: "Bitbucket answered 500. The server had a problem." }] } : fileWindow(p.arguments.show)));
  const { frame } = v;
  const button = frame.locator('tr.bb-expand[data-gap="0"] .bb-expand-btn');
  await button.click();
  const problem = frame.locator('tr.bb-expand[data-gap="0"] .bb-expand-problem');
  await until("the failure", async () => (await problem.textContent()) !== "");
  assert.equal(await problem.textContent(), " Could not read these lines: Bitbucket answered 500.");
  assert.equal(await button.isEnabled(), true);
  assert.equal(await frame.locator("tr.bb-dl-x").count(), 0);
  fail = false;
  await button.click();
  await until("the lines", async () => (await frame.locator("tr.bb-dl-x").count()) === 9);
  assert.equal(await frame.locator('tr.bb-expand[data-gap="0"]').count(), 0);
  await v.page.close();
});

test("Show more is offered only where bb can read the file: not without the file kind, refresh_view or expand", async () => {
  const cases = [(d) => { d.server.kinds = d.server.kinds.filter((k) => k !== "file"); }, (d) => { d.server.tools = d.server.tools.filter((t) => t !== "refresh_view"); }, (d) => { delete d.diff.expand; }];
  for (const edit of cases) {
    const data = fixture("diff-expand");
    edit(data);
    const v = await open(browser, { mount: { input: data.call, result: result(data), displayMode: "fullscreen" } });
    await v.frame.locator(".bb-pane").waitFor({ timeout: 10000 });
    await v.frame.locator('.bb-tbtn[data-path="src/client.rs"]').click();
    assert.equal(await v.frame.locator("tr.bb-expand").count(), 0);
    await v.page.close();
  }
  // Added files (one hunk, the whole file) have nothing to show more of.
  const v = await expandable({ displayMode: "fullscreen" });
  await v.frame.locator('.bb-tbtn[data-path="src/retry.rs"]').click();
  assert.equal(await v.frame.locator("tr.bb-expand").count(), 0);
  await v.page.close();
});

test("screenshots: Show more and the lines it drew, inline at 700 px and fullscreen, light and dark", async () => {
  for (const theme of ["light", "dark"]) {
    const inline = await expandable({ width: 700, theme });
    await inline.frame.locator('.bb-file[data-file="src/client.rs"] tr.bb-expand[data-gap="0"] .bb-expand-btn').click();
    await until("inline lines", async () => (await inline.frame.locator("tr.bb-dl-x").count()) === 9);
    assert.deepEqual(inline.errors, []);
    await shot(inline.page, `diff-expand-700-${theme}`);
    const full = await expandable({ displayMode: "fullscreen", theme });
    await full.frame.locator('tr.bb-expand[data-gap="1"] .bb-expand-btn').click();
    await until("fullscreen lines", async () => (await full.frame.locator("tr.bb-dl-x").count()) === 20);
    await shot(full.page, `diff-expand-fullscreen-${theme}`);
    await full.frame.getByRole("button", { name: "Side-by-side diff" }).click();
    await shot(full.page, `diff-expand-sbs-fullscreen-${theme}`);
    await inline.page.close();
    await full.page.close();
  }
});

test("since your last review: the two choices in Bitbucket's words, each opening its diff in place; No unreviewed changes", async () => {
  const since = fixture("diff-expand");
  since.diff.review.since = since.diff.review.lastReviewed;
  since.diff.files = [];
  since.diff.diffs = [];
  since.call = { ...since.call, since: "last_review" };
  for (const mode of [{ width: 700 }, { displayMode: "fullscreen" }]) {
    const v = await expandable(mode, (p) => (p.arguments.show.since ? result(since) : result(fixture("diff-expand"))));
    const { frame, data } = v;
    const choices = frame.locator(".bb-review-choice");
    assert.deepEqual(await texts(choices), ["All changes in this pull request", "2 commits since you last reviewed Unreviewed"]);
    assert.equal(await frame.locator('.bb-review-choice[data-review="since"] .bb-loz').evaluate((n) => getComputedStyle(n).textTransform), "uppercase", "UNREVIEWED, as Bitbucket's lozenge");
    assert.deepEqual(await choices.evaluateAll((b) => b.map((x) => x.getAttribute("aria-pressed"))), ["true", "false"]);
    if (mode.width) await shot(v.page, "diff-review-700-light");
    await frame.locator('.bb-review-choice[data-review="since"]').click();
    await frame.locator(".bb-no-files").waitFor({ timeout: 10000 });
    assert.equal(await frame.locator(".bb-no-files").textContent(), "No unreviewed changes");
    assert.deepEqual(await frame.locator(".bb-review-choice").evaluateAll((b) => b.map((x) => x.getAttribute("aria-pressed"))), ["false", "true"]);
    if (!mode.width) await shot(v.page, "diff-review-none-fullscreen-light");
    await frame.locator('.bb-review-choice[data-review="all"]').click();
    await until("all changes again", async () => (await frame.locator('.bb-review-choice[data-review="all"]').getAttribute("aria-pressed")) === "true");
    assert.deepEqual((await reads(v)).filter((s) => s.kind !== "file"), [{ ...data.call, since: "last_review" }, data.call], "refresh_view with since: last_review, then the call without it");
    const told = (await v.log()).context.map((c) => c.content[0].text);
    assert.deepEqual(told, ["The person opened the diff of PR #1 in BB/api since the person last reviewed it", "The person opened the diff of PR #1 in BB/api"]);
    assert.deepEqual(v.errors, []);
    await v.page.close();
  }
  // Commits unknown: Bitbucket's other words; no lastReviewed: no choice at all.
  const unknown = fixture("diff-expand");
  unknown.diff.review.commits = null;
  const u = await open(browser, { mount: { input: unknown.call, result: result(unknown) } });
  await u.frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
  assert.equal(await u.frame.locator('.bb-review-choice[data-review="since"]').textContent(), "Changes since you last reviewed Unreviewed");
  const none = await diff("diff-view");
  assert.equal(await none.frame.locator(".bb-review").count(), 0);
  await u.page.close();
  await none.page.close();
});

// Issue 54 item 2: a press on a line of an inline diff (the start of a drag that selects) neither grows the frame nor
// scrolls it: the focus a press gives the file's section is not a keyboard move to bring into view.
test("inline, pressing a line and dragging selects those lines: the frame neither grows, scrolls nor turns into a scroll box", async () => {
  const { frame, page } = await diff("diff-view", { width: 700 });
  const clip = frame.locator(".bb-clip");
  const state = () => clip.evaluate((c) => ({ h: c.getBoundingClientRect().height, top: c.scrollTop, scrolls: c.classList.contains("bb-scrolls") }));
  const before = await state();
  assert.deepEqual([before.top, before.scrolls], [0, false]);
  // The code lines drawn above the frame's edge: the press is on the first, the drag ends on the third.
  const seen = await frame.locator("tr.bb-dl").evaluateAll((rows) => {
    const edge = document.querySelector(".bb-clip").getBoundingClientRect().bottom;
    return rows.map((r, i) => (r.getBoundingClientRect().bottom < edge - 2 ? i : -1)).filter((i) => i >= 0);
  });
  assert.ok(seen.length >= 3, `three lines shown inline (${seen})`);
  const first = frame.locator("tr.bb-dl").nth(seen[0]).locator(".bb-dcode");
  const last = frame.locator("tr.bb-dl").nth(seen[2]).locator(".bb-dcode");
  const a = await first.boundingBox();
  const b = await last.boundingBox();
  await page.mouse.move(a.x + 2, a.y + a.height / 2);
  await page.mouse.down();
  // Two frames for the focus handler's work to land, if it would.
  await frame.locator("body").evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  assert.deepEqual(await state(), before, "the press moved nothing");
  await page.mouse.move(b.x + b.width - 2, b.y + b.height / 2, { steps: 5 });
  await page.mouse.up();
  const selected = await frame.locator("body").evaluate(() => String(document.getSelection()));
  const want = [(await first.textContent()).trim(), (await last.textContent()).trim().slice(-12)];
  assert.ok(want.every((w) => w && selected.includes(w)), `the drag selected the lines it crossed (${JSON.stringify(want)}): ${JSON.stringify(selected.slice(0, 300))}`);
  assert.deepEqual(await state(), before, "nor did the drag");
  await shot(page, "diff-press-drag-700-light");
});

// Issue 54 item 10: a moved file whose lines changed names the path it came from in its header, as a copy's does,
// inline and in full screen.
test("a moved or copied file with changed lines names where it came from in its header, inline and in full screen", async () => {
  const data = fixture("diff-view");
  Object.assign(data.diff.files[0], { type: "MOVE", srcPath: "lib/client.rs" });
  Object.assign(data.diff.files[1], { type: "COPY", srcPath: "src/backoff.rs" });
  for (const mode of [{ width: 700 }, { displayMode: "fullscreen", width: 1000 }]) {
    const v = await open(browser, { mount: { input: data.call, result: result(data), ...mode } });
    await v.frame.locator(".bb-diffview").waitFor({ timeout: 10000 });
    const head = v.frame.locator('.bb-file[data-file="src/client.rs"] .bb-fhead');
    assert.equal(await head.locator(".bb-fsrc").textContent(), "from lib/client.rs");
    assert.ok(await v.frame.locator('.bb-file[data-file="src/client.rs"] tr.bb-dl').count() > 0, "its changed lines drawn");
    if (!mode.displayMode) assert.equal(await v.frame.locator('.bb-file[data-file="src/retry.rs"] .bb-fsrc').textContent(), "from src/backoff.rs");
    await shot(v.page, `diff-moved-from-${mode.displayMode || "700"}`);
    await v.page.close();
  }
});
