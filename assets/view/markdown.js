// Draws a Markdown node tree from bb (core/src/markdown.rs) with el(): a string is a text node,
// an element is {t, c, ...}. Only the tags bb makes are drawn; any other element gives its
// children. Links go through the host and only to web addresses; nothing is parsed as HTML.
// `pre(n)`, when given, may draw a code block its own way (a comment's suggestion); null: as code.
// source(tree) writes the tree back as Markdown, for a box that edits it (the view has no raw text).
const markdown = (() => {
  const PLAIN = new Set(["p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "ul", "li", "em", "strong", "del", "hr", "br", "table", "thead", "tbody", "tr"]);
  const MAX_DEPTH = 32;
  function node(n, depth, pre) {
    if (n === null || n === undefined) return null;
    if (typeof n === "string" || typeof n === "number") return String(n);
    if (Array.isArray(n)) return n.map((c) => node(c, depth, pre));
    if (typeof n !== "object") return null;
    const kids = () => (depth < MAX_DEPTH && Array.isArray(n.c) ? n.c.map((c) => node(c, depth + 1, pre)) : []);
    const text = typeof n.text === "string" ? n.text : "";
    switch (n.t) {
      case "pre":
        return (pre && pre(n)) || el("pre", { class: "bb-code", "data-lang": typeof n.lang === "string" ? n.lang.slice(0, 40) : null }, el("code", {}, text));
      case "code":
        return el("code", {}, text);
      case "a":
        return link(n.href, { class: "bb-link" }, kids());
      case "ol": {
        const start = Number.isInteger(n.start) && n.start >= 0 && n.start < 1e9 ? n.start : null;
        return el("ol", { start }, kids());
      }
      case "th":
      case "td": {
        const align = ["left", "center", "right"].includes(n.align) ? `bb-al-${n.align}` : null;
        return el(n.t, { class: align }, kids());
      }
      case "check":
        return el("span", { class: "bb-check", role: "img", "aria-label": n.checked ? "done" : "not done" }, n.checked ? "☑ " : "☐ ");
      default:
        return PLAIN.has(n.t) ? el(n.t, { dir: n.t === "p" || n.t === "li" ? "auto" : null }, kids()) : el("span", {}, kids());
    }
  }
  function draw(tree, cls = "bb-md", pre = null) {
    if (tree === null || tree === undefined) return null;
    const nodes = [node(tree, 0, pre)].flat(Infinity).filter((x) => x !== null && x !== undefined);
    return el("div", { class: cls }, nodes.map((x) => (x instanceof Element && x.tagName === "TABLE" ? el("div", { class: "bb-scroll" }, x) : x)));
  }
  function blocks(tree) {
    if (Array.isArray(tree)) return tree;
    return tree === null || tree === undefined ? [] : [tree];
  }
  // The tree as Markdown: blocks apart by a blank line, lists and quotes by their markers, code fenced
  // past its own backticks. What bb's parser made text (an escaped *, raw HTML) comes back as that text.
  const BLOCK = /^(p|h[1-6]|pre|ul|ol|blockquote|table|hr)$/;
  const isBlock = (n) => Boolean(n && typeof n === "object" && BLOCK.test(n.t));
  const kidsOf = (n) => (Array.isArray(n.c) ? n.c : []);
  const fence = (text, min) => "`".repeat(Math.max(min, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  const indent = (text, first, rest) => text.split("\n").map((l, i) => (i ? (l ? rest + l : rest.trim()) : first + l)).join("\n");
  function inline(n, depth) {
    if (typeof n === "string" || typeof n === "number") return String(n);
    if (Array.isArray(n)) return n.map((c) => inline(c, depth)).join("");
    if (!n || typeof n !== "object" || depth > MAX_DEPTH) return "";
    const kids = () => inline(kidsOf(n), depth + 1);
    const wrap = { em: "*", strong: "**", del: "~~" }[n.t];
    if (wrap) return wrap + kids() + wrap;
    const t = String(n.text || "");
    if (n.t === "code") return fence(t, 1) + (/^`|`$/.test(t) ? ` ${t} ` : t) + fence(t, 1);
    if (n.t === "a") return `[${kids()}](${String(n.href || "")})`;
    if (n.t === "br") return "\\\n";
    if (n.t === "check") return n.checked ? "[x] " : "[ ] ";
    return kids();
  }
  // Children that mix inline runs and blocks: each run is one block; `gap` between them.
  function mixed(list, depth, gap = "\n\n") {
    const parts = [];
    let run = [];
    for (const n of list) {
      if (!isBlock(n)) { run.push(n); continue; }
      if (run.length) parts.push(inline(run, depth));
      run = [];
      parts.push(block(n, depth));
    }
    if (run.length) parts.push(inline(run, depth));
    return parts.join(gap);
  }
  function block(n, depth) {
    const kids = kidsOf(n);
    if (depth > MAX_DEPTH) return inline(kids, depth);
    const h = /^h([1-6])$/.exec(n.t);
    if (h) return `${"#".repeat(Number(h[1]))} ${inline(kids, depth)}`;
    const t = String(n.text || "");
    switch (n.t) {
      case "pre": return `${fence(t, 3)}${typeof n.lang === "string" ? n.lang : ""}\n${t}${t.endsWith("\n") || !t ? "" : "\n"}${fence(t, 3)}`;
      case "hr": return "---";
      case "blockquote": return indent(mixed(kids, depth + 1), "> ", "> ");
      case "ul":
      case "ol": {
        const start = Number.isInteger(n.start) ? n.start : 1;
        const loose = kids.some((li) => kidsOf(li).some((c) => c && c.t === "p"));
        return kids.map((li, i) => {
          const mark = n.t === "ol" ? `${start + i}. ` : "- ";
          return indent(mixed(kidsOf(li), depth + 1, loose ? "\n\n" : "\n"), mark, " ".repeat(mark.length));
        }).join(loose ? "\n\n" : "\n");
      }
      case "table": {
        // Each row's cells, and under the head the rule that says each column's alignment.
        const line = (cells) => `| ${cells.join(" | ")} |`;
        return kids.flatMap(kidsOf).map((tr, i) => line(kidsOf(tr).map((x) => inline(kidsOf(x), depth).replace(/\|/g, "\\|")))
          + (i ? "" : `\n${line(kidsOf(tr).map((x) => ({ left: ":--", center: ":-:", right: "--:" })[x.align] || "---"))}`)).join("\n");
      }
      default: return inline(kids, depth);
    }
  }
  const source = (tree) => mixed(blocks(tree), 0);
  return { draw, blocks, node, source };
})();
