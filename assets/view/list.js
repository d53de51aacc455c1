// The pull request list, with rows as Bitbucket's list draws them: author avatar, state lozenge,
// title and #id, source → target, the build status, conflict and needs-work marks, reviewers'
// avatars with status (past three folded into "+N"), comment and open task counts, and when it was
// updated. Its heading is Bitbucket's ("Pull requests", its state filter); what it says it shows
// is what is on screen, and a list that shows fewer than Bitbucket has says so where it starts.
const prList = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const FILTERS = { OPEN: "Open", MERGED: "Merged", DECLINED: "Declined", ALL: "All" };
  const REVIEWERS_SHOWN = 3;
  let io = null; // counts the rows on screen in the inline frame

  function buildMark(builds) {
    const b = obj(builds);
    const n = (k) => (fmt.isCount(b[k]) ? b[k] : 0);
    const all = n("successful") + n("failed") + n("inProgress");
    if (!all) return null;
    const [cls, icon, words] = n("failed") > 0 ? ["bad", "✕", fmt.count(n("failed"), "failed build", "failed builds")]
      : n("inProgress") > 0 ? ["run", "◔", fmt.count(n("inProgress"), "build in progress", "builds in progress")]
        : ["ok", "✓", fmt.count(n("successful"), "successful build", "successful builds")];
    const tip = [["successful", "successful"], ["failed", "failed"], ["inProgress", "in progress"]].filter(([k]) => n(k) > 0).map(([k, w]) => `${fmt.num(n(k))} ${w}`).join(", ");
    return el("span", { class: `bb-mark bb-build-mark bb-${cls}`, "data-build": cls, title: `Builds: ${tip}` }, el("span", { "aria-hidden": "true" }, icon), " ", words);
  }

  function row(item, ctx) {
    const author = person(ctx.users, item.author);
    const counts = obj(item.counts);
    const title = typeof item.title === "string" && item.title ? item.title : "Untitled pull request";
    const id = Number.isInteger(item.id) ? `#${item.id}` : "";
    const reviewers = sortReviewers(item.reviewers, ctx.users);
    const needsWork = reviewers.filter((r) => r.status === "NEEDS_WORK");
    const open = item.state === "OPEN" || item.state === undefined;
    const shownReviewers = reviewers.slice(0, REVIEWERS_SHOWN);
    const folded = reviewers.slice(REVIEWERS_SHOWN);
    const marks = [
      buildMark(item.builds),
      open && item.conflicted === true ? el("span", { class: "bb-mark bb-conflict-mark", "data-mark": "conflict", title: "This pull request has merge conflicts" }, el("span", { "aria-hidden": "true" }, "⚠"), " Conflict") : null,
      open && needsWork.length ? el("span", { class: "bb-mark bb-nw-mark", "data-mark": "needs-work", title: needsWork.map((r) => reviewLabel(r.person, r.status)).join(", ").slice(0, 600) }, el("span", { "aria-hidden": "true" }, "!"), " Needs work") : null,
    ].filter(Boolean);
    // Opened here where the server offers it; Bitbucket's page stays a link beside it. The title
    // is cut at a few lines inside the button or link, as the card cuts its own.
    const titled = (text) => {
      const here = navigate.rowTitle(ctx.data, item, text);
      return here ? [here, " ", link(item.url, { class: "bb-out", title: "Open in Bitbucket", "aria-label": `Open ${id} in Bitbucket` }, "↗")] : link(item.url, { class: "bb-row-link" }, text);
    };
    const repo = ctx.across && item.project && item.repo ? el("span", { class: "bb-muted bb-row-repo" }, el("bdi", {}, `${item.project}/${item.repo}`)) : null;
    return el("li", { class: "bb-row", "data-id": id || null },
      avatar(author, "md"),
      el("div", { class: "bb-row-main" },
        el("div", { class: "bb-row-title" }, stateLozenge(item), " ",
          capped("span", { class: "bb-row-titletext", dir: "auto" }, title, { lines: ctx.inline ? 3 : 4, what: "title", tip: title, wrap: titled })),
        el("div", { class: "bb-row-sub bb-muted" }, nameOf(author), ` - ${id}`, item.updated ? [", ", fmt.time(item.updated)] : null, " ", branches(item.source, item.target), repo),
        marks.length ? el("div", { class: "bb-row-marks" }, marks) : null),
      el("div", { class: "bb-row-side" },
        reviewers.length ? el("span", { class: "bb-row-reviewers", role: "group", "aria-label": "Reviewers" },
          shownReviewers.map((r) => avatar(r.person, "sm", r.status, true)),
          folded.length ? el("span", { class: "bb-fold", title: folded.map((r) => reviewLabel(r.person, r.status)).join(", ").slice(0, 600) },
            el("span", { "aria-hidden": "true" }, `+${fmt.num(folded.length)}`), sr(folded.map((r) => reviewLabel(r.person, r.status)).join(", "))) : null) : null,
        el("span", { class: "bb-row-counts" },
          fmt.isCount(counts.comments) && counts.comments > 0 ? el("span", { class: "bb-count", "data-count": "comments", title: fmt.count(counts.comments, "comment", "comments") }, el("span", { class: "bb-i-comment", "aria-hidden": "true" }), el("span", { "aria-hidden": "true" }, `${fmt.num(Math.min(counts.comments, 99))}${counts.comments > 99 ? "+" : ""}`), sr(fmt.count(counts.comments, "comment", "comments"))) : null,
          fmt.isCount(counts.openTasks) && counts.openTasks > 0 ? el("span", { class: "bb-count bb-need", "data-count": "tasks" }, `☐ ${fmt.count(counts.openTasks, "open task", "open tasks")}`) : null)));
  }

  // Bitbucket's empty list: "No pull requests", or, under a state filter, "No pull requests match" and "Try
  // modifying your filter criteria or view all pull requests." (bitbucket-ui.md §3), "view all" opening All here.
  function empty(data, filter) {
    if (!filter || filter === "All") return el("div", { class: "bb-empty" }, el("p", { class: "bb-empty-head" }, "No pull requests"));
    const c = obj(data.call);
    const all = !c.inbox && typeof c.project === "string" && typeof c.repo === "string"
      ? navigate.go(data, "bb-link-button bb-view-all", "view all pull requests", Object.assign({}, c, { state: "ALL", start: undefined })) : null;
    return el("div", { class: "bb-empty" }, el("p", { class: "bb-empty-head" }, "No pull requests match"),
      el("p", { class: "bb-empty-hint" }, "Try modifying your filter criteria", all ? [" or ", all] : null, "."));
  }

  function draw(data, ctx) {
    const list = obj(data.list);
    const items = (Array.isArray(list.items) ? list.items : []).filter((i) => i && typeof i === "object");
    const read = items.length;
    const total = fmt.isCount(list.total) ? list.total : null;
    const more = list.more === true;
    const heading = typeof list.heading === "string" && list.heading ? list.heading : typeof list.title === "string" && list.title ? list.title : "Pull requests";
    const filter = FILTERS[list.filter] || null;
    const repo = typeof list.repo === "string" && list.repo ? list.repo : null;
    const lctx = Object.assign({}, ctx, { across: !repo, data });
    const tally = el("p", { class: "bb-muted bb-tally", role: "status" });
    const tell = (seen) => {
      const whole = total !== null && total > read ? total : read;
      let words = seen < whole ? `${fmt.num(seen)} of ${fmt.num(whole)} shown` : whole ? `${fmt.count(whole, "pull request", "pull requests")} shown` : "";
      if (more && (total === null || total <= read)) words += `${words ? " · " : ""}more exist in Bitbucket`;
      tally.textContent = words;
      tally.hidden = !words || (seen === whole && !more && total === null);
    };
    // Every row is drawn; inline, the frame shows as many as fit and its Show more grows it (grow.js),
    // so the count is of the rows wholly on screen in the frame, as they come and go.
    const drawn = items.map((i) => row(i, lctx));
    const rows = items.length ? el("ul", { class: "bb-rows" }, drawn) : empty(data, filter);
    if (io) io.disconnect();
    io = null;
    if (ctx.inline && typeof IntersectionObserver === "function" && drawn.length) {
      queueMicrotask(() => {
        const clip = rows.closest(".bb-clip");
        if (!clip) return tell(read);
        const whole = new Set();
        io = new IntersectionObserver((entries) => {
          for (const e of entries) if (e.intersectionRatio > 0.98) whole.add(e.target); else whole.delete(e.target);
          tell(whole.size);
        }, { root: clip, threshold: [0, 0.98, 1] });
        drawn.forEach((r) => io.observe(r));
      });
    } else tell(read);
    const end = more && items.length ? el("p", { class: "bb-muted bb-tally-end" }, "More pull requests are in Bitbucket; ask for the next page to see them here.") : null;
    return el("section", { class: "bb-list" },
      el("div", { class: "bb-list-head" },
        el("h2", { class: "bb-list-title", dir: "auto" }, heading),
        navigate.states(data, list.filter) || (filter ? el("span", { class: "bb-filter", "data-filter": list.filter }, el("span", { class: "bb-muted" }, "State: "), filter) : null),
        repo ? el("span", { class: "bb-list-repo bb-muted" }, el("bdi", {}, repo)) : null),
      tally, rows, end);
  }
  return { draw };
})();

registerKind("pull_requests", prList.draw);
