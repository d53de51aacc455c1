// Pictures (issue 54 item 13), driven by bb itself against the stand-in: get_file of assets/icon.png hands the model
// MCP image content (image/png), and the file view of it draws the picture as an <img> the page made from the bytes
// bb carried (a data: URL, the frame's policy admitting no other), with its size, Open in Bitbucket and Download;
// inline at 700 px and in full screen, light and dark. Nothing the bytes hold is ever parsed as markup.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { launch, open, realErrors, shot, startBb } from "./harness.mjs";

let browser;
let bb;
before(async () => {
  bb = await startBb();
  browser = await launch({ loopback: true });
});
after(async () => {
  await browser?.close();
  await bb?.stop();
});
const ICON = { kind: "file", project: "BB", repo: "api", path: "assets/icon.png" };

test("get_file of assets/icon.png gives the model the picture as image/png content, with a sentence of its size", async () => {
  const v = await open(browser, { bb: bb.mcp, show: ICON, mount: { width: 700 } });
  await v.frame.locator(".bb-fileview").waitFor({ timeout: 15000 });
  const r = JSON.parse(await v.page.evaluate((a) => window.bbHost.callBb(a), JSON.stringify({ name: "get_file", arguments: { project: "BB", repo: "api", path: "assets/icon.png" } })));
  const image = r.content.find((c) => c.type === "image");
  assert.ok(image, JSON.stringify(r.content.map((c) => c.type)));
  assert.equal(image.mimeType, "image/png");
  // The PNG signature, base64: iVBORw0KGgo.
  assert.ok(image.data.startsWith("iVBORw0KGgo"), image.data.slice(0, 20));
  assert.match(r.content[0].text, /^assets\/icon\.png at the default branch in BB\/api: a PNG picture, 10×10 pixels \(\d+ bytes\)/);
  assert.ok(!r.isError);
  await v.page.close();
});

test("the file view of assets/icon.png draws the picture from the bytes bb sent, with its size, Open in Bitbucket and Download", async () => {
  for (const theme of ["light", "dark"]) {
    for (const mount of [{ width: 700 }, { displayMode: "fullscreen" }]) {
      const v = await open(browser, { bb: bb.mcp, show: ICON, colorScheme: theme, mount: { ...mount, theme, caps: { downloadFile: {} } } });
      await v.frame.locator(".bb-pic-img").waitFor({ timeout: 15000 });
      const data = v.bb.result._meta["bb/view"];
      assert.equal(data.file.picture.mimeType, "image/png");
      const img = v.frame.locator(".bb-pic-img");
      // Loaded, at the size the file has: the browser decoded the bytes bb sent.
      const drawn = await img.evaluate(async (i) => { await i.decode(); return { w: i.naturalWidth, h: i.naturalHeight, src: i.src.slice(0, 22), alt: i.alt }; });
      assert.deepEqual(drawn, { w: 10, h: 10, src: "data:image/png;base64,", alt: "icon.png" });
      assert.equal(await img.evaluate((i) => i.src.slice(22)), data.file.picture.data, "the bytes as bb carried them");
      assert.equal(await v.frame.locator(".bb-pic-size").textContent(), `10 × 10 px · ${data.file.picture.bytes} bytes`);
      assert.equal(await v.frame.locator(".bb-open-file").textContent(), "Open in Bitbucket");
      assert.equal(await v.frame.locator(".bb-save").textContent(), "Download");
      assert.equal(await v.frame.locator(".bb-fmsg").count(), 0, "no \"can't be viewed\" for a picture");
      assert.equal(await v.frame.locator("table").count(), 0);
      assert.match(v.bb.result.content[0].text, /a PNG picture, 10×10 pixels \(\d+ bytes\), drawn as Bitbucket draws it/);
      assert.deepEqual(v.requests, [], "nothing requested by the view: the picture came in the data");
      assert.deepEqual(realErrors(v.errors), []);
      await shot(v.page, `pictures-icon-${mount.width ? "700" : "full"}-${theme}`);
      await v.page.close();
    }
  }
});

