// Inline, a view keeps one shape and grows a step at a time when the person asks; fullscreen
// draws everything. grow(): a list a few items at a time ("Show 5 more builds"), items `pinned`
// says need the person always drawn in their place; after "Show N more" focus is on the first new
// item. shape: the inline frame (grow a step below). capped(): one field cut at a few lines.
// What the person grew is kept when the same view is drawn again (a refresh): the nth list of a
// kind in a draw keeps its budget; grown.seen is emptied for each draw, grown.budgets for a new view.
const grown = { budgets: new Map(), seen: new Map() };
function grow(items, { inline, first, step, draw, pinned, noun = "", one = "", tag = "div", cls = "", label, onrender }) {
  const list = Array.isArray(items) ? items : [];
  const box = el(tag, { class: cls });
  const drawn = new Map();
  const kind = `${cls}|${noun}`;
  const key = `${kind}|${grown.seen.get(kind) || 0}`;
  grown.seen.set(kind, (grown.seen.get(kind) || 0) + 1);
  let budget = inline ? grown.budgets.get(key) || first : Infinity;
  function render(moved) {
    const nodes = [];
    let open = budget;
    let hidden = 0;
    let focus = null;
    list.forEach((item, i) => {
      if (!(pinned && pinned(item)) && open-- <= 0) { hidden++; return; }
      if (!drawn.has(i)) { drawn.set(i, draw(item, i)); if (moved && !focus) focus = drawn.get(i); }
      nodes.push(drawn.get(i));
    });
    if (hidden > 0) {
      const n = Math.min(step, hidden);
      const [text, aria] = label ? label(n) : [`Show ${fmt.num(n)} more${noun ? " " + (n === 1 && one ? one : noun) : ""}`];
      const button = el("button", { type: "button", class: "bb-more", "aria-label": aria, onclick: () => { budget += step; grown.budgets.set(key, budget); render(true); } }, text);
      nodes.push(tag === "ul" || tag === "ol" ? el("li", { class: "bb-more-row" }, button) : button);
    }
    box.replaceChildren(...nodes.filter(Boolean));
    if (focus instanceof HTMLElement) { focus.tabIndex = -1; focus.focus({ preventScroll: true }); }
    if (onrender) onrender(nodes.length - (hidden > 0 ? 1 : 0), hidden);
  }
  render(false);
  return box;
}

// A field cut at `lines` lines (or a block at `box` em): its text in the title attribute, and a
// button, shown only where it is really cut, opens the whole in a box of its own that scrolls.
// `wrap(node)` places the cut field inside something (a button is one box, so it is cut within).
function capped(tag, attrs, children, { lines = 3, box = 0, what = "title", tip = "", wrap } = {}) {
  const node = el(tag, Object.assign({}, attrs, { class: `${attrs.class || ""} ${box ? "bb-capbox" : "bb-clamp"}`,
    title: tip ? (tip.length > 1000 ? `${tip.slice(0, 1000)}…` : tip) : null, "data-lines": box ? null : lines, "data-box": box || null }), children);
  const toggle = el("button", { type: "button", class: "bb-cap-more", hidden: "", "aria-expanded": "false" }, `Show the whole ${what}`);
  toggle.addEventListener("click", () => {
    const open = node.classList.toggle("bb-cap-open");
    toggle.ariaExpanded = String(open);
    toggle.textContent = open ? `Show less of the ${what}` : `Show the whole ${what}`;
    node.tabIndex = open ? 0 : -1;
    node.scrollTop = 0;
  });
  return el("div", { class: "bb-cap" }, wrap ? wrap(node) : node, toggle);
}
function checkCaps(root) {
  for (const node of root.querySelectorAll(":is(.bb-clamp, .bb-capbox):not(.bb-cap-open)")) {
    const button = node.closest(".bb-cap")?.lastElementChild;
    if (button && button.classList.contains("bb-cap-more")) button.hidden = node.scrollHeight <= node.clientHeight + 1;
  }
}

