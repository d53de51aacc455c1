// Two refs' diff (kind compare, compare_refs' answer): Bitbucket's Compare page, drawn by the diff module
// (diff.js), which reads `compare` in the data for the header and links, with the page's two tabs: Diff and
// Commits (the commits one ref has that the other lacks, newest first, drawn by commits.js; Bitbucket orders
// its compare tabs so as well [assumed]). A kind of its own in bb's table because a kind takes ONE data tool's
// arguments and compare_refs' are two refs (views::compare says why); the drawing is one module, so the two
// diffs never drift apart.
const compareView = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const str = (x) => (typeof x === "string" ? x : "");

  function draw(data, ctx) {
    const article = diffView.draw(data, ctx);
    const d = obj(data.diff);
    const c = obj(d.commits);
    if (!commitsTab.read(c)) return article; // commits not read: the Diff alone, as before
    const cmp = obj(d.compare);
    const key = `${str(d.project)}/${str(d.repo)}:${str(cmp.from)}..${str(cmp.to)}`;
    const tab = commitsTab.tab(key);
    const pick = (t) => () => { commitsTab.choose(key, t); redraw(); const b = root.querySelector(`.bb-cmp-tabs [data-tab="${t}"]`); if (b) b.focus(); };
    const button = (t, ...words) => el("button", { type: "button", class: "bb-tab", "data-tab": t, "aria-current": tab === t ? "page" : null, onclick: tab === t ? null : pick(t) }, ...words);
    const tabs = el("nav", { class: "bb-tabs bb-cmp-tabs", "aria-label": "Compare" },
      button("diff", "Diff"), button("commits", "Commits ", el("span", { class: "bb-count" }, commitsTab.count(c))));
    const head = article.firstElementChild;
    // The tabs say which part is shown: the title is the page's, "Compare".
    const said = head && head.querySelector(".bb-dtab");
    if (said) said.remove();
    if (tab === "commits") {
      const none = `${str(cmp.from).slice(0, 200)} has no commits that ${str(cmp.to).slice(0, 200)} lacks.`;
      article.replaceChildren(head, tabs, commitsTab.list(c, ctx, none, cmp.url));
    } else if (head) head.after(tabs);
    return article;
  }
  return { draw };
})();

registerKind("compare", compareView.draw);
