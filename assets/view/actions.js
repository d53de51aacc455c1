// What the person does in a view goes through the model's own tools (ADR-101): each action is a
// tools/call of the tool the model would call, through the host, so the scope, the audit trail and
// the confirmation of a tool that asks apply as to the model's call. An action is offered only where
// its tool is exposed (the view data's server.tools) and where Bitbucket's page offers it: Approve
// and Needs work on an open pull request, Merge when the merge check allows it, Comment, Reply,
// Create task, Resolve and Reopen task. What the person writes is read from an editable box and
// sent from a button, never from a form (a view's frame may be sandboxed without forms). After an
// action the view is read again and drawn in place, and the model is told in one line; on failure
// the person's text stays where it was, with bb's words for what went wrong.
const actions = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const drafts = new Map(); // what the person was writing, by box, kept across redraws and failures

  const offers = (data, tool) => Array.isArray(obj(obj(data).server).tools) && data.server.tools.includes(tool);
  const where = (data) => {
    const c = obj(data.call);
    return { project: c.project, repo: c.repo, pr_id: c.pr_id };
  };
  const prOf = (data) => obj(data.pullRequest || data.diff);

  // Calls `tool` with `args` through the host. `button` is busy meanwhile; `problem` shows bb's words
  // when it fails. On success the view is read again in place and the model told `told`.
  function run(tool, args, button, problem, told) {
    if (page.gone || button.disabled) return Promise.resolve(false);
    const label = button.textContent;
    button.disabled = true;
    button.ariaBusy = "true";
    problem.replaceChildren();
    problem.hidden = true;
    const done = () => { button.disabled = false; button.ariaBusy = null; button.textContent = label; };
    const fail = (text) => {
      done();
      problem.replaceChildren(firstSentence(text) || "It did not work, and bb said nothing about why.");
      problem.hidden = false;
      return false;
    };
    return bridge.request("tools/call", { name: tool, arguments: args }).then((result) => {
      if (page.gone) return false;
      const r = obj(result);
      if (r.isError) return fail(resultText(r));
      done();
      changes.tell(told);
      reload();
      return true;
    }, (err) => fail(String(obj(err).message || "The host did not pass the call on.")));
  }

  // Reads the view again (refresh_view with its show call and no fingerprint) and draws it in place.
  function reload() {
    const data = page.data;
    if (!data || !offers(data, "refresh_view")) return;
    bridge.request("tools/call", { name: "refresh_view", arguments: { show: data.call } }).then((result) => {
      const fresh = viewData(result);
      if (page.gone || !fresh || obj(result).isError || page.data !== data) return;
      page.result = result;
      page.data = fresh;
      redraw();
      refresh.start(fresh);
    }, () => {});
  }

  const problemLine = () => el("p", { class: "bb-action-problem", role: "alert", hidden: "" });

  // Approve, Needs work and Merge, as Bitbucket's pull request page has them beside its title.
  function bar(data) {
    const pr = prOf(data);
    if (pr.state !== "OPEN") return null;
    const problem = problemLine();
    const id = `PR #${pr.id}`;
    const buttons = [];
    // Bitbucket offers no review to the author; to someone who approved, Unapprove.
    const you = typeof pr.you === "string" ? pr.you : null;
    const mine = Array.isArray(pr.reviewers) ? pr.reviewers.find((r) => r && r.user === you) : null;
    if (offers(data, "submit_pr_review") && !(you && pr.author === you)) {
      const review = (action, words, told) => {
        const b = el("button", { type: "button", class: `bb-button bb-act-${action}`, onclick: () => run("submit_pr_review", Object.assign(where(data), { action }), b, problem, told) }, words);
        return b;
      };
      buttons.push(mine && mine.status === "APPROVED" ? review("withdraw", "Unapprove", `The person withdrew their approval of ${id}.`)
        : review("approve", "Approve", `The person approved ${id}.`),
      mine && mine.status === "NEEDS_WORK" ? review("withdraw", "Remove needs work", `The person withdrew their needs work on ${id}.`)
        : review("request_changes", "Needs work", `The person marked ${id} as needing work.`));
    }
    const check = obj(pr.mergeCheck);
    if (offers(data, "merge_pull_request") && check.canMerge === true && Number.isInteger(pr.version)) {
      const b = el("button", { type: "button", class: "bb-button bb-primary bb-act-merge",
        onclick: () => run("merge_pull_request", Object.assign(where(data), { version: pr.version }), b, problem, `The person merged ${id}.`) }, "Merge");
      buttons.push(b);
    }
    if (!buttons.length) return null;
    return el("div", { class: "bb-action-bar" }, el("div", { class: "bb-action-buttons" }, buttons), problem);
  }

  // An editable box and its buttons. `key` names the draft; `send(text, task)` gives the call.
  function composer(data, key, placeholder, buttons) {
    const box = el("div", { class: "bb-editor", contenteditable: "plaintext-only", role: "textbox", "aria-multiline": "true",
      "aria-label": placeholder, "data-placeholder": placeholder, dir: "auto",
      oninput: () => drafts.set(key, box.innerText) });
    box.textContent = drafts.get(key) || "";
    const problem = problemLine();
    const row = el("div", { class: "bb-editor-buttons" }, buttons.map(([words, tool, args, told]) => {
      const b = el("button", { type: "button", class: "bb-button", onclick: () => {
        const text = box.innerText.trim();
        if (!text) { problem.replaceChildren("Write something first."); problem.hidden = false; box.focus(); return; }
        run(tool, Object.assign(where(data), args, { text }), b, problem, told).then((ok) => { if (ok) { drafts.delete(key); box.textContent = ""; } });
      } }, words);
      return b;
    }));
    return el("div", { class: "bb-composer", "data-composer": key }, box, row, problem);
  }

  // Bitbucket's box under the activity: a new comment, or a new task.
  function newComment(data) {
    if (!offers(data, "add_pr_comment")) return null;
    const id = `PR #${prOf(data).id}`;
    return composer(data, "new", "Add a comment", [
      ["Comment", "add_pr_comment", {}, `The person commented on ${id}.`],
      ["Create task", "add_pr_comment", { task: true }, `The person created a task on ${id}.`],
    ]);
  }

  // Under a comment: Reply (opens a box), and Resolve or Reopen for a task.
  function thread(data, c) {
    if (!Number.isInteger(c.id)) return null;
    const id = `PR #${prOf(data).id}`;
    const parts = [];
    if (offers(data, "add_pr_comment")) {
      const slot = el("div", { class: "bb-reply-slot" });
      const open = () => {
        if (slot.firstChild) { slot.replaceChildren(); return; }
        slot.replaceChildren(composer(data, `reply-${c.id}`, "Reply", [["Reply", "add_pr_comment", { reply_to: c.id }, `The person replied to a comment on ${id}.`]]));
        const box = slot.querySelector(".bb-editor");
        if (box) box.focus();
      };
      parts.push(el("button", { type: "button", class: "bb-link-button bb-act-reply", onclick: open }, "Reply"));
      if (drafts.has(`reply-${c.id}`)) open();
      parts.push(slot);
    }
    if (c.task === true && offers(data, "update_pr_comment")) {
      const problem = problemLine();
      const resolved = c.state === "RESOLVED";
      const b = el("button", { type: "button", class: "bb-link-button bb-act-task",
        onclick: () => run("update_pr_comment", Object.assign(where(data), { comment_id: c.id, state: resolved ? "OPEN" : "RESOLVED" }), b, problem,
          `The person ${resolved ? "reopened" : "resolved"} a task on ${id}.`) }, resolved ? "Reopen task" : "Resolve task");
      parts.splice(1, 0, b);
      parts.push(problem);
    }
    return parts.length ? el("div", { class: "bb-comment-actions" }, parts) : null;
  }

  return { bar, newComment, thread, offers };
})();
