// Highlighted code the person can read: every token class, the line numbers and the +/- signs reach
// WCAG's 4.5:1 against the background they are drawn on — context, added and removed lines and their
// gutters — in light and dark, with the host's style variables (as Atlassian's tokens, the preview's)
// and without them. Measured from the colours Chromium computes, not from the stylesheet's text.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// Host variables as a host sends them (reference/mcp.md §3), the values of tools/view-preview/page/app.js.
const HOST = {
  light: {
    "--color-background-primary": "#ffffff", "--color-background-secondary": "#f7f8f9", "--color-background-info": "#e9f2ff",
    "--color-background-danger": "#ffeceb", "--color-background-success": "#dcfff1", "--color-background-warning": "#fff7d6",
    "--color-text-primary": "#172b4d", "--color-text-secondary": "#44546f", "--color-text-info": "#0c66e4",
    "--color-text-danger": "#ae2a19", "--color-text-success": "#216e4e", "--color-text-warning": "#a54800",
    "--color-border-primary": "#dcdfe4",
  },
  dark: {
    "--color-background-primary": "#1d2125", "--color-background-secondary": "#22272b", "--color-background-info": "#092957",
    "--color-background-danger": "#42221f", "--color-background-success": "#164b35", "--color-background-warning": "#533f04",
    "--color-text-primary": "#b6c2cf", "--color-text-secondary": "#9fadbc", "--color-text-info": "#579dff",
    "--color-text-danger": "#fd9891", "--color-text-success": "#7ee2b8", "--color-text-warning": "#f5cd47",
    "--color-border-primary": "#38414a",
  },
};

// Every class a run can carry (code.js TOKENS), one word each, on a context, an added and a removed line.
const CLASSES = ["kw", "str", "com", "num", "con", "fn", "ty", "tag", "attr", "var", "op", "pun"];
function tokens() {
  const words = CLASSES.map((c) => `${c}_word`);
  const runs = [];
  words.forEach((w, i) => { runs.push([w.length, CLASSES[i]]); if (i < words.length - 1) runs.push([1, null]); });
  const s = words.join(" ");
  const data = fixture("diff-view");
  const d = data.diff.diffs[0];
  d.hunks = [{ context: "", old: [1, 2], new: [1, 2], truncated: false, lines: [
    { o: 1, n: 1, s, r: runs },
    { t: "R", o: 2, s, r: runs },
    { t: "A", n: 2, s, r: runs },
  ] }];
  d.fileComments = [];
  data.diff.diffs = [d];
  return data;
}

// Each token, line number and sign of the three lines: its colour and the first opaque background
// behind it, as computed, and their contrast ratio.
function measure() {
  const rgb = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null; const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number); return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 }; };
  const lum = ({ r, g, b }) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const behind = (node) => {
    for (let n = node; n; n = n.parentElement) {
      const c = rgb(getComputedStyle(n).backgroundColor);
      if (c && c.a === 1) return c;
    }
    return { r: 255, g: 255, b: 255, a: 1 };
  };
  const out = [];
  for (const row of document.querySelectorAll("tr.bb-dl")) {
    const kind = row.classList.contains("bb-dl-A") ? "added" : row.classList.contains("bb-dl-R") ? "removed" : "context";
    const items = [...row.querySelectorAll("[class^='bb-tk-']")].map((n) => [n.className, n]);
    for (const n of row.querySelectorAll(".bb-ln")) if (n.textContent.trim()) items.push(["line number", n]);
    for (const n of row.querySelectorAll(".bb-sign")) if (n.textContent.trim()) items.push(["sign", n]);
    for (const [what, n] of items) {
      const fg = rgb(getComputedStyle(n).color);
      out.push({ line: kind, what, ratio: Math.round(ratio(fg, behind(n)) * 100) / 100 });
    }
  }
  return out;
}

for (const theme of ["light", "dark"]) {
  for (const vars of [true, false]) {
    test(`${theme}${vars ? ", with the host's variables" : ", without host variables"}: every token class, line number and sign reaches 4.5:1 on its line`, async () => {
      const data = tokens();
      const { page, frame, errors } = await open(browser, { colorScheme: theme, mount: { theme, variables: vars ? HOST[theme] : undefined, input: data.call, result: result(data) } });
      await frame.locator("tr.bb-dl-A .bb-tk-pun").waitFor({ timeout: 10000 });
      const got = await frame.locator("body").evaluate(measure);
      // 12 classes and a sign on each of 3 lines, 2 numbers on the context line and one on each other.
      const classes = new Set(got.filter((m) => m.what.startsWith("bb-tk-")).map((m) => `${m.line} ${m.what}`));
      assert.equal(classes.size, CLASSES.length * 3, `every class drawn on every line: ${[...classes].join(", ")}`);
      assert.equal(got.filter((m) => m.what === "line number").length, 4);
      const low = got.filter((m) => m.ratio < 4.5).map((m) => `${m.what} on ${m.line === "added" ? "an" : "a"} ${m.line} line: ${m.ratio}:1`);
      assert.deepEqual(low, [], "below 4.5:1");
      assert.deepEqual(errors, []);
      if (vars) await shot(page, `contrast-${theme}`);
    });
  }
}
