// Two refs' diff (show kind compare) driven by bb itself against the stand-in: Bitbucket's Compare page,
// its Diff tab — "Compare", source → destination, the files and their highlighted hunks — with no
// comments and no pull request actions; at chat width (700 px) and fullscreen, light and dark; a ref
// that does not exist in Bitbucket's words with the compare page to open.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { launch, open, realErrors, shot, startBb, texts, view } from "./harness.mjs";

let browser;
let bb;
before(async () => {
  // These tests look at what bb highlights, not at when: on a loaded machine the first diff of a fresh
  // process can pass the 150 ms default while its grammar compiles, and go out plain (live.test.mjs
  // tests the deadline and the classes that follow it).
  bb = await startBb({ bbArgs: ["--highlight-deadline", "30s"] });
  browser = await launch({ loopback: true });
});
after(async () => {
  await browser?.close();
  await bb?.stop();
});

const COMPARE = { kind: "compare", project: "BB", repo: "api", from_ref: "feature/retry", to_ref: "main" };

async function show(args, mount = {}, wait = ".bb-diffview") {
  const v = await open(browser, { bb: bb.mcp, show: args, mount, colorScheme: mount.theme === "dark" ? "dark" : "light" });
  await v.frame.locator(wait).waitFor({ timeout: 15000 });
  assert.ok(v.bb.html === view(), "bb serves the page of this tree (if not, target/debug/bb is stale: cargo build -p bb)");
  assert.deepEqual(v.requests, [], "nothing else was requested, by the host page or the view");
  await v.page.waitForTimeout(200);
  return { ...v, data: v.bb.result._meta["bb/view"] };
}

// Nothing of a pull request's: no comments, no comment marks, no Reply or Resolve, no Overview tab.
async function noPullRequestParts(frame) {
  for (const sel of ["[data-comment-id]", ".bb-threads", ".bb-dmark-comments", ".bb-comment-actions", ".bb-act-reply", ".bb-tabs:not(.bb-cmp-tabs)", ".bb-id", ".bb-meta .bb-loz"]) {
    assert.equal(await frame.locator(sel).count(), 0, `${sel} is not drawn`);
  }
}

// Every text line the view's bottom edge crosses (the frame's edge, or a capped box's).
function cutLines(frame) {
  return frame.locator("body").evaluate(() => {
    const main = document.querySelector("main");
    const clip = document.querySelector(".bb-clip") || main;
    const edge = Math.min(clip.getBoundingClientRect().bottom, window.innerHeight);
    const cut = [];
    const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (!t.data.trim() || t.parentElement.closest(".bb-sr")) continue;
      range.selectNodeContents(t);
      for (const r of range.getClientRects()) if (r.top < edge - 0.5 && r.bottom > edge + 0.5) cut.push(t.data.slice(0, 40));
    }
    return cut;
  });
}

test("inline at 700 px: Compare, source → destination, each file once with its hunks, counts as drawn", async () => {
  for (const theme of ["light", "dark"]) {
    const { frame, page, data, errors } = await show(COMPARE, { width: 700, theme });
    const d = data.diff;
    assert.equal(data.kind, "compare");
    assert.equal(await frame.locator(".bb-dtitle").textContent(), "Compare", "the tabs below say Diff");
    assert.equal(await frame.locator(".bb-dtitle a").getAttribute("href"), d.compare.url);
    assert.deepEqual(await texts(frame.locator(".bb-meta .bb-branch bdi")), ["feature/retry", "main"]);
    assert.deepEqual(await texts(frame.locator(".bb-meta .bb-branch .bb-sr")), ["source ref:", "target ref:"], "a short name is a ref: Bitbucket takes a branch, else a tag");
    const paths = d.files.map((f) => f.path);
    assert.deepEqual(await texts(frame.locator(".bb-flist .bb-fbtn bdi")), paths, "every file listed once, in Bitbucket's order");
    assert.equal(await frame.locator('[data-count="files"]').textContent(), `${paths.length} files changed`);
    for (const p of paths) assert.ok((await frame.locator(`section.bb-file[data-file="${p}"]`).count()) <= 1, `${p} drawn at most once`);
    // The tally says what is drawn: its lines are the code rows on the page.
    const rows = await frame.locator("tr.bb-dl").count();
    const all = d.diffs.reduce((n, f) => n + (f.hunks || []).reduce((m, h) => m + h.lines.length, 0), 0);
    const tally = await frame.locator(".bb-tally-lines").textContent();
    assert.ok(tally === `${all} lines in ${d.diffs.length} files.` || tally.startsWith(`${rows} of ${all} lines drawn here`), tally);
    assert.ok(await frame.locator(".bb-tk-kw").count() > 0, "highlighted by bb");
    await noPullRequestParts(frame);
    assert.deepEqual(await cutLines(frame), [], "nothing cut mid-line at the view's edge");
    assert.deepEqual(realErrors(errors), []);
    await shot(page, `compare-700-${theme}`);
    await page.close();
  }
});