// The inline frame: about one screen high (the host's containerDimensions, else 560 px), its edge
// between lines, never through one; below it a "Show more" that is always visible and grows it a
// step (the body's new size goes to the host as ui/notifications/size-changed) up to what the host
// allows; past that the view scrolls in its frame. An item the keyboard focuses below the edge grows it too;
// focus a press gives (a line's file section, at the start of a drag that selects) moves nothing.
const shape = (() => {
  const s = { root: null, clip: null, flow: null, foot: null, target: null, context: {}, full: null, queued: false, observer: null, pressed: false };
  function limits() {
    const d = Object(s.context.containerDimensions);
    const ok = (n) => Number.isFinite(n) && n >= 120;
    const fixed = ok(d.height) ? d.height : null;
    const max = fixed || (ok(d.maxHeight) ? d.maxHeight : Infinity);
    const base = fixed || Math.min(560, max);
    return { fixed, max, base, step: Math.max(200, Math.round(Math.min(560, base) * 0.75)) };
  }
  // Never cut through one of these: a list's row too, unless it is half the frame or more.
  const ATOMS = "img, button, .bb-avatar, .bb-loz, .bb-branch, .bb-bidi, .bb-mark, .bb-row";
  function crossing(limit) {
    const top = s.flow.getBoundingClientRect().top;
    const y = top + limit;
    const cache = new Map();
    const clipOf = (node) => {
      let c = { top: -Infinity, bottom: Infinity };
      for (let e = node.parentElement; e && e !== s.flow; e = e.parentElement) {
        if (!cache.has(e)) cache.set(e, getComputedStyle(e).overflowY !== "visible" ? e.getBoundingClientRect() : null);
        const r = cache.get(e);
        if (r) c = { top: Math.max(c.top, r.top), bottom: Math.min(c.bottom, r.bottom) };
      }
      return c;
    };
    let best = null;
    // Where the edge goes instead of through `r`: a text box's top rounded to the pixel (the box above it, whose
    // bottom is that top, is then within half a pixel of the edge, not crossed, however fractional the offsets);
    // a list's row just below its top, in its padding (`row`), so the row above is never cut.
    const consider = (r, c, row = false) => {
      const a = Math.max(r.top, c.top);
      const b = Math.min(r.bottom, c.bottom);
      if (b - a >= 1 && a < y - 0.5 && b > y + 0.5) {
        const to = row ? Math.floor(a - top + 2) - 1 : Math.round(a - top);
        best = best === null ? to : Math.min(best, to);
      }
    };
    const walker = document.createTreeWalker(s.flow, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const box = t.parentElement.getBoundingClientRect();
      if (box.top >= y || box.bottom <= y || !t.data.trim()) continue;
      range.selectNodeContents(t);
      const c = clipOf(t);
      for (const r of range.getClientRects()) consider(r, c);
    }
    for (const e of s.flow.querySelectorAll(ATOMS)) {
      const r = e.getBoundingClientRect();
      // A row is cut just below its top (padding), so the row above it is never cut by the edge.
      if (r.top < y && r.bottom > y && r.height < limit / 2) consider(r, clipOf(e), e.matches(".bb-row"));
    }
    return best;
  }
  function snap(limit) {
    let h = Math.floor(limit);
    // Up to where crossing() says the edge goes instead, always up. (A pixel above a box's floored top, as before,
    // fell inside the box above it when rows sit at fractional offsets, and the edge walked up forty rows: an inline
    // source view showed a line or two.)
    for (let i = 0, at; i < 40 && (at = crossing(h)) !== null; i++) h = Math.max(0, Math.min(h - 1, at));
    return h;
  }
  function layout() {
    s.queued = false;
    if (!s.root || !s.root.isConnected) return;
    const lim = limits();
    s.target = lim.fixed || Math.min(s.target || lim.base, lim.max);
    const st = getComputedStyle(s.root);
    const room = s.target - parseFloat(st.paddingTop) - parseFloat(st.paddingBottom);
    checkCaps(s.flow);
    const hadFocus = s.foot.contains(document.activeElement);
    if (s.flow.getBoundingClientRect().height <= room + 0.5) {
      s.clip.style.height = "";
      s.foot.hidden = true;
      if (hadFocus) { s.clip.tabIndex = -1; s.clip.focus({ preventScroll: true }); }
      return;
    }
    const canGrow = !lim.fixed && s.target < lim.max;
    const state = `${canGrow}${Boolean(s.full)}`;
    if (s.foot.hidden || s.foot.dataset.state !== state) {
      s.foot.replaceChildren(
        canGrow ? el("button", { type: "button", class: "bb-grow", onclick: growStep }, el("span", { "aria-hidden": "true" }, "▾ "), "Show more")
          : el("span", { class: "bb-muted bb-scroll-note" }, "Scroll for the rest"),
        s.full ? el("button", { type: "button", class: "bb-full", onclick: s.full }, "Show all in full screen") : null);
      s.foot.dataset.state = state;
      s.foot.hidden = false;
      const again = s.foot.querySelector("button");
      if (hadFocus && again) again.focus({ preventScroll: true });
    }
    s.clip.classList.toggle("bb-scrolls", !canGrow);
    const scrolled = s.clip.scrollTop;
    s.clip.scrollTop = 0;
    s.clip.style.height = `${snap(Math.max(40, room - s.foot.getBoundingClientRect().height))}px`;
    s.clip.scrollTop = scrolled;
  }
  function queue() {
    if (!s.queued) { s.queued = true; requestAnimationFrame(layout); }
  }
  function growStep(by) {
    const lim = limits();
    s.target = Math.min(lim.max, s.target + (by > 0 ? by : lim.step));
    layout();
  }
  function onFocus(event) {
    const t = event.target;
    if (s.pressed) return;
    requestAnimationFrame(() => {
      if (!s.clip || !s.flow.contains(t)) return;
      const below = t.getBoundingClientRect().bottom - s.clip.getBoundingClientRect().bottom;
      if (below <= 0.5) return;
      if (!s.clip.classList.contains("bb-scrolls")) growStep(Math.max(limits().step, below + 32));
      if (t.getBoundingClientRect().bottom > s.clip.getBoundingClientRect().bottom + 0.5) t.scrollIntoView({ block: "nearest" });
    });
  }
  function mount(root, nodes, context, full) {
    Object.assign(s, { root, context: context || {}, full });
    s.flow = el("div", { class: "bb-flow" }, nodes);
    s.clip = el("div", { class: "bb-clip", onfocusin: onFocus, onpointerdown: () => { s.pressed = true; } }, s.flow);
    s.foot = el("div", { class: "bb-foot", hidden: "" });
    root.replaceChildren(s.clip, s.foot);
    if (s.observer) s.observer.disconnect();
    s.observer = new ResizeObserver(queue);
    s.observer.observe(s.flow);
    layout();
  }
  window.addEventListener("resize", () => s.root && queue());
  for (const end of ["pointerup", "pointercancel", "dragend", "keydown"]) window.addEventListener(end, () => { s.pressed = false; }, true);
  return {
    mount,
    setContext: (context) => { s.context = context || {}; if (s.root) queue(); },
    reset: () => { s.target = null; },
    stop: () => { if (s.observer) s.observer.disconnect(); s.root = null; },
  };
})();
