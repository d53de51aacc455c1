// The source view (kind file): a file, or a window of its lines, at a ref, as Bitbucket's source page
// draws it. A header with the path as breadcrumbs, the ref, "Lines 1–200 of 412" and Open in Bitbucket
// (through the host); then the code, each line's number a button that selects the line (shift: a
// range), its row `id="L12"`; the page never navigates. "Show more" reads the next window with
// refresh_view and appends its lines under those the person reads (and to the view data, so a redraw
// draws them again). In full screen, Blame (Bitbucket's word) adds a column grouped by commit: the
// author's avatar and name, the short commit id, the date, the subject in its title; read with refresh_view
// when the data has none. A call with `blame: true` opens with it; inline (where Blame is offered only when the
// data has it) the column is the avatar and the date. A binary file and an empty one are one line each; a picture
// (picture.js) is drawn as an image with its size, an SVG above its source.
const fileView = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const arr = (x) => (Array.isArray(x) ? x.filter((i) => i && typeof i === "object") : []);
  const str = (x) => (typeof x === "string" ? x : "");
  const pos = (x) => (Number.isInteger(x) && x >= 0 ? x : null);
  const LONG = 500; // code points past which a line is cut at four rows, the whole a click away
  const EARLIER = 200; // lines Show earlier reads at once (a window, as bb's default)
  const memory = new Map(); // per file at a ref: { blame: shown, selected: [first, last] }
  const grown = new WeakSet(); // files Show more appended lines to since bb sent them
  const remember = (f, part) => {
    const key = `${str(f.project)}/${str(f.repo)}|${str(f.at)}|${str(f.path)}`;
    if (!memory.has(key)) memory.set(key, {});
    return Object.assign(memory.get(key), part);
  };

  // A show call of kind file through refresh_view: the answer's file, or a failure in bb's words on `problem`.
  function ask(call, button, problem, what) {
    button.disabled = true;
    button.ariaBusy = "true";
    problem.hidden = true;
    const done = () => { button.disabled = false; button.ariaBusy = null; };
    const fail = (text) => { done(); problem.replaceChildren(`Could not read ${what}: ${firstSentence(text)}`); problem.hidden = false; return null; };
    return bridge.request("tools/call", { name: "refresh_view", arguments: { show: call } }).then((result) => {
      const got = viewData(result);
      if (page.gone) return null;
      if (obj(result).isError || !got || got.kind !== "file" || !Array.isArray(obj(got.file).lines)) return fail(resultText(obj(result)) || "bb's answer holds no lines.");
      done();
      return { result, data: got };
    }, (err) => fail(String(obj(err).message || "The host did not answer.")));
  }

  function crumbs(f) {
    const parts = str(f.path).split("/").filter(Boolean);
    return el("h2", { class: "bb-crumbs", title: str(f.path).slice(0, 600) }, el("span", { class: "bb-i-doc", "aria-hidden": "true" }), " ",
      el("span", { class: "bb-muted", title: `${str(f.project)}/${str(f.repo)}`.slice(0, 300) }, el("bdi", {}, codeLine.text(str(f.repo) || "?"))),
      parts.map((part, i) => [el("span", { class: "bb-muted", "aria-hidden": "true" }, " / "),
        el("bdi", { class: i === parts.length - 1 ? "bb-crumb-file" : null }, codeLine.text(part))]));
  }
  function refChip(f) {
    const at = str(f.at);
    const label = str(f.atLabel) || at || "default branch";
    const what = /^[0-9a-f]{40}$/i.test(at) ? "commit" : at.startsWith("refs/tags/") ? "tag" : at ? "ref" : "branch";
    return el("span", { class: "bb-branch bb-fref", title: `${what}: ${label}`.slice(0, 600) }, sr(`${what}: `), el("bdi", {}, label));
  }
  const linesWords = (f) => (arr(f.lines).length && pos(f.start) !== null && pos(f.end) >= f.start
    ? `Lines ${fmt.num(f.start)}–${fmt.num(f.end)}${pos(f.total) !== null ? ` of ${fmt.num(f.total)}` : ""}` : "");

  // The blame entry of each line number.
  function blameOf(f) {
    const by = new Map();
    for (const b of arr(f.blame)) for (let n = pos(b.from); n !== null && n <= b.to && n - b.from < 100000; n++) if (!by.has(n)) by.set(n, b);
    return by;
  }
  // A blame group's first cell: the author's avatar (as the card draws them) and name, the short commit and the
  // date (past a month the day alone, the time in its title), the name giving way first; compact (inline) it is the
  // avatar and the date, the rest in its title, the date cut with … only where even it has no room.
  function blameCell(b, users, first, compact) {
    if (!b || !first) return el("td", { class: "bb-blame" });
    const p = person(users, b.author);
    if (!Object.hasOwn(obj(users), str(b.author)) && str(b.name)) p.name = b.name;
    const commit = str(b.commit).slice(0, 11);
    const title = [p.name.slice(0, 200), commit, str(b.subject).slice(0, 1000)].filter(Boolean).join(" · ");
    return el("td", { class: "bb-blame bb-blame-first", title: (compact ? title : str(b.subject).slice(0, 1000)) || null },
      el("div", { class: "bb-blame-in" }, avatar(p, "sm"),
        compact ? null : el("bdi", { class: "bb-blame-name", title: p.name.slice(0, 200) }, p.name.slice(0, 200)),
        compact ? null : el("code", { class: "bb-blame-commit" }, commit),
        fmt.time(b.at, "", true)));
  }
  // Line `line`'s row; a blame group goes on while the commit is the one of the row above (`prev`).
  function row(line, blame, users, prev, select, compact) {
    const n = pos(line.n);
    const b = blame ? blame.get(n) || null : null;
    const first = !b || !prev || (prev !== b && (!str(b.commit) || str(prev.commit) !== str(b.commit)));
    const long = str(line.s).length > LONG && Array.from(str(line.s)).length > LONG;
    const code = codeLine.draw(line);
    const tr = el("tr", { class: `bb-sl${blame && first ? " bb-blame-start" : ""}`, id: n !== null ? `L${n}` : null, "data-line": n },
      blame ? blameCell(b, users, first, compact) : null,
      el("td", { class: "bb-ln" }, n === null ? "" : el("button", { type: "button", class: "bb-lnum", "aria-label": `Line ${n}`, onclick: (e) => select(n, e.shiftKey) }, String(n))),
      el("td", { class: "bb-dcode bb-scode" }, long ? capped("div", { class: "bb-longline" }, code, { lines: 4, what: "line" }) : code));
    return { tr, b };
  }

  function draw(data, ctx) {
    const f = data.file;
    if (!f || typeof f !== "object" || Array.isArray(f)) throw new TypeError("the view data has no file");
    const seen = remember(f, {});
    const lines = arr(f.lines);
    // Blame as the call asked (show's `blame: true`) until the person turns it off or on; inline, compact.
    const blameShown = f.binary !== true && Array.isArray(f.blame) && (typeof seen.blame === "boolean" ? seen.blame : obj(data.call).blame === true);
    const compact = Boolean(ctx.inline);
    const count = el("span", { class: "bb-muted", "data-count": "lines" }, linesWords(f));
    const problem = el("span", { class: "bb-fproblem", role: "status", hidden: "" });
    const body = el("tbody", {});
    // A click selects a line, shift+click a range from the selection; the one selected line again clears it.
    function mark() {
      const [a, z] = seen.selected || [];
      for (const tr of body.children) {
        const on = Number(tr.dataset.line) >= a && Number(tr.dataset.line) <= z;
        tr.classList.toggle("bb-sel", on);
        const b = tr.querySelector(".bb-lnum");
        if (b) b.ariaPressed = String(on);
      }
    }
    function select(n, range) {
      const now = seen.selected;
      remember(f, { selected: range && now ? [Math.min(now[0], n), Math.max(now[1], n)] : now && now[0] === n && now[1] === n ? null : [n, n] });
      mark();
    }
    let prev = null;
    const append = (list, blame) => list.map((line) => {
      const r = row(line, blame, ctx.users, prev, select, compact);
      prev = r.b;
      body.append(r.tr);
      return r.tr;
    });
    append(lines, blameShown ? blameOf(f) : null);
    const width = () => `width: ${String(Math.max(pos(f.end) || 0, pos(f.total) || 0, 99)).length + 3}ch`;
    const lnCol = el("col", { style: width() });
    const table = el("table", { class: "bb-diff bb-source", "data-blame": blameShown ? (compact ? "compact" : "shown") : null },
      el("colgroup", {}, blameShown ? el("col", { class: "bb-col-blame" }) : null, lnCol, el("col", {})), body);
    mark();

    // Show more: the next window (with its blame when these lines have it), appended.
    const more = el("button", { type: "button", class: "bb-more bb-file-more", hidden: f.last === true || !lines.length ? "" : null }, "Show more");
    more.addEventListener("click", () => {
      if (more.disabled || page.gone) return;
      const call = Object.assign({}, obj(data.call), { start_line: (pos(f.end) || 0) + 1 }, Array.isArray(f.blame) ? { blame: true } : {});
      delete call.line_count;
      ask(call, more, problem, "more lines").then((got) => {
        if (!got) return;
        const next = got.data.file;
        const added = arr(next.lines).filter((l) => pos(l.n) > (pos(f.end) || 0));
        f.lines = lines.concat(added);
        lines.push(...added);
        if (added.length) { f.end = added[added.length - 1].n; grown.add(f); }
        f.last = next.last === true;
        f.total = pos(next.total);
        if (Array.isArray(f.blame) && Array.isArray(next.blame)) f.blame = f.blame.concat(next.blame);
        const drawn = append(added, blameShown ? blameOf(f) : null);
        lnCol.style.cssText = width();
        count.replaceChildren(linesWords(f));
        more.hidden = f.last || !added.length;
        mark();
        checkCaps(body);
        if (drawn.length) drawn[0].querySelector(".bb-lnum").focus({ preventScroll: true });
      });
    });

    // Show earlier lines: a window opened past line 1 (the model showed lines 200–240) reads the lines before it,
    // up to a window's worth, and draws them above; focus goes to the first of them.
    const first = pos(f.start) || 1;
    const earlier = el("button", { type: "button", class: "bb-more bb-file-earlier", hidden: first <= 1 || !lines.length ? "" : null },
      `Show lines ${fmt.num(Math.max(1, first - EARLIER))}–${fmt.num(first - 1)}`);
    earlier.addEventListener("click", () => {
      if (earlier.disabled || page.gone) return;
      const from = Math.max(1, first - EARLIER);
      const call = Object.assign({}, obj(data.call), { start_line: from, line_count: first - from }, Array.isArray(f.blame) ? { blame: true } : {});
      ask(call, earlier, problem, "earlier lines").then((got) => {
        if (!got) return;
        const next = got.data.file;
        const before = arr(next.lines).filter((l) => pos(l.n) !== null && l.n >= from && l.n < first);
        if (!before.length) { earlier.hidden = true; return; }
        f.lines = before.concat(arr(f.lines));
        f.start = before[0].n;
        if (Array.isArray(f.blame) && Array.isArray(next.blame)) f.blame = next.blame.filter((b) => pos(b.from) !== null && b.from < first).concat(f.blame);
        grown.add(f);
        redraw();
        const line = root.querySelector(`tr#L${before[0].n} .bb-lnum`);
        if (line) line.focus({ preventScroll: true });
      });
    });

    // Blame, in full screen: from the data, else read once (every line drawn) with refresh_view.
    let blame = null;
    if (f.binary !== true && lines.length && (Array.isArray(f.blame) || (!ctx.inline && navigate.can(data, "file")))) {
      blame = el("button", { type: "button", class: "bb-segbtn bb-blame-btn", "aria-pressed": String(blameShown) }, "Blame");
      blame.addEventListener("click", () => {
        if (Array.isArray(f.blame)) { remember(f, { blame: !blameShown }); redraw(); return; }
        const call = Object.assign({}, obj(data.call), { blame: true }, grown.has(f) ? { start_line: f.start, line_count: f.end - f.start + 1 } : {});
        ask(call, blame, problem, "the blame").then((got) => {
          if (!got) return;
          remember(f, { blame: true });
          page.result = got.result;
          page.data = got.data;
          redraw();
          refresh.start(got.data);
        });
      });
    }

    const start = pos(f.start) || 1;
    const total = pos(f.total);
    const note = (...words) => el("div", { class: "bb-dmsg bb-fmsg", role: "note" }, ...words);
    // A picture (PNG, JPEG, GIF, WebP; an SVG beside its source) drawn as an image, with its size.
    const name = str(f.path).split("/").pop() || "picture";
    const pic = picture.draw(f.picture, name, link(f.url, { class: "bb-link" }, "Open it in Bitbucket"));
    return el("article", { class: "bb-fileview", "data-path": str(f.path).slice(0, 1000) },
      // A binary file's one line opens it in Bitbucket: the bar would only say it again. A picture keeps the bar
      // (Open in Bitbucket, Download), as Bitbucket's page of an image has them.
      el("div", { class: "bb-fvhead" }, crumbs(f), refChip(f), f.binary === true && !pic ? null :
        el("div", { class: "bb-fvbar" }, count, str(f.language) ? el("span", { class: "bb-muted" }, str(f.language).slice(0, 40)) : null,
          blame ? el("span", { class: "bb-seg" }, blame) : null, link(f.url, { class: "bb-link bb-open-file" }, "Open in Bitbucket"),
          save.button(Object.assign({ project: str(f.project), repo: str(f.repo), path: str(f.path) }, str(f.at) ? { at: str(f.at) } : {}), "Download"), problem)),
      pic,
      f.binary === true ? (pic ? null : note("This file can't be viewed in your browser. ", link(f.url, { class: "bb-link" }, "Open it in Bitbucket"), "."))
        : lines.length ? [earlier, el("div", { class: "bb-fwrap" }, table), more]
          : note(start <= 1 && (f.last === true || total === 0) ? "This file is empty."
            : total !== null ? `This file has ${fmt.count(total, "line", "lines")}: none from line ${fmt.num(start)}.` : `No lines from line ${fmt.num(start)}.`));
  }
  return { draw };
})();

registerKind("file", fileView.draw);
