// Code Insights as Bitbucket's pull request page draws them (since 5.15): on the card a "Reports" section, each report
// with its result, its data fields (up to 6, formatted by bb) and a link through the host, failed first, and the
// annotations counted by severity; in the diff, as Bitbucket's: a marker in the new side's gutter of each line that has
// some (the most severe's colour, how many), the line's annotations opened under it on a click (or Enter) and closed
// again (a click, or Escape), on the new half in side-by-side; one on a line the view does not draw listed at the
// file's top, and the file list marking files that have some.
// Wording: "Passed" / "Failed" as Bitbucket's report results; "Pending" for a report without a result [assumed].
const insights = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const arr = (x) => (Array.isArray(x) ? x.filter((i) => i && typeof i === "object") : []);
  const str = (x) => (typeof x === "string" ? x : "");
  const RESULT = { FAIL: ["Failed", "✕", "bad"], PASS: ["Passed", "✓", "ok"] };
  const PENDING = ["Pending", "◔", "run"];
  const SEVERITY = { HIGH: "High", MEDIUM: "Medium", LOW: "Low" };
  const SEVERITIES = ["HIGH", "MEDIUM", "LOW"];
  const TYPE = { BUG: "Bug", CODE_SMELL: "Code smell", VULNERABILITY: "Vulnerability" };
  const sevOf = (a) => (SEVERITY[a.severity] ? a.severity : "LOW");

  // "3 high · 4 medium · 500 low" from {HIGH, MEDIUM, LOW}; null when there is nothing to count.
  function counted(c) {
    const parts = SEVERITIES.filter((s) => fmt.isCount(obj(c)[s]) && c[s] > 0).map((s) =>
      el("span", { class: `bb-an-count bb-sev-${s.toLowerCase()}`, "data-severity": s }, `${fmt.num(c[s])} ${SEVERITY[s].toLowerCase()}`));
    return parts.length ? parts.flatMap((p, i) => (i ? [" · ", p] : [p])) : null;
  }

  // Failed, then pending, then passed. Which reports the merge check requires Bitbucket's REST API does not say: a
  // failed or missing required one is in the merge check's vetoes ("Merge issues"), not marked here.
  const rank = (r) => (r.result === "FAIL" ? 0 : r.result === "PASS" ? 2 : 1);
  function reportRow(r) {
    const [word, icon, tone] = RESULT[r.result] || PENDING;
    const fields = arr(r.data).slice(0, 6).map((f) => el("div", { class: "bb-field" },
      el("dt", {}, el("bdi", {}, str(f.title).slice(0, 200) || "Value")),
      el("dd", {}, webUrl(f.url) ? link(f.url, {}, el("bdi", {}, str(f.text).slice(0, 300) || f.url)) : el("bdi", {}, str(f.text).slice(0, 300)))));
    const more = fmt.isCount(r.dataMore) && r.dataMore > 0 ? el("p", { class: "bb-muted" }, `${fmt.count(r.dataMore, "more field", "more fields")} in Bitbucket.`) : null;
    const an = counted(r.annotations);
    return el("li", { class: `bb-report bb-${tone}`, "data-key": str(r.key), "data-result": str(r.result) || "PENDING" },
    el("span", { class: "bb-build-state" }, `${icon} ${word}`),
    el("span", { class: "bb-build-body" },
      link(r.url, { class: "bb-build-name" }, el("bdi", {}, (str(r.title) || str(r.key) || "Report").slice(0, 300))),
      str(r.reporter) ? el("span", { class: "bb-muted bb-build-detail" }, el("bdi", {}, str(r.reporter).slice(0, 200))) : null,
      str(r.details) ? el("p", { class: "bb-report-details", dir: "auto" }, str(r.details).slice(0, 600)) : null,
      fields.length ? el("dl", { class: "bb-fields" }, fields) : null, more,
      an ? el("p", { class: "bb-muted bb-report-an" }, "Annotations: ", an) : null));
  }

  // The card's "Reports" section, or null when the view carries no Code Insights.
  function section(pr, ctx) {
    const ins = pr.insights;
    if (!ins || typeof ins !== "object" || Array.isArray(ins)) return null;
    const rows = arr(ins.reports).map((r, i) => [rank(r), i, r]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , r]) => r);
    if (!rows.length) return null;
    const an = counted(ins.annotations);
    const total = fmt.isCount(obj(ins.annotations).total) ? ins.annotations.total : null;
    return el("section", { class: "bb-section bb-reports", "aria-label": "Reports" },
      el("div", { class: "bb-builds-head" }, el("h3", {}, "Reports"),
        an ? el("span", { class: "bb-muted bb-an-total" }, `${fmt.count(total ?? 0, "annotation", "annotations")}: `, an) : null),
      grow(rows, { inline: ctx.inline, first: 3, step: 10, noun: "reports", one: "report", tag: "ul", cls: "bb-builds",
        pinned: (r) => r.result === "FAIL", draw: reportRow }));
  }

  // ---- the diff ---------------------------------------------------------------------------------
  // A file's annotations by the new line they are on; `drawn` holds the new line numbers the view draws.
  function place(list, drawn) {
    const at = new Map();
    const top = [];
    for (const a of arr(list)) {
      const n = Number.isInteger(a.line) && a.line > 0 ? a.line : 0;
      if (n && drawn.has(n)) { if (!at.has(n)) at.set(n, []); at.get(n).push(a); } else top.push(a);
    }
    return { at, top };
  }
  function annotation(a, where) {
    const s = sevOf(a);
    const msg = str(a.message);
    return el("div", { class: `bb-an bb-sev-${s.toLowerCase()}`, "data-severity": s, "data-line": Number.isInteger(a.line) ? a.line : null },
      el("span", { class: "bb-an-sev" }, SEVERITY[s]),
      TYPE[a.type] ? el("span", { class: "bb-muted" }, ` ${TYPE[a.type]}`) : null,
      where ? el("span", { class: "bb-muted" }, where) : null, " ",
      capped("span", { class: "bb-an-msg", dir: "auto" }, msg.slice(0, 2000), { lines: 3, what: "annotation" }),
      " ", el("span", { class: "bb-muted bb-an-from" }, "— ", link(a.url, {}, el("bdi", {}, (str(a.reportTitle) || str(a.report) || "Report").slice(0, 200)))));
  }
  // A drawn line's annotations: `mark`, the gutter's button, and `row`, the row under the line that holds them (most
  // severe first), closed until the button opens it. What the person opened stays open across redraws.
  let rowIds = 0;
  function line(list, path, n, layout) {
    if (!list || !list.length) return null;
    const key = `${path}\u0000${n}`;
    const s = SEVERITIES.find((x) => list.some((a) => sevOf(a) === x));
    const boxes = [...list].sort((a, b) => SEVERITIES.indexOf(sevOf(a)) - SEVERITIES.indexOf(sevOf(b))).map((a) => annotation(a, null));
    const id = `bb-an-${++rowIds}`;
    const row = el("tr", { class: "bb-an-row", id, "data-line": n, hidden: opened.has(key) ? null : "" },
      layout === "side-by-side" ? [el("td", { colspan: "2", class: "bb-an-old" }), el("td", { colspan: "2", class: "bb-an-new" }, boxes)]
        : el("td", { colspan: "3" }, boxes));
    const words = `${fmt.count(list.length, "annotation", "annotations")} (${SEVERITY[s].toLowerCase()})`;
    const mark = el("button", { type: "button", class: `bb-an-mark bb-sev-${s.toLowerCase()}`, "data-severity": s, title: words,
      "aria-label": `${words} on line ${n}`, "aria-expanded": String(opened.has(key)), "aria-controls": id }, list.length > 9 ? "9+" : String(list.length));
    const show = (on) => {
      row.hidden = !on;
      mark.ariaExpanded = String(on);
      if (on) opened.add(key); else opened.delete(key);
    };
    mark.addEventListener("click", () => show(row.hidden));
    row.addEventListener("keydown", (e) => { if (e.key === "Escape") { show(false); mark.focus(); } });
    return { mark, row };
  }
  const opened = new Set(); // path and line of each line whose annotations the person opened
  // The annotations no drawn line holds, at the file's top, each saying where it is; and, apart, how many bb did not
  // carry: those are in Bitbucket only, wherever their lines are (issue 54 item 5: never counted as off the lines shown).
  function top(list, more) {
    const extra = fmt.isCount(more) && more > 0 ? el("p", { class: "bb-muted bb-an-more", "data-note": "annotations-more" },
      `${fmt.count(more, "more annotation", "more annotations")} on this file ${more === 1 ? "is" : "are"} only in Bitbucket, not marked here.`) : null;
    if (!list.length) return extra;
    // One stays open; more are one line the person opens, so the code stays on the first screen.
    const off = el("details", { class: "bb-an-top", "data-note": "annotations", open: list.length === 1 ? "" : null },
      el("summary", { class: "bb-threads-sum" }, `${fmt.count(list.length, "annotation", "annotations")} not on the lines shown here`),
      list.map((a) => annotation(a, Number.isInteger(a.line) && a.line > 0 ? ` · line ${a.line}` : " · this file")), extra);
    return off;
  }
  // The file list's mark: how many annotations the file has (Bitbucket's count, else those carried).
  function fileMark(entry) {
    const n = fmt.isCount(entry.file.annotations) ? entry.file.annotations : arr(obj(entry.diff).annotations).length;
    return n > 0 ? el("span", { class: "bb-dmark bb-dmark-an", "data-mark": "annotations", title: `${fmt.count(n, "annotation", "annotations")}` },
      el("span", { "aria-hidden": "true" }, "●"), fmt.num(n), sr(n === 1 ? " annotation" : " annotations")) : null;
  }
  return { section, place, line, top, fileMark };
})();
