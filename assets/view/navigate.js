// Opening in place (ADR-101) through refresh_view with another show call and no fingerprint:
// Overview/Diff tabs, a list's pull request, its State tabs; "← Back" redraws the view before and
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

  function open(call, told, button) {
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
    changes.tell(`The person went back to ${label(e.data)}`);
  }
  function label(data) {
    const call = obj(data.call);
    if (data.kind === "diff") return `the diff of PR #${call.pr_id} in ${where(call)}`;
    if (data.kind === "pull_request") return `PR #${call.pr_id} in ${where(call)}`;
    return obj(data.list).title || "the list of pull requests";
  }

  const backButton = () => (stack.length ? el("button", { type: "button", class: "bb-mode bb-back", onclick: back }, "← Back") : null);

  // Overview and Diff, for a pull request's views, where the server offers both.
  function tabs(data) {
    const call = obj(data.call);
    if ((data.kind !== "pull_request" && data.kind !== "diff") || !Number.isInteger(call.pr_id) || !can(data, "pull_request") || !can(data, "diff")) return null;
    const tab = (kind, word, what) => el("button", {
      type: "button", class: "bb-tab", "data-kind": kind, "aria-current": data.kind === kind ? "page" : null,
      onclick: data.kind === kind ? null : (e) => open({ kind, project: call.project, repo: call.repo, pr_id: call.pr_id },
        `The person opened the ${what} of PR #${call.pr_id} in ${where(call)}`, e.currentTarget),
    }, word);
    return el("nav", { class: "bb-tabs", "aria-label": "Pull request" }, tab("pull_request", "Overview", "overview"), tab("diff", "Diff", "diff"));
  }

  // Bitbucket's State filter of a repository's list: Open, Merged, Declined, All.
  function states(data, now) {
    const call = obj(data.call);
    if (call.inbox || typeof call.project !== "string" || typeof call.repo !== "string" || !can(data, "pull_requests")) return null;
    return el("nav", { class: "bb-tabs bb-states", "aria-label": "State" }, el("span", { class: "bb-muted" }, "State:"),
      Object.entries(STATES).map(([state, word]) => el("button", {
        type: "button", class: "bb-tab", "data-state": state, "aria-current": state === now ? "page" : null,
        onclick: state === now ? null : (e) => {
          const next = Object.assign({}, call, { state });
          delete next.start;
          open(next, `The person opened ${state === "ALL" ? "all" : `the ${word.toLowerCase()}`} pull requests of ${where(call)}`, e.currentTarget);
        },
      }, word)));
  }

  // A list row's pull request, opened in place: its title as a button, where the server offers cards.
  function rowTitle(data, item, title) {
    if (!can(data, "pull_request") || !Number.isInteger(item.id) || typeof item.project !== "string" || typeof item.repo !== "string") return null;
    const call = { kind: "pull_request", project: item.project, repo: item.repo, pr_id: item.id };
    return el("button", { type: "button", class: "bb-row-link bb-open-here", title: "Open it here",
      onclick: (e) => open(call, `The person opened PR #${item.id} in ${where(call)}`, e.currentTarget) }, title);
  }

  return { tabs, states, rowTitle, backButton, reset: () => { stack.length = 0; } };
})();
