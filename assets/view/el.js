"use strict";
// el(tag, attrs, ...children): the only way the page makes elements. Children that are strings
// become text nodes, so text from Bitbucket is never parsed as HTML. An `on…` attribute takes
// only a function: no string ever becomes an event handler.
//
// Bidirectional control characters (U+202A–U+202E, U+2066–U+2069) are drawn visibly, as a marked
// ⟨U+202E⟩ token, wherever text is drawn, and written as that token in attributes (titles, labels),
// so a name cannot reorder what follows it: "gnp.exe" never reads as "exe.png".
const BIDI = /[\u202A-\u202E\u2066-\u2069]/;
const BIDI_ALL = /[\u202A-\u202E\u2066-\u2069]/g;
const BIDI_NAMES = {
  0x202A: "left-to-right embedding", 0x202B: "right-to-left embedding", 0x202C: "pop directional formatting",
  0x202D: "left-to-right override", 0x202E: "right-to-left override", 0x2066: "left-to-right isolate",
  0x2067: "right-to-left isolate", 0x2068: "first strong isolate", 0x2069: "pop directional isolate",
};
const bidiCode = (ch) => `U+${ch.codePointAt(0).toString(16).toUpperCase()}`;
// The text with each control character written out as ⟨U+202E⟩.
function bidiVisible(text) { return String(text).replace(BIDI_ALL, (ch) => `⟨${bidiCode(ch)}⟩`); }
function textNodes(text) {
  if (!BIDI.test(text)) return [document.createTextNode(text)];
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(BIDI_ALL)) {
    if (match.index > last) nodes.push(document.createTextNode(text.slice(last, match.index)));
    const ch = match[0];
    const mark = document.createElement("span");
    mark.className = "bb-bidi";
    mark.title = `Hidden bidirectional control character ${bidiCode(ch)} (${BIDI_NAMES[ch.codePointAt(0)]})`;
    mark.textContent = `⟨${bidiCode(ch)}⟩`;
    nodes.push(mark);
    last = match.index + ch.length;
  }
  if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) {
      if (typeof value === "function") node.addEventListener(key.slice(2), value);
    } else if (key === "class") node.className = String(value);
    else node.setAttribute(key, key === "href" || key === "src" ? String(value) : bidiVisible(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    if (child instanceof Node) node.append(child);
    else node.append(...textNodes(String(child)));
  }
  return node;
}
