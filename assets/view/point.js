// The person points at code and the model sees it (issue 41). Lines selected in a diff (either side, unified or
// side-by-side) or in a source view go into the model's context (context.js: ui/update-model-context) — the
// repository, the pull request or ref, the path, the side, the line range, the commit and the lines' text
// within CAP bytes (said when cut); clearing the selection clears it. A small bar on the selection asks the
// model about the lines (ui/message, "Ask about this"), or on a pull request's diff to draft a pending comment
// there, anchored as Bitbucket anchors one on the selection's last line; a comment thread has "Ask about this"
// too. Both only where the host offers `message`.
const point = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const arr = (x) => (Array.isArray(x) ? x.filter((i) => i && typeof i === "object") : []);
  const str = (x) => (typeof x === "string" ? x : "");
  const CAP = 4000; // bytes of the selected lines' text the context and a message carry
  const WAIT_MS = 250; // a selection still for this long is sent (a drag sends once)
  const s = { timer: null, place: null, key: "" };
  const short = (c) => str(c).slice(0, 7);
  const range = (a, b) => (a === b ? `line ${a}` : `lines ${a}–${b}`);
  const bytes = (t) => new TextEncoder().encode(t).length;

  // The selection's lines: the rows it touches in the view, of the file its start is in, on its start's side.
  function selected() {
    const sel = document.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    const r = sel.getRangeAt(0);
    if (!root.contains(r.commonAncestorContainer)) return null;
    const at = (n) => (n && n.nodeType === 1 ? n : n && n.parentElement);
    const startRow = at(r.startContainer) && at(r.startContainer).closest("tr.bb-dl, tr.bb-sl");
    const rows = [...root.querySelectorAll("tr.bb-dl, tr.bb-sl")].filter((row) => r.intersectsNode(row));
    const first = startRow || rows[0];
    if (!first) return null;
    const data = page.data || {};
    if (first.classList.contains("bb-sl")) {
      const f = obj(data.file);
      const ns = rows.filter((row) => row.classList.contains("bb-sl")).map((row) => Number(row.dataset.line)).filter(Number.isInteger);
      if (!ns.length) return null;
      const [a, b] = [Math.min(...ns), Math.max(...ns)];
      const text = arr(f.lines).filter((l) => l.n >= a && l.n <= b).map((l) => str(l.s));
      // The ref as the person chose it (none: the default branch, by its name when bb read it), and its commit when known.
      return { kind: "file", project: str(f.project), repo: str(f.repo), path: str(f.path), ref: str(f.at) || str(f.atLabel) || "the default branch",
        commit: str(f.commit), side: "new", from: a, to: b, text };
    }
    const path = first.dataset.path || "";
    const mine = rows.filter((row) => row.dataset.path === path);
    // Side-by-side: the half the selection starts in; unified: the new side, the old when only removed lines.
    const cell = at(r.startContainer) && at(r.startContainer).closest("td");
    const sbs = first.closest("table") && first.closest("table").dataset.layout === "side-by-side";
    let side;
    // (The half a press marked, when there was one: a drag's start may sit on the row, not in a cell.)
    const pick = sbs ? first.closest("table").dataset.pick : "";
    if (sbs) side = pick === "new" || pick === "old" ? pick : cell && [...first.children].indexOf(cell) >= 2 ? "new" : "old";
    else side = mine.every((row) => row.classList.contains("bb-dl-R")) ? "old" : "new";
    const key = side === "new" ? "new" : "old";
    const ns = mine.map((row) => Number(row.dataset[key])).filter((n) => Number.isInteger(n) && n > 0);
    if (!ns.length) return null;
    const [a, b] = [Math.min(...ns), Math.max(...ns)];
    const d = obj(data.diff);
    const lines = arr(arr(d.diffs).find((x) => x.path === path)?.hunks).flatMap((h) => arr(h.lines));
    const text = [];
    for (let n = a; n <= b; n++) {
      const l = lines.find((x) => (side === "new" ? x.n === n && x.t !== "R" : x.o === n && x.t !== "A"));
      if (l) text.push(str(l.s));
    }
    const exp = obj(d.expand);
    // What Bitbucket anchors a comment on: the selection's last line, on the side its type is on (REMOVED the
    // old file's number, ADDED and CONTEXT the new file's); a range starts at the first line numbered on that side.
    const picked = mine.map((row) => {
      const o = Number(row.dataset.old) || null;
      const n = Number(row.dataset.new) || null;
      const t = row.classList.contains("bb-dl-R") ? "R" : row.classList.contains("bb-dl-A") ? "A"
        : row.classList.contains("bb-dl-X") ? (side === "old" ? "R" : "A") : "C";
      // A side-by-side row of a change holds a removed line on the left, an added one on the right.
      return t === "C" ? { t, o, n } : t === "R" ? { t, o, n: null } : { t, o: null, n };
    }).filter((l) => l.o || l.n);
    const last = picked[picked.length - 1];
    let anchor = null;
    if (last) {
      const on = last.t === "R" ? "o" : "n";
      const first = picked.find((l) => l[on]);
      anchor = { line: last[on], from: first && first[on] < last[on] ? first[on] : null, type: { R: "REMOVED", A: "ADDED", C: "CONTEXT" }[last.t], old: on === "o" };
    }
    // A compare names each side by its ref as asked; the new side's commit is the newest of the commits `from` has
    // that `to` lacks (its head), when the Commits tab was read. A pull request's sides are commits already.
    const cmp = d.compare ? { from: str(obj(d.compare).from), to: str(obj(d.compare).to) } : null;
    const head = str(obj(arr(obj(d.commits).items)[0]).id);
    return {
      kind: d.compare ? "compare" : "diff", ref: cmp ? (side === "new" ? cmp.from : cmp.to) : "", project: str(d.project), repo: str(d.repo), pr: Number.isInteger(d.id) ? d.id : null,
      compare: cmp, commit: cmp ? (side === "new" ? head : "") : side === "new" ? str(d.head) || str(exp.new) : str(exp.old),
      path, side, from: a, to: b, text, anchor,
    };
  }

  // Where the lines are, in words a person and the model both read: "In BB/api #7, src/lib.rs lines 20–23 of the
  // new file at 1a2b3c4".
  function words(p) {
    const repo = `${p.project}/${p.repo}`;
    const at = p.ref ? ` at ${p.ref}${p.commit ? ` (${short(p.commit)})` : ""}` : p.commit ? ` at ${short(p.commit)}` : "";
    if (p.kind === "file") return `In ${repo}, ${p.path} ${range(p.from, p.to)}${at}`;
    const where = p.kind === "compare" ? `${repo}, comparing ${p.compare.from} with ${p.compare.to}` : `${repo} #${p.pr}`;
    return `In ${where}, ${p.path} ${range(p.from, p.to)} of the ${p.side} file${at}`;
  }
  // The lines' text within CAP bytes, whole lines, with what was left out said.
  function body(p) {
    const out = [];
    let used = 0;
    for (const line of p.text) {
      const b = bytes(line) + 1;
      if (used + b > CAP) break;
      out.push(line);
      used += b;
    }
    const left = p.text.length - out.length;
    return { text: out.join("\n"), cut: left };
  }
  function structured(p, cut) {
    // What is not known is left out, never said as null.
    const all = { project: p.project, repo: p.repo, pullRequest: p.pr, compare: p.compare, ref: p.ref,
      path: p.path, side: p.side, from: p.from, to: p.to, commit: p.commit, linesLeftOut: cut };
    return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== null && v !== undefined && v !== ""));
  }

  // ---- the bar on a selection --------------------------------------------------------------------
  const bar = el("div", { class: "bb-point", role: "toolbar", "aria-label": "Selected lines", hidden: "" });
  const canMessage = () => Boolean(obj(page.caps).message);
  function message(text) {
    return bridge.request("ui/message", { role: "user", content: [{ type: "text", text }] });
  }
  function ask(p) {
    const b = body(p);
    const cut = b.cut ? `\n(${b.cut} more line${b.cut === 1 ? "" : "s"} not quoted)` : "";
    return `${words(p)}:\n\`\`\`\n${b.text}\n\`\`\`${cut}\nWhat do these lines do, and is anything wrong with them?`;
  }
  // The anchor is the one Bitbucket draws at the selection's last line (`anchor` of selected()); its numbers are
  // said in words when they are not the ones the selection is named by (unchanged lines on the left half).
  function draft(p) {
    const a = p.anchor;
    const moved = (a.old ? "old" : "new") !== p.side || (a.from ?? a.line) !== p.from || a.line !== p.to;
    const where = moved ? `; Bitbucket anchors it at ${range(a.from ?? a.line, a.line)} of the ${a.old ? "old" : "new"} file` : "";
    return `${words(p)}: draft a review comment on these lines for me to check${where} — add it as pending with add_pr_comment `
      + `(project ${p.project}, repo ${p.repo}, pr_id ${p.pr}, path ${p.path}, line ${a.line}${a.from !== null ? `, from_line ${a.from}` : ""}, `
      + `line_type ${a.type}, pending true).`;
  }
  function showBar(p) {
    if (!p || !canMessage() || page.gone) { bar.hidden = true; return; }
    const offers = (name) => Array.isArray(obj(page.data && page.data.server).tools) && page.data.server.tools.includes(name);
    const sent = el("span", { class: "bb-muted bb-point-said", role: "status" });
    const act = (label, text) => el("button", { type: "button", class: "bb-button bb-point-btn", onclick: (e) => {
      const b = e.currentTarget;
      b.disabled = true;
      message(text).then(() => { sent.textContent = "Sent to the chat."; }, () => { sent.textContent = "The host did not take it."; }).finally(() => { b.disabled = false; });
    } }, label);
    // A diff's selection is on one side: the bar says which (side-by-side, either half).
    const side = p.kind === "file" ? "" : ` of the ${p.side} file`;
    bar.replaceChildren(el("span", { class: "bb-point-where" }, `${p.path.split("/").pop()} ${range(p.from, p.to)}${side}`),
      act("Ask about this", ask(p)),
      // replaceChildren, unlike el(), would draw a null as the word: only what is there is passed.
      ...(p.kind === "diff" && p.pr !== null && p.anchor && offers("add_pr_comment") ? [act("Draft a comment here", draft(p))] : []), sent);
    if (!bar.isConnected) document.body.append(bar);
    const sel = document.getSelection();
    const rect = sel && sel.rangeCount ? sel.getRangeAt(0).getBoundingClientRect() : null;
    bar.hidden = false;
    const top = rect ? Math.min(innerHeight - bar.offsetHeight - 4, rect.bottom + 6) : 8;
    const left = rect ? Math.max(4, Math.min(innerWidth - bar.offsetWidth - 4, rect.left)) : 8;
    bar.style.top = `${Math.max(4, top) + scrollY}px`;
    bar.style.left = `${left + scrollX}px`;
  }

  function update() {
    s.timer = null;
    if (page.gone) return;
    const p = selected();
    const key = p ? JSON.stringify([p.kind, p.project, p.repo, p.pr, p.path, p.side, p.from, p.to, p.commit]) : "";
    if (key !== s.key) {
      s.key = key;
      s.place = p;
      if (p) {
        const b = body(p);
        const cut = b.cut ? `\n(… ${b.cut} more line${b.cut === 1 ? "" : "s"} selected, not carried here)` : "";
        modelContext.set("selection", `The person selected these lines in the view. ${words(p)}:\n${b.text}${cut}`, structured(p, b.cut));
      } else modelContext.set("selection", null);
    }
    showBar(p);
  }
  // Side-by-side, a selection stays in the half it starts in (as the lines it names do): a press marks the table with
  // that half (data-pick), and diff.css makes the other half's cells unselectable until a press elsewhere.
  document.addEventListener("pointerdown", (e) => {
    const cell = e.target instanceof Element ? e.target.closest("table.bb-sbs td") : null;
    for (const t of root.querySelectorAll("table.bb-sbs[data-pick]")) if (!cell || t !== cell.closest("table")) delete t.dataset.pick;
    if (!cell) return;
    const row = cell.parentElement;
    const half = row.classList.contains("bb-dl") ? ([...row.children].indexOf(cell) >= 2 ? "new" : "old")
      : cell.classList.contains("bb-dc-new") || cell.classList.contains("bb-an-new") ? "new" : cell.classList.contains("bb-dc-old") || cell.classList.contains("bb-an-old") ? "old" : null;
    const table = cell.closest("table");
    // A press in the other half starts a selection there: the one in this half is let go first, else the press
    // would drag it (its range runs through the other half's cells, unselectable as they are).
    if (half && table.dataset.pick && table.dataset.pick !== half) document.getSelection().removeAllRanges();
    if (half) table.dataset.pick = half; else delete table.dataset.pick;
  }, true);
  // A press on the bar keeps the selection it is about (and focus where it was); its click still acts.
  bar.addEventListener("mousedown", (e) => e.preventDefault());
  document.addEventListener("selectionchange", () => {
    clearTimeout(s.timer);
    s.timer = setTimeout(update, WAIT_MS);
  });

  // The ids of every reply in `data` (a thread's Ask is on its first comment only), kept per view data.
  const replyIds = new WeakMap();
  function replies(data) {
    if (!replyIds.has(data)) {
      const ids = new Set();
      const stack = [];
      const walk = (x) => { if (Array.isArray(x)) for (const i of x) stack.push(i); else if (x && typeof x === "object") stack.push(...Object.values(x)); };
      walk(data);
      for (let guard = 0; stack.length && guard < 500000; guard++) {
        const x = stack.pop();
        if (!x || typeof x !== "object") continue;
        if (Array.isArray(x.replies)) for (const r of x.replies) if (r && Number.isInteger(r.id)) ids.add(r.id);
        walk(x);
      }
      replyIds.set(data, ids);
    }
    return replyIds.get(data);
  }
  // "Ask about this" on a comment thread (actions.thread), on its first comment, where the host offers `message`.
  function threadAsk(data, c) {
    if (!canMessage() || !Number.isInteger(c.id) || replies(data).has(c.id)) return null;
    const call = obj(data.call);
    const who = person(obj(data.users), c.author).name;
    const anchor = obj(c.anchor);
    const at = str(anchor.path) ? ` on ${str(anchor.path)}${Number.isInteger(anchor.line) ? ` line ${anchor.line}` : ""}` : "";
    const text = markdown.source(c.text).slice(0, 2000);
    const prompt = `In ${str(call.project)}/${str(call.repo)} #${call.pr_id}, about the comment thread #${c.id} by ${who}${at}:\n> ${text.replace(/\n/g, "\n> ")}\nWhat is being asked here, and what should the answer be?`;
    const said = el("span", { class: "bb-muted bb-point-said", role: "status" });
    const b = el("button", { type: "button", class: "bb-link-button bb-act-ask", onclick: () => {
      b.disabled = true;
      message(prompt).then(() => { said.textContent = " Sent to the chat."; }, () => { said.textContent = " The host did not take it."; }).finally(() => { b.disabled = false; });
    } }, "Ask about this");
    return [b, said];
  }
  return { threadAsk, words, selected };
})();
