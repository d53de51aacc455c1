// bb over Streamable HTTP (`bb ai mcp serve --http`) with the reference MCP client (@modelcontextprotocol/sdk).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { BB } from "./bb.mjs";

/** Starts bb on a free loopback port; resolves with its URL (the first line on stderr) and a stop function. */
function startHttp(args = [], env = {}) {
  const child = spawn(BB, ["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--log-level", "warning", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...env },
  });
  const lines = createInterface({ input: child.stderr });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`bb exited with ${code} before printing its URL`)));
    lines.once("line", (first) => {
      if (!/^http:\/\//.test(first)) return reject(new Error(`bb did not start: ${first}`));
      lines.on("line", (l) => process.stderr.write(`bb: ${l}\n`));
      resolve({
        url: new URL(first.trim()),
        stop: () => new Promise((done) => { child.removeAllListeners("exit"); child.on("exit", done); child.kill(); }),
      });
    });
  });
}

async function connect(url, requestInit) {
  const transport = new StreamableHTTPClientTransport(url, requestInit ? { requestInit } : undefined);
  const client = new Client({ name: "bb-e2e-http", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport };
}

test("initializes over HTTP, lists tools, reads the view, pings, ends the session", async () => {
  const bb = await startHttp();
  try {
    assert.match(bb.url.href, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const { client, transport } = await connect(bb.url);
    assert.equal(client.getServerVersion().name, "bb");
    assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
    const caps = client.getServerCapabilities();
    assert.ok(caps.tools && caps.resources && caps.logging);

    const { tools } = await client.listTools();
    for (const tool of tools) {
      assert.ok(tool.description, `${tool.name} has a description`);
      assert.equal(tool.inputSchema.type, "object");
    }
    const view = await client.readResource({ uri: "ui://bb/view" });
    assert.equal(view.contents[0].mimeType, "text/html;profile=mcp-app");
    assert.match(view.contents[0].text, /^<!doctype html>/);
    assert.deepEqual(await client.ping(), {});
    await client.setLoggingLevel("warning");

    const id = transport.sessionId;
    await transport.terminateSession();
    const after = await fetch(bb.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": id },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }),
    });
    assert.equal(after.status, 404, "an ended session is gone");
    await client.close();
  } finally {
    await bb.stop();
  }
});

test("with BB_HTTP_TOKEN set, the client needs the bearer token", async () => {
  const bb = await startHttp([], { BB_HTTP_TOKEN: "e2e-token" });
  try {
    await assert.rejects(connect(bb.url), /401|Unauthorized/);
    const { client } = await connect(bb.url, { headers: { Authorization: "Bearer e2e-token" } });
    assert.deepEqual(await client.ping(), {});
    await client.close();
  } finally {
    await bb.stop();
  }
});

// (fetch cannot set Host; the raw-socket tests and the conformance suite cover a rebinding Host.)
test("a foreign Origin is refused", async () => {
  const bb = await startHttp();
  try {
    const post = (headers) => fetch(bb.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    assert.equal((await post({ origin: "http://evil.example.com" })).status, 403);
  } finally {
    await bb.stop();
  }
});

test("the reference client refreshes its tool list when enable_toolset turns a group on", async () => {
  const bb = await startHttp([], { BITBUCKET_URL: "http://127.0.0.1:9", BITBUCKET_TOKEN: "unused" });
  try {
    let changed;
    const refreshed = new Promise((resolve) => { changed = resolve; });
    const transport = new StreamableHTTPClientTransport(bb.url);
    const client = new Client(
      { name: "bb-e2e-http", version: "1.0.0" },
      { capabilities: {}, listChanged: { tools: { debounceMs: 0, onChanged: (error, tools) => changed({ error, tools }) } } },
    );
    await client.connect(transport);
    assert.equal(client.getServerCapabilities().tools.listChanged, true);
    const before = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(before.includes("enable_toolset") && !before.includes("list_branches"), before.join(", "));

    const answer = await client.callTool({ name: "enable_toolset", arguments: { toolset: "repositories" } });
    assert.match(answer.content[0].text, /^Turned on repositories for this session: list_branches/);
    const { error, tools } = await refreshed;
    assert.equal(error, null);
    const after = tools.map((t) => t.name);
    assert.ok(after.includes("list_branches") && after.includes("list_tags"), after.join(", "));
    assert.ok(!after.includes("enable_toolset"), "nothing is left to turn on");
    await client.close();
  } finally {
    await bb.stop();
  }
});
