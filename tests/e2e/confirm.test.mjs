// The person confirms a merge (issue 51), with the official TypeScript SDK's elicitation handler over
// Streamable HTTP (2025-11-25: bb sends elicitation/create on the call's event stream, the client POSTs its
// answer) and over stdio, and with hand-made 2026-07-28 rounds (input_required, the sealed requestState
// brought back, altered or reused, a request that cannot ask), against the local Bitbucket stand-in.
// Each test answers bb's question as the person would; nothing here turns asking off.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { BB, firstLines } from "./bb.mjs";

const STACK = process.env.BB_STACK_BIN || path.join(path.dirname(BB), "bb-stack");
const MODERN = "2026-07-28";
const children = [];

function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => { child.once("exit", () => done()); child.kill(); });
}

/** A fresh stand-in and a bb over HTTP in front of it, with the tools that cannot be undone exposed. */
async function world() {
  const s = spawn(STACK, ["--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(s);
  const [url, token] = await firstLines(s, "stdout", 2, "bb-stack");
  s.stdout.resume();
  const bb = spawn(BB, ["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--host", url, "--token", token, "--allow-writes",
    "--log-level", "warning"], { stdio: ["ignore", "ignore", "pipe"] });
  children.push(bb);
  const [first] = await firstLines(bb, "stderr", 1, "bb");
  return { url, token, mcp: new URL(first) };
}

let w; // the world the SDK tests share (each merges or declines a different pull request)

before(async () => {
  if (!process.env.BB_BIN && (!existsSync(BB) || !existsSync(STACK))) {
    execFileSync("cargo", ["build", "-q", "-p", "bb", "-p", "bb-stack"], { cwd: path.resolve(path.dirname(BB), "..", ".."), stdio: ["ignore", "inherit", "inherit"] });
  }
  w = await world();
});

after(async () => {
  for (const c of children.reverse()) await stop(c);
});

/** An SDK client that shows forms; `answer(params)` is the person. Records every question. */
async function person(answer, { forms = true } = {}) {
  const asked = [];
  const client = new Client({ name: "bb-e2e-confirm", version: "1.0.0" }, { capabilities: forms ? { elicitation: { form: {} } } : {} });
  if (forms) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return answer(req.params);
    });
  }
  await client.connect(new StreamableHTTPClientTransport(w.mcp));
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    return { error: !!r.isError, text: r.content.map((c) => c.text).join("\n"), meta: r._meta };
  };
  return { client, call, asked };
}

async function state(pr) {
  const c = await person(() => { throw new Error("a read asks nobody"); });
  const r = await c.call("get_pull_request", { project: "BB", repo: "api", pr_id: pr });
  await c.client.close();
  return r.text;
}