test("the diff of a changed picture shows before and after: BB/api #9 adds assets/logo.png, drawn as After only", async () => {
  for (const theme of ["light", "dark"]) {
    for (const mount of [{ width: 700 }, { displayMode: "fullscreen" }]) {
      const v = await open(browser, { bb: bb.mcp, show: { kind: "diff", project: "BB", repo: "api", pr_id: 9 }, colorScheme: theme, mount: { ...mount, theme } });
      await v.frame.locator(".bb-diff, .bb-dfile, .bb-dmsg").first().waitFor({ timeout: 20000 });
      const data = v.bb.result._meta["bb/view"];
      const logo = data.diff.diffs.find((d) => d.path === "assets/logo.png");
      assert.ok(logo && logo.binary === true, JSON.stringify(data.diff.diffs.map((d) => d.path)));
      assert.equal(logo.pictures.before, null, "an added picture has no before");
      assert.equal(logo.pictures.after.mimeType, "image/png");
      // Inline the first file is drawn, in full screen one file at a time: open the picture's from the file tree
      // (a path inline, a name under its folder in full screen).
      await v.frame.getByText(/^(assets\/)?logo\.png$/).first().click();
      const side = v.frame.locator('.bb-pic-side[data-side="after"]');
      await side.waitFor({ timeout: 10000 });
      assert.equal(await v.frame.locator('.bb-pic-side[data-side="before"]').count(), 0);
      assert.equal(await side.locator(".bb-pic-word").textContent(), "After");
      const img = side.locator("img.bb-pic-img");
      assert.deepEqual(await img.evaluate(async (i) => { await i.decode(); return [i.naturalWidth, i.alt]; }), [10, "logo.png, after"]);
      assert.equal(await v.frame.getByText("This file can't be viewed in your browser.").count(), 0, "the picture instead of the binary note");
      assert.deepEqual(v.requests, []);
      assert.deepEqual(realErrors(v.errors), []);
      await shot(v.page, `pictures-diff-added-${mount.width ? "700" : "full"}-${theme}`);
      await v.page.close();
    }
  }
});

test("a modified picture's diff draws before and after side by side, and a picture past the cap is said, not drawn", async () => {
  const first = await open(browser, { bb: bb.mcp, show: { kind: "diff", project: "BB", repo: "api", pr_id: 9 }, mount: { width: 700 } });
  await first.frame.locator(".bb-dmsg, .bb-diff").first().waitFor({ timeout: 20000 });
  const data = structuredClone(first.bb.result._meta["bb/view"]);
  await first.page.close();
  const logo = data.diff.diffs.find((d) => d.path === "assets/logo.png");
  const icon = (await (async () => {
    const v = await open(browser, { bb: bb.mcp, show: ICON, mount: { width: 700 } });
    await v.frame.locator(".bb-pic-img").waitFor({ timeout: 15000 });
    const p = v.bb.result._meta["bb/view"].file.picture;
    await v.page.close();
    return p;
  })());
  logo.pictures.before = icon;
  const entry = data.diff.files.find((f) => f.path === "assets/logo.png");
  if (entry) entry.type = "MODIFY";
  for (const theme of ["light", "dark"]) {
    const v = await open(browser, { colorScheme: theme, mount: { input: data.call, result: { content: [{ type: "text", text: "Shown." }], _meta: { "bb/view": data } }, width: 700, theme } });
    await v.frame.locator(".bb-dmsg, .bb-diff").first().waitFor({ timeout: 10000 });
    await v.frame.getByText("assets/logo.png").first().click();
    await v.frame.locator('.bb-pic-side[data-side="before"]').waitFor({ timeout: 10000 });
    const sides = await v.frame.locator(".bb-pic-side").evaluateAll((n) => n.map((s) => [s.dataset.side, s.querySelector("img").src.slice(0, 22)]));
    assert.deepEqual(sides, [["before", "data:image/png;base64,"], ["after", "data:image/png;base64,"]]);
    // Side by side at 700 px: the after picture is to the right of the before.
    const [b, a] = await Promise.all(["before", "after"].map((s) => v.frame.locator(`.bb-pic-side[data-side="${s}"]`).boundingBox()));
    assert.ok(a.x > b.x + b.width - 1 && Math.abs(a.y - b.y) < 2, `${JSON.stringify(b)} ${JSON.stringify(a)}`);
    assert.deepEqual(v.errors, []);
    await shot(v.page, `pictures-diff-modified-700-${theme}`);
    await v.page.close();
  }
  // Past the cap: no bytes, a sentence; markup in the data is never a picture.
  logo.pictures.after = { mimeType: "image/png", name: "PNG", width: 4000, height: 4000, over: 2097152 };
  logo.pictures.before = { mimeType: "text/html", data: "PHNjcmlwdD4=" };
  const v = await open(browser, { mount: { input: data.call, result: { content: [{ type: "text", text: "Shown." }], _meta: { "bb/view": data } }, width: 700 } });
  await v.frame.locator(".bb-dmsg, .bb-diff").first().waitFor({ timeout: 10000 });
  await v.frame.getByText("assets/logo.png").first().click();
  await v.frame.locator(".bb-pic-side").first().waitFor({ timeout: 10000 });
  assert.equal(await v.frame.locator('.bb-pic-side[data-side="before"]').count(), 0, "a type that is no picture's is not drawn");
  assert.match(await v.frame.locator('.bb-pic-side[data-side="after"]').textContent(), /This picture is larger than the 2 MB a view carries/);
  assert.equal(await v.frame.locator("img.bb-pic-img").count(), 0);
  assert.deepEqual(v.errors, []);
  await v.page.close();
});

