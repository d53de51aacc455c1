// What the person does in a view goes through the model's own tools (ADR-101): each action is a
// tools/call of the tool the model would call, through the host, so the scope, the audit trail and
// the confirmation of a tool that asks apply as to the model's call. An action is offered only where
// its tool is exposed (the view data's server.tools) and where Bitbucket's page offers it: Approve
// and Needs work on an open pull request, Merge when the merge check allows it, Comment, Reply,
// Create task, Resolve and Reopen task; on a draft of the person's review (a PENDING comment) only
// Edit and Delete, Delete after a confirm step in the page. What the person writes is read from an
// editable box and sent from a button, never from a form (a view's frame may be sandboxed without forms). After an
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
  const prOf = (data) => obj(data.pullRequest || data.diff || data.threads);

  // Calls `tool` with `args` through the host. `button` (and every button in `more.within`) is busy meanwhile;
  // `problem` shows bb's words when it fails. On success `more.said` gets the answer's text, the view is
  // read again in place and the model told `told`. A tool that asks the person first (issue 51: it merges or
  // cannot be undone) gives `more.declined`, the words for when they did not confirm ("Not merged: you
  // declined."): while the call waits, "Waiting for your confirmation" stands beside the button (the host
  // shows bb's question); when the answer says the person did not confirm (_meta["bb/confirmation"] is
  // "declined": declined, dismissed, or the box left unticked), those words stand in `problem` as a note,
  // not an error, and the view stays as it was: nothing is read again and the model is not told.
  function run(tool, args, button, problem, told, more = {}) {
    if (page.gone || button.disabled) return Promise.resolve(false);
    const label = button.textContent;
    const busy = [button, ...(more.within ? more.within.querySelectorAll("button") : [])];
    for (const b of busy) b.disabled = true;
    button.ariaBusy = "true";
    problem.replaceChildren();
    problem.hidden = true;
    problem.classList.remove("bb-not-confirmed");
    // Only beside a tool this server asks about (the view data's server.asks; every such tool when absent).
    const asked = obj(obj(page.data).server).asks;
    const asks = more.declined && (!Array.isArray(asked) || asked.includes(tool));
    const waiting = asks ? el("span", { class: "bb-waiting", role: "status" }, "Waiting for your confirmation") : null;
    if (waiting) button.after(waiting);
    const done = () => { for (const b of busy) b.disabled = false; button.ariaBusy = null; button.textContent = label; if (waiting) waiting.remove(); };
    const fail = (text) => {
      done();
      problem.replaceChildren(firstSentence(text) || "It did not work, and bb said nothing about why.");
      problem.hidden = false;
      return false;
    };
    return bridge.request("tools/call", { name: tool, arguments: args }).then((result) => {
      if (page.gone) return false;
      const r = obj(result);
      if (declined(r)) {
        done();
        problem.replaceChildren(more.declined || "Nothing changed: you did not confirm.");
        problem.classList.add("bb-not-confirmed");
        problem.hidden = false;
        return false;
      }
      if (r.isError) return fail(resultText(r));
      done();
      if (more.said) more.said(resultText(r));
      changes.tell(told);
      reload();
      return true;
    }, (err) => fail(String(obj(err).message || "The host did not pass the call on.")));
  }
  // Whether a tool's answer says the person did not confirm (bb wrote nothing): a plain result, not an error.
  const declined = (r) => obj(r._meta)["bb/confirmation"] === "declined";

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
  const button = (cls, words, onclick, more) => el("button", Object.assign({ type: "button", class: cls, onclick }, more), words);
  // A step that asks first: `first` (a button) gives way to the question, `label` (runs `act(yes)`; its class
  // is first's second class and "-yes") and Cancel.
  function confirm(first, label, question, act) {
    const ask = el("span", { class: "bb-confirm", hidden: "" });
    const swap = (asking) => { first.hidden = asking; ask.hidden = !asking; (asking ? yes : first).focus(); };
    const yes = button(`bb-button bb-danger-btn ${first.classList[1]}-yes`, label, () => act(yes));
    const no = button("bb-button", "Cancel", () => swap(false));
    first.addEventListener("click", () => swap(true));
    ask.append(question, yes, " ", no);
    return [first, ask];
  }
  // An editable box whose text is kept under `key` across redraws.
  function editable(key, label, cls = "") {
    const box = el("div", { class: `bb-editor${cls}`, contenteditable: "plaintext-only", role: "textbox", "aria-multiline": "true",
      "aria-label": label, "data-placeholder": label, dir: "auto", oninput: () => drafts.set(key, box.innerText) });
    box.textContent = drafts.get(key) || "";
    return box;
  }

  // Whether the working Merge is offered: the merge check allows it and merge_pull_request is exposed.
  const canMerge = (data) => {
    const pr = prOf(data);
    return offers(data, "merge_pull_request") && obj(pr.mergeCheck).canMerge === true && Number.isInteger(pr.version);
  };

  // Needs work, Approve and Merge, as Bitbucket's pull request page has them beside its title. `merge` is the card's
  // Merge when it is not the working one (vetoed, or Merge in Bitbucket).
  function bar(data, merge) {
    const pr = prOf(data);
    if (pr.state !== "OPEN") return null;
    const problem = problemLine();
    const id = `PR #${pr.id}`;
    const buttons = [];
    // Bitbucket offers no review to the author. Its page orders them Needs work, Approve, beside Merge; a verdict
    // given is its button pressed, and pressing it again takes it back ("Remove approval", "Remove needs work").
    const you = typeof pr.you === "string" ? pr.you : null;
    const mine = Array.isArray(pr.reviewers) ? pr.reviewers.find((r) => r && r.user === you) : null;
    if (offers(data, "submit_pr_review") && !(you && pr.author === you)) {
      const review = (status, action, words, undo, told, undone, refused) => {
        const on = Boolean(mine && mine.status === status);
        const b = button(`bb-button bb-act-${on ? "withdraw" : action}`, words, () =>
          run("submit_pr_review", Object.assign(where(data), { action: on ? "withdraw" : action }), b, problem, on ? undone : told,
            on ? {} : { declined: refused }),
          { "aria-pressed": String(on), "data-verdict": action, title: on ? undo : null });
        return b;
      };
      buttons.push(review("NEEDS_WORK", "request_changes", "Needs work", "Remove needs work",
        `The person marked ${id} as needing work.`, `The person withdrew their needs work on ${id}.`, "Not marked as needs work: you declined."),
      review("APPROVED", "approve", "Approve", "Remove approval", `The person approved ${id}.`, `The person withdrew their approval of ${id}.`, "Not approved: you declined."));
    }
    if (merge) buttons.push(merge);
    else if (canMerge(data)) {
      const b = button("bb-button bb-primary bb-act-merge", "Merge",
        () => run("merge_pull_request", Object.assign(where(data), { version: pr.version }), b, problem, `The person merged ${id}.`,
          { declined: "Not merged: you declined." }));
      buttons.push(b);
    }
    if (!buttons.length) return null;
    return el("div", { class: "bb-action-bar" }, el("div", { class: "bb-action-buttons" }, buttons), problem);
  }

  // An editable box and its buttons [words, tool, args, told, after]: each sends the box's text with the args.
  // `key` names what is kept of it across redraws; `extra` are more nodes for the row (Cancel).
  function composer(data, key, placeholder, buttons, extra) {
    const box = editable(key, placeholder);
    const problem = problemLine();
    const row = el("div", { class: "bb-editor-buttons" }, buttons.map(([words, tool, args, told, after]) => {
      const b = button("bb-button", words, () => {
        const text = box.innerText.trim();
        if (!text) { problem.replaceChildren("Write something first."); problem.hidden = false; box.focus(); return; }
        run(tool, Object.assign(where(data), args, { text }), b, problem, told).then((ok) => { if (ok) { drafts.delete(key); box.textContent = ""; if (after) after(); } });
      });
      return b;
    }), extra);
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

  // Under a draft: Edit (a box with its Markdown, Save and Cancel) and Delete (then a confirm step).
  function pending(data, c, id) {
    const parts = [];
    const problem = problemLine();
    if (offers(data, "update_pr_comment")) {
      const key = `edit-${c.id}`;
      const slot = el("div", { class: "bb-reply-slot bb-edit-slot" });
      const close = () => { drafts.delete(key); slot.replaceChildren(); };
      const open = () => {
        if (slot.firstChild) return;
        if (!drafts.has(key)) drafts.set(key, typeof c.markdown === "string" ? c.markdown : markdown.source(c.text));
        slot.replaceChildren(composer(data, key, "Edit the comment", [["Save", "update_pr_comment", { comment_id: c.id }, `The person edited a pending comment on ${id}.`, close]],
          button("bb-button", "Cancel", close)));
        const box = slot.querySelector(".bb-editor");
        if (box && box.isConnected) box.focus();
      };
      parts.push(button("bb-link-button bb-act-edit", "Edit", open), slot);
      if (drafts.has(key)) open();
    }
    if (offers(data, "delete_pr_comment")) {
      parts.splice(1, 0, ...confirm(button("bb-link-button bb-act-delete", "Delete"), "Delete", "Delete this pending comment? ",
        (yes) => run("delete_pr_comment", Object.assign(where(data), { comment_id: c.id }), yes, problem, `The person deleted a pending comment on ${id}.`,
          { within: yes.parentNode, declined: "Not deleted: you declined." })));
    }
    return parts.length ? el("div", { class: "bb-comment-actions" }, parts, problem) : null;
  }

  // Under a comment: Reply (opens a box), and Resolve or Reopen for a task; a draft's own (pending).
  function thread(data, c) {
    if (!Number.isInteger(c.id)) return null;
    const id = `PR #${prOf(data).id}`;
    if (c.state === "PENDING") return pending(data, c, id);
    const parts = [];
    if (offers(data, "add_pr_comment")) {
      const slot = el("div", { class: "bb-reply-slot" });
      const open = () => {
        if (slot.firstChild) { slot.replaceChildren(); return; }
        slot.replaceChildren(composer(data, `reply-${c.id}`, "Reply", [["Reply", "add_pr_comment", { reply_to: c.id }, `The person replied to a comment on ${id}.`]]));
        const box = slot.querySelector(".bb-editor");
        if (box) box.focus();
      };
      parts.push(button("bb-link-button bb-act-reply", "Reply", open));
      if (drafts.has(`reply-${c.id}`)) open();
      parts.push(slot);
    }
    if (c.task === true && offers(data, "update_pr_comment")) {
      const problem = problemLine();
      const resolved = c.state === "RESOLVED";
      const b = button("bb-link-button bb-act-task", resolved ? "Reopen task" : "Resolve task",
        () => run("update_pr_comment", Object.assign(where(data), { comment_id: c.id, state: resolved ? "OPEN" : "RESOLVED" }), b, problem,
          `The person ${resolved ? "reopened" : "resolved"} a task on ${id}.`));
      parts.splice(1, 0, b);
      parts.push(problem);
    }
    // Ask the model about the thread (point.js), where the host takes messages.
    const asked = point.threadAsk(data, c);
    if (asked) parts.push(...asked);
    return parts.length ? el("div", { class: "bb-comment-actions" }, parts) : null;
  }

  // A draft pull request's notice, as Bitbucket's page has it (bitbucket-ui.md: an information note that you are
  // viewing a draft, with Mark as ready [doc: D1]; its exact words are not public): Mark as ready is the model's
  // update_pull_request with draft false, offered where the tool is.
  function draftNote(data) {
    const pr = prOf(data);
    if (pr.state !== "OPEN" || pr.draft !== true) return null;
    const problem = problemLine();
    const id = `PR #${pr.id}`;
    const ready = offers(data, "update_pull_request") && Number.isInteger(pr.id)
      ? button("bb-button bb-act-ready", "Mark as ready", () => run("update_pull_request", Object.assign(where(data), { draft: false }), ready, problem,
        `The person marked ${id} as ready for review.`, { declined: "Still a draft: you declined." })) : null;
    return el("section", { class: "bb-draft-note", role: "note", "aria-label": "Draft" },
      // In the words of the merge check's veto ("A draft pull request cannot be merged. Publish it first."), so the
      // notice and Merge issues say one thing (issue 54 item 10).
      el("p", {}, el("strong", {}, "This pull request is a draft."), ready ? " It can't be merged until it is published: Mark as ready publishes it." : " It can't be merged until it is published."),
      ready, problem);
  }

  return { bar, canMerge, newComment, thread, offers, run, where, prOf, problemLine, button, confirm, editable, drafts, draftNote };
})();