test("a merge asks with one required box naming the pull request, and merges once it is ticked", async () => {
  const c = await person(() => ({ action: "accept", content: { confirm: true } }));
  const r = await c.call("merge_pull_request", { project: "BB", repo: "api", pr_id: 11, version: 0 });
  assert.ok(!r.error, r.text);
  assert.match(r.text, /^Merged PR #11 into main/);
  assert.equal(c.asked.length, 1);
  const q = c.asked[0];
  assert.match(q.message, /^Merge pull request #11 “.+” in BB\/api \(.+ → main\) at version 0, with the merge strategy “Merge commit”\. A merge cannot be undone\.$/);
  const box = q.requestedSchema.properties.confirm;
  assert.equal(box.type, "boolean");
  assert.equal(box.title, "Merge #11 into main");
  assert.equal(box.default, undefined, "no default: a habit click passes over it");
  assert.deepEqual(q.requestedSchema.required, ["confirm"]);
  assert.match(await state(11), /MERGED/);
  await c.client.close();
});

for (const [how, answer, said] of [
  ["declined", { action: "decline" }, /^The person declined: nothing was merged\. Do not call merge_pull_request again unless they ask\./],
  ["dismissed", { action: "cancel" }, /^The person dismissed the confirmation without answering: nothing was merged\./],
  ["accepted unticked", { action: "accept", content: { confirm: false } }, /^The person accepted without ticking the confirmation box: nothing was merged\./],
]) {
  test(`a merge the person ${how} writes nothing`, async () => {
    const c = await person(() => answer);
    const before = await state(1);
    const r = await c.call("merge_pull_request", { project: "BB", repo: "api", pr_id: 1, version: 3 });
    assert.match(r.text, said);
    assert.equal(r.meta?.["bb/confirmation"], "declined");
    assert.equal(c.asked.length, 1);
    assert.equal(await state(1), before, "the pull request is as it was");
    await c.client.close();
  });
}

test("a client that cannot show a form is told so, and nothing is merged", async () => {
  const c = await person(null, { forms: false });
  const r = await c.call("merge_pull_request", { project: "BB", repo: "api", pr_id: 1, version: 3 });
  assert.ok(r.error);
  assert.match(r.text, /^This client cannot show a confirmation/);
  assert.match(await state(1), /OPEN/);
  await c.client.close();
});

test("over stdio the question is a line to the client and its answer a line back", async () => {
  const asked = [];
  const client = new Client({ name: "bb-e2e-confirm-stdio", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => { asked.push(req.params); return { action: "decline" }; });
  await client.connect(new StdioClientTransport({
    command: BB,
    args: ["ai", "mcp", "serve", "--allow-writes", "--log-level", "off"],
    env: { ...process.env, BITBUCKET_URL: w.url, BITBUCKET_TOKEN: w.token },
  }));
  const r = await client.callTool({ name: "enable_auto_merge", arguments: { project: "BB", repo: "api", pr_id: 1 } });
  assert.match(r.content[0].text, /^The person declined: auto-merge was not turned on\./);
  assert.equal(asked.length, 1);
  assert.match(asked[0].message, /^Turn on auto-merge for pull request #1 /);
  await client.close();
});

// 2026-07-28, by hand: no session, each request carries its client's capabilities.
function meta(caps) {
  return { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": caps };
}

async function modern(mcp, id, params, caps = { elicitation: { form: {} } }) {
  const res = await fetch(mcp, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call", "mcp-name": params.name },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { ...params, _meta: meta(caps) } }),
  });
  const text = await res.text();
  const body = text.startsWith("{") ? JSON.parse(text) : JSON.parse(text.split("\n").filter((l) => l.startsWith("data: ")).pop().slice(6));
  return { status: res.status, body };
}

test("2026-07-28: input_required with a sealed state; the accepted retry merges once; altered and reused states are refused", async () => {
  const m = await world();
  const call = { name: "merge_pull_request", arguments: { project: "BB", repo: "api", pr_id: 11, version: 0 } };
  const first = await modern(m.mcp, 1, call);
  assert.equal(first.status, 200);
  const r = first.body.result;
  assert.equal(r.resultType, "input_required");
  assert.equal(r.inputRequests.confirm.method, "elicitation/create");
  assert.equal(r.inputRequests.confirm.params.requestedSchema.properties.confirm.title, "Merge #11 into main");
  const sealed = r.requestState;
  assert.equal(typeof sealed, "string");
  const yes = { confirm: { action: "accept", content: { confirm: true } } };
  // An altered state: one character changed in its middle.
  const i = Math.floor(sealed.length / 2);
  const altered = sealed.slice(0, i) + (sealed[i] === "A" ? "B" : "A") + sealed.slice(i + 1);
  const bad = await modern(m.mcp, 2, { ...call, requestState: altered, inputResponses: yes });
  assert.equal(bad.body.error?.code, -32602, JSON.stringify(bad.body));
  // The retry (a new id) merges.
  const ok = await modern(m.mcp, 3, { ...call, requestState: sealed, inputResponses: yes });
  assert.equal(ok.body.result?.resultType, "complete", JSON.stringify(ok.body));
  assert.match(ok.body.result.content[0].text, /^Merged PR #11 into main/);
  // The same state again is refused: it was used.
  const again = await modern(m.mcp, 4, { ...call, requestState: sealed, inputResponses: yes });
  assert.equal(again.body.error?.code, -32602);
  assert.match(again.body.error.message, /used already/);
});

test("2026-07-28: a request that cannot show a form is -32021 with HTTP 400, and nothing is read", async () => {
  const call = { name: "merge_pull_request", arguments: { project: "BB", repo: "api", pr_id: 1, version: 3 } };
  const r = await modern(w.mcp, 1, call, {});
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32021);
  assert.deepEqual(r.body.error.data.requiredCapabilities, { elicitation: { form: {} } });
});
