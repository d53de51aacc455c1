// Draws a Markdown node tree from bb (core/src/markdown.rs) with el(): a string is a text node,
// an element is {t, c, ...}. Only the tags bb makes are drawn; any other element gives its
// children. Links go through the host and only to web addresses; nothing is parsed as HTML.
const markdown = (() => {
  const PLAIN = new Set(["p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "ul", "li", "em", "strong", "del", "hr", "br", "table", "thead", "tbody", "tr"]);
  const MAX_DEPTH = 32;
  function node(n, depth) {
    if (n === null || n === undefined) return null;
    if (typeof n === "string" || typeof n === "number") return String(n);
    if (Array.isArray(n)) return n.map((c) => node(c, depth));
    if (typeof n !== "object") return null;
    const kids = () => (depth < MAX_DEPTH && Array.isArray(n.c) ? n.c.map((c) => node(c, depth + 1)) : []);
    const text = typeof n.text === "string" ? n.text : "";
    switch (n.t) {
      case "pre":
        return el("pre", { class: "bb-code", "data-lang": typeof n.lang === "string" ? n.lang.slice(0, 40) : null }, el("code", {}, text));
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
  function draw(tree, cls = "bb-md") {
    if (tree === null || tree === undefined) return null;
    const nodes = [node(tree, 0)].flat(Infinity).filter((x) => x !== null && x !== undefined);
    return el("div", { class: cls }, nodes.map((x) => (x instanceof Element && x.tagName === "TABLE" ? el("div", { class: "bb-scroll" }, x) : x)));
  }
  function blocks(tree) {
    if (Array.isArray(tree)) return tree;
    return tree === null || tree === undefined ? [] : [tree];
  }
  return { draw, blocks, node };
})();
