// A pull request's comment threads (kind threads, list_pr_comments' answer): every thread in any state, newest
// activity first, each drawn as Bitbucket's overview activity draws a comment (card.js's comment: replies, task,
// pending and edited marks, avatars, Reply and Resolve task), a line comment under the few diff lines leading to
// it as its activity carries them, and a resolved thread marked so. Bitbucket's own counts head it; the filters
// (All, Open tasks, Unresolved, Mine) narrow what is drawn, never the counts. "View in diff" opens the diff in
// place at the thread (its file chosen in full screen), and "← Back" comes back here.
const threadsView = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const arr = (x) => (Array.isArray(x) ? x.filter((i) => i && typeof i === "object") : []);
  const str = (x) => (typeof x === "string" ? x : "");
  const num = (x) => (Number.isInteger(x) ? x : null);
  const FILTERS = [["all", "All"], ["tasks", "Open tasks"], ["unresolved", "Unresolved"], ["mine", "Mine"]];
  const NONE = { all: "There are no comments on this pull request.", tasks: "No open tasks", unresolved: "No unresolved comments", mine: "You have not commented on this pull request." };
  const chosen = new Map(); // the filter the person chose, per pull request

  // Every comment of a thread: its root and all replies.
  function every(c) {
    const out = [];
    const stack = [c];
    for (let guard = 0; stack.length && guard < 100000; guard++) { const x = stack.pop(); out.push(x); stack.push(...arr(x.replies)); }
    return out;
  }
  const openTask = (c) => c.task === true && c.state !== "RESOLVED" && c.state !== "PENDING";
  const resolved = (c) => c.threadResolved === true || (c.task === true && c.state === "RESOLVED");
  const TESTS = {
    all: () => true,
    tasks: (t) => every(obj(t.comment)).some(openTask),
    unresolved: (t) => !resolved(obj(t.comment)),
    mine: (t, you) => Boolean(you) && every(obj(t.comment)).some((c) => c.author === you),
  };

  // The diff lines leading to a line comment, as its activity carries them; the last is the commented line.
  const SIGNS = { ADDED: ["A", "+", "added: "], REMOVED: ["R", "-", "removed: "], CONTEXT: ["C", " ", ""] };
  function lines(list) {
    const rows = arr(list).map((l, i, all) => {
      const [t, sign, said] = SIGNS[l.t] || SIGNS.CONTEXT;
      const cell = (n) => el("td", { class: "bb-ln" }, num(n) === null ? "" : String(n));
      return el("tr", { class: `bb-dl-${t}${i === all.length - 1 ? " bb-tline-at" : ""}` }, cell(l.o), cell(l.n),
        el("td", { class: "bb-dcode" }, el("span", { class: "bb-sign", "aria-hidden": "true" }, sign), said ? sr(said) : null, codeLine.text(str(l.s))));
    });
    return rows.length ? el("div", { class: "bb-tlines" }, el("table", { class: "bb-dtable" }, el("tbody", {}, rows))) : null;
  }

  // Brings the thread into view in the diff just opened: its file chosen (full screen), the thread under its line,
  // else its file, else the top.
  function reveal(id, path) {
    const pick = [...root.querySelectorAll(".bb-tbtn")].find((b) => b.dataset.path === path);
    if (pick && pick.ariaCurrent !== "true") pick.click();
    const target = root.querySelector(`[data-comment-id="${id}"]`) || [...root.querySelectorAll(".bb-file")].find((x) => x.dataset.file === path);
    if (!target) { scrollTo(0, 0); return; }
    target.tabIndex = -1;
    target.focus({ preventScroll: true });
    target.scrollIntoView({ block: "center" });
  }

  function head(t, data) {
    const c = obj(t.comment);
    const a = obj(c.anchor);
    const path = str(a.path);
    const call = obj(data.call);
    const diff = { kind: "diff", project: call.project, repo: call.repo, pr_id: call.pr_id };
    const line = num(a.line);
    const from = num(a.from) !== null && line !== null && a.from < line ? a.from : null;
    const old = a.lineType === "REMOVED" || a.fileType === "FROM" ? " of the old file" : "";
    // An outdated thread is on no line of the diff: Bitbucket leaves it to the activity, and so does this.
    const open = path && Number.isInteger(c.id) && Number.isInteger(call.pr_id) && a.orphaned !== true && navigate.can(data, "diff")
      ? el("button", { type: "button", class: "bb-link-button bb-open-here bb-thread-open",
        onclick: (e) => navigate.open(diff, `The person opened ${navigate.named(diff)} at the comment thread #${c.id} on ${path.slice(0, 300)}`, e.currentTarget, () => reveal(c.id, path)) }, "View in diff")
      : null;
    const marks = [
      resolved(c) && c.task !== true ? el("span", { class: "bb-loz bb-plain bb-thread-resolved" }, "Resolved") : null,
      t.reply === true ? el("span", { class: "bb-muted" }, "A reply; its thread began earlier") : null,
    ].filter(Boolean);
    if (!path && !marks.length) return null;
    return el("div", { class: "bb-thead" },
      path ? el("span", { class: "bb-tpath" }, el("span", { class: "bb-i-file", "aria-hidden": "true" }), el("bdi", {}, path.slice(0, 500)),
        line !== null ? el("span", { class: "bb-muted" }, ` · ${review.lines(from, line)}${old}`) : null,
        a.orphaned === true ? [" ", el("span", { class: "bb-loz bb-moved", title: "This diff has changed in more recent commits" }, "Outdated")] : null) : null,
      marks.length ? el("span", { class: "bb-tmarks" }, marks) : null, open);
  }

  function thread(t, data, ctx) {
    const c = obj(t.comment);
    return el("li", { class: `bb-thread${resolved(c) ? " bb-is-resolved" : ""}`, "data-thread": num(c.id), "data-anchored": str(obj(c.anchor).path) ? "" : null },
      head(t, data), lines(t.lines), card.comment(c, ctx, 0));
  }

  function countsLine(t) {
    const k = obj(t.counts);
    const parts = [];
    if (fmt.isCount(k.comments)) parts.push(el("span", { class: "bb-tcount", "data-count": "comments" }, el("span", { class: "bb-i-comment", "aria-hidden": "true" }), fmt.count(k.comments, "comment", "comments")));
    if (fmt.isCount(k.openTasks)) {
      const words = k.openTasks > 0 ? fmt.count(k.openTasks, "open task", "open tasks") : fmt.isCount(k.resolvedTasks) && k.resolvedTasks > 0 ? "All tasks resolved" : "No open tasks";
      parts.push(el("span", { class: "bb-tcount", "data-count": "tasks" }, words));
    }
    return parts.length ? el("p", { class: "bb-tcounts bb-muted" }, parts.map((p, i) => [i ? " · " : "", p])) : null;
  }

  function draw(data, ctx) {
    const t = obj(data.threads);
    const call = obj(data.call);
    ctx = Object.assign({}, ctx, { data });
    const key = `${str(call.project)}/${str(call.repo)}#${call.pr_id}`;
    const you = str(t.you);
    const filter = TESTS[chosen.get(key)] && (chosen.get(key) !== "mine" || you) ? chosen.get(key) : "all";
    const all = arr(t.threads);
    const shown = all.filter((x) => TESTS[filter](x, you));
    const pick = (f) => () => { chosen.set(key, f); redraw(); const b = root.querySelector(`.bb-tfilters [data-filter="${f}"]`); if (b) b.focus(); };
    const filters = el("div", { class: "bb-seg bb-tfilters", role: "group", "aria-label": "Show" },
      FILTERS.filter(([f]) => f !== "mine" || you).map(([f, word]) => el("button", { type: "button", class: "bb-segbtn", "data-filter": f, "aria-pressed": String(f === filter),
        onclick: f === filter ? null : pick(f) }, word, " ", el("span", { class: "bb-count" }, fmt.num(all.filter((x) => TESTS[f](x, you)).length)))));
    const cut = obj(t.cut);
    const left = (fmt.isCount(cut.count) ? cut.count : 0) + (fmt.isCount(cut.bytes) ? cut.bytes : 0);
    return el("article", { class: "bb-threadsview" },
      el("div", { class: "bb-dhead" },
        el("div", { class: "bb-meta" }, stateLozenge({ state: t.state }), Number.isInteger(t.id) ? link(t.url, { class: "bb-id", title: "Open in Bitbucket" }, `#${t.id}`) : null, branches(t.source, t.target)),
        el("h2", { class: "bb-dtitle", dir: "auto" }, link(t.url, { class: "bb-title-link" }, str(t.title) || "Untitled pull request"), el("span", { class: "bb-muted bb-dtab" }, " · Comments"))),
      countsLine(t), all.length ? filters : null,
      shown.length ? grow(shown, { inline: ctx.inline, first: 3, step: 10, noun: "threads", one: "thread", tag: "ol", cls: "bb-thread-list", draw: (x) => thread(x, data, ctx) })
        : el("p", { class: "bb-muted bb-tnone" }, NONE[filter]),
      left > 0 ? el("p", { class: "bb-dnote bb-warnnote", "data-note": "threads-cut" }, `${fmt.count(left, "more thread is", "more threads are")} not drawn here; `, link(t.url, { class: "bb-link" }, "they are in Bitbucket"), ".") : null,
      t.more === true ? el("p", { class: "bb-muted bb-older" }, "Older activity is in ", link(t.url, { class: "bb-link" }, "Bitbucket"), ".") : null,
      t.state === "OPEN" ? actions.newComment(data) : null);
  }
  return { draw };
})();

registerKind("threads", threadsView.draw);
