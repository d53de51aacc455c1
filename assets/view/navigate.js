// Opening in place (ADR-101) through refresh_view with another show call and no fingerprint:
// Overview/Diff/Commits tabs, a list's pull request, its State tabs; "← Back" redraws the view before and
// resumes its refresh. Only kinds the server offers; each opening told to the model.
const navigate = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const stack = [];
  let busy = false;
  const STATES = { OPEN: "Open", MERGED: "Merged", DECLINED: "Declined", ALL: "All" };

  function can(data, kind) {
    const { kinds, tools } = obj(data.server);
    return KINDS.has(kind) && Array.isArray(kinds) && kinds.includes(kind) && Array.isArray(tools) && tools.includes("refresh_view");
  }
  const where = (call) => `${call.project}/${call.repo}`;
  const scrolled = () => ({ x: scrollX, y: scrollY, clip: (root.querySelector(".bb-clip") || {}).scrollTop || 0 });

  // `then` runs once the view is drawn (the card's pending comments: the diff at the first).
  function open(call, told, button, then) {
    if (busy || page.gone) return;
    busy = true;
    if (button) button.disabled = true;
    refresh.say("Opening…");
    const failed = (text) => {
      busy = false;
      if (button) button.disabled = false;
      refresh.say(`Could not open it: ${firstSentence(text)}`, true);
    };
    bridge.request("tools/call", { name: "refresh_view", arguments: { show: call } }).then((result) => {
      if (page.gone) return;
      const data = viewData(result);
      if (!data || result.isError) { failed(resultText(result)); return; }
      busy = false;
      stack.push({ result: page.result, data: page.data, due: refresh.due(), at: scrolled() });
      show(result, data);
      if (then) then();
      changes.tell(told);
    }, (err) => failed(String(obj(err).message || "The host did not answer.")));
  }

  function show(result, data, due, at) {
    page.result = result;
    page.data = data;
    grown.budgets.clear();
    render();
    const clip = root.querySelector(".bb-clip");
    if (clip) clip.scrollTop = at ? at.clip : 0;
    scrollTo(at ? at.x : 0, at ? at.y : 0);
    refresh.start(data, due);
    const focus = root.querySelector(at ? ".bb-back" : '.bb-tab[aria-current="page"]') || root.querySelector(".bb-back");
    if (focus) focus.focus({ preventScroll: true });
  }

  function back() {
    const e = stack.pop();
    if (!e || busy || page.gone) return;
    show(e.result, e.data, e.due, e.at);
    changes.tell(`The person went back to ${named(obj(e.data.call))}`);
  }
  // What a show call draws, in the words told to the model.
  const named = (c) => (c.inbox ? "the reviewer inbox" : c.kind === "diff" ? `the diff of PR #${c.pr_id} in ${where(c)}${c.since ? " since the person last reviewed it" : ""}`
    : c.kind === "file" ? `${String(c.path).slice(0, 300)} in ${where(c)}`
    : c.kind === "compare" ? `the diff of ${c.from_ref} against ${c.to_ref} in ${where(c)}`
    : c.kind === "pull_request" ? `PR #${c.pr_id} in ${where(c)}`
    : c.kind === "threads" ? `the comment threads of PR #${c.pr_id} in ${where(c)}`
      : `${c.state === "ALL" ? "all" : `the ${String(c.state || "open").toLowerCase()}`} pull requests of ${where(c)}`);
  const button = (cls, word, call, current, more) => el("button", Object.assign({ type: "button", class: cls, "aria-current": current ? "page" : null,
    onclick: current ? null : (e) => open(call, `The person opened ${named(call)}`, e.currentTarget) }, more), word);

  const backButton = () => (stack.length ? el("button", { type: "button", class: "bb-mode bb-back", onclick: back }, "← Back") : null);

  // Bitbucket's pull request tabs: Overview (the card), Diff and Commits (both the diff kind's, whose data carries the
  // Commits tab's page: switching between the two draws again, no call).
  function tabs(data) {
    const c = obj(data.call);
    if ((data.kind !== "pull_request" && data.kind !== "diff") || !Number.isInteger(c.pr_id) || !can(data, "pull_request") || !can(data, "diff")) return null;
    const key = commitsTab.ofPull(c.project, c.repo, c.pr_id);
    const listed = data.kind === "diff" && commitsTab.read(obj(data.diff).commits);
    const shown = data.kind === "pull_request" ? "pull_request" : listed && commitsTab.tab(key) === "commits" ? "commits" : "diff";
    const diffCall = { kind: "diff", project: c.project, repo: c.repo, pr_id: c.pr_id };
    const local = (t) => () => { commitsTab.choose(key, t); redraw(); const b = root.querySelector(`.bb-tabs [data-kind="${t}"]`); if (b) b.focus(); };
    const tab = (kind, word) => {
      if (kind === shown) return el("button", { type: "button", class: "bb-tab", "aria-current": "page", "data-kind": kind }, word);
      if (kind === "pull_request") return button("bb-tab", word, { kind, project: c.project, repo: c.repo, pr_id: c.pr_id }, false, { "data-kind": kind });
      // Diff and Commits: drawn from the diff's data when it is this view's, else the diff opened at that tab.
      if (data.kind === "diff") return el("button", { type: "button", class: "bb-tab", "data-kind": kind, onclick: local(kind) }, word);
      const told = kind === "commits" ? `The person opened the commits of PR #${c.pr_id} in ${where(c)}` : `The person opened ${named(diffCall)}`;
      return el("button", { type: "button", class: "bb-tab", "data-kind": kind,
        onclick: (e) => { commitsTab.choose(key, kind); open(diffCall, told, e.currentTarget); } }, word);
    };
    return el("nav", { class: "bb-tabs", "aria-label": "Pull request" }, tab("pull_request", "Overview"), tab("diff", "Diff"),
      data.kind === "pull_request" || listed ? tab("commits", "Commits") : null);
  }

  function states(data, now) {
    const c = obj(data.call);
    if (c.inbox || typeof c.project !== "string" || typeof c.repo !== "string" || !can(data, "pull_requests")) return null;
    return el("nav", { class: "bb-tabs bb-states", "aria-label": "State" }, el("span", { class: "bb-muted" }, "State:"),
      Object.entries(STATES).map(([state, word]) => button("bb-tab", word, Object.assign({}, c, { state, start: undefined }), state === now, { "data-state": state })));
  }

  function rowTitle(data, item, title) {
    if (!can(data, "pull_request") || !Number.isInteger(item.id) || typeof item.project !== "string" || typeof item.repo !== "string") return null;
    return button("bb-row-link bb-open-here", title, { kind: "pull_request", project: item.project, repo: item.repo, pr_id: item.id });
  }

  // A button that opens `call` in place (its kind offered), else null.
  const go = (data, cls, word, call) => (can(data, call.kind) ? button(cls, word, call, false) : null);

  return { tabs, states, rowTitle, backButton, open, can, named, go, reset: () => { stack.length = 0; } };
})();
