// The pull request card, laid out as Bitbucket's pull request page: the metadata row (author,
// source → target, state lozenge), the title, Needs work, Approve and Merge, the reviewers, what needs the person (the merge
// check's "Merge issues", open tasks, failed and required builds) up front, the builds, each once, the reports (insights.js),
// the description and the activity, newest first, in Bitbucket's sentences.
const card = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const arr = (x) => (Array.isArray(x) ? x.filter((i) => i && typeof i === "object") : []);
  const str = (x) => (typeof x === "string" ? x : "");
  let ids = 0;

  function issues(pr) {
    if (pr.state !== "OPEN") return null;
    const check = pr.mergeCheck && typeof pr.mergeCheck === "object" && !Array.isArray(pr.mergeCheck) ? pr.mergeCheck : null;
    const vetoes = arr(check ? check.vetoes : pr.vetoes).map((v) => ({ summary: str(v.summary), detail: str(v.detail) }));
    const isConflict = (v) => /conflict/i.test(`${v.summary} ${v.detail}`);
    const conflicted = check ? check.conflicted === true || check.outcome === "CONFLICTED" : pr.mergeOutcome === "CONFLICTED";
    const rows = [...vetoes.filter(isConflict).map((v) => Object.assign(v, { conflict: true })), ...vetoes.filter((v) => !isConflict(v))];
    if (conflicted && !rows.some((v) => v.conflict)) {
      rows.unshift({ summary: "Merge conflict.", detail: "You will need to resolve conflicts to be able to merge.", conflict: true });
    }
    const blocked = check ? check.canMerge === false : rows.length > 0;
    if (!blocked) return null;
    const conflictOnly = rows.length === 1 && rows[0].conflict;
    const tip = conflictOnly ? "You will need to resolve conflicts to be able to merge."
      : rows.length === 1 ? rows[0].summary || rows[0].detail : "This pull request can't be merged. Click for details.";
    return { rows, counted: check !== null, tip, id: `bb-merge-issues-${++ids}` };
  }

  // Merge is always shown on an open pull request, as on Bitbucket's page, in one of three states drawn from the
  // one merge check that also draws "Merge issues": vetoed, it stays but is aria-disabled, its tooltip Bitbucket's
  // (found.tip) and a click taking the person to the issues; allowed and merge_pull_request exposed, actions.bar
  // draws the working button; otherwise (not exposed, or the check not read) it opens the pull request in Bitbucket.
  function mergeButton(pr, data, found) {
    if (pr.state !== "OPEN") return null;
    if (found) {
      const show = () => {
        const panel = document.getElementById(found.id);
        if (panel) { panel.focus({ preventScroll: true }); panel.scrollIntoView({ block: "nearest" }); }
      };
      return el("button", { type: "button", class: "bb-button bb-merge-btn", "aria-disabled": "true", title: found.tip, "aria-describedby": found.id, onclick: show }, "Merge");
    }
    if (actions.canMerge(data)) return null;
    return webUrl(pr.url) ? link(pr.url, { class: "bb-button bb-merge-link", title: "Open this pull request in Bitbucket to merge it" }, "Merge in Bitbucket") : null;
  }

  function mergeIssues(found) {
    if (!found) return null;
    const n = found.rows.length;
    const sentence = !found.counted ? null
      : n === 0 ? "Bitbucket does not allow this pull request to be merged yet."
        : n === 1 ? "There is 1 issue preventing you from merging this pull request."
          : `There are ${fmt.num(n)} issues preventing you from merging this pull request.`;
    return el("section", { class: "bb-merge", id: found.id, tabindex: "-1", role: "region", "aria-labelledby": `${found.id}-h` },
      el("h3", { id: `${found.id}-h` }, "Merge issues"),
      sentence ? el("p", { class: "bb-merge-sentence" }, sentence) : null,
      n ? el("ul", { class: "bb-vetoes" }, found.rows.map((v) =>
        el("li", { class: `bb-veto${v.conflict ? " bb-conflict" : ""}`, "data-need": v.conflict ? "conflict" : "veto", title: v.summary || null },
          el("span", { class: "bb-warn-icon", role: "img", "aria-label": "Warning" }, "⚠"),
          el("span", { class: "bb-veto-text", dir: "auto" }, v.detail || v.summary || "A merge check failed.")))) : null);
  }

  function header(pr, ctx, found) {
    const author = person(ctx.users, pr.author);
    const id = Number.isInteger(pr.id) ? link(pr.url, { class: "bb-id", title: "Open in Bitbucket" }, `#${pr.id}`) : null;
    return el("div", { class: "bb-meta" },
      // The state and id before the branches, which may be long (a fork's carry their repositories) and wrap last:
      // no separator is left alone at a line's start or end.
      avatar(author, "md"), nameOf(author), el("span", { class: "bb-state" }, stateLozenge(pr), id), branches(pr.source, pr.target));
  }

  function title(pr, ctx) {
    const text = str(pr.title) || "Untitled pull request";
    return capped("h2", { class: "bb-title", dir: "auto" }, link(pr.url, { class: "bb-title-link" }, text),
      { lines: ctx.inline ? 3 : 8, what: "title", tip: text });
  }

  function dates(pr) {
    const closed = { MERGED: "Merged ", DECLINED: "Declined " }[pr.state];
    return el("div", { class: "bb-dates bb-muted" },
      closed && pr.closed ? fmt.time(pr.closed, closed) : fmt.time(pr.created, "Created "),
      fmt.time(pr.updated) && !(closed && pr.closed) ? [" · ", fmt.time(pr.updated, "updated ")] : null,
      mergeCommit(pr));
  }

  // The commit a merged pull request was merged in, by its short hash, to its page in Bitbucket as Bitbucket's page
  // links it ("merged … in commit 1e9c72b20d1").
  function mergeCommit(pr) {
    const commit = obj(pr.mergeCommit);
    const short = str(commit.short) || str(commit.id).slice(0, 11);
    if (pr.state !== "MERGED" || !short) return null;
    const hash = el("code", { class: "bb-hash", title: str(commit.id) || short }, short);
    return el("span", { class: "bb-merge-commit" }, pr.closed ? " in commit " : " · merged in commit ",
      link(commit.url, { class: "bb-merge-commit-link", title: "Open the merge commit in Bitbucket" }, hash));
  }

  function reviewers(pr, ctx) {
    const list = sortReviewers(pr.reviewers, ctx.users);
    if (!list.length) return el("div", { class: "bb-reviewers bb-muted" }, "No reviewers");
    return grow(list, {
      inline: ctx.inline, first: 4, step: Infinity, tag: "ul", cls: "bb-reviewers",
      label: (n) => [`+${fmt.num(n)}`, `Show ${fmt.num(n)} more ${n === 1 ? "reviewer" : "reviewers"}`],
      // A verdict in Bitbucket's words; without one, "Reviewed" when they have seen the head, else nothing (Bitbucket
      // draws no badge for a reviewer who has not reviewed yet).
      draw: ({ status, person: p, reviewed }) => el("li", { class: "bb-reviewer", "data-status": str(status) },
        avatar(p, "md", status), nameOf(p), REVIEW_WORDS[status] || reviewed
          ? el("span", { class: `bb-status bb-st-${str(status).toLowerCase()}` }, REVIEW_WORDS[status] || "Reviewed") : null),
    });
  }

  function* comments(activity) {
    const stack = arr(obj(activity).items).map((i) => obj(i.comment)).reverse();
    let guard = 0;
    while (stack.length && guard++ < 100000) {
      const c = stack.pop();
      yield c;
      stack.push(...arr(c.replies).reverse());
    }
  }

  function summary(pr) {
    const counts = obj(pr.counts);
    const parts = [];
    if (fmt.isCount(counts.comments)) parts.push(el("span", { class: "bb-count", "data-count": "comments" }, el("span", { class: "bb-i-comment", "aria-hidden": "true" }), fmt.count(counts.comments, "comment", "comments")));
    if (fmt.isCount(counts.openTasks)) {
      const words = counts.openTasks > 0 ? fmt.count(counts.openTasks, "open task", "open tasks")
        : fmt.isCount(counts.resolvedTasks) && counts.resolvedTasks > 0 ? "All tasks resolved" : "No open tasks";
      parts.push(el("span", { class: `bb-count${counts.openTasks > 0 ? " bb-need" : ""}`, "data-count": "tasks" }, "☐ ", words));
    }
    const builds = obj(obj(pr.builds).counts);
    if (fmt.isCount(builds.failed) && builds.failed > 0) {
      parts.push(el("span", { class: "bb-count bb-need", "data-count": "failed-builds" }, "✕ ", fmt.count(builds.failed, "failed build", "failed builds")));
    }
    const reports = arr(obj(pr.insights).reports).filter((r) => r.result === "FAIL").length;
    if (reports) parts.push(el("span", { class: "bb-count bb-need", "data-count": "failed-reports" }, "✕ ", fmt.count(reports, "failed report", "failed reports")));
    // "N of M required builds passed" is said once, in the Builds heading beside the rows it counts; up front
    // the merge check's own veto says the builds block (Merge issues).
    return parts.length ? el("div", { class: "bb-summary" }, parts) : null;
  }

  function tasks(pr, ctx) {
    // A draft task (PENDING) is no one's open task until the review is published.
    const open = [...comments(pr.activity)].filter((c) => c.task === true && c.state !== "RESOLVED" && c.state !== "PENDING");
    if (!open.length) return null;
    const total = obj(pr.counts).openTasks;
    const note = fmt.isCount(total) && total > open.length ? el("p", { class: "bb-muted bb-shown" }, `${fmt.num(open.length)} of ${fmt.count(total, "open task", "open tasks")} shown; the rest are in Bitbucket.`) : null;
    return el("section", { class: "bb-tasks", "aria-label": "Open tasks" }, el("h3", {}, "Open tasks"),
      el("ul", { class: "bb-task-list" }, open.map((c) => {
        const p = person(ctx.users, c.author);
        return el("li", { class: "bb-task-row", "data-need": "task" }, el("span", { class: "bb-check", "aria-hidden": "true" }, "☐"), avatar(p, "sm", undefined, true),
          el("div", { class: "bb-task-body" }, body(c.text, ctx, "task"), anchor(c.anchor)));
      })), note);
  }

  const BUILD_WORDS = { SUCCESSFUL: ["Successful", "✓", "ok"], FAILED: ["Failed", "✕", "bad"], INPROGRESS: ["In progress", "◔", "run"], CANCELLED: ["Cancelled", "⊘", "off"], UNKNOWN: ["Unknown", "?", "off"], MISSING: ["Not yet run", "○", "off"] };
  const buildWords = (state) => BUILD_WORDS[state] || BUILD_WORDS.UNKNOWN;

  function requirements(b) {
    const r = b.requirements;
    if (!r || typeof r !== "object" || Array.isArray(r)) return null;
    const keys = arr(r.keys).filter((k) => str(k.key));
    // Red only for a build that ran and did not pass: a required key with no build yet (a new pull request, before
    // any build could run) is not yet run, neutral, as Bitbucket draws it; the merge check still waits for it.
    const failed = keys.some((k) => k.state !== "SUCCESSFUL" && k.state !== "MISSING" && k.state !== "INPROGRESS");
    return { summary: str(r.summary), blocking: failed, keys };
  }

  function keyRow(k) {
    const [word, icon, tone] = buildWords(k.state);
    return el("li", { class: `bb-build bb-req-key bb-${tone}`, "data-key": k.key, "data-state": str(k.state), "data-need": k.state === "SUCCESSFUL" ? null : "required-build" },
      el("span", { class: "bb-build-state" }, `${icon} ${word}`),
      el("span", { class: "bb-build-body" }, el("bdi", { class: "bb-build-name" }, k.key), el("span", { class: "bb-loz bb-plain" }, "Required"),
        k.state === "MISSING" ? null : el("span", { class: "bb-muted bb-build-detail" }, "Not among the builds listed here.")));
  }

  // Failed first, then in progress, then required keys with no build, then the rest, each group in Bitbucket's order.
  const RANK = { FAILED: 0, INPROGRESS: 1, MISSING: 2 };
  const rank = (r) => RANK[(r.key || r.build).state] ?? 3;

  function builds(pr, ctx) {
    const b = obj(pr.builds);
    const counts = obj(b.counts);
    const items = arr(b.items);
    const req = pr.state === "OPEN" ? requirements(b) : null;
    const under = (i) => str(i.reportsUnder) || str(i.key);
    const lone = req ? req.keys.filter((k) => !items.some((i) => under(i) === k.key)).filter((k) => !ctx.inline || k.state !== "SUCCESSFUL") : [];
    const keys = [["successful", "SUCCESSFUL"], ["failed", "FAILED"], ["inProgress", "INPROGRESS"], ["cancelled", "CANCELLED"], ["unknown", "UNKNOWN"]];
    const line = keys.filter(([k]) => fmt.isCount(counts[k]) && counts[k] > 0).map(([k, state]) => {
      const [word, icon, tone] = buildWords(state);
      return el("span", { class: `bb-build-count bb-${tone}`, "data-state": state }, `${icon} ${fmt.num(counts[k])} ${word.toLowerCase()}`);
    });
    if (!items.length && !line.length && !lone.length) {
      return b.shown === 0 && b.total === 0
        ? el("section", { class: "bb-section", "aria-label": "Builds" }, el("p", { class: "bb-muted bb-no-builds" }, "No builds"))
        : null;
    }
    const total = fmt.isCount(b.total) ? b.total : null;
    const note = el("p", { class: "bb-muted bb-shown", hidden: "" });
    const tell = (drawn) => {
      const whole = total !== null && total > items.length ? total : items.length;
      if (drawn < whole) { note.textContent = `${fmt.num(drawn)} of ${fmt.count(whole, "build", "builds")} shown`; note.hidden = false; } else note.hidden = true;
    };
    const rows = [...lone.map((k) => ({ key: k })), ...items.map((build) => ({ build }))]
      .map((r, i) => [rank(r), i, r]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , r]) => r);
    const missing = lone.filter((k) => k.state === "MISSING").length;
    const waits = missing ? el("p", { class: "bb-muted bb-waits" },
      `The merge check waits for a build under ${missing === 1 ? "the required key" : "each required key"} with no build yet.`) : null;
    const list = grow(rows, {
      inline: ctx.inline, first: 3, step: 10, noun: "builds", one: "build", tag: "ul", cls: "bb-builds",
      pinned: (r) => Boolean(r.key) || r.build.state === "FAILED" || (req !== null && r.build.required === true && r.build.state !== "SUCCESSFUL"),
      draw: (r) => (r.key ? keyRow(r.key) : buildRow(r.build, req !== null)),
      onrender: (shown) => tell(shown - lone.length),
    });
    const head = el("div", { class: "bb-builds-head" }, el("h3", {}, "Builds"),
      req && req.summary ? el("span", { class: `bb-req-summary${req.blocking ? " bb-need" : ""}` }, req.summary) : null);
    return el("section", { class: "bb-section", "aria-label": "Builds" }, head,
      line.length ? el("div", { class: "bb-build-counts" }, line) : null, note, list, waits);
  }

  function buildRow(build, marks) {
    const [word, icon, tone] = buildWords(build.state);
    const tests = obj(build.testResults);
    const testWords = [["successful", "passed"], ["failed", "failed"], ["skipped", "skipped"]]
      .filter(([k]) => fmt.isCount(tests[k])).map(([k, w]) => `${fmt.num(tests[k])} ${w}`).join(", ");
    // A build without a name is named by its key, and the key is not said again in its detail.
    const named = str(build.name);
    const details = [named ? str(build.key) : "", str(build.description).slice(0, 500), fmt.duration(build.duration), testWords].filter(Boolean);
    return el("li", { class: `bb-build bb-${tone}`, "data-state": str(build.state), "data-key": str(build.key) || null },
      el("span", { class: "bb-build-state" }, `${icon} ${word}`),
      el("span", { class: "bb-build-body" },
        link(build.url, { class: "bb-build-name" }, el("bdi", {}, (named || str(build.key) || "Build").slice(0, 300))),
        marks && build.required === true ? el("span", { class: "bb-loz bb-plain" }, "Required") : null,
        details.length ? el("span", { class: "bb-muted bb-build-detail" }, el("bdi", {}, details.join(" · "))) : null));
  }

  function body(tree, ctx, what, pre) {
    const drawn = markdown.draw(tree, "bb-md", pre);
    if (!drawn) return null;
    return capped("div", { class: "bb-body" }, drawn, { box: ctx.inline ? 14 : 40, what });
  }

  function description(pr, ctx) {
    const blocks = markdown.blocks(pr.description);
    const text = blocks.length
      ? capped("div", { class: "bb-body" }, grow(blocks, { inline: ctx.inline, first: 4, step: 20, noun: "paragraphs", one: "paragraph", cls: "bb-md", draw: (b) => markdown.node(b, 0) }),
        { box: ctx.inline ? 20 : 60, what: "description" })
      : el("p", { class: "bb-muted" }, "No description for this pull request.");
    const author = person(ctx.users, pr.author);
    return el("section", { class: "bb-section bb-desc", "aria-label": "Description" },
      el("div", { class: "bb-line" }, avatar(author, "sm"), nameOf(author), " created a pull request ", fmt.time(pr.created)), text);
  }

  function anchor(a) {
    const at = obj(a);
    if (!str(at.path)) return null;
    const line = Number.isInteger(at.line) ? at.line : null;
    const from = Number.isInteger(at.from) && line !== null && at.from < line ? at.from : null;
    // A removed line, or one on the old side, is numbered as the old file numbers it: said, as Bitbucket's hover does.
    const old = at.lineType === "REMOVED" || at.fileType === "FROM" ? " of the old file" : "";
    return el("div", { class: "bb-anchor bb-muted" }, el("bdi", {}, at.path), line !== null ? ` · ${review.lines(from, line)}${old}` : null,
      at.orphaned === true ? el("span", { class: "bb-loz bb-moved", title: "This diff has changed in more recent commits" }, "Outdated") : null);
  }

  function comment(c, ctx, depth, head = true) {
    const p = person(ctx.users, c.author);
    const task = c.task === true ? el("span", { class: `bb-loz ${c.state === "RESOLVED" ? "bb-plain" : "bb-open"}` }, c.state === "RESOLVED" ? "Resolved task" : "Open task", c.oldKind === true ? " (old kind)" : null) : null;
    const replies = arr(c.replies);
    const nested = !replies.length ? null : depth >= 24
      ? el("p", { class: "bb-muted" }, "Further replies are in Bitbucket.")
      : grow(replies, { inline: ctx.inline, first: 2, step: 10, noun: "replies", one: "reply", cls: depth < 6 ? "bb-replies" : "bb-replies bb-flat", draw: (r) => comment(r, ctx, depth + 1) });
    const edited = c.edited === true ? el("span", { class: "bb-muted" }, "edited") : null;
    // Pending beside the author: here, or in the activity's sentence that names them (activityItem).
    const draft = review.lozenge(c);
    // Without its own head (the activity's line names the author and the time), "edited" goes on that line, after
    // the time, as Bitbucket's (activityItem).
    const marks = head ? el("div", { class: "bb-chead" }, nameOf(p), " ", draft, " ", fmt.time(c.at), edited ? [" · ", edited] : null, " ", task)
      : task ? el("div", { class: "bb-chead" }, task) : null;
    return el("div", { class: `bb-comment${c.task === true ? " bb-is-task" : ""}${draft ? " bb-is-pending" : ""}${head ? "" : " bb-lead"}`, "data-comment": Number.isInteger(c.id) ? c.id : null },
      head ? avatar(p, "sm") : null,
      el("div", { class: "bb-cbody" }, marks, anchor(c.anchor), body(c.text, ctx, "comment", ctx.data ? review.pre(ctx.data, c) : null), ctx.data ? actions.thread(ctx.data, c) : null, nested));
  }

  const SENTENCES = {
    OPENED: "opened the pull request", APPROVED: "marked the pull request as approved",
    UNAPPROVED: "marked the pull request as unapproved", REVIEWED: "marked the pull request as needs work",
    DECLINED: "declined the pull request", REOPENED: "reopened the pull request", DELETED: "deleted the pull request",
    AUTO_MERGE_REQUESTED: "requested auto-merge", AUTO_MERGE_CANCELLED: "cancelled auto-merge",
    REVIEW_FINISHED: "finished reviewing", REVIEW_DISCARDED: "discarded their review", REVIEW_COMMENTED: "commented in their review",
  };
  const names = (slugs, ctx) => slugs.filter((s) => typeof s === "string").map((s, i) => [i ? ", " : "", nameOf(person(ctx.users, s))]);

  function sentence(item, pr, ctx) {
    const c = item.comment && typeof item.comment === "object" ? item.comment : null;
    switch (item.action) {
      case "COMMENTED":
        if (item.commentAction === "REPLIED") return ["replied to a comment"];
        return [c && str(obj(c.anchor).path) ? "commented on a file" : "commented"];
      case "RESCOPED": {
        const commits = obj(item.commits);
        const added = fmt.isCount(commits.added) ? commits.added : 0;
        const removed = fmt.isCount(commits.removed) ? commits.removed : 0;
        const parts = [];
        if (added) parts.push(`adding ${fmt.count(added, "commit", "commits")}`);
        if (removed) parts.push(`removing ${fmt.count(removed, "commit", "commits")}`);
        return [parts.length ? `updated the pull request by ${parts.join(" and ")}` : "updated the pull request's commits"];
      }
      case "UPDATED": {
        const r = obj(item.reviewers);
        const added = Array.isArray(r.added) ? r.added : [];
        const removed = Array.isArray(r.removed) ? r.removed : [];
        if (!added.length && !removed.length) return ["edited the pull request's details"];
        const rows = [];
        if (added.length) rows.push(el("li", { class: "bb-rev-change", "data-change": "added" }, `Added ${fmt.count(added.length, "reviewer", "reviewers")}: `, names(added, ctx)));
        if (removed.length) rows.push(el("li", { class: "bb-rev-change", "data-change": "removed" }, `Removed ${fmt.count(removed.length, "reviewer", "reviewers")}: `, names(removed, ctx)));
        return ["updated the reviewers", el("ul", { class: "bb-rev-changes" }, rows)];
      }
      case "MERGED": {
        const commit = str(item.commit);
        if (!commit) return ["merged the pull request"];
        const s = obj(pr.source);
        const t = obj(pr.target);
        const ref = (b) => el("bdi", { class: "bb-ref" }, str(b.branch) || "?");
        return [el("span", {}, "merged ", ref(s), " to ", ref(t), " in commit ", el("code", { class: "bb-hash", title: commit }, commit.slice(0, 11)))];
      }
      default:
        if (SENTENCES[item.action]) return [SENTENCES[item.action]];
        // An action bb has no sentence for is said in words from Bitbucket's name, never as the raw name.
        return [el("span", { title: `Bitbucket's name for this activity: ${str(item.action).slice(0, 40)}` }, str(item.action).slice(0, 40).toLowerCase().replace(/_/g, " ") || "acted")];
    }
  }

  function activityItem(item, pr, ctx) {
    const p = person(ctx.users, item.user);
    const c = item.comment && typeof item.comment === "object" ? item.comment : null;
    const [words, below] = sentence(item, pr, ctx);
    const head = c && str(c.author) !== str(item.user);
    return el("li", { class: "bb-act", "data-action": str(item.action), "data-comment-action": str(item.commentAction) || null },
      el("div", { class: "bb-line" }, avatar(p, "sm"), nameOf(p), c && !head ? review.lozenge(c) : null, " ", words, " ", fmt.time(item.at),
        c && !head && c.edited === true ? [" · ", el("span", { class: "bb-muted bb-edited" }, "edited")] : null),
      below || null,
      c ? comment(c, ctx, 0, head) : null);
  }

  function distinct(items) {
    const inside = new Set();
    const roots = new Set();
    for (const item of items) {
      const stack = arr(obj(item.comment).replies);
      let guard = 0;
      while (stack.length && guard++ < 100000) {
        const r = stack.pop();
        if (Number.isInteger(r.id)) inside.add(r.id);
        stack.push(...arr(r.replies));
      }
    }
    return items.filter((item) => {
      const id = obj(item.comment).id;
      if (!Number.isInteger(id)) return true;
      if (inside.has(id) || roots.has(id)) return false;
      roots.add(id);
      return true;
    });
  }

  function activity(pr, ctx) {
    const a = obj(pr.activity);
    const items = distinct(arr(a.items));
    if (!items.length && a.more !== true) return null;
    return el("section", { class: "bb-section", "aria-label": "Activity" }, el("h3", {}, "Activity"),
      grow(items, { inline: ctx.inline, first: 4, step: 10, noun: "activities", one: "activity", tag: "ol", cls: "bb-activity", draw: (i) => activityItem(i, pr, ctx) }),
      a.more === true ? el("p", { class: "bb-muted bb-older" }, "Older activity is in ", link(pr.url, { class: "bb-link" }, "Bitbucket"), ".") : null);
  }

  function draw(data, ctx) {
    const pr = obj(data.pullRequest);
    const found = issues(pr);
    ctx = Object.assign({}, ctx, { data });
    return el("article", { class: "bb-card" },
      header(pr, ctx, found), title(pr, ctx), actions.draftNote(data), actions.bar(data, mergeButton(pr, data, found)), review.line(data),
      dates(pr), reviewers(pr, ctx), mergeIssues(found), summary(pr), tasks(pr, ctx),
      builds(pr, ctx), insights.section(pr, ctx), description(pr, ctx), activity(pr, ctx), pr.state === "OPEN" ? actions.newComment(data) : null);
  }
  return { draw, comment };
})();

registerKind("pull_request", card.draw);
