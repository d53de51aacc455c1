// Log in with Bitbucket (`--oauth`): the official MCP client SDK's OAuth flow (its `OAuthClientProvider`,
// discovery, dynamic registration, PKCE) logs people in against bb, which sends them through the stand-in's
// Bitbucket OAuth 2.0 provider and its consent step (driven here, as a person's browser would). Then: tools
// listed and called as that person, two people's drafts kept apart, a revoked grant told, and the refusals a
// login must make (a token for another resource, a replayed code, a wrong verifier, a foreign redirect URI).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { createHash, randomBytes } from "node:crypto";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { BB, firstLines } from "./bb.mjs";

const STACK = process.env.BB_STACK_BIN || path.join(path.dirname(BB), "bb-stack");
const PR = { project: "BB", repo: "api", pr_id: 2 };
const REDIRECT = "http://127.0.0.1:1/callback"; // the client's; the test reads the code off the redirect
const LINK = { clientId: "bb-incoming-link", clientSecret: "link-secret-never-logged-7f3a" };

const children = [];
let stack; // the stand-in's base URL
let users; // slug → {password}
let publicUrl; // bb's
let bbLog = "";

/** A free loopback port: bb's public URL must be known before it starts. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

before(async () => {
  if (!process.env.BB_BIN && (!existsSync(BB) || !existsSync(STACK))) {
    execFileSync("cargo", ["build", "-q", "-p", "bb", "-p", "bb-stack"], { cwd: path.resolve(path.dirname(BB), "..", ".."), stdio: ["ignore", "inherit", "inherit"] });
  }
  const s = spawn(STACK, ["--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(s);
  [stack] = await firstLines(s, "stdout", 2, "bb-stack");
  s.stdout.resume();
  const info = await (await fetch(`${stack}/_stack`)).json();
  users = Object.fromEntries(info.users.map((u) => [u.slug, u]));
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  // The administrator's incoming application link, its redirect URL bb's callback.
  const link = await fetch(`${stack}/_stack/oauth/links`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...LINK, redirectUri: `${publicUrl}/oauth/callback` }) });
  assert.equal(link.status, 200);
  const env = { ...process.env, BB_OAUTH_CLIENT_ID: LINK.clientId, BB_OAUTH_CLIENT_SECRET: LINK.clientSecret };
  delete env.BB_HTTP_TOKEN;
  const bb = spawn(BB, ["ai", "mcp", "serve", "--http", `127.0.0.1:${port}`, "--host", stack, "--oauth",
    "--public-url", publicUrl, "--log-level", "info"], { stdio: ["ignore", "ignore", "pipe"], env });
  children.push(bb);
  await firstLines(bb, "stderr", 1, "bb");
  bb.stderr.on("data", (d) => { bbLog += d; });
});

after(async () => {
  for (const c of children.reverse()) {
    if (c.exitCode === null && c.signalCode === null) await new Promise((done) => { c.once("exit", done); c.kill(); });
  }
  assert.doesNotMatch(bbLog, new RegExp(LINK.clientSecret), "the client secret never reaches the log");
  assert.doesNotMatch(bbLog, /bbat-|bbrt-/, "no Bitbucket token reaches the log");
});

/** The person's browser: follows `url` through bb and Bitbucket's consent (logged in to Bitbucket as `slug`,
 * answering `decision`), and returns the URL it was finally sent to (the client's redirect URI). */
async function browse(url, slug, decision = "allow") {
  const login = "Basic " + Buffer.from(`${slug}:${users[slug].password}`).toString("base64");
  let next = new URL(url);
  for (let hop = 0; hop < 10; hop++) {
    if (next.href.startsWith(REDIRECT)) return next;
    const onBitbucket = next.href.startsWith(stack);
    const r = await fetch(next, { redirect: "manual", headers: onBitbucket ? { authorization: login } : {} });
    if (r.status === 302) { next = new URL(r.headers.get("location"), next); continue; }
    const text = await r.text();
    const consent = onBitbucket && r.status === 200 && text.match(/name="consent" value="([^"]+)"/);
    assert.ok(consent, `expected a redirect or Bitbucket's consent page, got ${r.status} at ${next.pathname}: ${text}`);
    const answered = await fetch(new URL("/rest/oauth2/latest/authorize", stack), { method: "POST", redirect: "manual",
      headers: { authorization: login, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ consent: consent[1], decision }) });
    assert.equal(answered.status, 302, await answered.text());
    next = new URL(answered.headers.get("location"));
  }
  throw new Error("too many redirects");
}

