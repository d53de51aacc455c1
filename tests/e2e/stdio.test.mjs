// bb over stdio with the reference MCP client (@modelcontextprotocol/sdk).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { EmptyResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { BB, rawServer } from "./bb.mjs";

const VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"];

/** Connects the SDK client, asking for `version` in initialize; returns the client and the version bb answered. */
async function connect(version, capabilities = {}) {
  const transport = new StdioClientTransport({ command: BB, args: ["ai", "mcp", "serve", "--log-level", "off"], stderr: "inherit" });
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === "initialize") message.params.protocolVersion = version;
    return send(message, options);
  };
  let answered;
  let handler;
  Object.defineProperty(transport, "onmessage", {
    get: () => handler,
    set: (fn) => {
      handler = (message) => {
        if (message.id !== undefined && message.result && message.result.protocolVersion) answered = message.result.protocolVersion;
        fn(message);
      };
    },
  });
  const client = new Client({ name: "bb-e2e", version: "1.0.0" }, { capabilities });
  await client.connect(transport);
  return { client, answered: () => answered };
}

for (const version of VERSIONS) {
  test(`initializes under ${version}, lists tools, reads the view, pings`, async () => {
    const { client, answered } = await connect(version);
    try {
      assert.equal(answered(), version);
      assert.equal(client.getServerVersion().name, "bb");
      const caps = client.getServerCapabilities();
      assert.ok(caps.tools && caps.resources && caps.logging, "tools, resources and logging are declared");
      assert.match(client.getInstructions(), /Bitbucket Data Center/);

      const { tools } = await client.listTools();
      for (const tool of tools) {
        assert.match(tool.name, /^[a-z_]+$/);
        assert.ok(tool.description, `${tool.name} has a description`);
        assert.equal(tool.inputSchema.type, "object");
      }

      const view = await client.readResource({ uri: "ui://bb/view" });
      assert.equal(view.contents.length, 1);
      assert.equal(view.contents[0].mimeType, "text/html;profile=mcp-app");
      assert.match(view.contents[0].text, /^<!doctype html>/);
      const { resources } = await client.listResources();
      assert.ok(!resources.some((r) => r.uri === "ui://bb/view"), "the view stays out of resources/list");

      assert.deepEqual(await client.ping(), {});
      await client.setLoggingLevel("warning");
    } finally {
      await client.close();
    }
  });
}

test("the view resource is byte-identical across sessions and UI capabilities", async () => {
  const a = await connect("2025-11-25");
  const b = await connect("2025-11-25", { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } });
  try {
    const [va, vb] = await Promise.all([a.client.readResource({ uri: "ui://bb/view" }), b.client.readResource({ uri: "ui://bb/view" })]);
    assert.equal(va.contents[0].text, vb.contents[0].text);
  } finally {
    await a.client.close();
    await b.client.close();
  }
});

test("an unknown method, an unknown tool and an unknown resource get JSON-RPC errors", async () => {
  const { client } = await connect("2025-11-25");
  try {
    await assert.rejects(client.request({ method: "bogus/method", params: {} }, EmptyResultSchema), (e) => e instanceof McpError && e.code === -32601);
    await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (e) => e instanceof McpError && e.code === -32602);
    await assert.rejects(client.readResource({ uri: "ui://bb/nothing" }), (e) => e instanceof McpError && e.code === -32002);
  } finally {
    await client.close();
  }
});

test("malformed JSON and invalid requests are answered and the session goes on", async () => {
  const bb = rawServer();
  bb.send("{this is not json");
  let answer = JSON.parse(await bb.next());
  assert.equal(answer.error.code, -32700);
  assert.equal(answer.id, null);

  bb.send(JSON.stringify({ jsonrpc: "2.0", id: 1, params: {} }));
  answer = JSON.parse(await bb.next());
  assert.equal(answer.error.code, -32600);
  assert.equal(answer.id, 1);

  bb.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }));
  answer = JSON.parse(await bb.next());
  assert.equal(answer.result.protocolVersion, "2025-11-25");

  bb.send(JSON.stringify([{ jsonrpc: "2.0", id: 3, method: "ping" }]));
  answer = JSON.parse(await bb.next());
  assert.equal(answer.error.code, -32600, "batches only under 2025-03-26");

  bb.send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }));
  assert.deepEqual(JSON.parse(await bb.next()), { jsonrpc: "2.0", id: 4, result: {} });
  assert.equal(await bb.close(), 0, "bb exits cleanly when stdin closes");
});
