// Draw times (issue 54): show answered → view drawn, in the reference host. Each fixture is mounted N times, each in
// a fresh page at 700 px: the time from handing the host the page and the result (the tool's answer) to the view's
// first drawn element, median and p90. Run once per page to compare two trees (the page is BB_VIEW_HTML, else this
// tree's); prints, asserts nothing:
//   BB_VIEW_HTML=/tmp/view-old.html node drawtime.mjs before; BB_VIEW_HTML=/tmp/view-new.html node drawtime.mjs after
import { fixture, launch, open, result } from "./harness.mjs";

const N = Number(process.env.N || 15);
const label = process.argv[2] || "this tree";
const CASES = [["pr-open", ".bb-card"], ["diff-view", ".bb-dfile, .bb-diff"], ["file-view", ".bb-fileview"], ["list-open", ".bb-list"], ["file-binary", ".bb-fileview"]];

const browser = await launch();
for (const [name, sel] of CASES) {
  const times = [];
  for (let i = 0; i < N; i++) {
    const data = fixture(name);
    const t0 = performance.now();
    const v = await open(browser, { mount: { input: data.call, result: result(data), width: 700 } });
    await v.frame.locator(sel).first().waitFor({ timeout: 15000 });
    times.push(performance.now() - t0);
    await v.page.close();
  }
  times.sort((a, b) => a - b);
  console.log(`${label.padEnd(8)} ${name.padEnd(12)} median ${times[Math.floor(N / 2)].toFixed(1)} ms  p90 ${times[Math.floor(N * 0.9)].toFixed(1)} ms`);
}
await browser.close();
