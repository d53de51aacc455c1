// Two refs' diff (kind compare, compare_refs' answer): Bitbucket's Compare page, drawn by the diff module
// (diff.js), which reads `compare` in the data for the header and links, with the page's two tabs: Diff and
// Commits (the commits one ref has that the other lacks, newest first; Bitbucket orders its compare tabs so as
// well [assumed]). A kind of its own in bb's table because a kind takes ONE data tool's arguments and
// compare_refs' are two refs (views::compare says why); the drawing is one module, so the two diffs never
// drift apart.
const compareView = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const arr = (x) => (Array.isArray(x) ? x.filter((i) => i && typeof i === "object") : []);
  const str = (x) => (typeof x === "string" ? x : "");
  const chosen = new Map(); // the tab the person chose, per pair of refs

  function commit(x) {
    return el("li", { class: "bb-cmt" },
      link(x.url, { class: "bb-link bb-hash", title: str(x.id).slice(0, 64) || null }, str(x.short).slice(0, 40) || "?"),
      el("bdi", { class: "bb-cmt-msg", dir: "auto" }, str(x.message).slice(0, 500)),
      el("span", { class: "bb-muted bb-cmt-by" }, str(x.author).slice(0, 200)), fmt.time(x.at));
  }
  function commits(c, d, ctx) {
    const items = arr(c.items);
    const cmp = obj(d.compare);
    return el("section", { class: "bb-commits", "aria-label": "Commits" },
      items.length ? grow(items, { inline: ctx.inline, first: 10, step: 25, draw: commit, noun: "commits", one: "commit", tag: "ul", cls: "bb-cmt-list" })
        : el("p", { class: "bb-muted bb-no-commits" }, `${str(cmp.from).slice(0, 200)} has no commits that ${str(cmp.to).slice(0, 200)} lacks.`),
      c.more === true ? el("p", { class: "bb-muted" }, `The first ${fmt.num(items.length)} are listed; `, link(cmp.url, { class: "bb-link" }, "the rest are in Bitbucket"), ".") : null);
  }

  function draw(data, ctx) {
    const article = diffView.draw(data, ctx);
    const d = obj(data.diff);
    const c = obj(d.commits);
    if (!Array.isArray(c.items)) return article; // commits not read: the Diff alone, as before
    const cmp = obj(d.compare);
    const key = `${str(d.project)}/${str(d.repo)}:${str(cmp.from)}..${str(cmp.to)}`;
    const tab = chosen.get(key) === "commits" ? "commits" : "diff";
    const pick = (t) => () => { chosen.set(key, t); redraw(); const b = root.querySelector(`.bb-cmp-tabs [data-tab="${t}"]`); if (b) b.focus(); };
    const button = (t, ...words) => el("button", { type: "button", class: "bb-tab", "data-tab": t, "aria-current": tab === t ? "page" : null, onclick: tab === t ? null : pick(t) }, ...words);
    const count = `${fmt.num(arr(c.items).length)}${c.more === true ? "+" : ""}`;
    const tabs = el("nav", { class: "bb-tabs bb-cmp-tabs", "aria-label": "Compare" },
      button("diff", "Diff"), button("commits", "Commits ", el("span", { class: "bb-count" }, count)));
    const head = article.firstElementChild;
    // The tabs say which part is shown: the title is the page's, "Compare".
    const said = head && head.querySelector(".bb-dtab");
    if (said) said.remove();
    if (tab === "commits") article.replaceChildren(head, tabs, commits(c, d, ctx));
    else if (head) head.after(tabs);
    return article;
  }
  return { draw };
})();

registerKind("compare", compareView.draw);
