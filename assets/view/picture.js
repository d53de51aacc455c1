// A picture in a view (issue 54): a PNG, JPEG, GIF, WebP or SVG file, as bb carries it in the view data
// (`{mimeType, name, width, height, bytes, data}`, `data` base64; `over` when the file is past what a view carries).
// The page makes a data: URL of the bytes and sets it on an <img> it creates (the frame's policy admits data:
// images only); an SVG goes in the same way, so it is only ever an image: its scripts never run, its markup is
// never parsed into the page. Drawn on Bitbucket's checkerboard, with its size in pixels and bytes.
const picture = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"]);
  const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
  const pos = (x) => (Number.isInteger(x) && x > 0 ? x : null);
  // "10 × 10 px · 812 bytes"
  function words(p) {
    const size = pos(p.width) && pos(p.height) ? `${fmt.num(p.width)} × ${fmt.num(p.height)} px` : "";
    const n = Number.isInteger(p.bytes) && p.bytes >= 0 ? p.bytes : null;
    const bytes = n === null ? "" : n < 1024 ? fmt.count(n, "byte", "bytes") : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`;
    return [size, bytes].filter(Boolean).join(" · ");
  }
  // The picture's <img>, or null when the data is not a picture the page draws.
  function image(p, alt) {
    const type = typeof p.mimeType === "string" ? p.mimeType : "";
    const data = typeof p.data === "string" ? p.data : "";
    if (!TYPES.has(type) || !data || data.length % 4 !== 0 || !BASE64.test(data)) return null;
    const img = el("img", { class: "bb-pic-img", alt, decoding: "async" });
    if (pos(p.width) && pos(p.height)) { img.width = p.width; img.height = p.height; }
    img.src = `data:${type};base64,${data}`;
    return img;
  }
  // The figure: the picture and its size, or (past the cap, or unreadable) a sentence and `fallback`.
  function draw(raw, alt, fallback) {
    const p = obj(raw);
    const img = image(p, alt);
    if (!img) {
      if (!Number.isInteger(p.over)) return null;
      return el("div", { class: "bb-dmsg bb-fmsg", role: "note" }, `This picture is larger than the ${fmt.num(Math.round(p.over / 1048576))} MB a view carries. `, fallback || null);
    }
    return el("figure", { class: "bb-pic" }, el("div", { class: "bb-pic-frame" }, img), el("figcaption", { class: "bb-muted bb-pic-size" }, words(p)));
  }
  return { draw, image, words };
})();
