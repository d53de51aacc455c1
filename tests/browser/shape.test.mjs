// Issue 12, the page half: what needs the person up front (the merge check's "Merge issues"), one
// shape inline that grows a step through the host, nothing cut mid-line at the first screen, each
// build once, each reply once, bidi controls visible, accessible statuses, errors a person can act on.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot, texts, until } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function mount(name, mount = {}, edit = (d) => d, wait = ".bb-flow, main.bb-fullscreen > *") {
  const data = edit(fixture(name));
  const v = await open(browser, { mount: { input: data.call, result: result(data), width: 700, ...mount } });
  await v.frame.locator(wait).first().waitFor({ timeout: 10000 });
  await v.page.waitForTimeout(300);
  return { ...v, data };
}
const frameHeight = (v) => v.page.locator("iframe#view").evaluate((f) => f.getBoundingClientRect().height);

// Every line of text the view's bottom edge crosses (the clip's edge or the frame's, whichever is
// higher), each line clipped first by the boxes that hide their overflow.
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
      let top = -Infinity;
      let bottom = Infinity;
      for (let e = t.parentElement; e && e !== clip; e = e.parentElement) {
        if (getComputedStyle(e).overflowY !== "visible") { const r = e.getBoundingClientRect(); top = Math.max(top, r.top); bottom = Math.min(bottom, r.bottom); }
      }
      range.selectNodeContents(t);
      for (const r of range.getClientRects()) {
        const a = Math.max(r.top, top);
        const b = Math.min(r.bottom, bottom);
        if (b - a >= 1 && a < edge - 0.5 && b > edge + 0.5) cut.push(`${t.data.slice(0, 40)} [${a.toFixed(1)}–${b.toFixed(1)} over ${edge.toFixed(1)}]`);
      }
    }
    return cut;
  });
}

test("an open pull request Bitbucket will not merge shows its Merge issues up front, conflict first, and Merge blocked", async () => {
  const v = await mount("pr-open");
  const { frame } = v;
  const panel = frame.locator(".bb-merge");
  assert.equal(await panel.locator("h3").textContent(), "Merge issues");
  assert.equal(await panel.locator(".bb-merge-sentence").textContent(), "There are 3 issues preventing you from merging this pull request.");
  assert.deepEqual(await texts(panel.locator(".bb-veto .bb-veto-text")), [
    "You will need to resolve conflicts to be able to merge.",
    "You need to resolve 2 open tasks before merging.",
    "You need 1 more successful build.",
  ]);
  assert.deepEqual(await panel.locator(".bb-veto").evaluateAll((n) => n.map((x) => x.dataset.need)), ["conflict", "veto", "veto"]);
  assert.equal(await panel.locator(".bb-warn-icon").count(), 3, "a warning icon on each row");
  // Up front: inside the first screen, before any click.
  const [bottom, edge] = await frame.locator("body").evaluate(() => [document.querySelector(".bb-merge").getBoundingClientRect().bottom, document.querySelector(".bb-clip").getBoundingClientRect().bottom]);
  assert.ok(bottom <= edge, `the issues are on the first screen (${bottom} ≤ ${edge})`);
  const merge = frame.getByRole("button", { name: "Merge", exact: true });
  assert.equal(await merge.getAttribute("aria-disabled"), "true");
  assert.equal(await merge.getAttribute("title"), "This pull request can't be merged. Click for details.");
  await merge.click({ force: true }); // aria-disabled: Playwright would wait for it to be enabled
  assert.equal(await panel.evaluate((p) => p === document.activeElement), true, "Merge shows its issues");
  assert.deepEqual(v.errors, []);

  const one = await mount("pr-required");
  assert.equal(await one.frame.locator(".bb-merge-sentence").textContent(), "There is 1 issue preventing you from merging this pull request.");
  assert.equal(await one.frame.getByRole("button", { name: "Merge", exact: true }).getAttribute("title"), "Not all required builds are successful yet");

  const conflictOnly = await mount("pr-open", {}, (d) => { d.pullRequest.mergeCheck.vetoes = []; return d; });
  assert.equal(await conflictOnly.frame.getByRole("button", { name: "Merge", exact: true }).getAttribute("title"), "You will need to resolve conflicts to be able to merge.");
  assert.equal(await conflictOnly.frame.locator(".bb-merge-sentence").textContent(), "There is 1 issue preventing you from merging this pull request.");

  for (const name of ["pr-draft", "pr-merged", "pr-declined"]) {
    const clean = await mount(name);
    assert.equal(await clean.frame.locator(".bb-merge, .bb-merge-btn").count(), 0, `${name}: nothing blocks, nothing said`);
  }
});

