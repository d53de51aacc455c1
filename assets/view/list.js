// The pull request list, with rows as Bitbucket's list draws them: author avatar, state
// lozenge, title and #id, source → target, reviewers' avatars with status, comment and open
// task counts, and when it was updated. A list that shows fewer than Bitbucket has says so.
const prList = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  function row(item, ctx) {
    const author = person(ctx.users, item.author);
    const counts = obj(item.counts);
    const title = typeof item.title === "string" && item.title ? item.title : "Untitled pull request";
    const id = Number.isInteger(item.id) ? `#${item.id}` : "";
    const reviewers = sortReviewers(item.reviewers, ctx.users);
    return el("li", { class: "bb-row", "data-id": id || null },
      avatar(author, "md"),
      el("div", { class: "bb-row-main" },
        el("div", { class: "bb-row-title" }, stateLozenge(item), " ", link(item.url, { class: "bb-row-link", dir: "auto" }, title)),
        el("div", { class: "bb-row-sub bb-muted" }, nameOf(author), ` - ${id}`, item.updated ? [", ", fmt.time(item.updated)] : null, " ", branches(item.source, item.target))),
      el("div", { class: "bb-row-side" },
        reviewers.length ? el("span", { class: "bb-row-reviewers", "aria-label": "Reviewers" }, reviewers.map((r) => avatar(r.person, "sm", r.status))) : null,
        fmt.isCount(counts.comments) && counts.comments > 0 ? el("span", { class: "bb-count", title: fmt.count(counts.comments, "comment", "comments") }, el("span", { class: "bb-i-comment", "aria-hidden": "true" }), `${fmt.num(Math.min(counts.comments, 99))}${counts.comments > 99 ? "+" : ""}`) : null,
        fmt.isCount(counts.openTasks) && counts.openTasks > 0 ? el("span", { class: "bb-count bb-need" }, `☐ ${fmt.count(counts.openTasks, "open task", "open tasks")}`) : null));
  }
  function draw(data, ctx) {
    const list = obj(data.list);
    const items = (Array.isArray(list.items) ? list.items : []).filter((i) => i && typeof i === "object");
    const shown = fmt.isCount(list.shown) ? list.shown : items.length;
    let tally = null;
    if (fmt.isCount(list.total) && list.total > shown) tally = `${fmt.num(shown)} of ${fmt.num(list.total)} shown`;
    else if (list.more === true) tally = `${fmt.num(shown)} shown · more exist`;
    return el("section", { class: "bb-list" },
      el("h2", { class: "bb-list-title", dir: "auto" }, typeof list.title === "string" && list.title ? list.title : "Pull requests"),
      items.length
        ? grow(items, { inline: ctx.inline, first: 8, step: 10, noun: "pull requests", tag: "ul", cls: "bb-rows", draw: (i) => row(i, ctx) })
        : el("p", { class: "bb-empty" }, "No pull requests"),
      tally ? el("p", { class: "bb-muted bb-tally" }, tally) : null);
  }
  return { draw };
})();

registerKind("pull_requests", prList.draw);
