// Saving what a view shows, against bb and the stand-in: a host that offers downloadFile gets the pull request's
// patch from the diff view and the file at its ref from the source view, through download_file and
// ui/download-file; a host that does not is offered neither. 700 px and full screen, light and dark.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { launch, open, realErrors, shot, startBb, until } from "./harness.mjs";

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

async function show(args, mount) {
  const v = await open(browser, { bb: bb.mcp, show: args, mount, colorScheme: mount.theme === "dark" ? "dark" : "light" });
  await v.frame.locator(args.kind === "file" ? ".bb-fileview" : ".bb-diffview").waitFor({ timeout: 15000 });
  return v;
}

for (const [mode, theme] of [["inline", "light"], ["fullscreen", "dark"]]) {
  test(`Download patch saves the pull request's patch through the host (${mode}, ${theme})`, async () => {
    const v = await show({ kind: "diff", project: "BB", repo: "api", pr_id: 1 }, { caps: { downloadFile: {} }, theme, ...(mode === "inline" ? { width: 700 } : { displayMode: "fullscreen" }) });
    const { frame, page } = v;
    await frame.getByRole("button", { name: "Download patch" }).click();
    await until("the download", async () => (await v.log()).downloads.length === 1);
    const [{ contents: [item] }] = (await v.log()).downloads;
    assert.equal(item.type, "resource");
    assert.equal(item.resource.uri, "file:///BB-api-pr-1.patch");
    assert.equal(item.resource.mimeType, "text/x-diff");
    assert.match(item.resource.text, /^diff --git a\/src\/client\.rs b\/src\/client\.rs\n--- a\/src\/client\.rs\n\+\+\+ b\/src\/client\.rs\n@@ -\d+,\d+ \+\d+,\d+ @@/);
    assert.match(item.resource.text, /\ndiff --git a\/src\/retry\.rs b\/src\/retry\.rs\n--- \/dev\/null\n/, "an added file from /dev/null");
    await until("said", async () => (await frame.locator(".bb-save-said").textContent()) === "Saved BB-api-pr-1.patch.");
    const call = (await v.log()).calls.find((c) => c.name === "download_file");
    assert.deepEqual(call.arguments, { project: "BB", repo: "api", pr_id: 1 });
    await shot(page, `save-patch-${mode === "inline" ? "700" : "fullscreen"}-${theme}`);
    assert.deepEqual(realErrors(v.errors), []);
    await page.close();
  });
}

test("Download saves a file at its ref as the stand-in holds it; a host without downloadFile is offered neither", async () => {
  const v = await show({ kind: "file", project: "BB", repo: "api", path: "src/client.rs", at: "feature/retry" }, { caps: { downloadFile: {} }, width: 700 });
  await v.frame.getByRole("button", { name: "Download", exact: true }).click();
  await until("the download", async () => (await v.log()).downloads.length === 1);
  const item = (await v.log()).downloads[0].contents[0];
  assert.equal(item.resource.uri, "file:///client.rs");
  const raw = await (await fetch(`${bb.stack}/rest/api/latest/projects/BB/repos/api/raw/src/client.rs?at=feature/retry`, { headers: { authorization: "Bearer stack-token-alice" } })).text();
  assert.equal(item.resource.text, raw, "the file's bytes, whole");
  await shot(v.page, "save-file-700-light");
  await v.page.close();
  for (const args of [{ kind: "diff", project: "BB", repo: "api", pr_id: 1 }, { kind: "file", project: "BB", repo: "api", path: "src/client.rs" }]) {
    const plain = await show(args, { width: 700 });
    assert.equal(await plain.frame.locator(".bb-save").count(), 0, `${args.kind}: no download without the host's downloadFile`);
    await plain.page.close();
  }
});