test("inline, the view is one screen high and a Show more below it grows the frame a step through the host, up to what it allows", async () => {
  const v = await mount("pr-open", { maxHeight: 1300 });
  const { frame, page, log } = v;
  const first = await frameHeight(v);
  assert.ok(first >= 480 && first <= 562, `about one screen: ${first}`);
  const grow = frame.locator(".bb-foot .bb-grow");
  const visible = async () => grow.evaluate((b) => { const r = b.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; });
  assert.equal(await visible(), true, "the control that grows the view is in the frame");
  const sent = (await log()).sizes.length;
  await grow.click();
  const second = await until("the frame grew a step", async () => { const h = await frameHeight(v); return h > first + 150 ? h : null; });
  const sizes = (await log()).sizes;
  assert.ok(sizes.length > sent && sizes[sizes.length - 1] > first, `size-changed sent with a taller height (${sizes.slice(sent)})`);
  assert.ok(second > first + 150, `the frame grew a step: ${first} → ${second}`);
  assert.equal(await visible(), true, "still visible after growing");
  assert.equal(await grow.evaluate((b) => b === document.activeElement), true, "focus stays on the control");
  assert.deepEqual(await cutLines(frame), [], "the new edge crosses no line either");
  // Each step waits for the host's new height before the next; the last step may leave nothing to grow.
  for (let i = 0; i < 6 && (await grow.count()); i++) {
    const was = await frameHeight(v);
    await grow.click();
    await until("the step took effect", async () => (await grow.count()) === 0 || (await frameHeight(v)) > was || was >= 1299);
  }
  const last = await frameHeight(v);
  assert.ok(last <= 1302, `never taller than the host allows: ${last}`);
  assert.ok((await log()).sizes.every((h) => h <= 1300));
  await shot(page, "shape-card-grown");
});

test("a host that fixes the frame's height gets a view of that height that scrolls inside, with the rest offered", async () => {
  const v = await mount("pr-open", { height: 420 });
  // The inside scrolls in a box cut at a line's edge (grow.js snap), so the view fills the height to within a line.
  const body = await v.frame.locator("body").evaluate((b) => b.getBoundingClientRect().height);
  assert.ok(body <= 422 && body >= 420 - 24, `body ${body} in a 420 px frame`);
  assert.equal(await v.frame.locator(".bb-foot .bb-grow").count(), 0);
  assert.equal(await v.frame.locator(".bb-scroll-note").textContent(), "Scroll for the rest");
  assert.equal(await v.frame.getByRole("button", { name: "Show all in full screen" }).count(), 1);
  assert.deepEqual(await cutLines(v.frame), []);
});

test("nothing is cut mid-line at the first screen: the card, the list, the required builds, a hostile card", async () => {
  for (const name of ["pr-open", "pr-required", "list-open", "pr-hostile", "pr-merged"]) {
    for (const width of [700, 480]) {
      const v = await mount(name, { width });
      assert.deepEqual(await cutLines(v.frame), [], `${name} at ${width} px`);
      assert.ok((await frameHeight(v)) <= 602, `${name} at ${width} px stays one screen`);
    }
  }
});

