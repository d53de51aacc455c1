// Pictures (issue 54 item 13), driven by bb itself against the stand-in: get_file of assets/icon.png hands the model
// MCP image content (image/png), and the file view of it draws the picture as an <img> the page made from the bytes
// bb carried (a data: URL, the frame's policy admitting no other), with its size, Open in Bitbucket and Download;
// inline at 700 px and in full screen, light and dark. Nothing the bytes hold is ever parsed as markup.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { launch, open, shot, startBb } from "./harness.mjs";

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
const realErrors = (errors) => errors.filter((e) => !/status of 405/.test(e));
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
