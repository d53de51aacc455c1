// The Commits tab, as Bitbucket's pull request page and its compare page have it: the commits shown, newest
// first, each with its short hash (a link to the commit), the first line of its message, its author and when.
// A pull request's (kind diff, `commits` beside its diffs) and two refs' (kind compare) are drawn alike; which
// tab the person chose is kept per pull request or pair of refs, so a refresh or going back keeps it.
const commitsTab = (() => {
  const arr = (x) => (Array.isArray(x) ? x.filter((i) => i && typeof i === "object") : []);
  const str = (x) => (typeof x === "string" ? x : "");
  const chosen = new Map();

  function commit(x) {
    return el("li", { class: "bb-cmt" },
      link(x.url, { class: "bb-link bb-hash", title: str(x.id).slice(0, 64) || null }, str(x.short).slice(0, 40) || "?"),
      el("bdi", { class: "bb-cmt-msg", dir: "auto" }, str(x.message).slice(0, 500)),
      el("span", { class: "bb-muted bb-cmt-by" }, str(x.author).slice(0, 200)), fmt.time(x.at));
  }
  // The list: `none` when it is empty, and where the rest are (`more`: Bitbucket's page for them).
  function list(c, ctx, none, more) {
    const items = arr(c.items);
    return el("section", { class: "bb-commits", "aria-label": "Commits" },
      items.length ? grow(items, { inline: ctx.inline, first: 10, step: 25, draw: commit, noun: "commits", one: "commit", tag: "ul", cls: "bb-cmt-list" })
        : el("p", { class: "bb-muted bb-no-commits" }, none),
      c.more === true ? el("p", { class: "bb-muted" }, `The first ${fmt.num(items.length)} are listed; `, link(more, { class: "bb-link" }, "the rest are in Bitbucket"), ".") : null);
  }
  // The tab's count: those listed, and "+" when Bitbucket has more.
  const count = (c) => `${fmt.num(arr(c.items).length)}${c.more === true ? "+" : ""}`;
  // Whether `c` (a view's `commits`) was read: without it there is no tab.
  const read = (c) => Boolean(c) && Array.isArray(c.items);
  const tab = (key) => (chosen.get(key) === "commits" ? "commits" : "diff");
  const choose = (key, t) => chosen.set(key, t);
  // A pull request's key.
  const ofPull = (project, repo, id) => `${str(project)}/${str(repo)}#${id}`;
  return { list, count, read, tab, choose, ofPull };
})();
