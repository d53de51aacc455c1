"use strict";
// el(tag, attrs, ...children): the only way the page makes elements. Children that are strings
// become text nodes, so text from Bitbucket is never parsed as HTML. An `on…` attribute takes
// only a function: no string ever becomes an event handler.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) {
      if (typeof value === "function") node.addEventListener(key.slice(2), value);
    } else if (key === "class") node.className = String(value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
