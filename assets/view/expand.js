// Context expansion in a diff, as Bitbucket's "Show more": above the first hunk (when it starts after
// line 1), between hunks, and below the last (until a read says the file ends), the unchanged lines
// the diff leaves out can be read and drawn in place as context. Below the last hunk only while the file
// may go on: not where the hunk's context after its last change is shorter than the diff's `contextLines`.
// Where it is as long, the diff cannot tell whether the file ends there, so the lines below are read once
// first (`probe`, the read a first click makes) and the row is drawn only when some came back: never a
// control that finds nothing.
// This module decides where the gaps are, what a click reads and what is drawn of each gap; diff.js draws
// the rows.
//
// A read is refresh_view with a show call of kind file (never a model call): the file's path at the
// diff's new side (`expand.new`), or, for a deleted file, its old path at `expand.old`. Up to 20
// lines a click, the whole gap (at most 500) with Ctrl or Cmd. Above and between hunks the lines
// nearest the hunk below are read first (the gap closes upward, toward the change the person reads);
// below the last hunk, the lines right after it. Numbers: a gap's line n on the new side is n − offset
// on the old side, offset being the preceding hunk's end on the new side less its end on the old
// (before the first hunk, its new start less its old start). What was read is kept per file and diff
// version, so a redraw (another file, another layout, a refresh with the same text) draws it again.
const diffExpand = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const str = (x) => (typeof x === "string" ? x : "");
  const pos = (x) => (Number.isInteger(x) && x >= 0 ? x : null);
  const read = new Map(); // key → { lines: Map(number → line), eof: the file's last line number once known }

  // What can be expanded in one file of the diff, or null: `before[i]` the gap above hunk i (null when
  // none), `after` the gap below the last hunk (its end unknown until read). A hunk's [start, end) on each
  // side is its header's [first line, first line + lines).
  function plan(data, d, entry) {
    const { kinds, tools } = obj(data.server);
    const diff = obj(entry.diff);
    const hunks = Array.isArray(diff.hunks) ? diff.hunks : [];
    const deleted = entry.file.type === "DELETE";
    const at = str(obj(d.expand)[deleted ? "old" : "new"]);
    const path = deleted ? str(entry.file.srcPath) || str(diff.srcPath) || entry.path : entry.path;
    const project = str(d.project) || str(obj(data.call).project);
    const repo = str(d.repo) || str(obj(data.call).repo);
    if (!Array.isArray(kinds) || !kinds.includes("file") || !Array.isArray(tools) || !tools.includes("refresh_view") || !at || !project || !repo
      || !hunks.length || diff.binary === true || diff.error || diff.truncated === true || pos(diff.leftOut)) return null;
    const all = hunks.map((h) => {
      const [ns, nl] = Array.isArray(obj(h).new) ? h.new : [];
      const [os, ol] = Array.isArray(obj(h).old) ? h.old : [];
      return [ns, nl, os, ol].every((x) => pos(x) !== null) ? { ns, ne: ns + nl, os, oe: os + ol } : null;
    });
    if (all.includes(null)) return null;
    // A deleted file is read on its old side, where its numbers are.
    const start = (b) => (deleted ? b.os : b.ns);
    const end = (b) => (deleted ? b.oe : b.ne);
    const before = all.map((b, i) => {
      const from = i ? end(all[i - 1]) : 1;
      return start(b) - 1 >= from ? { id: String(i), from, to: start(b) - 1, offset: i ? all[i - 1].ne - all[i - 1].oe : b.ns - b.os, up: true } : null;
    });
    const last = all[all.length - 1];
    // An added or deleted file's one hunk from line 1 is the whole file: nothing is below it. Nor is anything
    // below a last hunk with fewer lines after its last change than the context Bitbucket puts around each
    // change (the diff's `contextLines`): the file ends there.
    const whole = (entry.file.type === "ADD" || deleted) && all.length === 1 && start(last) <= 1;
    const ends = pos(diff.contextLines) !== null && after(hunks[hunks.length - 1]) < diff.contextLines;
    return { key: `${project}/${repo}|${str(obj(d.expand).new)}|${str(obj(d.expand).old)}|${path}`, old: deleted,
      call: { kind: "file", project, repo, path, at }, before,
      after: whole || ends ? null : { id: "end", from: Math.max(1, end(last)), to: null, offset: last.ne - last.oe, up: false, unsure: true } };
  }
  // The context lines after a hunk's last change (Infinity when it has no change: nothing can be told).
  function after(h) {
    const lines = Array.isArray(obj(h).lines) ? h.lines : [];
    let n = 0;
    for (let i = lines.length - 1; i >= 0; i--, n++) if (obj(lines[i]).t === "A" || obj(lines[i]).t === "R") return n;
    return Infinity;
  }
  // `ahead`: lines a probe read below the last hunk, not drawn until a click asks for them.
  const store = (p) => read.get(p.key) || read.set(p.key, { lines: new Map(), eof: null, ahead: new Map(), probe: null }).get(p.key);
  // Whether the file is known to go on below the gap's start (the end gap: not until a read says so).
  function known(p, gap) {
    const s = store(p);
    return !gap.unsure || s.ahead.has(gap.from) || s.lines.has(gap.from) || (s.eof !== null && s.eof >= gap.from);
  }
  // Reads, once per file and diff version, the lines a first click below the last hunk would, keeping them aside.
  function probe(p, gap) {
    const s = store(p);
    if (!s.probe) s.probe = fetch(p, gap, [gap.from, null], false, s.ahead).catch(() => {});
    return s.probe;
  }

  // The gap as drawn: lines read ({line}, with both numbers) and stretches not read ({more: [from, to]}, to null: the end unknown).
  function segments(p, gap) {
    const s = store(p);
    const out = [];
    if (!known(p, gap)) return out;
    const to = gap.to !== null ? gap.to : s.eof;
    let missing = null;
    let n = gap.from;
    for (; to === null ? s.lines.has(n) : n <= to; n++) {
      if (!s.lines.has(n)) { if (missing === null) missing = n; continue; }
      if (missing !== null) out.push({ more: [missing, n - 1] });
      missing = null;
      out.push({ line: Object.assign({}, s.lines.get(n), p.old ? { o: n } : { n, o: n - gap.offset }) });
    }
    if (to === null) out.push({ more: [n, null] });
    else if (missing !== null) out.push({ more: [missing, to] });
    return out;
  }

  // Reads what a click on the stretch [from, to] asks: 20 lines, `all` the whole stretch (at most 500).
  function fetch(p, gap, [from, to], all, into = null) {
    const count = Math.min(all ? 500 : 20, to === null ? Infinity : to - from + 1);
    const first = gap.up && to !== null ? to - count + 1 : from;
    const kept = store(p).ahead;
    if (!into && kept.has(first) && !all) {
      // A probe read these already: drawn now, without reading again.
      for (const [n, line] of kept) store(p).lines.set(n, line);
      kept.clear();
      return Promise.resolve();
    }
    const args = { show: Object.assign({}, p.call, { start_line: first, line_count: count }) };
    return bridge.request("tools/call", { name: "refresh_view", arguments: args }).then((result) => {
      const data = viewData(result);
      const file = obj(data && data.file);
      if (obj(result).isError || !data || data.kind !== "file" || file.binary === true) throw new Error(firstSentence(resultText(obj(result)) || "bb's answer holds no lines."));
      const s = store(p);
      let got = 0;
      for (const line of Array.isArray(file.lines) ? file.lines : []) {
        const n = pos(obj(line).n);
        if (n !== null && n >= first && n < first + count) { (into || s.lines).set(n, { s: str(line.s), r: line.r, p: line.p, cut: line.cut }); got++; }
      }
      if (file.last === true) s.eof = pos(file.end) ?? Math.max(first - 1, ...s.lines.keys(), ...s.ahead.keys());
      else if (!got) throw new Error("Bitbucket sent none of these lines.");
    }, (err) => { throw new Error(String(obj(err).message || "The host did not answer.")); });
  }

  return { plan, segments, fetch, known, probe };
})();
