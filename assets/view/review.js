// Draft reviews (issue #28): the model drafts, the person publishes. A draft is a comment whose state
// is PENDING, seen only by its author until their review is published: a "Pending" lozenge, Edit and
// Delete only (actions.js). A comment's ```suggestion blocks are drawn as small diffs with Apply; the
// diff carries the review bar ("Finish review": a verdict, a summary, Publish, Discard) while drafts
// wait; the card says how many wait and opens the diff at the first. Every button is a tools/call of
// the model's own tool through the host (actions.run), offered only where server.tools has it; what
// a call answered is kept in `notes`, so the redraw in place that follows still shows it.
const review = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const str = (x) => (typeof x === "string" ? x : "");
  const pos = (x) => (Number.isInteger(x) && x >= 0 ? x : null);
  const notes = new Map(); // what a call answered, by what it was about
  const verdicts = new Map(); // the verdict chosen in the bar, by pull request
  const { button, run, where, offers } = actions;

  function lozenge(c) {
    return c.state === "PENDING" ? el("span", { class: "bb-loz bb-pending", title: "Only you can see this comment until you publish your review" }, "Pending") : null;
  }
  // "line 12", or "lines 10–12" for a comment on a range.
  const lines = (from, to) => (from !== null && from !== to ? `lines ${fmt.num(from)}–${fmt.num(to)}` : `line ${fmt.num(to)}`);
  const said = (key, cls = "") => el("p", { class: `bb-said${cls}`, role: "status", hidden: notes.has(key) ? null : "" }, notes.get(key));
  // What a call answered, kept under `key` and shown in `node` at once (no redraw may follow).
  const tell = (node, key) => (text) => { notes.set(key, text.trim().slice(0, 600) || "Done."); node.replaceChildren(notes.get(key)); node.hidden = false; };

  // The hook markdown.draw takes: the i-th ```suggestion block of `c` drawn as c.suggestions[i];
  // one with no such entry stays a code block, so no text is dropped.
  function pre(data, c) {
    const list = Array.isArray(c.suggestions) ? c.suggestions : [];
    let i = 0;
    return (n) => {
      if (n.lang !== "suggestion") return null;
      const s = obj(list[i++]);
      return Array.isArray(s.new) ? suggestion(data, c, s, i - 1) : null;
    };
  }
  const cell = (n) => el("td", { class: "bb-ln" }, n === null ? "" : String(n));
  const SIGNS = { A: ["+", "added: "], R: ["-", "removed: "], C: [" ", ""] };
  const row = (t, o, n, text) => el("tr", { class: `bb-dl-${t}` }, cell(o), cell(n),
    el("td", { class: "bb-dcode" }, el("span", { class: "bb-sign", "aria-hidden": "true" }, SIGNS[t][0]), SIGNS[t][1] ? sr(SIGNS[t][1]) : null, codeLine.text(str(text))));
  // A suggestion: the lines it replaces as removed lines, the lines it proposes as added ones, both
  // numbered from its first line; when bb did not see the old lines, which lines it replaces, in words.
  // Apply only on a published comment of an open pull request: it commits to the source branch. An applied
  // one (s.applied) is marked Applied, as Bitbucket marks it, with no Apply: the lines it put there, as
  // they now read, not a change whose two sides are the same.
  function suggestion(data, c, s, at) {
    const from = pos(s.from);
    const applied = s.applied === true;
    const old = Array.isArray(s.old) && !applied ? s.old : null;
    const index = pos(s.index) ?? at;
    const key = `apply ${c.id} ${index}`;
    const pr = actions.prOf(data);
    const note = said(key);
    const problem = actions.problemLine();
    const apply = !applied && offers(data, "apply_pr_suggestion") && c.state !== "PENDING" && pr.state === "OPEN" && Number.isInteger(c.id)
      ? button("bb-button bb-act-apply", "Apply", () => run("apply_pr_suggestion", Object.assign(where(data), { comment_id: c.id, index }), apply, problem,
        `The person applied a suggestion on PR #${pr.id}.`, { said: () => tell(note, key)(appliedWords(pr)), declined: "Not applied: you declined." }), { title: "Commit this change to the source branch" }) : null;
    const n = (i) => (from === null ? null : from + i);
    const rows = applied ? s.new.map((t, i) => row("C", n(i), n(i), t))
      : [...(old || []).map((t, i) => row("R", n(i), null, t)), ...s.new.map((t, i) => row("A", null, n(i), t))];
    const range = from === null ? null : lines(from, pos(s.to) ?? from);
    const head = applied ? [el("strong", {}, range ? `Suggested change for ${range}` : "Suggested change"), el("span", { class: "bb-loz bb-merged bb-applied" }, "Applied")]
      : el("strong", {}, old || from === null ? "Suggested change" : `Suggested change for ${range}`);
    return el("div", { class: `bb-suggest${applied ? " bb-suggest-applied" : ""}`, "data-index": index, "data-applied": applied ? "true" : null },
      el("div", { class: "bb-suggest-head" }, head, apply),
      rows.length ? el("table", { class: "bb-diff" }, el("tbody", {}, rows))
        : el("p", { class: "bb-muted" }, applied ? "These lines were removed." : "Removes these lines."),
      note, problem);
  }
  // What the person reads once Apply worked: where it went, in words, not the tool's sentence for the model.
  const appliedWords = (pr) => {
    const branch = str(obj(pr.source).branch);
    return branch ? `Suggestion applied: committed to ${branch}.` : "Suggestion applied: committed to the source branch.";
  };

  // What the person reads once their review is published or discarded: Bitbucket's flags ("You approved this
  // pull request") and its activity's words, never the tool's sentence for the model (bitbucket-ui.md).
  const PUBLISHED = {
    approve: "Your review is published. You approved this pull request.",
    request_changes: "Your review is published. You marked this pull request as needs work.",
    comment: "Your review is published.",
  };
  const DISCARDED = "Your pending comments were discarded.";

  // Bitbucket's Finish review, kept at the top of the diff (of its file pane in full screen) while the
  // person reads: the count, the verdict (Comment: publish without one), a summary, Publish, and Discard
  // after a confirm step; every button waits while one call is out. Where Bitbucket Data Center draws it
  // is not confirmed (bitbucket-ui.md); Bitbucket Cloud puts Finish review at the top of the page.
  function bar(data) {
    const d = obj(data.diff);
    const count = obj(d.drafts).count;
    const c = obj(data.call);
    const key = `${c.project}/${c.repo}#${c.pr_id}`;
    const id = `PR #${d.id}`;
    if (d.compare || !fmt.isCount(count) || count <= 0 || !offers(data, "submit_pr_review")) return notes.has(key) ? said(key, " bb-review-said") : null;
    notes.delete(key);
    let verdict = d.state === "OPEN" ? verdicts.get(key) || "comment" : "comment";
    const problem = actions.problemLine();
    const note = said(key);
    const summary = actions.editable(`summary ${key}`, "Summary (optional)", " bb-summary-box");
    const choose = (e) => { verdict = verdicts.set(key, e.currentTarget.dataset.verdict).get(key); for (const b of box.querySelectorAll(".bb-verdict")) b.ariaPressed = String(b === e.currentTarget); };
    const choices = d.state !== "OPEN" ? null : el("span", { class: "bb-seg", role: "group", "aria-label": "Your verdict" },
      [["request_changes", "Needs work"], ["approve", "Approve"], ["comment", "Comment"]].map(([action, words]) =>
        button("bb-segbtn bb-verdict", words, choose, { "data-verdict": action, "aria-pressed": String(action === verdict) })));
    const publish = button("bb-button bb-primary bb-act-publish", "Publish", () => {
      const args = Object.assign(where(data), { action: verdict });
      const text = summary.innerText.trim();
      if (text) args.comment = text;
      if (str(d.head)) args.commit = d.head;
      const how = { approve: "and approved it", request_changes: "and marked it as needing work" }[verdict] || "without a verdict";
      const chosen = verdict;
      run("submit_pr_review", args, publish, problem, `The person published their review of ${id} ${how}.`,
        { within: box, said: () => { actions.drafts.delete(`summary ${key}`); tell(note, key)(PUBLISHED[chosen] || PUBLISHED.comment); },
          // Approve and Needs work ask the person first (issue 51); a review without a verdict does not.
          declined: chosen === "approve" || chosen === "request_changes" ? "Not published: you declined." : undefined });
    });
    const discard = offers(data, "discard_pr_review") ? actions.confirm(button("bb-button bb-act-discard", "Discard"), "Discard",
      `Discard ${count === 1 ? "your pending comment" : `all ${fmt.num(count)} pending comments`}? `,
      (yes) => run("discard_pr_review", where(data), yes, problem, `The person discarded their pending review of ${id}.`, { within: box, said: () => tell(note, key)(DISCARDED), declined: "Not discarded: you declined." })) : null;
    const box = el("section", { class: "bb-finish", "aria-label": "Finish review", "data-count": count },
      el("div", { class: "bb-finish-row" }, el("strong", {}, "Finish review"), el("span", { class: "bb-finish-count" }, fmt.count(count, "pending comment", "pending comments")), choices),
      el("div", { class: "bb-finish-row bb-finish-go" }, summary, publish, discard), problem, note);
    return box;
  }

  // The card's "3 pending comments": opens the diff in place at the first draft.
  function line(data) {
    const drafts = obj(obj(data.pullRequest).drafts);
    const n = drafts.count;
    if (!fmt.isCount(n) || n <= 0) return null;
    const c = obj(data.call);
    const call = { kind: "diff", project: c.project, repo: c.repo, pr_id: c.pr_id };
    const words = fmt.count(n, "pending comment", "pending comments");
    return el("p", { class: "bb-pending-line", "data-count": "pending" }, el("span", { class: "bb-i-comment", "aria-hidden": "true" }),
      navigate.can(data, "diff") && Number.isInteger(c.pr_id) ? button("bb-open-here bb-pending-link", words,
        (e) => navigate.open(call, `The person opened ${navigate.named(call)} at their first pending comment`, e.currentTarget, () => reveal(drafts.first)),
        { title: "Only you can see them until you publish your review" }) : words);
  }

  // Brings the first draft into view: its file (selected in full screen), the draft under its line,
  // else the file's first, else the first drawn; the top when there is none.
  function reveal(first) {
    const f = obj(first);
    const pick = [...root.querySelectorAll(".bb-tbtn")].find((b) => b.dataset.path === f.path);
    if (pick && pick.ariaCurrent !== "true") pick.click();
    const file = [...root.querySelectorAll(".bb-file")].find((x) => x.dataset.file === f.path);
    const rows = file ? [...file.querySelectorAll("tr.bb-dl")].filter((r) => [r.dataset.new, r.dataset.old].includes(String(f.line))) : [];
    const target = [...rows.map((r) => r.nextElementSibling), file, root].map((x) => x && x.querySelector(".bb-is-pending")).find(Boolean);
    if (!target) { scrollTo(0, 0); return; }
    target.tabIndex = -1;
    target.focus({ preventScroll: true });
    target.scrollIntoView({ block: "center" });
  }

  return { lozenge, lines, pre, bar, line };
})();
