// Links leave the page only through the host (ui/open-link), and only to a web address:
// any other scheme (javascript:, data:, file:, mailto:) is drawn as text.
function webUrl(value) {
  if (typeof value !== "string") return null;
  let url;
  try { url = new URL(value); } catch { return null; }
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
}
function openLink(value) {
  const url = webUrl(value);
  if (url) bridge.request("ui/open-link", { url }).catch(() => {});
}
function link(value, attrs, ...children) {
  const url = webUrl(value);
  if (!url) return el("span", attrs, ...children);
  const go = (event) => { event.preventDefault(); openLink(url); };
  return el("a", Object.assign({ href: url, rel: "noopener noreferrer", onclick: go, onauxclick: go }, attrs), ...children);
}
