// Inline, a view keeps one shape and grows a step at a time when the person asks ("Show 5
// more"); fullscreen draws everything. Items `pinned` says need the person are always drawn,
// in their place: what needs the person is never behind a click.
function grow(items, { inline, first, step, draw, pinned, noun = "", tag = "div", cls = "" }) {
  const list = Array.isArray(items) ? items : [];
  const box = el(tag, { class: cls });
  const drawn = new Map();
  let budget = inline ? first : Infinity;
  function render() {
    const nodes = [];
    let open = budget;
    let hidden = 0;
    list.forEach((item, i) => {
      const show = (pinned && pinned(item)) || open-- > 0;
      if (!show) { hidden++; return; }
      if (!drawn.has(i)) drawn.set(i, draw(item, i));
      nodes.push(drawn.get(i));
    });
    if (hidden > 0) {
      const n = Math.min(step, hidden);
      const more = () => { budget += step; render(); };
      const label = `Show ${n} more${noun ? " " + noun : ""}`;
      const button = el("button", { type: "button", class: "bb-more", onclick: more }, label);
      nodes.push(tag === "ul" || tag === "ol" ? el("li", { class: "bb-more-row" }, button) : button);
    }
    box.replaceChildren(...nodes.filter(Boolean));
  }
  render();
  return box;
}