test("fullscreen: the file tree beside one file, previous and next, unified and side-by-side, light and dark", async () => {
  for (const theme of ["light", "dark"]) {
    const { frame, page, data, errors } = await show(COMPARE, { displayMode: "fullscreen", width: 1000, theme }, ".bb-pane");
    const paths = data.diff.files.map((f) => f.path);
    assert.deepEqual((await texts(frame.locator(".bb-tree .bb-tbtn .bb-tname"))).sort(), paths.map((p) => p.split("/").pop()).sort());
    await frame.locator('.bb-tbtn[data-path="src/client.rs"]').click();
    assert.equal(await frame.locator(".bb-pane").getAttribute("data-path"), "src/client.rs");
    assert.match(await frame.locator(".bb-fpos").textContent(), new RegExp(`^[1-9] of ${paths.length}$`));
    assert.equal(await frame.locator(".bb-pane section.bb-file").count(), 1, "one file at a time");
    assert.equal(await frame.locator(".bb-hide-btn").count(), 0, "no comments to hide");
    assert.equal(await frame.locator(".bb-pane").getAttribute("data-layout"), "unified");
    assert.equal(await frame.locator(".bb-pane tr.bb-dl").count(), data.diff.diffs.find((f) => f.path === "src/client.rs").hunks.reduce((n, h) => n + h.lines.length, 0), "the whole file");
    await noPullRequestParts(frame);
    await shot(page, `compare-fullscreen-${theme}`);
    await frame.locator('.bb-segbtn[data-focus="sbs"]').click();
    assert.equal(await frame.locator(".bb-pane").getAttribute("data-layout"), "side-by-side");
    if (theme === "light") await shot(page, "compare-sbs-fullscreen-light");
    await frame.locator('.bb-segbtn[data-focus="unified"]').click();
    await frame.locator(".bb-next").click();
    assert.notEqual(await frame.locator(".bb-pane").getAttribute("data-path"), "src/client.rs", "Next file");
    assert.deepEqual(realErrors(errors), []);
    await page.close();
  }
});

test("the Commits tab: the commits the source has that the destination lacks, newest first, linked to Bitbucket; Diff again", async () => {
  for (const [mode, theme] of [["inline", "light"], ["fullscreen", "dark"]]) {
    const { frame, page, data, errors, log } = await show(COMPARE, mode === "inline" ? { width: 700, theme } : { displayMode: "fullscreen", width: 1000, theme }, mode === "inline" ? ".bb-diffview" : ".bb-pane");
    const c = data.diff.commits;
    assert.ok(c.items.length >= 2, "the stand-in's feature/retry has commits main lacks");
    const tabs = frame.locator(".bb-cmp-tabs .bb-tab");
    assert.deepEqual(await texts(tabs), ["Diff", `Commits ${c.items.length}`]);
    assert.equal(await frame.locator('.bb-cmp-tabs [aria-current="page"]').textContent(), "Diff", "the diff first, as compare_refs was asked for");
    await frame.getByRole("button", { name: /^Commits/ }).click();
    await frame.locator(".bb-cmt").first().waitFor();
    assert.equal(await frame.locator(".bb-file, .bb-pane").count(), 0, "the diff gives way to the list");
    assert.deepEqual(await texts(frame.locator(".bb-cmt-msg")), c.items.map((x) => x.message), "every commit, in Bitbucket's order");
    assert.deepEqual(await texts(frame.locator(".bb-cmt .bb-hash")), c.items.map((x) => x.short));
    assert.equal(await frame.locator(".bb-meta .bb-branch").count(), 2, "source → destination stays above the tabs");
    await frame.locator(".bb-cmt .bb-hash").first().click();
    assert.deepEqual((await log()).links, [c.items[0].url], "a commit opens in Bitbucket, through the host");
    assert.match(c.items[0].url, /\/projects\/BB\/repos\/api\/commits\/[0-9a-f]{40}$/);
    await shot(page, `compare-commits-${mode === "inline" ? "700" : "fullscreen"}-${theme}`);
    await frame.getByRole("button", { name: "Diff", exact: true }).click();
    await frame.locator(mode === "inline" ? ".bb-file" : ".bb-pane").first().waitFor();
    assert.equal(await frame.locator(".bb-cmt").count(), 0);
    assert.deepEqual(realErrors(errors), []);
    await page.close();
  }
});

test("two tags with no pull request between them: the commits between, as Bitbucket's compare shows them", async () => {
  const { frame, page, errors } = await show({ kind: "compare", project: "BB", repo: "api", from_ref: "refs/tags/v0.2.0", to_ref: "v0.1.0" }, { width: 700 });
  assert.deepEqual(await texts(frame.locator(".bb-flist .bb-fbtn bdi")), ["CHANGELOG.md"]);
  assert.deepEqual(await texts(frame.locator(".bb-meta .bb-branch bdi")), ["v0.2.0", "v0.1.0"]);
  assert.deepEqual(await texts(frame.locator(".bb-meta .bb-branch .bb-sr")), ["source tag:", "target ref:"], "a tag is not called a branch");
  const added = await texts(frame.locator("tr.bb-dl-A .bb-dcode"));
  assert.equal(added.length, 2, "one line for each commit v0.2.0 has and v0.1.0 lacks");
  assert.match(added[0], /- Add paging \(7\) \([0-9a-f]{7}\)$/);
  assert.match(added[1], /- Release 0\.2 \(8\) \([0-9a-f]{7}\)$/);
  assert.deepEqual(realErrors(errors), []);
  await page.close();
});

test("a ref that does not exist: Bitbucket's words, the compare page to open, and Try again", async () => {
  const { frame, page, errors } = await show({ ...COMPARE, to_ref: "gone" }, { width: 700 }, ".bb-problem");
  assert.equal(await frame.locator(".bb-problem-title").textContent(), "bb could not show feature/retry against gone");
  assert.match(await frame.locator(".bb-problem").textContent(), /Commit 'gone' does not exist in this repository\./);
  assert.match(await frame.locator(".bb-open-in").getAttribute("href"), /\/projects\/BB\/repos\/api\/compare\/diff\?sourceBranch=feature%2Fretry&targetBranch=gone$/);
  assert.equal(await frame.locator(".bb-retry").count(), 1);
  assert.deepEqual(realErrors(errors).filter((e) => !/isError|Commit 'gone'/.test(e)), []);
  await shot(page, "compare-missing-ref-700-light");
  await page.close();
});
