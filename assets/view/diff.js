// The diff view, laid out as Bitbucket's Diff tab. Inline: the changed files (the change type in
// the colour of the name, a mark where a file has comments), then the first hunks of the first
// files, unified, in the view's one shape; a count says what is not drawn here. Fullscreen:
// Bitbucket's diff page, one file at a time with the file tree beside it (directories first,
// chains of single-child directories in one node; Hide file tree / Show file tree), previous and
// next file, unified and side-by-side (not offered for added or deleted files, as Bitbucket, nor
// where a half would hold under 40 columns). The gutters fit the file's largest line number; code
// wraps between identifiers, never inside one. Code Insights annotations are a marker in the new
// side's gutter that opens them under the line (insights.js). Code is drawn from each
// line's text split by bb's runs (codeLine, code.js), the class coloured from the theme (diff.css);
// comments sit in the row right after their line, a multi-line comment's range marked in the gutter;
// drafts, suggestions and the review bar ("Finish review") are review.js's. Where bb can read the file at the diff's commits,
// "Show more" rows above, between and below the hunks draw the unchanged lines in place (expand.js).
// A pull request's diff offers Bitbucket's iterative review choice when the person has reviewed it.
// Every code row carries data-path, data-old and data-new (the numbers it has), every comment
// data-comment-id. Text from Bitbucket is text: el() draws bidi controls visibly, and this module
// draws other control characters (a CRLF's carriage return) as visible names (CR).
// Two refs' diff (kind compare, `compare` in the data instead of a pull request's id, title and
// state) is drawn by this module too, as Bitbucket's Compare page: "Compare", source → destination,
// its Diff tab; no comments, no pull request actions (compare.js registers it).
const diffView = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const arr = (x) => (Array.isArray(x) ? x.filter((i) => i && typeof i === "object") : []);
  const str = (x) => (typeof x === "string" ? x : "");
  const lineNo = (x) => (Number.isInteger(x) && x >= 0 ? x : null);
  const INLINE_LINES = 120; // lines drawn inline at first; "Show N more lines" adds STEP_LINES
  const STEP_LINES = 200;
  const memory = new Map(); // per pull request: the file and layout the person chose in full screen

  // ---- words --------------------------------------------------------------------------------
  const dirOf = (p) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");
  const baseOf = (p) => p.slice(p.lastIndexOf("/") + 1);
  // Bitbucket's change type: the lozenge word, the class that colours the name, the tooltip.
  function change(entry) {
    const type = str(entry.file.type);
    const path = entry.path;
    const src = entry.src;
    switch (type) {
      case "ADD": return { word: "Added", cls: "bb-ct-add" };
      case "DELETE": return { word: "Deleted", cls: "bb-ct-del" };
      case "MODIFY": return { word: "Modified", cls: "bb-ct-mod" };
      case "COPY": return { word: "Copied", cls: "bb-ct-copy", tip: src ? `${src} → ${path}` : null };
      case "MOVE":
      case "RENAME": {
        const renamed = type === "RENAME" || !src || dirOf(src) === dirOf(path);
        return { word: renamed ? "Renamed" : "Moved", cls: "bb-ct-move", tip: src ? (renamed ? `Renamed from '${src}'` : `${src} → ${path}`) : null };
      }
      default: return { word: type ? type.slice(0, 20) : "Changed", cls: "bb-ct-mod" };
    }
  }
  const conflicted = (f) => f.conflict === true || f.conflicted === true;
  // A file's comments as its threads show them (each comment and reply drawn, once); Bitbucket's own count where
  // the view carries no diff of the file.
  function commentsOf(entry) {
    const d = obj(entry.diff);
    if (!Array.isArray(d.hunks)) return lineNo(entry.file.comments);
    const all = (c) => 1 + arr(obj(c).replies).reduce((n, r) => n + all(r), 0);
    const threads = [...arr(d.fileComments), ...d.hunks.flatMap((h) => arr(h.lines)).flatMap((l) => arr(l.c))];
    return threads.reduce((n, c) => n + all(c), 0) || null;
  }
  function fileTip(entry) {
    const name = baseOf(entry.path);
    const c = commentsOf(entry);
    if (c && conflicted(entry.file)) return `${name} has comments and a merge conflict`;
    if (c) return `${name} has comments`;
    if (conflicted(entry.file)) return `${name} has a merge conflict`;
    return change(entry).tip || entry.path;
  }
  function marks(entry) {
    const c = commentsOf(entry);
    return [
      c ? el("span", { class: "bb-dmark bb-dmark-comments", "data-mark": "comments", title: `${baseOf(entry.path)} has comments` },
        el("span", { class: "bb-i-comment", "aria-hidden": "true" }), fmt.num(c), sr(c === 1 ? " comment" : " comments")) : null,
      conflicted(entry.file) ? el("span", { class: "bb-dmark bb-dmark-conflict", "data-mark": "conflict", title: `${baseOf(entry.path)} has a merge conflict` },
        el("span", { "aria-hidden": "true" }, "⚠"), sr(" merge conflict")) : null,
      insights.fileMark(entry),
    ];
  }
  function countLines(d) { return arr(obj(d).hunks).reduce((n, h) => n + arr(h.lines).length, 0); }

  // ---- code -------------------------------------------------------------------------------
  // Code and text as codeLine (code.js) draws them: runs, control characters, long lines.
  const text = codeLine.text;
  const code = codeLine.draw;
  const SIGN = { A: "+", R: "-", C: " " };
  const SAID = { A: "added: ", R: "removed: ", C: "" };
  const LONG = 500; // code points past which a line is cut at four rows, the whole a click away
  // Code wraps where it must between identifiers, never inside one: a break opportunity (wbr) before each word
  // that follows punctuation ("self.|send(|Request::|get(url)"); diff.css breaks inside a word only when the
  // word alone is wider than its column.
  const WORD = /[\p{L}\p{N}_]/u;
  function breakable(nodes) {
    let prev = " ";
    const split = (t) => {
      const pieces = [];
      let from = 0;
      for (let i = 0; i < t.length; i++) {
        if (WORD.test(t[i]) && !WORD.test(prev) && prev.trim()) {
          if (i > from) pieces.push(t.slice(from, i));
          pieces.push(el("wbr", {}));
          from = i;
        }
        prev = t[i];
      }
      pieces.push(t.slice(from));
      return pieces;
    };
    return nodes.flat(Infinity).flatMap((n) => {
      if (typeof n === "string") return split(n);
      if (!n || n.nodeType !== 1) return [];
      if (!n.childElementCount) n.replaceChildren(...split(n.textContent));
      else prev = n.textContent.slice(-1) || prev;
      return [n];
    });
  }
  function codeCell(line, cls = "") {
    const t = SIGN[line.t] ? line.t : "C";
    const parts = [el("span", { class: "bb-sign", "aria-hidden": "true" }, SIGN[t]), SAID[t] ? sr(SAID[t]) : null, breakable([code(line)])];
    const long = str(line.s).length > LONG && Array.from(str(line.s)).length > LONG;
    return el("td", { class: `bb-dcode${cls}` }, long ? capped("div", { class: "bb-longline" }, parts, { lines: 4, what: "line" }) : parts);
  }
  // A gutter cell; `span`: the line is in a multi-line comment's range (a bar, as Bitbucket marks one).
  // `mark`: the button of the line's annotations (insights.js), on the new side.
  const num = (n, span, mark) => el("td", { class: span ? "bb-ln bb-lspan" : "bb-ln", "aria-hidden": n === null ? "true" : null }, mark || null, n === null ? "" : String(n));
  // The annotations of the line numbered `n` on the new side: its gutter's button and the row it opens.
  const noteOf = (entry, n, layout) => (n === null || !entry.an || !entry.an.at.has(n) ? null : insights.line(entry.an.at.get(n), entry.path, n, layout));
  // The gutter is as wide as the file's largest line number, as Bitbucket sizes it: the table says how many
  // digits (data-digits, 3 at least; diff.css widens the line-number columns to fit), from the hunks'
  // headers and every row drawn, Show more's lines too (`fit` again after each read).
  function widest(entry) {
    let max = 0;
    for (const h of arr(obj(entry.diff).hunks)) {
      for (const side of [h.old, h.new]) {
        const [first, lines] = Array.isArray(side) ? side.map(lineNo) : [];
        if (first !== null && lines) max = Math.max(max, first + lines - 1);
      }
    }
    return max;
  }
  function fit(table, entry) {
    let max = widest(entry);
    for (const r of table.querySelectorAll("tr[data-old], tr[data-new]")) max = Math.max(max, Number(r.dataset.old) || 0, Number(r.dataset.new) || 0);
    table.dataset.digits = String(Math.min(7, Math.max(3, String(max).length)));
    // Room in the new side's gutter for the annotations' buttons.
    table.toggleAttribute("data-marks", Boolean(table.querySelector(".bb-an-mark")));
    return table;
  }

  // ---- comments ---------------------------------------------------------------------------
  function body(tree, ctx, pre) {
    const drawn = markdown.draw(tree, "bb-md", pre);
    return drawn ? capped("div", { class: "bb-body" }, drawn, { box: ctx.inline ? 14 : 40, what: "comment" }) : null;
  }
  function comment(c, ctx, depth) {
    const p = person(ctx.users, c.author);
    const task = c.task === true ? el("span", { class: `bb-loz ${c.state === "RESOLVED" ? "bb-plain" : "bb-open"}` }, c.state === "RESOLVED" ? "Resolved task" : "Open task", c.oldKind === true ? " (old kind)" : null) : null;
    const replies = arr(c.replies);
    const nested = !replies.length ? null : depth >= 24
      ? el("p", { class: "bb-muted" }, "Further replies are in Bitbucket.")
      : grow(replies, { inline: ctx.inline, first: 2, step: 10, noun: "replies", one: "reply", cls: depth < 6 ? "bb-replies" : "bb-replies bb-flat", draw: (r) => comment(r, ctx, depth + 1) });
    const draft = review.lozenge(c);
    return el("div", { class: `bb-comment${c.task === true ? " bb-is-task" : ""}${draft ? " bb-is-pending" : ""}`, "data-comment-id": Number.isInteger(c.id) ? c.id : null },
      avatar(p, "sm"),
      el("div", { class: "bb-cbody" },
        el("div", { class: "bb-chead" }, nameOf(p), " ", draft, " ", fmt.time(c.at), c.edited === true ? [" · ", el("span", { class: "bb-muted" }, "edited")] : null, " ", task, depth === 0 ? range(c) : null),
        body(c.text, ctx, ctx.data ? review.pre(ctx.data, c) : null), ctx.data ? actions.thread(ctx.data, c) : null, nested));
  }
  // A comment on several lines says which, beside its author (under its last line, grouped with others there).
  function range(c) {
    const a = c.anchor && typeof c.anchor === "object" ? c.anchor : {};
    const line = Number.isInteger(a.line) ? a.line : null;
    return line !== null && Number.isInteger(a.from) && a.from < line ? el("span", { class: "bb-muted bb-crange" }, `· ${review.lines(a.from, line)}`) : null;
  }
  function total(threads) {
    let n = 0;
    const stack = [...threads];
    for (let guard = 0; stack.length && guard < 100000; guard++) { n++; stack.push(...arr(stack.pop().replies)); }
    return n;
  }
  const folded = new Set(); // threads the person collapsed, by their root comments' ids
  // Threads under a line or atop a file, collapsible as Bitbucket's are: open, with a summary
  // that names who wrote and how many comments there are.
  function threads(list, ctx, cls = "") {
    const roots = arr(list);
    if (!roots.length) return null;
    const n = total(roots);
    const who = [...new Set(roots.map((c) => str(c.author)))].slice(0, 4).map((slug) => avatar(person(ctx.users, slug), "sm"));
    // Collapsed by the person, it stays so when the view is drawn again (a reply elsewhere, a refresh).
    const key = roots.map((c) => c.id).join(" ");
    return el("details", { class: `bb-threads${cls}`, open: folded.has(key) ? null : "", ontoggle: (e) => { if (e.currentTarget.open) folded.delete(key); else folded.add(key); } },
      el("summary", { class: "bb-threads-sum" }, el("span", { class: "bb-faces" }, who), " ", fmt.count(n, "comment", "comments")),
      roots.map((c) => comment(c, ctx, 0)));
  }

  // ---- hunks --------------------------------------------------------------------------------
  function span([first, lines]) {
    const f = lineNo(first) ?? 0;
    const n = lineNo(lines) ?? 0;
    return n === 1 ? `${f}` : `${f},${n}`;
  }
  // The header as git and Bitbucket write it, with plain numbers: a thousands separator would read as the comma
  // between a hunk's first line and its count ("+1,12,000"). Its title says the same in words, numbers
  // formatted as every other count of the page.
  function hunkHead(h, cols) {
    const old = Array.isArray(h.old) ? h.old : [];
    const neu = Array.isArray(h.new) ? h.new : [];
    const words = (side, [first, n]) => {
      const f = lineNo(first) ?? 0;
      const c = lineNo(n) ?? 0;
      return !c ? null : c === 1 ? `${side} line ${fmt.num(f)}` : `${side} lines ${fmt.num(f)}–${fmt.num(f + c - 1)}`;
    };
    const title = [words("old", old), words("new", neu)].filter(Boolean).join(", ");
    return el("tr", { class: "bb-hunk" }, el("td", { colspan: String(cols) },
      el("span", { class: "bb-hunk-range", title: title ? title[0].toUpperCase() + title.slice(1) : null }, `@@ -${span(old)} +${span(neu)} @@`),
      str(h.context) ? [" ", el("span", { class: "bb-hunk-context" }, text(str(h.context)))] : null));
  }
  // A hunk with fewer lines here than its header counts (Bitbucket truncated it, or the view's share of the file
  // ends in it): how many of its lines on each side it has are shown, a side it has none on left unsaid.
  function hunkCut(h, lines, cols, leftOut) {
    const oldSpan = lineNo((h.old || [])[1]) ?? 0;
    const newSpan = lineNo((h.new || [])[1]) ?? 0;
    const oldHere = lines.filter((l) => lineNo(l.o) !== null).length;
    const newHere = lines.filter((l) => lineNo(l.n) !== null).length;
    if (h.truncated !== true && oldHere >= oldSpan && newHere >= newSpan) return null;
    const of = (here, n, side) => `${fmt.num(here)} of its ${fmt.count(n, `${side}line`, `${side}lines`)}`;
    const sides = newSpan && oldSpan ? `${of(newHere, newSpan, "new ")} and ${of(oldHere, oldSpan, "old ")}`
      : newSpan ? of(newHere, newSpan, "") : of(oldHere, oldSpan, "");
    return el("tr", { class: "bb-hunk-cut" }, el("td", { colspan: String(cols) },
      `${h.truncated === true && !leftOut ? "Bitbucket truncated this hunk" : "This hunk is cut"}: ${sides} are shown.`));
  }
  const rowAttrs = (path, kind, o, n, span = []) => ({ class: `bb-dl bb-dl-${kind}`, "data-path": path, "data-old": o, "data-new": n, "data-span": span.join(" ") || null });
  // The lines multi-line comments cover (Bitbucket's multilineMarker: anchor.from to anchor.line), each
  // with the sides it is covered on (`sides(line)`): the lines drawn from the one numbered `from` (on the
  // side fromType names) to the comment's own; within one side, only those numbered on that side.
  function spans(entry) {
    const lines = arr(obj(entry.diff).hunks).flatMap((h) => arr(h.lines));
    const marked = new Map();
    const at = (line, side) => lineNo(side === "old" ? line.o : line.n);
    lines.forEach((last, end) => {
      for (const c of arr(last.c)) {
        const a = obj(c.anchor);
        const side = sideOf(c, last);
        const start = { REMOVED: "old", ADDED: "new" }[a.fromType] || side;
        const first = lineNo(a.from) === null ? -1 : lines.findIndex((l) => at(l, start) === a.from);
        for (const l of first < 0 ? [] : lines.slice(first, end + 1)) {
          const s = at(l, side) !== null ? side : l.t === "R" ? "old" : "new";
          if (start !== side || s === side) marked.set(l, [...new Set([...(marked.get(l) || []), s])]);
        }
      }
    });
    return (line) => (line && marked.get(line)) || [];
  }

  // Unified: old and new gutters, the code; a row of threads right after a line that has them.
  // `limit` caps the lines drawn (inline); it answers how many it drew.
  function unified(entry, ctx, limit = Infinity) {
    const rows = [];
    const sides = spans(entry);
    let drawn = 0;
    const hunks = arr(entry.diff.hunks);
    hunks.forEach((h, i) => {
      if (drawn >= limit) return;
      const lines = arr(h.lines);
      // A hunk none of whose lines the view carries is not drawn: the file's message counts them.
      if (!lines.length && (lineNo(entry.diff.leftOut) || entry.diff.truncated === true)) return;
      if (entry.plan) rows.push(...gapRows(entry, entry.plan.before[i], "unified"));
      rows.push(hunkHead(h, 3));
      for (const line of lines) {
        if (drawn >= limit) break;
        drawn++;
        const t = SIGN[line.t] ? line.t : "C";
        const o = lineNo(line.o);
        const n = lineNo(line.n);
        const span = sides(line);
        const note = noteOf(entry, n, "unified");
        rows.push(el("tr", rowAttrs(entry.path, t, o, n, span), num(o, span.includes("old")), num(n, span.includes("new"), note && note.mark), codeCell(line)));
        const c = threads(line.c, ctx);
        if (c) rows.push(el("tr", { class: "bb-dc" }, el("td", { colspan: "3" }, c)));
        if (note) rows.push(note.row);
      }
      const cut = hunkCut(h, lines, 3, lineNo(entry.diff.leftOut));
      if (cut && drawn < limit) rows.push(cut);
    });
    // Below the last hunk only where the whole file is drawn.
    if (entry.plan && drawn >= countLines(entry.diff)) rows.push(...gapRows(entry, entry.plan.after, "unified"));
    const table = el("table", { class: "bb-diff bb-unified", "data-layout": "unified" },
      el("colgroup", {}, el("col", { class: "bb-col-ln" }), el("col", { class: "bb-col-ln bb-col-ln-new" }), el("col", {})), el("tbody", {}, rows));
    return { table: fit(table, entry), drawn };
  }

  // Which side of a side-by-side diff a thread on a context line was written on: Bitbucket's
  // anchor names the old file's line when it was written on the left.
  function sideOf(c, line) {
    const a = obj(c.anchor);
    if (line.t === "R") return "old";
    if (line.t === "A") return "new";
    return lineNo(a.line) !== null && a.line === lineNo(line.o) && a.line !== lineNo(line.n) ? "old" : "new";
  }
  // Side-by-side: removed lines on the left beside the added lines that replace them, context on both.
  function half(line, side, span, mark) {
    if (!line) return [el("td", { class: "bb-ln bb-none", "aria-hidden": "true" }), el("td", { class: "bb-dcode bb-none" })];
    const t = SIGN[line.t] ? line.t : "C";
    return [num(lineNo(side === "old" ? line.o : line.n), span && span.includes(side), mark), codeCell(line, ` bb-side-${t}`)];
  }
  function sideBySide(entry, ctx) {
    const rows = [];
    const sides = spans(entry);
    const emit = (left, right) => {
      const o = left ? lineNo(left.o) : null;
      const n = right ? lineNo(right.n) : null;
      const kind = left && right && left === right ? "C" : "X";
      const span = [...sides(left).filter((s) => s === "old"), ...sides(right).filter((s) => s === "new")];
      const note = noteOf(entry, n, "side-by-side");
      rows.push(el("tr", rowAttrs(entry.path, kind, o, n, span), half(left, "old", span), half(right, "new", span, note && note.mark)));
      const l = [];
      const r = [];
      for (const line of left === right ? [left] : [left, right]) {
        if (!line) continue;
        for (const c of arr(line.c)) (sideOf(c, line) === "old" ? l : r).push(c);
      }
      if (l.length || r.length) {
        rows.push(el("tr", { class: "bb-dc" }, el("td", { colspan: "2", class: "bb-dc-old" }, threads(l, ctx)), el("td", { colspan: "2", class: "bb-dc-new" }, threads(r, ctx))));
      }
      if (note) rows.push(note.row);
    };
    arr(entry.diff.hunks).forEach((h, i) => {
      const lines = arr(h.lines);
      if (!lines.length && (lineNo(entry.diff.leftOut) || entry.diff.truncated === true)) return;
      if (entry.plan) rows.push(...gapRows(entry, entry.plan.before[i], "side-by-side"));
      rows.push(hunkHead(h, 4));
      let removed = [];
      let added = [];
      const flush = () => {
        for (let i = 0; i < Math.max(removed.length, added.length); i++) emit(removed[i] || null, added[i] || null);
        removed = [];
        added = [];
      };
      for (const line of lines) {
        if (line.t === "R") { if (added.length) flush(); removed.push(line); } else if (line.t === "A") added.push(line);
        else { flush(); emit(line, line); }
      }
      flush();
      const cut = hunkCut(h, lines, 4, lineNo(entry.diff.leftOut));
      if (cut) rows.push(cut);
    });
    if (entry.plan) rows.push(...gapRows(entry, entry.plan.after, "side-by-side"));
    return fit(el("table", { class: "bb-diff bb-sbs", "data-layout": "side-by-side" },
      el("colgroup", {}, el("col", { class: "bb-col-ln" }), el("col", { class: "bb-col-half" }), el("col", { class: "bb-col-ln bb-col-ln-new" }), el("col", { class: "bb-col-half" })),
      el("tbody", {}, rows)), entry);
  }

  // ---- Show more: the unchanged lines between hunks (expand.js decides what; here, the rows) -----
  // A gap's rows, each marked data-gap: the lines read so far, as context, and a Show more row for each stretch not read.
  function gapRows(entry, gap, layout) {
    if (gap && !diffExpand.known(entry.plan, gap)) {
      // Below the last hunk, where the diff cannot tell whether the file goes on: a hidden mark in the row's
      // place until the probe's read says; its rows then, or none.
      const wait = el("tr", { class: "bb-expand-wait", "data-gap": gap.id, hidden: "", "aria-hidden": "true" });
      diffExpand.probe(entry.plan, gap).then(() => {
        if (!wait.isConnected || page.gone) return;
        const table = wait.closest("table");
        wait.replaceWith(...(diffExpand.known(entry.plan, gap) ? gapRows(entry, gap, layout) : []));
        if (table) fit(table, entry);
      });
      return [wait];
    }
    return !gap ? [] : diffExpand.segments(entry.plan, gap).map(({ line, more }) => {
      if (line) {
        const [o, n] = [lineNo(line.o), lineNo(line.n)];
        const attrs = Object.assign(rowAttrs(entry.path, "C bb-dl-x", o, n), { "data-gap": gap.id });
        return el("tr", attrs, layout === "unified" ? [num(o), num(n), codeCell(line)] : [half(line, "old"), half(line, "new")]);
      }
      const [from, to] = more;
      const range = to === null ? "" : `${to === from ? "Line" : "Lines"} ${fmt.num(from)}${to === from ? "" : `–${fmt.num(to)}`} not shown`;
      const problem = el("span", { class: "bb-expand-problem", role: "status" });
      const button = el("button", { type: "button", class: "bb-expand-btn", title: "Ctrl+click or ⌘+click: show all",
        onclick: (e) => expandGap(entry, gap, more, layout, e.ctrlKey || e.metaKey, button, problem) }, "⋯ Show more");
      return el("tr", { class: "bb-expand", "data-gap": gap.id, "data-from": from, "data-to": to },
        el("td", { colspan: layout === "unified" ? "3" : "4" }, button, el("span", { class: "bb-muted" }, ` ${range}`), problem));
    });
  }
  // Reads the stretch's lines and draws its gap again in place; above a hunk, the hunk stays where the person reads it.
  function expandGap(entry, gap, stretch, layout, all, button, problem) {
    if (button.disabled || page.gone) return;
    button.disabled = true;
    problem.replaceChildren();
    diffExpand.fetch(entry.plan, gap, stretch, all).then(() => {
      const body = button.closest("tbody");
      if (!body) return;
      const had = body.contains(document.activeElement);
      const group = [...body.children].filter((r) => r.dataset.gap === gap.id);
      const anchor = gap.up ? group[group.length - 1].nextElementSibling : group[0].previousElementSibling;
      const fresh = gapRows(entry, gap, layout);
      keepPlace(anchor, () => { group[0].before(...fresh); for (const r of group) r.remove(); fit(body.closest("table"), entry); });
      const again = fresh.find((r) => r.classList.contains("bb-expand"));
      if (again && had) again.querySelector("button").focus({ preventScroll: true });
    }, (err) => {
      button.disabled = false;
      problem.replaceChildren(` Could not read these lines: ${String(err.message).slice(0, 300)}`);
    });
  }
  // Runs `change` keeping `anchor` where it is on screen: the document (or the inline frame's scrolling box) moves with it.
  function keepPlace(anchor, change) {
    const before = anchor && anchor.getBoundingClientRect().top;
    change();
    if (!anchor || !anchor.isConnected) return;
    const delta = anchor.getBoundingClientRect().top - before;
    const clip = anchor.closest(".bb-clip");
    if (!clip) scrollBy(0, delta);
    else if (clip.classList.contains("bb-scrolls")) clip.scrollTop += delta;
  }

  // ---- a file -------------------------------------------------------------------------------
  function message(cls, title, ...more) {
    return el("div", { class: `bb-dmsg ${cls}`, role: "note" }, el("strong", {}, title), more.length ? el("div", { class: "bb-dmsg-more" }, more) : null);
  }
  // How many lines the file's diff has: exact where Bitbucket sent them all (those carried and those the view's
  // share left out), or an added or deleted file's one hunk (its header counts them); else null.
  function fileLines(d) {
    if (d.truncated !== true) return countLines(d) + (lineNo(d.leftOut) || 0);
    const hunks = arr(d.hunks);
    if (hunks.length !== 1) return null;
    const [o, n] = [lineNo((hunks[0].old || [])[1]) ?? 0, lineNo((hunks[0].new || [])[1]) ?? 0];
    return !o || !n ? o + n : null;
  }
  // What Bitbucket says instead of, or above, the lines of a file; `drawn`: the lines this block draws.

  // Before and after of a changed picture, or null when neither side is a picture bb carried.
  function pictureSides(raw, path) {
    const p = raw && typeof raw === "object" ? raw : {};
    const name = str(path).split("/").pop() || "picture";
    const side = (x, word) => {
      const drawn = x ? picture.draw(x, `${name}, ${word.toLowerCase()}`) : null;
      return drawn ? el("div", { class: "bb-pic-side", "data-side": word.toLowerCase() }, el("div", { class: "bb-pic-word bb-muted" }, word), drawn) : null;
    };
    const before = side(p.before, "Before");
    const after = side(p.after, "After");
    return before || after ? el("div", { class: "bb-pic-diff" }, before, after) : null;
  }
  function messages(entry, pr, drawn, inline) {
    const d = entry.diff;
    const out = [];
    const open = link(diffUrl(pr, entry.path), { class: "bb-link" }, "Open it in Bitbucket");
    if (conflicted(entry.file)) out.push(message("bb-dmsg-warn", "⚠ This file has a merge conflict.", "You will need to resolve conflicts to be able to merge."));
    if (!d) {
      out.push(message("bb-dmsg-info", "bb did not carry the diff of this file.", "This view carries the diffs of the first files only. ", open, "."));
      return out;
    }
    if (typeof d.error === "string" || d.error) {
      out.push(message("bb-dmsg-bad", "bb could not read the diff of this file.", el("span", { dir: "auto" }, text(str(d.error).slice(0, 2000) || "not read")), " ", open));
      return out;
    }
    const hunks = arr(d.hunks);
    const type = str(entry.file.type);
    // A changed picture: before and after, side by side (an added one has no before, a deleted one no after),
    // each drawn by picture.js from the bytes bb carried.
    const pics = d.binary === true ? pictureSides(d.pictures, entry.path) : null;
    if (pics) out.push(pics);
    else if (d.binary === true) out.push(message("bb-dmsg-info", "Binary file", "This file can't be viewed in your browser. ", open, "."));
    else if (d.truncated === true && !hunks.length) out.push(message("bb-dmsg-warn", "The diff for this file is too large to render", open, "."));
    else if (d.truncated === true || lineNo(d.leftOut)) {
      // Bitbucket's cut (`truncated`), the view's (`leftOut`: lines past its share, skipped as read), or both: what
      // is drawn of the file's lines (all of them counted where known), and, inline, what full screen draws.
      // Inline, the diff's one count above the files says what is drawn of the whole and what full screen shows
      // (issue 54 item 6: one sentence, one total); here, only that the file is cut and by whom.
      const carried = countLines(d);
      const total = fileLines(d);
      const by = d.truncated === true && !lineNo(d.leftOut) ? "Bitbucket truncated it" : "";
      if (inline) out.push(message("bb-dmsg-warn", "The diff for this file is too large to render in full", by ? `${by}. ` : "", open, "."));
      else {
        const of = total !== null && total > drawn ? ` of its ${fmt.num(total)} lines are` : drawn === 1 ? " line is" : " lines are";
        const here = drawn < carried ? " shown here. " : " shown. ";
        out.push(message("bb-dmsg-warn", "The diff for this file is too large to render in full", `${by ? `${by}: ` : ""}${fmt.num(drawn)}${of}${here}`, open, "."));
      }
    }
    else if (!hunks.length) {
      const c = change(entry);
      if ((type === "MOVE" || type === "RENAME" || type === "COPY") && c.tip) out.push(message("bb-dmsg-info", c.tip, "The contents for this file have not changed"));
      else if (type === "ADD") out.push(message("bb-dmsg-info", "The added file is empty"));
      else if (type === "DELETE") out.push(message("bb-dmsg-info", "The removed file is empty"));
      else out.push(message("bb-dmsg-info", "The contents for this file have not changed"));
    }
    const outdated = lineNo(d.outdatedComments);
    if (outdated) {
      out.push(el("p", { class: "bb-dnote", "data-note": "outdated" }, el("span", { class: "bb-loz bb-moved", title: "This diff has changed in more recent commits" }, "Outdated"), " ",
        outdated === 1 ? "1 outdated comment is in the activity" : `${fmt.num(outdated)} outdated comments are in the activity`));
    }
    return out;
  }
  function diffUrl(pr, path) {
    if (pr.compare) {
      const page = webUrl(obj(pr.compare).url);
      return page ? `${page}${path ? `#${encodeURI(path)}` : ""}` : null;
    }
    const base = webUrl(pr.url);
    return base ? `${base.replace(/\/+$/, "")}/diff#${encodeURI(path)}` : null;
  }
  function fileHead(entry, tag = "h3") {
    const c = change(entry);
    return el("div", { class: "bb-fhead" },
      el(tag, { class: "bb-fname", title: entry.src && entry.src !== entry.path ? c.tip : null },
        el("span", { class: "bb-i-doc", "aria-hidden": "true" }), el("bdi", {}, text(entry.path))),
      el("span", { class: `bb-loz bb-ctl-loz ${c.cls}`, title: c.tip || null }, c.word),
      // A moved, renamed or copied file says where it came from, its lines changed or not (issue 54 item 10).
      entry.src && ["MOVE", "RENAME", "COPY"].includes(str(entry.file.type))
        ? el("span", { class: "bb-muted bb-fsrc" }, "from ", el("bdi", {}, text(entry.src))) : null,
      marks(entry),
      entry.diff && str(entry.diff.language) ? el("span", { class: "bb-muted bb-lang" }, str(entry.diff.language).slice(0, 40)) : null);
  }
  function fileBlock(entry, ctx, pr, layout, limit) {
    const d = entry.diff;
    const parts = [fileHead(entry), null];
    let drawn = d ? countLines(d) : 0;
    // Annotations on the lines this block draws go under them; the others are listed at the file's top.
    const drawnNew = new Set();
    let budget = layout === "side-by-side" ? Infinity : limit;
    for (const line of d ? arr(d.hunks).flatMap((h) => arr(h.lines)) : []) {
      if (budget-- <= 0) break;
      if (lineNo(line.n) !== null) drawnNew.add(line.n);
    }
    entry.an = insights.place(d && d.annotations, drawnNew);
    if (d) parts.push(insights.top(entry.an.top, d.annotationsMore));
    if (d && !d.error && arr(d.hunks).length) {
      parts.push(threads(d.fileComments, ctx, " bb-fcomments"));
      if (layout === "side-by-side") { parts.push(el("div", { class: "bb-dwrap" }, sideBySide(entry, ctx))); drawn = countLines(d); } else {
        const u = unified(entry, ctx, limit);
        parts.push(el("div", { class: "bb-dwrap" }, u.table));
        drawn = u.drawn;
        const rest = countLines(d) - u.drawn;
        if (rest > 0) parts.push(el("p", { class: "bb-dnote bb-rest", "data-note": "rest" }, `${fmt.count(rest, "more line", "more lines")} of this file ${rest === 1 ? "is" : "are"} not drawn here.`));
      }
    } else if (d) parts.push(threads(d.fileComments, ctx, " bb-fcomments"));
    parts[1] = messages(entry, pr, drawn, limit !== Infinity);
    return { node: el("section", { class: "bb-file", "data-file": entry.path, "aria-label": entry.path.slice(0, 300), tabindex: "-1" }, parts), drawn };
  }

  // ---- the whole --------------------------------------------------------------------------
  function entries(d) {
    const byPath = new Map();
    for (const x of arr(d.diffs)) if (str(x.path) && !byPath.has(x.path)) byPath.set(x.path, x);
    const list = arr(d.files).filter((f) => str(f.path)).map((f) => ({ file: f, path: f.path, diff: byPath.get(f.path) || null }));
    const listed = new Set(list.map((e) => e.path));
    for (const [path, x] of byPath) if (!listed.has(path)) list.push({ file: { path, type: null }, path, diff: x });
    for (const e of list) {
      const own = str(e.file.srcPath) || (e.diff && str(e.diff.srcPath)) || "";
      e.src = own && own !== e.path ? own : "";
    }
    return list;
  }
  function header(pr) {
    if (pr.compare) {
      // Bitbucket's Compare page: its title, the source → destination refs, the Diff tab.
      const url = obj(pr.compare).url;
      return el("div", { class: "bb-dhead" },
        el("div", { class: "bb-meta" }, branches(pr.source, pr.target)),
        el("h2", { class: "bb-dtitle" }, link(url, { class: "bb-title-link", title: "Open in Bitbucket" }, "Compare"), el("span", { class: "bb-muted bb-dtab" }, " · Diff")));
    }
    return el("div", { class: "bb-dhead" },
      el("div", { class: "bb-meta" }, stateLozenge({ state: pr.state }), Number.isInteger(pr.id) ? link(pr.url, { class: "bb-id", title: "Open in Bitbucket" }, `#${pr.id}`) : null, branches(pr.source, pr.target),
        Number.isInteger(pr.id) ? save.button({ project: str(pr.project), repo: str(pr.repo), pr_id: pr.id }, "Download patch") : null),
      el("h2", { class: "bb-dtitle", dir: "auto" }, link(pr.url, { class: "bb-title-link" }, str(pr.title) || "Untitled pull request"), el("span", { class: "bb-muted bb-dtab" }, " · Diff")));
  }
  // Bitbucket's iterative review selector, where it puts its commit picker: all the pull request's
  // changes, or those since the commit the person last reviewed. Choosing opens that diff in place.
  function iterative(data, d) {
    const r = obj(d.review);
    if (d.compare || !str(r.lastReviewed)) return null;
    const since = Boolean(str(r.since));
    const n = lineNo(r.commits);
    const call = Object.assign({}, obj(data.call));
    delete call.since;
    const can = navigate.can(data, "diff");
    const choice = (which, words, current, target, title) => el("button", { type: "button", class: "bb-segbtn bb-review-choice", "data-review": which,
      "aria-pressed": String(current), disabled: !current && !can ? "" : null, title,
      onclick: current || !can ? null : (e) => navigate.open(target, `The person opened ${navigate.named(target)}`, e.currentTarget) }, words);
    const words = n === 0 ? "No unreviewed changes" : n !== null ? `${fmt.num(n)} ${n === 1 ? "commit" : "commits"} since you last reviewed` : "Changes since you last reviewed";
    return el("div", { class: "bb-review" },
      el("div", { class: "bb-seg", role: "group", "aria-label": "Changes to show" },
        choice("all", "All changes in this pull request", !since, call, null),
        choice("since", n === 0 ? words : [words, " ", el("span", { class: "bb-loz bb-unreviewed" }, "Unreviewed")], since, Object.assign({}, call, { since: "last_review" }),
          `Changes after commit ${str(r.lastReviewed).slice(0, 11)}, the last you reviewed`)));
  }
  // What the result holds that this view does not draw, in Bitbucket's counts.
  function beyond(d, list, pr) {
    const out = [];
    if (d.filesMore === true) out.push(el("p", { class: "bb-dnote bb-warnnote", "data-note": "files-more" }, `${pr.compare ? "This comparison" : "This pull request"} is too large to render. Showing the first ${fmt.count(list.length, "file", "files")}.`));
    const notCarried = lineNo(d.notCarried) || list.filter((e) => !e.diff).length;
    if (notCarried) {
      out.push(el("p", { class: "bb-dnote", "data-note": "not-carried" }, `${fmt.count(notCarried, "file is", "files are")} listed without ${notCarried === 1 ? "its" : "their"} diff; `,
        link(diffUrl(pr, ""), { class: "bb-link" }, "Bitbucket has the whole diff"), "."));
    }
    return out;
  }
  function filesHeading(list, d) {
    return el("div", { class: "bb-files-head" }, el("h3", {}, "Files"),
      el("span", { class: "bb-muted bb-files-count", "data-count": "files" }, `${fmt.count(list.length, "file", "files")} changed${d.filesMore === true ? " (more exist)" : ""}`));
  }

  // Inline: the file list, the count of what is not drawn here, and the first lines of the first files.
  function inline(d, ctx, pr, list) {
    const carried = list.filter((e) => e.diff);
    const all = carried.reduce((n, e) => n + countLines(e.diff), 0);
    // Bitbucket's count of the carried files' lines where it is known (a file cut by Bitbucket or past the view's
    // share has more than the view carries): the one total the count says.
    const whole = carried.reduce((n, e) => n + Math.max(countLines(e.diff), fileLines(e.diff) ?? 0), 0);
    const blocks = el("div", { class: "bb-files" });
    const tally = el("p", { class: "bb-dnote bb-tally-lines", "data-note": "lines" });
    let budget = INLINE_LINES;
    const state = { drawnLines: 0, drawnFiles: 0, nodes: new Map() };
    const more = el("button", { type: "button", class: "bb-more bb-more-lines", hidden: "" });
    function render() {
      let room = budget;
      let lines = 0;
      let files = 0;
      const nodes = [];
      for (const e of carried) {
        if (room <= 0) break;
        const need = Math.max(1, countLines(e.diff));
        const key = `${e.path}\u0000${Math.min(need, room)}`;
        const cached = state.nodes.get(e.path);
        let got = cached && cached.key === key ? cached.got : null;
        if (!got) { got = fileBlock(e, ctx, pr, "unified", room); state.nodes.set(e.path, { key, got }); }
        nodes.push(got.node);
        lines += got.drawn;
        room -= Math.max(1, got.drawn);
        files++;
      }
      blocks.replaceChildren(...nodes);
      state.drawnLines = lines;
      state.drawnFiles = files;
      const left = all - lines;
      const full = !fullscreenOffered() ? "" : all < whole ? `; full screen shows ${fmt.num(all)} of them, one file at a time` : "; full screen shows them all, one file at a time";
      tally.replaceChildren(lines < whole
        ? `${fmt.num(lines)} of ${fmt.count(whole, "line", "lines")} drawn here, from ${fmt.num(files)} of ${fmt.count(carried.length, "file", "files")}${lines < all ? full : ""}.`
        : `${fmt.count(whole, "line", "lines")} in ${fmt.count(carried.length, "file", "files")}.`);
      more.hidden = left <= 0;
      more.textContent = `Show ${fmt.num(Math.min(STEP_LINES, left))} more lines`;
    }
    more.addEventListener("click", () => {
      const firstNew = state.drawnFiles;
      budget += STEP_LINES;
      render();
      const next = blocks.children[firstNew] || blocks.lastElementChild;
      if (next) next.focus({ preventScroll: true });
    });
    render();
    const go = (e) => () => {
      const drawn = state.nodes.get(e.path);
      if (drawn && drawn.got.node.isConnected) { drawn.got.node.focus(); return; }
      remember(pr, { path: e.path });
      // main.js's setMode asks the host for full screen, where the tree opens at this file.
      if (typeof setMode === "function" && fullscreenOffered()) setMode("fullscreen");
    };
    const fileList = grow(list, {
      inline: true, first: 6, step: 50, noun: "files", one: "file", tag: "ul", cls: "bb-flist",
      draw: (e) => el("li", { class: "bb-frow" },
        el("button", { type: "button", class: `bb-fbtn ${change(e).cls}`, "data-path": e.path, title: fileTip(e).slice(0, 600), onclick: go(e) },
          el("span", { class: "bb-i-doc", "aria-hidden": "true" }), el("bdi", {}, text(e.path)), sr(`: ${change(e).word}`)),
        el("span", { class: `bb-loz bb-ctl-loz ${change(e).cls}` }, change(e).word), marks(e)),
    });
    return [el("section", { class: "bb-section bb-files-sec", "aria-label": "Files" }, filesHeading(list, d), fileList),
      beyond(d, list, pr), tally, blocks, more];
  }

  // ---- fullscreen: the tree and one file ------------------------------------------------------
  // Folders and files at each level in the order Bitbucket lists the changes (a folder where its first file is),
  // never re-sorted: the tree reads as the inline list does.
  function tree(list) {
    const root = { dirs: new Map(), items: [] };
    list.forEach((e, i) => {
      const parts = e.path.split("/");
      let node = root;
      for (const part of parts.slice(0, -1)) {
        if (!node.dirs.has(part)) { const dir = { dirs: new Map(), items: [] }; node.dirs.set(part, dir); node.items.push({ dir: part }); }
        node = node.dirs.get(part);
      }
      node.items.push({ name: parts[parts.length - 1], entry: e, index: i });
    });
    return root;
  }
  // The tree's nodes; `order` collects the files' indices as the tree shows them, for previous/next.
  function treeNodes(node, select, order, depth = 0) {
    const items = [];
    for (const it of node.items) {
      if (it.dir !== undefined) {
        let label = it.dir;
        let dir = node.dirs.get(it.dir);
        while (dir.items.length === 1 && dir.items[0].dir !== undefined) {
          const child = dir.items[0].dir;
          label += `/${child}`;
          dir = dir.dirs.get(child);
        }
        items.push(el("li", { class: "bb-tdir", role: "none" },
          el("div", { class: "bb-tdir-name", title: label }, el("span", { class: "bb-i-folder", "aria-hidden": "true" }), el("bdi", {}, text(label))),
          depth < 64 ? el("ul", { class: "bb-tsub", role: "group" }, treeNodes(dir, select, order, depth + 1)) : null));
        continue;
      }
      const c = change(it.entry);
      order.push(it.index);
      items.push(el("li", { class: "bb-tfile", role: "none" },
        el("button", { type: "button", class: `bb-tbtn ${c.cls}`, "data-path": it.entry.path, "data-index": it.index, title: fileTip(it.entry).slice(0, 600), onclick: () => select(it.index) },
          el("span", { class: "bb-i-doc", "aria-hidden": "true" }), el("bdi", { class: "bb-tname" }, text(it.name)), sr(`: ${c.word}`), marks(it.entry))));
    }
    return items;
  }
  function fullscreenOffered() {
    try { return modes().includes("fullscreen"); } catch { return false; }
  }
  function remember(pr, part) {
    const c = obj(pr.compare);
    const key = pr.compare ? `${str(pr.project)}/${str(pr.repo)}:${str(c.from)}..${str(c.to)}` : `${str(pr.project)}/${str(pr.repo)}#${pr.id}`;
    memory.set(key, Object.assign({}, memory.get(key), part));
    return memory.get(key);
  }
  // Side-by-side where each half holds MIN_HALF columns of code, else unified (Bitbucket draws side-by-side at any
  // width; at 700 px its halves would hold 20-odd columns). Measured from the pane's width and the mono font's.
  const MIN_HALF = 40;
  let chWidth = 0;
  function halfColumns(width, entry) {
    if (!chWidth) {
      const probe = el("span", { class: "bb-diff bb-ch-probe", "aria-hidden": "true" }, "0".repeat(20));
      document.body.append(probe);
      chWidth = probe.getBoundingClientRect().width / 20;
      probe.remove();
    }
    if (!(chWidth > 0)) return Infinity;
    const gutter = Math.max(3, String(widest(entry)).length) * chWidth + 12;
    const marks = arr(obj(entry.diff).annotations).length ? 26 : 0;
    return ((width - 2 * gutter - marks - 2) / 2 - 10) / chWidth - 1.5;
  }
  let onResize = null; // the full screen view's check of its layout when the window's width changes
  window.addEventListener("resize", () => { if (onResize) onResize(); });
  function full(d, ctx, pr, list, finish) {
    const seen = remember(pr, {});
    const order = [];
    let index = 0;
    let pos = 0;
    let layout = seen.layout === "side-by-side" ? "side-by-side" : "unified";
    let hidden = seen.hidden === true;
    const pane = el("section", { class: "bb-pane", "aria-label": "The selected file" });
    const treeBox = el("nav", { class: "bb-tree", id: "bb-file-tree", "aria-label": "Files" }, filesHeading(list, d), el("ul", { class: "bb-tlist", role: "list" }, treeNodes(tree(list), (i) => select(order.indexOf(i)), order)));
    // Bitbucket's Hide file tree / Show file tree: the person's choice is kept; until they choose, the tree is
    // hidden where it would take more than a third of the width.
    const narrow = () => document.documentElement.clientWidth < 720;
    const treeHidden = () => (typeof seen.tree === "boolean" ? !seen.tree : narrow());
    const box = el("div", { class: "bb-dlayout" }, treeBox, el("div", { class: "bb-dcol" }, finish, pane));
    const placeTree = () => box.classList.toggle("bb-tree-hidden", treeHidden());
    placeTree();
    // The pane's width: measured once it is on the page, else what the page leaves it.
    const paneWidth = () => (pane.isConnected && pane.clientWidth ? pane.clientWidth
      : document.documentElement.clientWidth - 32 - (treeHidden() ? 0 : 252));
    let fitted = null;
    list.forEach((_, i) => { if (!order.includes(i)) order.push(i); });
    // Full screen opens where the inline view starts, the first file listed (or the one the person last chose);
    // previous and next follow the tree.
    const chosen = list.findIndex((e) => e.path === seen.path);
    pos = Math.max(0, order.indexOf(chosen >= 0 ? chosen : 0));
    function select(p) {
      if (!list.length) return;
      pos = ((p % order.length) + order.length) % order.length;
      index = order[pos];
      remember(pr, { path: list[index].path });
      for (const b of treeBox.querySelectorAll(".bb-tbtn")) b.ariaCurrent = Number(b.dataset.index) === index ? "true" : null;
      draw();
      if (pane.getBoundingClientRect().top < 0) pane.scrollIntoView({ block: "start" });
    }
    function draw() {
      const e = list[index];
      const type = str(e.file.type);
      fitted = halfColumns(paneWidth(), e) >= MIN_HALF;
      const sbsOffered = type !== "ADD" && type !== "DELETE" && e.diff && !e.diff.error && arr(e.diff.hunks).length > 0 && fitted;
      const shown = sbsOffered ? layout : "unified";
      const choose = (which) => () => { layout = which; remember(pr, { layout }); draw(); };
      // Bitbucket's Diff options: the layout where it offers side-by-side, and Hide comments.
      const commented = e.diff && (arr(e.diff.fileComments).length || arr(e.diff.hunks).some((h) => arr(h.lines).some((l) => arr(l.c).length)));
      const toggle = () => { hidden = !hidden; remember(pr, { hidden }); draw(); };
      const options = sbsOffered || commented ? el("div", { class: "bb-seg", role: "group", "aria-label": "Diff options" },
        sbsOffered ? [
          el("button", { type: "button", class: "bb-segbtn", "data-focus": "unified", "aria-pressed": String(shown === "unified"), onclick: choose("unified") }, "Unified diff"),
          el("button", { type: "button", class: "bb-segbtn", "data-focus": "sbs", "aria-pressed": String(shown === "side-by-side"), onclick: choose("side-by-side") }, "Side-by-side diff")] : null,
        commented ? el("button", { type: "button", class: "bb-segbtn bb-hide-btn", "data-focus": "hide", "aria-pressed": String(hidden), onclick: toggle }, "Hide comments") : null) : null;
      const shownTree = !treeHidden();
      const treeToggle = el("button", { type: "button", class: "bb-more bb-tree-toggle", "data-focus": "tree", "aria-controls": "bb-file-tree", "aria-expanded": String(shownTree),
        onclick: () => { remember(pr, { tree: !shownTree }); seen.tree = !shownTree; placeTree(); draw(); } }, shownTree ? "Hide file tree" : "Show file tree");
      const nav = el("div", { class: "bb-fnav" }, treeToggle,
        el("button", { type: "button", class: "bb-more bb-prev", "data-focus": "prev", disabled: list.length < 2 ? "" : null, onclick: () => select(pos - 1), title: "Previous file" }, "← Previous file"),
        el("span", { class: "bb-muted bb-fpos" }, `${fmt.num(pos + 1)} of ${fmt.num(list.length)}`),
        el("button", { type: "button", class: "bb-more bb-next", "data-focus": "next", disabled: list.length < 2 ? "" : null, onclick: () => select(pos + 1), title: "Next file" }, "Next file →"),
        options);
      // A control of the pane that had focus (Next file, a layout) keeps it across the redraw.
      const had = pane.contains(document.activeElement) ? document.activeElement.dataset.focus : null;
      pane.replaceChildren(nav, fileBlock(e, ctx, pr, shown, Infinity).node);
      const again = had ? pane.querySelector(`[data-focus="${had}"]`) : null;
      if (again) again.focus({ preventScroll: true });
      pane.dataset.path = e.path;
      pane.dataset.layout = shown;
      pane.classList.toggle("bb-hide-comments", Boolean(hidden && commented));
      requestAnimationFrame(() => { checkCaps(pane); refit(); });
    }
    // Drawn again when the width it was fitted to no longer says the same (the pane first placed, a resize).
    function refit() {
      if (!pane.isConnected || !list.length) return;
      placeTree();
      if ((halfColumns(paneWidth(), list[index]) >= MIN_HALF) !== fitted || (typeof seen.tree !== "boolean" && pane.querySelector(".bb-tree-toggle").ariaExpanded !== String(!treeHidden()))) draw();
    }
    onResize = refit;
    pane.tabIndex = -1;
    if (list.length) select(pos);
    else pane.append(el("p", { class: "bb-muted" }, "No files changed."));
    return [beyond(d, list, pr), box];
  }

  function draw(data, ctx) {
    // Without its diff the data is no view: main.js then shows the answer as its text.
    if (!data.diff || typeof data.diff !== "object" || Array.isArray(data.diff)) throw new TypeError("the view data has no diff");
    const d = data.diff;
    const list = entries(d);
    const pr = d;
    ctx = Object.assign({}, ctx, { data });
    for (const e of list) e.plan = diffExpand.plan(data, d, e);
    const since = !pr.compare && Boolean(str(obj(d.review).since));
    // The review bar: above the files inline, atop the file pane in full screen (where it stays in view).
    const finish = review.bar(data);
    return el("article", { class: `bb-diffview ${ctx.inline ? "bb-diff-inline" : "bb-diff-full"}` }, header(pr), iterative(data, d),
      ctx.inline || !list.length ? finish : null,
      list.length ? (ctx.inline ? inline(d, ctx, pr, list) : full(d, ctx, pr, list, finish))
        : el("p", { class: "bb-muted bb-no-files" }, since ? "No unreviewed changes" : "No files changed."));
  }
  // The file full screen opens on when `data` is next drawn (a change offered and taken goes to its comment).
  function open(data, path) {
    const d = obj(obj(data).diff);
    if (d.id !== undefined || d.compare) remember(d, { path: String(path) });
  }
  return { draw, open };
})();

// A pull request's diff, or its Commits tab when the person chose it (the tabs are navigate.js's).
registerKind("diff", (data, ctx) => {
  const article = diffView.draw(data, ctx);
  const d = data.diff && typeof data.diff === "object" ? data.diff : {};
  const c = data.call && typeof data.call === "object" ? data.call : {};
  if (!commitsTab.read(d.commits) || commitsTab.tab(commitsTab.ofPull(c.project, c.repo, c.pr_id)) !== "commits") return article;
  const head = article.firstElementChild;
  const said = head && head.querySelector(".bb-dtab");
  if (said) said.textContent = " · Commits";
  const none = "This pull request has no commits that its target branch lacks.";
  const more = typeof d.url === "string" ? `${d.url.replace(/\/(overview|diff)?$/, "")}/commits` : null;
  article.replaceChildren(...[head, commitsTab.list(d.commits, ctx, none, more)].filter(Boolean));
  return article;
});