test("each build once, each reply once, the reviewers' statuses as text", async () => {
  const v = await mount("pr-open", { displayMode: "fullscreen" });
  const { frame, data } = v;
  const keys = await frame.locator(".bb-builds > li.bb-build").evaluateAll((n) => n.map((x) => x.dataset.key));
  // Failed first, then in progress, then the rest, each group in the order the result carries them.
  const rank = { FAILED: 0, INPROGRESS: 1 };
  const order = data.pullRequest.builds.items.map((b, i) => [rank[b.state] ?? 3, i, b.key]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((x) => x[2]);
  assert.deepEqual(keys, order, "every build the result carries, once");
  assert.equal(await frame.locator(".bb-build-counts [data-state=FAILED]").textContent(), "✕ 1 failed");
  assert.equal(await frame.locator('.bb-build[data-state="FAILED"]').count(), 1, "the failed build is drawn once, as the summary counts it");
  // The reply 21 arrives both inside Bob's thread and as an activity of its own: drawn once, in its thread.
  assert.equal(await frame.locator('[data-comment="21"]').count(), 1);
  assert.equal(await frame.locator('[data-comment="20"] [data-comment="21"]').count(), 1);
  assert.equal(await frame.locator('.bb-act[data-comment-action="REPLIED"]').count(), 1, "only the reply whose thread is not on the page");
  // Reviewers: names and statuses are text, in the accessibility tree.
  const tree = await frame.locator(".bb-reviewers").ariaSnapshot();
  for (const words of ["Bob Builder", "Approved", "Carol Reviewer", "Needs work", "Dave Doe"]) assert.match(tree, new RegExp(words));
});

test("inline, reviewers past the first four fold into +N, and opening them keeps focus on the next", async () => {
  const v = await mount("pr-open", {}, (d) => {
    d.users.frank = { name: "Frank Fifth", initials: "FF", url: "https://git.example.com/bitbucket/users/frank" };
    d.users.gina = { name: "Gina Sixth", initials: "GS" };
    d.pullRequest.reviewers.push({ user: "frank", status: "UNAPPROVED" }, { user: "gina", status: "UNAPPROVED" });
    return d;
  });
  const more = v.frame.getByRole("button", { name: "Show 2 more reviewers" });
  assert.equal(await more.textContent(), "+2");
  assert.equal(await v.frame.locator(".bb-reviewer").count(), 4);
  await more.click();
  assert.equal(await v.frame.locator(".bb-reviewer").count(), 6);
  assert.equal(await v.frame.locator(".bb-reviewer").nth(4).evaluate((n) => n === document.activeElement), true);
});

test("links: the title to the pull request, branches to their branch, people to their profile, all through the host", async () => {
  const v = await mount("pr-open", { displayMode: "fullscreen" });
  await v.frame.locator(".bb-title a").click();
  await v.frame.locator(".bb-meta .bb-branch").first().click();
  await v.frame.locator(".bb-meta .bb-branch").last().click();
  await v.frame.locator(".bb-meta .bb-name").click();
  await v.frame.locator(".bb-reviewer .bb-name").first().click();
  assert.deepEqual((await v.log()).links, [
    "https://git.example.com/bitbucket/projects/BB/repos/api/pull-requests/1",
    "https://git.example.com/bitbucket/projects/BB/repos/api/browse?at=refs%2Fheads%2Ffeature/paging",
    "https://git.example.com/bitbucket/projects/BB/repos/api/browse?at=refs%2Fheads%2Fmain",
    "https://git.example.com/bitbucket/users/alice",
    "https://git.example.com/bitbucket/users/bob",
  ]);
});

test("bidirectional control characters in a title, a branch, a path and a comment are drawn visibly", async () => {
  const RLO = "\u202E";
  const v = await mount("pr-open", { displayMode: "fullscreen" }, (d) => {
    d.pullRequest.title = `Add invoice ${RLO}gnp.exe`;
    d.pullRequest.source.branch = `fix/${RLO}txt.sh`;
    const c = d.pullRequest.activity.items.find((i) => i.comment && i.comment.anchor).comment;
    c.anchor.path = `src/\u2067evil\u2069.rs`;
    c.text = [{ t: "p", c: [`See ${RLO}fdp.bat`] }];
    return d;
  });
  const { frame } = v;
  assert.equal(await frame.locator(".bb-title").textContent(), "Add invoice ⟨U+202E⟩gnp.exe");
  assert.equal(await frame.locator(".bb-title .bb-bidi").getAttribute("title"), "Hidden bidirectional control character U+202E (right-to-left override)");
  assert.equal(await frame.locator(".bb-meta .bb-branch bdi").first().textContent(), "fix/⟨U+202E⟩txt.sh");
  assert.match(await frame.locator(".bb-anchor").first().textContent(), /src\/⟨U\+2067⟩evil⟨U\+2069⟩\.rs/);
  assert.ok(await frame.getByText("⟨U+202E⟩", { exact: true }).count() >= 3);
  assert.match(await frame.locator(".bb-card").textContent(), /See ⟨U\+202E⟩fdp\.bat/);
  assert.equal(await frame.locator("main").evaluate((m) => /[\u202A-\u202E\u2066-\u2069]/.test(m.textContent)), false);
  // The token reads left to right: "gnp.exe" is drawn after it, not reversed into "exe.png".
  const order = await frame.locator(".bb-title .bb-bidi").evaluate((b) => {
    const r = document.createRange();
    r.selectNodeContents(b.nextSibling);
    return r.getBoundingClientRect().left >= b.getBoundingClientRect().right - 1;
  });
  assert.equal(order, true);
  await shot(v.page, "bidi-fullscreen");
});

test("a dark avatar keeps an edge in the dark theme, and the approval tick reaches 4.5:1", async () => {
  const v = await mount("pr-open", { theme: "dark" });
  const edge = await v.frame.locator(".bb-face").first().evaluate((f) => getComputedStyle(f).boxShadow);
  assert.match(edge, /rgba\(255, 255, 255, 0\.\d+\) 0px 0px 0px 1px/);
  const ratio = await v.frame.locator(".bb-badge.bb-approved").first().evaluate((b) => {
    const rgb = (c) => c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
    const lum = (c) => { const [r, g, bl] = rgb(c).map((x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * bl; };
    const st = getComputedStyle(b);
    const [a, c] = [lum(st.color), lum(st.backgroundColor)].sort((x, y) => y - x);
    return (a + 0.05) / (c + 0.05);
  });
  assert.ok(ratio >= 4.5, `tick contrast ${ratio.toFixed(2)}`);
});

test("an error says what went wrong in words, with the pull request's address in Bitbucket, not a REST path in red monospace", async () => {
  const error = {
    isError: true,
    content: [{ type: "text", text: "Pull request #99 does not exist in BB/api.\n\nBitbucket answered 404 for https://git.example.com/bitbucket/rest/api/1.0/projects/BB/repos/api/pull-requests/99/activities." }],
    _meta: { "bb/view": { server: { url: "https://git.example.com/bitbucket" } } },
  };
  const v = await open(browser, { mount: { input: { kind: "pull_request", project: "BB", repo: "api", pr_id: 99 }, result: error } });
  await v.frame.locator(".bb-problem").waitFor();
  assert.equal(await v.frame.locator(".bb-problem h2").textContent(), "bb could not show pull request #99");
  assert.equal(await v.frame.locator(".bb-problem p").first().textContent(), "Pull request #99 does not exist in BB/api.");
  assert.equal(await v.frame.locator(".bb-problem pre, .bb-problem code").count(), 0, "no monospace");
  assert.doesNotMatch(await v.frame.locator(".bb-problem").textContent(), /\/rest\/api/, "no REST path");
  await v.frame.getByRole("link", { name: "Open it in Bitbucket" }).click();
  assert.deepEqual((await v.log()).links, ["https://git.example.com/bitbucket/projects/BB/repos/api/pull-requests/99"]);
  await shot(v.page, "error-inline");
});

test("screenshots: card and list at a chat's width (700 px) and fullscreen, light and dark", async () => {
  for (const theme of ["light", "dark"]) {
    for (const name of ["pr-open", "list-open", "pr-required"]) {
      const inline = await mount(name, { theme, width: 700 });
      assert.deepEqual(inline.errors, []);
      await shot(inline.page, `shot-${name}-700-${theme}`);
      const full = await mount(name, { theme, displayMode: "fullscreen" });
      await shot(full.page, `shot-${name}-fullscreen-${theme}`);
    }
  }
});