test("an SVG is drawn only as an image: its script never runs and its markup never enters the page", async () => {
  const v0 = await open(browser, { bb: bb.mcp, show: ICON, mount: { width: 700 } });
  await v0.frame.locator(".bb-pic-img").waitFor({ timeout: 15000 });
  const data = structuredClone(v0.bb.result._meta["bb/view"]);
  await v0.page.close();
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" onload="top.postMessage('svg-ran','*')"><script>top.postMessage('svg-ran','*');document.title='ran'</script><rect width="40" height="20" fill="#36b37e"/><foreignObject><div xmlns="http://www.w3.org/1999/xhtml" id="injected">x</div></foreignObject></svg>`;
  data.file.path = "docs/diagram.svg";
  data.file.binary = false;
  data.file.picture = { mimeType: "image/svg+xml", name: "SVG", width: null, height: null, bytes: svg.length, data: Buffer.from(svg).toString("base64") };
  data.file.lines = [{ n: 1, s: svg }];
  Object.assign(data.file, { start: 1, end: 1, last: true, total: 1, language: null });
  for (const theme of ["light", "dark"]) {
    const v = await open(browser, { colorScheme: theme, mount: { input: data.call, result: { content: [{ type: "text", text: "Shown." }], _meta: { "bb/view": data } }, width: 700, theme } });
    await v.page.evaluate(() => { window.svgRan = 0; window.addEventListener("message", (e) => { if (e.data === "svg-ran") window.svgRan++; }); });
    const img = v.frame.locator("img.bb-pic-img");
    await img.waitFor({ timeout: 10000 });
    assert.deepEqual(await img.evaluate(async (i) => { await i.decode(); return [i.src.slice(0, 26), i.naturalWidth]; }), ["data:image/svg+xml;base64,", 40]);
    assert.equal(await v.frame.locator('#injected, foreignObject, rect[fill="#36b37e"]').count(), 0, "none of the SVG's elements in the page");
    assert.notEqual(await v.frame.locator("body").evaluate(() => document.title), "ran");
    assert.equal(await v.frame.locator("tr#L1 .bb-dcode").count(), 1, "its source is still there, as text");
    assert.equal(await v.page.evaluate(() => window.svgRan), 0, "its script did not run");
    assert.deepEqual(v.errors, []);
    await shot(v.page, `pictures-svg-700-${theme}`);
    await v.page.close();
  }
});
