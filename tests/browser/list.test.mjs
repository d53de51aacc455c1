// The pull request list: rows as Bitbucket's list draws them, and a list that shows fewer says so.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fixture, launch, open, result, shot } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function list(mount = {}) {
  const data = fixture("list-open");
  const v = await open(browser, { mount: { input: data.call, result: result(data), ...mount } });
  await v.frame.locator(".bb-list").waitFor({ timeout: 10000 });
  return { ...v, data };
}

test("rows carry title, #id, author, branches, reviewers with status, comment and open task counts, and age", async () => {
  const { frame, page, data, errors } = await list();
  assert.equal(await frame.locator(".bb-list-title").textContent(), "Open pull requests · BB/api");
  const first = frame.locator(".bb-row").first();
  assert.equal(await first.locator(".bb-row-link").textContent(), data.list.items[0].title);
  assert.equal(await first.locator(".bb-loz").textContent(), "Open");
  assert.match(await first.locator(".bb-row-sub").textContent(), /^Alice Example - #100, 49 minutes ago feature\/topic-100→main$/);
  // Row 3 (#98): two reviewers, Approved before not yet; 150 comments shown as Bitbucket caps them.
  const third = frame.locator('.bb-row[data-id="#98"]');
  assert.deepEqual(await third.locator(".bb-row-reviewers .bb-avatar").evaluateAll((n) => n.map((a) => a.title)), ["Erin Approver: Approved", "Dave Doe"]);
  assert.equal(await third.locator(".bb-count").first().textContent(), "99+");
  assert.equal(await third.locator(".bb-count").first().getAttribute("title"), "150 comments");
  assert.equal(await third.locator(".bb-need").textContent(), "☐ 2 open tasks");
  assert.equal(await frame.locator('.bb-row[data-id="#97"] .bb-loz').textContent(), "Draft");
  assert.equal(await frame.locator(".bb-tally").textContent(), "25 shown · more exist");
  assert.deepEqual(errors, []);
  await shot(page, "list-inline-light");
});

test("inline, the list grows a step at a time; fullscreen shows every row", async () => {
  const { frame, page } = await list({ theme: "dark" });
  assert.equal(await frame.locator(".bb-row").count(), 8);
  const height = await page.locator("iframe#view").evaluate((f) => f.getBoundingClientRect().height);
  assert.ok(height <= 610, `inline height ${height}`);
  await frame.getByRole("button", { name: "Show 10 more pull requests" }).click();
  assert.equal(await frame.locator(".bb-row").count(), 18);
  await frame.getByRole("button", { name: "Show 7 more pull requests" }).click();
  assert.equal(await frame.locator(".bb-row").count(), 25);
  assert.equal(await frame.locator(".bb-more").count(), 0);
  await page.evaluate(() => window.bbHost.setContext({ displayMode: "fullscreen" }));
  await frame.locator("main.bb-fullscreen").waitFor();
  assert.equal(await frame.locator(".bb-row").count(), 25);
  assert.equal(await frame.locator(".bb-more").count(), 0);
  await page.waitForTimeout(200);
  await shot(page, "list-fullscreen-dark");
});

test("a row's title opens the pull request through the host", async () => {
  const { frame, log } = await list();
  await frame.locator(".bb-row-link").first().click();
  assert.deepEqual((await log()).links, ["https://git.example.com/bitbucket/projects/BB/repos/api/pull-requests/100"]);
});
