// MCP's primitives beside tools (issue 53), as a host reaches them with the reference client
// (@modelcontextprotocol/sdk) over stdio against the local Bitbucket stand-in (bb-stack): prompts, resource
// templates and a read, the resource_link in a tool's answer, and completions.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { BB, firstLines } from "./bb.mjs";

const STACK = process.env.BB_STACK_BIN || path.join(path.dirname(BB), "bb-stack");
const PR = "bitbucket://projects/BB/repos/api/pull-requests/1";

let stack; // the stand-in's process
let client;
let stackUrl, stackToken;

before(async () => {
  if (!process.env.BB_BIN && (!existsSync(BB) || !existsSync(STACK))) {
    execFileSync("cargo", ["build", "-q", "-p", "bb", "-p", "bb-stack"], { cwd: path.resolve(path.dirname(BB), "..", ".."), stdio: ["ignore", "inherit", "inherit"] });
  }
  stack = spawn(STACK, ["--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const [url, token] = await firstLines(stack, "stdout", 2, "bb-stack");
  [stackUrl, stackToken] = [url, token];
  stack.stdout.resume();
  client = new Client({ name: "bb-e2e-primitives", version: "1.0.0" }, { capabilities: {} });
  await client.connect(new StdioClientTransport({
    command: BB,
    args: ["ai", "mcp", "serve", "--log-level", "off"],
    env: { ...process.env, BITBUCKET_URL: url, BITBUCKET_TOKEN: token },
  }));
});

after(async () => {
  await client?.close();
  if (stack && stack.exitCode === null) await new Promise((done) => { stack.once("exit", done); stack.kill(); });
});

test("initialize declares prompts and completions", () => {
  const caps = client.getServerCapabilities();
  // A session may turn groups on (enable_toolset), and with them prompts: a list that changes.
  assert.deepEqual(caps.prompts, { listChanged: true });
  assert.deepEqual(caps.completions, {});
});

test("the prompts are listed, and review_pull_request embeds pull request #1 as resources", async () => {
  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((p) => p.name), ["review_pull_request", "explain_pull_request"]);
  assert.deepEqual(prompts[0].arguments.map((a) => [a.name, a.required]), [["project", true], ["repo", true], ["pr_id", true]]);

  const got = await client.getPrompt({ name: "review_pull_request", arguments: { project: "BB", repo: "api", pr_id: "1" } });
  assert.equal(got.messages[0].content.type, "text");
  assert.match(got.messages[0].content.text, /verdict/);
  const resources = got.messages.filter((m) => m.content.type === "resource").map((m) => m.content.resource);
  assert.deepEqual(resources.map((r) => r.uri), [PR, `${PR}/diff`, `${PR}/threads`]);
  assert.match(resources[0].text, /Add retry with backoff to the HTTP client/);
  assert.equal(resources[1].mimeType, "text/plain");

  await assert.rejects(client.getPrompt({ name: "review_pull_request", arguments: { project: "BB" } }), (e) => e.code === -32602);
});

test("the templates are listed and a pull request resource reads as get_pull_request answers", async () => {
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.ok(resourceTemplates.some((t) => t.uriTemplate === "bitbucket://projects/{project}/repos/{repo}/pull-requests/{id}"));
  const read = await client.readResource({ uri: PR });
  const call = await client.callTool({ name: "get_pull_request", arguments: { project: "BB", repo: "api", pr_id: 1 } });
  assert.equal(read.contents[0].text, call.content[0].text);
  // The tool's answer links the resource it read.
  const link = call.content.find((c) => c.type === "resource_link");
  assert.equal(link.uri, PR);
});

test("completing project B offers BB, and a repository of BB", async () => {
  const ref = { type: "ref/prompt", name: "review_pull_request" };
  const projects = await client.complete({ ref, argument: { name: "project", value: "B" } });
  assert.deepEqual(projects.completion.values, ["BB"]);
  const repos = await client.complete({ ref, argument: { name: "repo", value: "a" }, context: { arguments: { project: "BB" } } });
  assert.ok(repos.completion.values.includes("api"), JSON.stringify(repos));
});

test("resources/list offers the person's pull requests and those awaiting their review, and one reads", async () => {
  const { resources, nextCursor } = await client.listResources();
  assert.equal(nextCursor, undefined);
  const mine = resources.find((r) => r.uri === PR);
  assert.ok(mine, JSON.stringify(resources.map((r) => r.uri)));
  assert.equal(mine.title, "Add retry with backoff to the HTTP client");
  assert.match(mine.description, /^Your pull request · BB\/api #1 · /);
  assert.ok(resources.some((r) => r.description.startsWith("Reviewing · by ")));
  const read = await client.readResource({ uri: resources[0].uri });
  assert.equal(read.contents[0].uri, resources[0].uri);
  assert.match(read.contents[0].text, /#\d+/);
});

/** Another person comments on BB/api #1 through the stand-in's control API, as Bitbucket would record it. */
async function bobComments(text) {
  const res = await fetch(`${stackUrl}/_stack/comments`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ project: "BB", repo: "api", pullRequest: 1, user: "bob", text }) });
  assert.ok(res.ok, `${res.status} ${await res.text()}`);
}

/** Resolves with the first `notifications/resources/updated` `c` receives for `uri`, or rejects after 60 s. */
function updated(c, uri) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no notifications/resources/updated for ${uri} within 60 s`)), 60000);
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      if (n.params.uri === uri) { clearTimeout(timer); resolve(n.params); }
    });
  });
}

test("a subscriber over stdio is told when pull request #1 changes", async () => {
  assert.equal(client.getServerCapabilities().resources.subscribe, true);
  await client.subscribeResource({ uri: PR });
  const told = updated(client, PR);
  await bobComments("Subscribed over stdio: is the backoff capped?");
  assert.deepEqual(await told, { uri: PR });
  await client.unsubscribeResource({ uri: PR });
  await assert.rejects(client.subscribeResource({ uri: "bitbucket://projects/BB/repos/api/files/README.md" }), (e) => e.code === -32602);
});

test("a subscriber over Streamable HTTP is told on the session's GET stream", async () => {
  const bb = spawn(BB, ["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--log-level", "warning"], {
    stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, BITBUCKET_URL: stackUrl, BITBUCKET_TOKEN: stackToken },
  });
  try {
    const [url] = await firstLines(bb, "stderr", 1, "bb --http");
    const http = new Client({ name: "bb-e2e-subscribe", version: "1.0.0" }, { capabilities: {} });
    await http.connect(new StreamableHTTPClientTransport(new URL(url)));
    await http.subscribeResource({ uri: `${PR}/threads` });
    const told = updated(http, `${PR}/threads`);
    await bobComments("Subscribed over HTTP: and the jitter?");
    assert.deepEqual(await told, { uri: `${PR}/threads` });
    await http.close();
  } finally {
    if (bb.exitCode === null) await new Promise((done) => { bb.once("exit", done); bb.kill(); });
  }
});
