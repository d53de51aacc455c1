// bb under MCP 2026-07-28 (no handshake, no session: each request carries its own _meta) with the v2
// reference client (@modelcontextprotocol/client), over Streamable HTTP and stdio, against the local
// Bitbucket stand-in (bb-stack). The same client in its legacy mode still gets a 2025 session.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { BB, firstLines } from "./bb.mjs";

const MODERN = "2026-07-28";
const STACK = process.env.BB_STACK_BIN || path.join(path.dirname(BB), "bb-stack");
const UI = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };
const PR = { project: "BB", repo: "api", pr_id: 1 };

const children = [];
function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => { child.once("exit", () => done()); child.kill(); });
}

let stack; // { url, token }
let mcp; // bb's Streamable HTTP endpoint against the stand-in

before(async () => {
  // tools/test-all.sh builds the workspace first; run on its own, build what is missing.
  if (!process.env.BB_BIN && (!existsSync(BB) || !existsSync(STACK))) {
    execFileSync("cargo", ["build", "-q", "-p", "bb", "-p", "bb-stack"], { cwd: path.resolve(path.dirname(BB), "..", ".."), stdio: ["ignore", "inherit", "inherit"] });
  }
  const s = spawn(STACK, ["--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(s);
  const [url, token] = await firstLines(s, "stdout", 2, "bb-stack");
  s.stdout.resume();
  stack = { url, token };
  const bb = spawn(BB, ["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--host", url, "--token", token, "--log-level", "warning"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(bb);
  const [first] = await firstLines(bb, "stderr", 1, "bb");
  assert.match(first, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  mcp = new URL(first);
});

after(async () => {
  for (const c of children.reverse()) await stop(c);
});

/** A fetch that records what goes to bb (method, headers, JSON-RPC body) and what comes back (status, session). */
function spyFetch() {
  const seen = [];
  const spy = async (url, init = {}) => {
    const row = { method: init.method, headers: Object.fromEntries(new Headers(init.headers).entries()) };
    if (typeof init.body === "string") row.body = JSON.parse(init.body);
    seen.push(row);
    const res = await fetch(url, init);
    row.status = res.status;
    row.session = res.headers.get("mcp-session-id");
    return res;
  };
  return { spy, seen };
}

/** A transport whose outgoing JSON-RPC messages are recorded in `sent`. */
function recording(transport) {
  const sent = [];
  const send = transport.send.bind(transport);
  transport.send = (message, options) => { sent.push(structuredClone(message)); return send(message, options); };
  return { transport, sent };
}

async function httpClient(mode, capabilities = {}) {
  const { spy, seen } = spyFetch();
  const transport = new StreamableHTTPClientTransport(mcp, { fetch: spy });
  const client = new Client({ name: "bb-e2e-v2", version: "1.0.0" }, { capabilities, versionNegotiation: { mode } });
  await client.connect(transport);
  return { client, transport, seen };
}

async function stdioClient(mode, capabilities = {}) {
  const { transport, sent } = recording(new StdioClientTransport({
    command: BB,
    args: ["ai", "mcp", "serve", "--log-level", "off"],
    env: { ...process.env, BITBUCKET_URL: stack.url, BITBUCKET_TOKEN: stack.token },
    stderr: "inherit",
  }));
  const client = new Client({ name: "bb-e2e-v2", version: "1.0.0" }, { capabilities, versionNegotiation: { mode } });
  await client.connect(transport);
  return { client, transport, sent };
}

/** The checks every 2026-07-28 client gets: tools/list, a data tool, and show (seen or not by its capabilities). */
async function exercise(client, ui) {
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  assert.equal(client.getProtocolEra(), "modern");
  assert.equal(client.getServerVersion().name, "bb");
  assert.ok(client.getDiscoverResult().supportedVersions.includes(MODERN));

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of ["get_pull_request", "show"]) assert.ok(names.includes(name), `tools/list has ${name}`);

  const pr = await client.callTool({ name: "get_pull_request", arguments: PR });
  assert.ok(!pr.isError, JSON.stringify(pr));
  assert.match(pr.content[0].text, /^PR #1 · OPEN/);
  assert.equal(pr._meta["io.modelcontextprotocol/serverInfo"].name, "bb", "a 2026-07-28 result names its server");

  const shown = await client.callTool({ name: "show", arguments: { kind: "pull_request", ...PR } });
  assert.ok(!shown.isError, JSON.stringify(shown));
  if (ui) {
    assert.doesNotMatch(shown.content[0].text, /Nothing was shown/);
    const page = await client.readResource({ uri: "ui://bb/view" });
    assert.equal(page.contents[0].mimeType, "text/html;profile=mcp-app");
    assert.match(page.contents[0].text, /^<!doctype html>/);
  } else {
    assert.match(shown.content[0].text, /Nothing was shown/);
  }
}

/** Every request the client sent claims 2026-07-28 in its _meta; none is initialize. The first is
 * server/discover unless the probe went elsewhere (the SDK's stdio transport probes on a sibling process). */
function allModern(messages, probedHere = true) {
  const requests = messages.filter((m) => m.method && m.id !== undefined);
  assert.ok(requests.length >= 3, `requests sent: ${requests.map((m) => m.method)}`);
  if (probedHere) assert.equal(requests[0].method, "server/discover", "the client probes with server/discover");
  for (const m of requests) {
    assert.notEqual(m.method, "initialize");
    assert.equal(m.params._meta["io.modelcontextprotocol/protocolVersion"], MODERN, `${m.method} claims ${MODERN}`);
  }
}

for (const mode of [{ pin: MODERN }, "auto"]) {
  const label = typeof mode === "string" ? mode : `pin ${MODERN}`;
  for (const ui of [false, true]) {
    test(`HTTP, v2 client (${label}${ui ? ", UI extension" : ""}): 2026-07-28 without a session: tools/list, get_pull_request, show`, async () => {
      const { client, transport, seen } = await httpClient(mode, ui ? UI : {});
      try {
        await exercise(client, ui);
        assert.equal(transport.sessionId, undefined, "no session");
        allModern(seen.filter((r) => r.method === "POST").map((r) => r.body));
        for (const r of seen) {
          assert.equal(r.method, "POST", "no GET stream, no DELETE");
          assert.equal(r.status, 200);
          assert.equal(r.session, null, "bb mints no Mcp-Session-Id");
          assert.equal(r.headers["mcp-protocol-version"], MODERN, "the header bb sees");
          assert.equal(r.headers["mcp-method"], r.body.method);
          if (r.body.method === "tools/call") assert.equal(r.headers["mcp-name"], r.body.params.name);
        }
      } finally {
        await client.close();
      }
    });

    test(`stdio, v2 client (${label}${ui ? ", UI extension" : ""}): 2026-07-28: tools/list, get_pull_request, show`, async () => {
      const { client, sent } = await stdioClient(mode, ui ? UI : {});
      try {
        await exercise(client, ui);
        // server/discover went to a sibling bb the SDK spawned and reaped; this one is served stateless from its first line.
        allModern(sent, false);
      } finally {
        await client.close();
      }
    });
  }
}

test("HTTP, v2 client in legacy mode: the 2025 handshake and a session, as before", async () => {
  const { client, transport, seen } = await httpClient("legacy");
  try {
    assert.equal(client.getProtocolEra(), "legacy");
    assert.match(client.getNegotiatedProtocolVersion(), /^2025-/);
    assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
    assert.equal(seen[0].body.method, "initialize");
    const pr = await client.callTool({ name: "get_pull_request", arguments: PR });
    assert.match(pr.content[0].text, /^PR #1 · OPEN/);
    assert.deepEqual(await client.ping(), {});
  } finally {
    await transport.terminateSession();
    await client.close();
  }
});

test("stdio, v2 client in legacy mode: initialize keeps its session", async () => {
  const { client, sent } = await stdioClient("legacy");
  try {
    assert.equal(client.getProtocolEra(), "legacy");
    assert.equal(sent[0].method, "initialize");
    const pr = await client.callTool({ name: "get_pull_request", arguments: PR });
    assert.match(pr.content[0].text, /^PR #1 · OPEN/);
    assert.deepEqual(await client.ping(), {});
  } finally {
    await client.close();
  }
});

/** Another person comments on BB/api #1 through the stand-in's control API. */
async function bobComments(text) {
  const res = await fetch(`${stack.url}/_stack/comments`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ project: "BB", repo: "api", pullRequest: 1, user: "bob", text }) });
  assert.ok(res.ok, `${res.status} ${await res.text()}`);
}

const PR_URI = "bitbucket://projects/BB/repos/api/pull-requests/1";

for (const transport of ["HTTP", "stdio"]) {
  test(`${transport}, v2 client: subscriptions/listen is acknowledged with what bb honours, then tells pull request #1's change`, async () => {
    const { client } = transport === "HTTP" ? await httpClient({ pin: MODERN }) : await stdioClient({ pin: MODERN });
    try {
      assert.equal(client.getDiscoverResult().capabilities.resources.subscribe, true);
      const told = new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no notifications/resources/updated within 60 s")), 60000);
        client.setNotificationHandler("notifications/resources/updated", (n) => {
          if (n.params.uri === PR_URI) { clearTimeout(timer); resolve(n.params); }
        });
      });
      const sub = await client.listen({ toolsListChanged: true, resourceSubscriptions: [PR_URI, "bitbucket://projects/BB/repos/api/commits/main"] });
      // The tool list never changes and a commit does not change on its own: neither is honoured.
      assert.deepEqual(sub.honoredFilter, { resourceSubscriptions: [PR_URI] });
      await bobComments(`Listened over ${transport}: what about the timeout?`);
      const params = await told;
      assert.equal(params.uri, PR_URI);
      await sub.close();
      assert.equal(await sub.closed, "local");
    } finally {
      await client.close();
    }
  });
}
