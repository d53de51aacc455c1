// A line of code as the page draws it, shared by the diff (diff.js) and the source view (file.js):
// the line's text split by bb's runs [characters, class] (characters counted as code points), the
// class coloured from the theme (diff.css), control characters (a CRLF's carriage return) drawn as
// visible names (CR), and a line longer than the page draws said rather than drawn.
const codeLine = (() => {
  const str = (x) => (typeof x === "string" ? x : "");
  const TOKENS = new Set(["kw", "str", "com", "num", "con", "fn", "ty", "tag", "attr", "var", "op", "pun"]);
  // The class letters of bb's runs string (VIEW_DATA.md): "3k6_1n" is 3 characters of keyword, 6 plain, 1 number.
  const LETTERS = { k: "kw", s: "str", c: "com", n: "num", o: "con", f: "fn", t: "ty", g: "tag", a: "attr", p: "op" };
  const MAX_LINE = 20000; // code points drawn of one line; the rest is said, not drawn
  // The runs as [characters, class?] pairs, from bb's string (or from pairs as they are).
  function runsOf(r) {
    if (Array.isArray(r)) return r;
    if (typeof r !== "string") return null;
    const out = [];
    for (const m of r.matchAll(/(\d+)([a-z_])/g)) out.push([Number(m[1]), LETTERS[m[2]] || null]);
    return out;
  }
  const CONTROL = /[\u0000-\u0008\u000A-\u001F\u007F]/;
  const CONTROL_ALL = /[\u0000-\u0008\u000A-\u001F\u007F]/g;
  const CONTROL_NAMES = { 0: "NUL", 8: "BS", 10: "LF", 11: "VT", 12: "FF", 13: "CR", 27: "ESC", 127: "DEL" };
  // A piece of a line as text; control characters (a CRLF's \r) drawn as a visible name: CR, NUL, ESC.
  function text(piece, cls) {
    let parts = [piece];
    if (CONTROL.test(piece)) {
      parts = [];
      let last = 0;
      for (const m of piece.matchAll(CONTROL_ALL)) {
        if (m.index > last) parts.push(piece.slice(last, m.index));
        const code = m[0].codePointAt(0);
        const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
        parts.push(el("span", { class: "bb-ctl", title: code === 13 ? "Carriage return (a CRLF line ending)" : `Control character ${hex}` }, CONTROL_NAMES[code] || hex));
        last = m.index + m[0].length;
      }
      if (last < piece.length) parts.push(piece.slice(last));
    }
    return cls ? el("span", { class: cls }, parts) : parts;
  }
  // A line's text split by its runs; a plain line (p) or one without runs as is. `cut`: true when
  // Bitbucket truncated the line (a diff's), or the whole line's length when bb carried only its start (a file's).
  function draw(line) {
    const chars = Array.from(str(line.s));
    const shown = chars.length > MAX_LINE ? chars.slice(0, MAX_LINE) : chars;
    const out = [];
    let at = 0;
    const runs = line.p ? null : runsOf(line.r);
    if (runs) {
      for (const run of runs) {
        if (!Array.isArray(run) || at >= shown.length) continue;
        const n = Number.isInteger(run[0]) && run[0] > 0 ? run[0] : 0;
        const piece = shown.slice(at, at + n).join("");
        at += n;
        if (piece) out.push(text(piece, TOKENS.has(run[1]) ? `bb-tk-${run[1]}` : null));
      }
    }
    if (at < shown.length) out.push(text(shown.slice(at).join("")));
    if (shown.length < chars.length) out.push(el("span", { class: "bb-cut" }, ` … ${fmt.num(chars.length - shown.length)} more characters`));
    if (line.cut === true) out.push(el("span", { class: "bb-cut", title: "Bitbucket truncated this line" }, " …"));
    else if (Number.isInteger(line.cut) && line.cut > chars.length) {
      out.push(el("span", { class: "bb-cut bb-line-cut", "data-cut": line.cut, title: `This line has ${fmt.num(line.cut)} characters; the first ${fmt.num(chars.length)} are shown` }, " … line cut"));
    }
    return out;
  }
  return { runsOf, text, draw };
})();
