// Two people drafting reviews on one bb over Streamable HTTP, each with their own Bitbucket token
// (`--per-user-token-header`), against the local Bitbucket stand-in: a draft is its author's alone until
// submit_pr_review publishes it, and neither person ever sees the other's drafts.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { BB, firstLines } from "./bb.mjs";

const STACK = process.env.BB_STACK_BIN || path.join(path.dirname(BB), "bb-stack");
const HEADER = "X-Bitbucket-Token";
const PR = { project: "BB", repo: "api", pr_id: 2 };

const children = [];
let mcp; // bb's endpoint
let tokens; // slug → Bitbucket token

before(async () => {
  if (!process.env.BB_BIN && (!existsSync(BB) || !existsSync(STACK))) {
    execFileSync("cargo", ["build", "-q", "-p", "bb", "-p", "bb-stack"], { cwd: path.resolve(path.dirname(BB), "..", ".."), stdio: ["ignore", "inherit", "inherit"] });
  }
  const s = spawn(STACK, ["--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(s);
  const [url] = await firstLines(s, "stdout", 2, "bb-stack");
  s.stdout.resume();
  const info = await (await fetch(`${url}/_stack`)).json();
  tokens = Object.fromEntries(info.users.map((u) => [u.slug, u.token]));
  const bb = spawn(BB, ["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--host", url, "--per-user-token-header", HEADER,
    "--log-level", "warning"], { stdio: ["ignore", "ignore", "pipe"] });
  children.push(bb);
  const [first] = await firstLines(bb, "stderr", 1, "bb");
  mcp = new URL(first);
});

after(async () => {
  for (const c of children.reverse()) {
    if (c.exitCode === null && c.signalCode === null) await new Promise((done) => { c.once("exit", done); c.kill(); });
  }
});

async function as(slug) {
  const transport = new StreamableHTTPClientTransport(mcp, { requestInit: { headers: { [HEADER]: tokens[slug] } } });
  // Each person shows bb's confirmation forms and ticks the box: an approval asks first (issue 51).
  const client = new Client({ name: `bb-e2e-${slug}`, version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { confirm: true } }));
  await client.connect(transport);
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: { ...PR, ...args } });
    return { error: !!r.isError, text: r.content.map((c) => c.text).join("\n") };
  };
  return { client, call };
}

test("each person's drafts are theirs alone until they publish them", async () => {
  const alice = await as("alice");
  const carol = await as("carol");
  try {
    const a = await alice.call("add_pr_comment", { text: "Alice's draft: check the parser's error path.", pending: true });
    assert.ok(!a.error, a.text);
    assert.match(a.text, /^Added draft comment #\d+/);
    const c = await carol.call("add_pr_comment", { text: "Carol's draft: name this better.", pending: true });
    assert.ok(!c.error, c.text);

    const aliceDrafts = await alice.call("list_pr_comments", { drafts: true });
    assert.match(aliceDrafts.text, /1 draft\(s\)/);
    assert.match(aliceDrafts.text, /Alice's draft/);
    assert.doesNotMatch(aliceDrafts.text, /Carol's draft/);
    const carolSees = await carol.call("list_pr_comments", {});
    assert.doesNotMatch(carolSees.text, /Alice's draft/, "carol does not see alice's draft");
    assert.match(carolSees.text, /Carol's draft/);

    const done = await alice.call("submit_pr_review", { action: "approve" });
    assert.ok(!done.error, done.text);
    assert.match(done.text, /^Published 1 draft comment and approved PR #2 in BB\/api/);
    const after = await carol.call("list_pr_comments", {});
    assert.match(after.text, /Alice's draft: check the parser's error path\./, "published: carol sees it");
    const carolDrafts = await carol.call("list_pr_comments", { drafts: true });
    assert.match(carolDrafts.text, /1 draft\(s\)/, "carol's draft is still hers, unpublished");
    const aliceAfter = await alice.call("list_pr_comments", {});
    assert.doesNotMatch(aliceAfter.text, /Carol's draft/);
  } finally {
    await alice.client.close();
    await carol.client.close();
  }
});
