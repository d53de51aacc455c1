// The pull request card, laid out as Bitbucket's pull request page: the metadata row (author,
// source → target, state lozenge), the title, the reviewers, what needs the person (conflict,
// vetoes, open tasks, failed builds) up front, the builds, the description and the activity,
// newest first.
const card = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const arr = (x) => (Array.isArray(x) ? x.filter((i) => i && typeof i === "object") : []);
  const str = (x) => (typeof x === "string" ? x : "");

  function header(pr, ctx) {
    const author = person(ctx.users, pr.author);
    const id = Number.isInteger(pr.id) ? link(pr.url, { class: "bb-id", title: "Open in Bitbucket" }, `#${pr.id}`) : null;
    return el("div", { class: "bb-meta" },
      avatar(author, "md"), nameOf(author), branches(pr.source, pr.target), el("span", { class: "bb-divider" }), stateLozenge(pr), id);
  }

  function dates(pr) {
    const closed = { MERGED: "Merged ", DECLINED: "Declined " }[pr.state];
    return el("div", { class: "bb-dates bb-muted" },
      closed && pr.closed ? fmt.time(pr.closed, closed) : fmt.time(pr.created, "Created "),
      fmt.time(pr.updated) && !(closed && pr.closed) ? [" · ", fmt.time(pr.updated, "updated ")] : null);
  }

  function reviewers(pr, ctx) {
    const list = sortReviewers(pr.reviewers, ctx.users);
    if (!list.length) return el("div", { class: "bb-reviewers bb-muted" }, "No reviewers");
    return el("ul", { class: "bb-reviewers", "aria-label": "Reviewers" }, list.map(({ status, person: p }) =>
      el("li", { class: "bb-reviewer", "data-status": str(status) },
        avatar(p, "md", status), nameOf(p), el("span", { class: `bb-status bb-st-${str(status).toLowerCase()}` }, REVIEW_WORDS[status] || "Reviewer"))));
  }

  // A conflict and every veto, shown up front while the pull request is open.
  function merge(pr) {
    if (pr.state !== "OPEN") return null;
    const rows = [];
    if (pr.mergeOutcome === "CONFLICTED") {
      rows.push(el("div", { class: "bb-alert bb-danger", role: "alert", "data-need": "conflict" },
        el("strong", {}, "⚠ Merge conflicts"), el("span", {}, " This pull request can't be merged until the conflicts are resolved.")));
    }
    for (const veto of arr(pr.vetoes)) {
      rows.push(el("div", { class: "bb-alert bb-warning", "data-need": "veto" },
        el("strong", { dir: "auto" }, "⚠ ", str(veto.summary) || "Merge check failed"), str(veto.detail) ? el("div", { dir: "auto" }, veto.detail) : null));
    }
    return rows.length ? el("section", { class: "bb-merge", "aria-label": "Merge checks" }, rows) : null;
  }

  // Every comment in the activity, replies included, depth first.
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
    const req = requirements(obj(pr.builds));
    if (pr.state === "OPEN" && req && req.blocking && req.summary) parts.push(el("span", { class: "bb-count bb-need", "data-count": "required-builds" }, "✕ ", req.summary));
    return parts.length ? el("div", { class: "bb-summary" }, parts) : null;
  }

  // Open tasks are never behind a click: all that the activity carries are listed here.
  function tasks(pr, ctx) {
    const open = [...comments(pr.activity)].filter((c) => c.task === true && c.state !== "RESOLVED");
    if (!open.length) return null;
    const total = obj(pr.counts).openTasks;
    const note = fmt.isCount(total) && total > open.length ? el("p", { class: "bb-muted" }, `${open.length} of ${total} open tasks shown`) : null;
    return el("section", { class: "bb-tasks", "aria-label": "Open tasks" }, el("h3", {}, "Open tasks"),
      el("ul", { class: "bb-task-list" }, open.map((c) => {
        const p = person(ctx.users, c.author);
        return el("li", { class: "bb-task-row", "data-need": "task" }, el("span", { class: "bb-check" }, "☐"), avatar(p, "sm"),
          el("div", {}, markdown.draw(c.text), anchor(c.anchor)));
      })), note);
  }

  const BUILD_WORDS = { SUCCESSFUL: ["Successful", "✓", "ok"], FAILED: ["Failed", "✕", "bad"], INPROGRESS: ["In progress", "◔", "run"], CANCELLED: ["Cancelled", "⊘", "off"], UNKNOWN: ["Unknown", "?", "off"], MISSING: ["No build yet", "○", "bad"] };
  const buildWords = (state) => BUILD_WORDS[state] || BUILD_WORDS.UNKNOWN;

  // The builds' requirements as the merge check decides them, or null: bb could not tell, and
  // then the card says nothing about requirements (no summary, no marks).
  function requirements(b) {
    const r = b.requirements;
    if (!r || typeof r !== "object" || Array.isArray(r)) return null;
    const keys = arr(r.keys).filter((k) => str(k.key));
    return { summary: str(r.summary), blocking: r.blocking === true || keys.some((k) => k.state !== "SUCCESSFUL"), keys };
  }

  // Each required key that is not successful, never behind a click; fullscreen also the passing ones.
  function requiredRows(req, items, ctx) {
    const keys = req.keys.filter((k) => !ctx.inline || k.state !== "SUCCESSFUL");
    if (!keys.length) return null;
    return el("ul", { class: "bb-required", "aria-label": "Required builds" }, keys.map((k) => {
      const [word, icon, tone] = buildWords(k.state);
      const under = items.filter((i) => str(i.reportsUnder || i.key) === k.key);
      const names = under.map((i) => str(i.name) || str(i.key)).filter(Boolean).join(", ");
      const name = under.length === 1 ? link(under[0].url, { class: "bb-build-name" }, el("bdi", {}, names || k.key)) : el("bdi", { class: "bb-build-name" }, names || k.key);
      return el("li", { class: `bb-build bb-req bb-${tone}`, "data-key": k.key, "data-state": str(k.state), "data-need": k.state === "SUCCESSFUL" ? null : "required-build" },
        el("span", { class: "bb-build-state" }, `${icon} ${word}`), name, el("span", { class: "bb-loz bb-plain" }, "Required"),
        names && names !== k.key ? el("span", { class: "bb-muted bb-build-detail" }, el("bdi", {}, k.key)) : null,
        k.state === "MISSING" ? el("span", { class: "bb-muted bb-build-detail" }, "The merge check waits for this build.") : null);
    }));
  }

  function builds(pr, ctx) {
    const b = obj(pr.builds);
    const counts = obj(b.counts);
    const items = arr(b.items);
    // The merge check only speaks for an open pull request.
    const req = pr.state === "OPEN" ? requirements(b) : null;
    const keys = [["successful", "SUCCESSFUL"], ["failed", "FAILED"], ["inProgress", "INPROGRESS"], ["cancelled", "CANCELLED"], ["unknown", "UNKNOWN"]];
    const line = keys.filter(([k]) => fmt.isCount(counts[k]) && counts[k] > 0).map(([k, state]) => {
      const [word, icon, tone] = buildWords(state);
      return el("span", { class: `bb-build-count bb-${tone}`, "data-state": state }, `${icon} ${fmt.num(counts[k])} ${word.toLowerCase()}`);
    });
    if (!items.length && !line.length && !(req && req.keys.length)) {
      // Bitbucket's listing was read and is empty: say so; otherwise say nothing.
      return b.shown === 0 && b.total === 0
        ? el("section", { class: "bb-section", "aria-label": "Builds" }, el("p", { class: "bb-muted bb-no-builds" }, "No builds"))
        : null;
    }
    const shown = fmt.isCount(b.shown) ? b.shown : items.length;
    const note = fmt.isCount(b.total) && shown < b.total ? el("p", { class: "bb-muted bb-shown" }, `${fmt.num(shown)} of ${fmt.count(b.total, "build", "builds")} shown`) : null;
    const list = items.length ? grow(items, {
      inline: ctx.inline, first: 3, step: 10, noun: "builds", tag: "ul", cls: "bb-builds",
      pinned: (build) => build.state === "FAILED",
      draw: (build) => buildRow(build, req !== null),
    }) : null;
    const head = el("div", { class: "bb-builds-head" }, el("h3", {}, "Builds"),
      req && req.summary ? el("span", { class: `bb-req-summary${req.blocking ? " bb-need" : ""}` }, req.summary) : null);
    return el("section", { class: "bb-section", "aria-label": "Builds" }, head,
      line.length ? el("div", { class: "bb-build-counts" }, line) : null, req ? requiredRows(req, items, ctx) : null, list, note);
  }

  function buildRow(build, marks) {
    const [word, icon, tone] = buildWords(build.state);
    const tests = obj(build.testResults);
    const testWords = [["successful", "passed"], ["failed", "failed"], ["skipped", "skipped"]]
      .filter(([k]) => fmt.isCount(tests[k])).map(([k, w]) => `${fmt.num(tests[k])} ${w}`).join(", ");
    const details = [str(build.key), str(build.description), fmt.duration(build.duration), testWords].filter(Boolean);
    return el("li", { class: `bb-build bb-${tone}`, "data-state": str(build.state) },
      el("span", { class: "bb-build-state" }, `${icon} ${word}`),
      link(build.url, { class: "bb-build-name" }, el("bdi", {}, str(build.name) || str(build.key) || "Build")),
      marks && build.required === true ? el("span", { class: "bb-loz bb-plain" }, "Required") : null,
      details.length ? el("span", { class: "bb-muted bb-build-detail" }, el("bdi", {}, details.join(" · "))) : null);
  }

  function description(pr, ctx) {
    const blocks = markdown.blocks(pr.description);
    const body = blocks.length
      ? grow(blocks, { inline: ctx.inline, first: 4, step: 20, noun: "paragraphs", cls: "bb-md", draw: (b) => markdown.node(b, 0) })
      : el("p", { class: "bb-muted" }, "No description for this pull request.");
    const author = person(ctx.users, pr.author);
    return el("section", { class: "bb-section bb-desc", "aria-label": "Description" },
      el("div", { class: "bb-line" }, nameOf(author), " created a pull request ", fmt.time(pr.created)), body);
  }

  function anchor(a) {
    const at = obj(a);
    if (!str(at.path)) return null;
    return el("div", { class: "bb-anchor bb-muted" }, el("bdi", {}, at.path), Number.isInteger(at.line) ? `:${at.line}` : null,
      at.orphaned === true ? el("span", { class: "bb-loz bb-moved", title: "This diff has changed in more recent commits" }, "Outdated") : null);
  }

  function comment(c, ctx, depth) {
    const p = person(ctx.users, c.author);
    const task = c.task === true ? el("span", { class: `bb-loz ${c.state === "RESOLVED" ? "bb-plain" : "bb-open"}` }, c.state === "RESOLVED" ? "Resolved task" : "Open task") : null;
    const replies = arr(c.replies);
    const nested = !replies.length ? null : depth >= 24
      ? el("p", { class: "bb-muted" }, "Further replies are in Bitbucket.")
      : grow(replies, { inline: ctx.inline, first: 2, step: 10, noun: "replies", cls: depth < 6 ? "bb-replies" : "bb-replies bb-flat", draw: (r) => comment(r, ctx, depth + 1) });
    return el("div", { class: `bb-comment${c.task === true ? " bb-is-task" : ""}`, "data-comment": Number.isInteger(c.id) ? c.id : null },
      avatar(p, "sm"),
      el("div", { class: "bb-cbody" },
        el("div", { class: "bb-chead" }, nameOf(p), " ", fmt.time(c.at), c.edited === true ? el("span", { class: "bb-muted" }, " · edited") : null, " ", task),
        anchor(c.anchor), markdown.draw(c.text), nested));
  }

  const SENTENCES = {
    OPENED: "opened the pull request", APPROVED: "marked the pull request as approved",
    UNAPPROVED: "marked the pull request as unapproved", REVIEWED: "marked the pull request as needs work",
    MERGED: "merged the pull request", DECLINED: "declined the pull request", REOPENED: "reopened the pull request",
    RESCOPED: "updated the pull request", UPDATED: "updated the pull request", DELETED: "deleted the pull request",
  };

  function activityItem(item, ctx) {
    const p = person(ctx.users, item.user);
    const c = item.comment && typeof item.comment === "object" ? item.comment : null;
    const words = item.action === "COMMENTED" ? (c && str(obj(c.anchor).path) ? "commented on a file" : "commented") : SENTENCES[item.action] || "updated the pull request";
    return el("li", { class: "bb-act", "data-action": str(item.action) },
      el("div", { class: "bb-line" }, avatar(p, "sm"), nameOf(p), ` ${words} `, fmt.time(item.at)),
      c ? comment(c, ctx, 0) : null);
  }

  function activity(pr, ctx) {
    const a = obj(pr.activity);
    const items = arr(a.items);
    if (!items.length && a.more !== true) return null;
    return el("section", { class: "bb-section", "aria-label": "Activity" }, el("h3", {}, "Activity"),
      grow(items, { inline: ctx.inline, first: 4, step: 10, noun: "activities", tag: "ol", cls: "bb-activity", draw: (i) => activityItem(i, ctx) }),
      a.more === true ? el("p", { class: "bb-muted bb-older" }, "Older activity is in Bitbucket.") : null);
  }

  function draw(data, ctx) {
    const pr = obj(data.pullRequest);
    return el("article", { class: "bb-card" },
      header(pr, ctx),
      el("h2", { class: "bb-title", dir: "auto" }, str(pr.title) || "Untitled pull request"),
      dates(pr), reviewers(pr, ctx), merge(pr), summary(pr), tasks(pr, ctx),
      builds(pr, ctx), description(pr, ctx), activity(pr, ctx));
  }
  return { draw };
})();

registerKind("pull_request", card.draw);
