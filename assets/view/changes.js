// What changed in a view, in words, each with where it is drawn: the model is told them in one line
// (ui/update-model-context), and the person sees the same words in one line ("New: …") with a button
// to the first changed item, read out by a polite live region that is in the page before its words.
const changes = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const arr = (x) => (Array.isArray(x) ? x.filter((i) => i && typeof i === "object") : []);
  const BUILD = { SUCCESSFUL: "passed", FAILED: "failed", INPROGRESS: "started", CANCELLED: "was cancelled", UNKNOWN: "is in an unknown state" };
  const STATE = { MERGED: "was merged", DECLINED: "was declined", OPEN: "was reopened" };
  const SHOWN_MS = 10000; // the person's line stays this long, and while focus is in it
  const at = (attr, value) => `[${attr}="${CSS.escape(String(value))}"]`;

  function comments(pr) {
    const out = new Map();
    const stack = arr(obj(pr.activity).items).map((i) => obj(i.comment));
    for (let guard = 0; stack.length && guard < 100000; guard++) {
      const c = stack.pop();
      if (Number.isInteger(c.id)) out.set(c.id, c.author);
      stack.push(...arr(c.replies));
    }
    return out;
  }

  // [words, selector of where it is drawn] for each change of a pull request.
  function card(o, n, users) {
    const pr = `PR #${n.id}`;
    const name = (slug) => person(users, slug).name;
    const out = [];
    if (o.state !== n.state) out.push([`${pr} ${STATE[n.state] || "changed state"}`, ".bb-title"]);
    const was = new Map(arr(obj(o.builds).items).map((b) => [b.key, b.state]));
    for (const b of arr(obj(n.builds).items)) {
      if (was.get(b.key) !== b.state) out.push([`Build ${String(b.key).slice(0, 100)} on ${pr} ${BUILD[b.state] || "changed"}`, `.bb-build${at("data-key", b.key)}`]);
    }
    const had = new Map(arr(o.reviewers).map((r) => [r.user, r.status]));
    for (const r of arr(n.reviewers)) {
      if (had.get(r.user) === r.status) continue;
      out.push([`${name(r.user)} ${r.status === "APPROVED" ? "approved" : r.status === "NEEDS_WORK" ? "marked it as needing work"
        : had.has(r.user) ? "marked it as unapproved" : "was added as a reviewer"}`, ".bb-reviewer"]);
    }
    const RESULT = { PASS: "passed", FAIL: "failed" };
    const ran = new Map(arr(obj(o.insights).reports).map((r) => [r.key, r.result ?? null]));
    for (const r of arr(obj(n.insights).reports)) {
      if (ran.get(r.key) !== (r.result ?? null)) out.push([`Report ${String(r.title || r.key).slice(0, 100)} ${RESULT[r.result] || "is pending"}`, `.bb-report${at("data-key", r.key)}`]);
    }
    const before = comments(o);
    const seen = new Set();
    for (const [id, a] of comments(n)) {
      if (!before.has(id) && !seen.has(a)) { seen.add(a); out.push([`${name(a)} commented`, at("data-comment", id)]); }
    }
    return out.length ? out : [[`${pr} changed`, ".bb-title"]];
  }

  // Every comment and reply a diff draws, by id: its author and its file.
  function diffComments(d) {
    const out = new Map();
    const stack = [];
    for (const f of arr(obj(d).diffs)) {
      for (const c of arr(f.fileComments)) stack.push([c, f.path]);
      for (const h of arr(f.hunks)) for (const l of arr(h.lines)) for (const c of arr(l.c)) stack.push([c, f.path]);
    }
    for (let guard = 0; stack.length && guard < 100000; guard++) {
      const [c, path] = stack.pop();
      if (Number.isInteger(c.id)) out.set(c.id, { author: c.author, path: String(path ?? "") });
      for (const r of arr(c.replies)) stack.push([r, path]);
    }
    return out;
  }

  // [words, selector, file] for each change of a pull request's diff: who commented where (Bitbucket's page
  // names them too), new commits, else that it changed.
  function diff(o, n, users) {
    const out = [];
    if (o.head && n.head && o.head !== n.head) out.push([`New commits on ${String(obj(n.source).branch || "the source branch").slice(0, 200)}`]);
    const before = diffComments(o);
    const seen = new Set();
    for (const [id, c] of diffComments(n)) {
      const key = `${c.author}\u0000${c.path}`;
      if (before.has(id) || seen.has(key)) continue;
      seen.add(key);
      out.push([`${person(users, c.author).name} commented on ${c.path.slice(0, 300)}`, at("data-comment-id", id), c.path]);
    }
    return out.length ? out : [[`The diff of PR #${n.id} changed`]];
  }

  // The changes from `old` to `neu`: their words for the model, and each with where it is drawn.
  function describe(old, neu) {
    let parts;
    if (neu.kind === "pull_request" && old.kind === "pull_request") parts = card(obj(old.pullRequest), obj(neu.pullRequest), obj(neu.users));
    else if (neu.kind === "diff" && old.kind === "diff") parts = diff(obj(old.diff), obj(neu.diff), obj(neu.users));
    else if (neu.kind === "diff") parts = [[`The diff of PR #${obj(neu.diff).id} changed`]];
    else if (neu.kind === "file") parts = [[`${String(obj(neu.file).path).slice(0, 300)} at ${String(obj(neu.file).atLabel || "the default branch").slice(0, 200)} changed`]];
    else if (neu.kind === "compare") parts = [[`The diff of ${obj(obj(neu.diff).compare).from} against ${obj(obj(neu.diff).compare).to} changed`]];
    else {
      const was = new Map(arr(obj(old.list).items).map((i) => [i.id, JSON.stringify(i)]));
      const row = arr(obj(neu.list).items).find((i) => was.get(i.id) !== JSON.stringify(i));
      parts = [[`${String(obj(neu.list).title || "The list of pull requests").slice(0, 200)} changed`, row && Number.isInteger(row.id) ? `.bb-row${at("data-id", `#${row.id}`)}` : null]];
    }
    return { text: parts.map((p) => p[0]).join("; "), parts };
  }

  const words = el("span", { class: "bb-told-words", "aria-live": "polite" });
  const go = el("button", { type: "button", class: "bb-told-go", hidden: "" }, "Show");
  const line = el("span", { class: "bb-told" }, words, go);
  let timer = null;
  let target = null; // where the first change that is drawn is
  function clear() {
    if (line.contains(document.activeElement)) { line.addEventListener("focusout", clear, { once: true }); return; }
    clearTimeout(timer);
    words.textContent = "";
    go.hidden = true;
    line.classList.remove("bb-told-on");
  }
  // Scrolls to what `selector` names and gives it focus, opening the collapsed threads around it.
  function reveal(selector) {
    const found = selector ? root.querySelector(selector) : null;
    if (!found) return false;
    for (let d = found.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    if (!found.hasAttribute("tabindex")) found.tabIndex = -1;
    // Inline, the view's clip grows to what has focus (grow.js) and the host sizes the frame to it: scrolling
    // the frame's own document there would leave it scrolled once the frame has grown. Elsewhere, scroll to it.
    found.focus({ preventScroll: true });
    if (!found.closest(".bb-clip")) found.scrollIntoView({ block: "nearest" });
    return true;
  }
  go.addEventListener("click", () => {
    const t = target;
    clear();
    reveal(t);
  });

  // The model's context says the last change (context.js keeps it beside the person's selection).
  function tell(text) {
    if (!text || page.gone) return;
    modelContext.set("change", text, null, true);
  }
  // Shows the person a change (describe's) once the view is drawn again; null takes it away.
  function show(change) {
    if (!change) return clear();
    setTimeout(() => {
      if (page.gone || !line.isConnected) return;
      clearTimeout(timer);
      words.textContent = `New: ${change.parts.map((p) => p[0]).join(" · ")}`;
      target = (change.parts.find((p) => p[1] && root.querySelector(p[1])) || [])[1] || null;
      go.hidden = !target;
      line.classList.add("bb-told-on");
      timer = setTimeout(clear, SHOWN_MS);
    }, 50);
  }
  // The first change of `change` drawn in the view now: focus goes there.
  function goTo(change) {
    for (const p of change.parts) if (p[1] && reveal(p[1])) return true;
    return false;
  }
  return { describe, tell, show, goTo, line };
})();