/** An MCP client's OAuth provider, in memory: dynamic registration, PKCE, tokens. */
function provider(slug) {
  const p = {
    info: undefined, saved: undefined, verifier: undefined, authUrl: undefined,
    get redirectUrl() { return REDIRECT; },
    get clientMetadata() {
      return { client_name: `bb-e2e-${slug}`, redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"], token_endpoint_auth_method: "none" };
    },
    state() { return `state-${slug}`; },
    clientInformation() { return p.info; },
    saveClientInformation(i) { p.info = i; },
    tokens() { return p.saved; },
    saveTokens(t) { p.saved = t; },
    redirectToAuthorization(url) { p.authUrl = url; },
    saveCodeVerifier(v) { p.verifier = v; },
    codeVerifier() { return p.verifier; },
  };
  return p;
}

/** Logs `slug` in with the SDK's flow and connects; `{client, call, auth}`. */
async function loggedIn(slug) {
  const auth = provider(slug);
  const first = new StreamableHTTPClientTransport(new URL("/mcp", publicUrl), { authProvider: auth });
  const probe = new Client({ name: `bb-e2e-${slug}`, version: "1.0.0" }, { capabilities: {} });
  await assert.rejects(probe.connect(first), UnauthorizedError, "no token yet: 401, then the SDK sends the person to log in");
  assert.ok(auth.authUrl, "the SDK asked to send the person to bb's authorization endpoint");
  assert.equal(auth.authUrl.origin, publicUrl);
  const back = await browse(auth.authUrl, slug);
  assert.equal(back.searchParams.get("state"), `state-${slug}`);
  assert.equal(back.searchParams.get("iss"), publicUrl, "RFC 9207: the issuer rides on the redirect");
  await first.finishAuth(back.searchParams.get("code"));
  assert.ok(auth.saved?.access_token, "bb gave the client its own token");
  assert.doesNotMatch(auth.saved.access_token, /^bbat-/, "never Bitbucket's token");
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", publicUrl), { authProvider: auth });
  const client = new Client({ name: `bb-e2e-${slug}`, version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: { ...PR, ...args } });
    return { error: !!r.isError, text: r.content.map((c) => c.text).join("\n") };
  };
  return { client, call, auth };
}

async function stackLog() {
  return (await (await fetch(`${stack}/_stack/log`)).json()).requests;
}

test("a person logs in with Bitbucket through the SDK, lists tools and calls one as themselves", async () => {
  await fetch(`${stack}/_stack/requests`, { method: "DELETE" });
  const before = (await stackLog()).length;
  const alice = await loggedIn("alice");
  try {
    const { tools } = await alice.client.listTools();
    assert.ok(tools.some((t) => t.name === "list_pr_comments"), tools.map((t) => t.name).join(", "));
    const r = await alice.call("list_pr_comments", {});
    assert.ok(!r.error, r.text);
    const mine = (await stackLog()).slice(before).filter((q) => q.path.startsWith("/rest/api/latest/projects/BB/repos/api/pull-requests/2"));
    assert.ok(mine.length > 0, "the call read the pull request");
    assert.ok(mine.every((q) => q.user === "alice"), JSON.stringify(mine.map((q) => q.user)));
  } finally {
    await alice.client.close();
  }
});

test("two people on one bb see only their own drafts", async () => {
  const alice = await loggedIn("alice");
  const carol = await loggedIn("carol");
  try {
    const a = await alice.call("add_pr_comment", { text: "Alice's OAuth draft.", pending: true });
    assert.ok(!a.error, a.text);
    const c = await carol.call("add_pr_comment", { text: "Carol's OAuth draft.", pending: true });
    assert.ok(!c.error, c.text);
    const aliceDrafts = await alice.call("list_pr_comments", { drafts: true });
    assert.match(aliceDrafts.text, /Alice's OAuth draft/);
    assert.doesNotMatch(aliceDrafts.text, /Carol's OAuth draft/);
    const carolSees = await carol.call("list_pr_comments", { drafts: true });
    assert.match(carolSees.text, /Carol's OAuth draft/);
    assert.doesNotMatch(carolSees.text, /Alice's OAuth draft/);
  } finally {
    await alice.client.close();
    await carol.client.close();
  }
});

test("a grant revoked in Bitbucket ends the person's sessions with a sentence telling them to log in again", async () => {
  const carol = await loggedIn("carol");
  try {
    assert.ok(!(await carol.call("list_pr_comments", {})).error);
    const revoked = await fetch(`${stack}/_stack/oauth/revoke`, { method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ user: "carol" }) });
    assert.ok((await revoked.json()).revoked >= 1);
    const told = await carol.call("list_pr_comments", {});
    assert.ok(told.error, told.text);
    assert.match(told.text, /Log in to bb again/);
    const raw = await fetch(new URL("/mcp", publicUrl), { method: "POST",
      headers: { authorization: `Bearer ${carol.auth.saved.access_token}`, "content-type": "application/json",
        accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
    assert.equal(raw.status, 401);
    const challenge = raw.headers.get("www-authenticate");
    assert.match(challenge, /error="invalid_token"/);
    assert.match(challenge, /Log in to bb again/);
    assert.match(challenge, new RegExp(`resource_metadata="${publicUrl}/.well-known/oauth-protected-resource/mcp"`));
  } finally {
    await carol.client.close().catch(() => {});
  }
});

/** A client registered by hand, and a login up to its code (with the raw requests a client makes). */
async function rawLogin(slug, { resource = `${publicUrl}/mcp` } = {}) {
  const reg = await fetch(`${publicUrl}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: "raw" }) });
  assert.equal(reg.status, 201);
  const { client_id } = await reg.json();
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const url = new URL("/oauth/authorize", publicUrl);
  url.search = new URLSearchParams({ client_id, redirect_uri: REDIRECT, response_type: "code", state: "s1",
    code_challenge: challenge, code_challenge_method: "S256", resource }).toString();
  const back = await browse(url, slug);
  return { client_id, verifier, back };
}

async function token(form) {
  const r = await fetch(`${publicUrl}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form) });
  return { status: r.status, body: await r.json() };
}

test("a replayed code and a wrong verifier are refused with invalid_grant", async () => {
  const { client_id, verifier, back } = await rawLogin("alice");
  const code = back.searchParams.get("code");
  const form = { grant_type: "authorization_code", client_id, code, redirect_uri: REDIRECT, code_verifier: verifier };
  const wrong = await token({ ...form, code_verifier: randomBytes(32).toString("base64url") });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.body.error, "invalid_grant");
  assert.match(wrong.body.error_description, /PKCE/);
  // A code is single-use: the failed try spent it, so a fresh login's code is used twice.
  const again = await rawLogin("alice");
  const good = { grant_type: "authorization_code", client_id: again.client_id, code: again.back.searchParams.get("code"),
    redirect_uri: REDIRECT, code_verifier: again.verifier };
  const first = await token(good);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.token_type, "Bearer");
  const replay = await token(good);
  assert.equal(replay.status, 400);
  assert.equal(replay.body.error, "invalid_grant");
});

test("a token for another resource is refused with invalid_target", async () => {
  const url = new URL("/oauth/authorize", publicUrl);
  const reg = await (await fetch(`${publicUrl}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [REDIRECT] }) })).json();
  url.search = new URLSearchParams({ client_id: reg.client_id, redirect_uri: REDIRECT, response_type: "code", state: "s2",
    code_challenge: createHash("sha256").update("x".repeat(43)).digest("base64url"), code_challenge_method: "S256",
    resource: "https://other.example/mcp" }).toString();
  const r = await fetch(url, { redirect: "manual" });
  assert.equal(r.status, 302);
  const back = new URL(r.headers.get("location"));
  assert.equal(back.searchParams.get("error"), "invalid_target");
  assert.equal(back.searchParams.get("state"), "s2");
  // And at the token endpoint: a code for bb exchanged for another resource.
  const { client_id, verifier, back: ok } = await rawLogin("alice");
  const t = await token({ grant_type: "authorization_code", client_id, code: ok.searchParams.get("code"), redirect_uri: REDIRECT,
    code_verifier: verifier, resource: "https://other.example/mcp" });
  assert.equal(t.status, 400);
  assert.equal(t.body.error, "invalid_target");
});

test("a redirect URI the client did not register gets no redirect", async () => {
  const reg = await (await fetch(`${publicUrl}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [REDIRECT] }) })).json();
  const url = new URL("/oauth/authorize", publicUrl);
  url.search = new URLSearchParams({ client_id: reg.client_id, redirect_uri: "https://evil.example/callback", response_type: "code",
    code_challenge: "A".repeat(43), code_challenge_method: "S256" }).toString();
  const r = await fetch(url, { redirect: "manual" });
  assert.equal(r.status, 400);
  assert.equal(r.headers.get("location"), null);
  assert.match(await r.text(), /redirect URI is not one this client registered/);
  const bad = await fetch(`${publicUrl}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: ["http://evil.example/callback"] }) });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error, "invalid_redirect_uri");
});

test("without a token, /mcp answers 401 naming its protected resource metadata, which names bb as the authorization server", async () => {
  const r = await fetch(new URL("/mcp", publicUrl), { method: "POST", headers: { "content-type": "application/json",
    accept: "application/json, text/event-stream" }, body: "{}" });
  assert.equal(r.status, 401);
  const m = r.headers.get("www-authenticate").match(/resource_metadata="([^"]+)"/);
  const prm = await (await fetch(m[1])).json();
  assert.equal(prm.resource, `${publicUrl}/mcp`);
  assert.deepEqual(prm.authorization_servers, [publicUrl]);
  const as = await (await fetch(`${publicUrl}/.well-known/oauth-authorization-server`)).json();
  assert.equal(as.issuer, publicUrl);
  assert.deepEqual(as.code_challenge_methods_supported, ["S256"]);
  assert.equal(as.authorization_response_iss_parameter_supported, true);
});
