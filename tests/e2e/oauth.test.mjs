// Log in with Bitbucket (`--oauth`): the official MCP client SDK's OAuth flow (its `OAuthClientProvider`,
// discovery, dynamic registration, PKCE) logs people in against bb, which asks the person on its own consent
// page, then sends them through the stand-in's Bitbucket OAuth 2.0 provider and its consent step (both driven
// here, as a person's browser would, with its cookies). Then: tools listed and called as that person, two
// people's drafts kept apart, a revoked grant told, a loopback redirect on the port chosen at login, a refresh
// after the access token expired, a replayed refresh token ending its login, a confidential client, and the
// refusals a login must make (a token for another resource, a replayed code, a wrong verifier, a foreign
// redirect URI, an open redirect, a browser client's CORS).
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

/** A person's browser: its cookies for bb, by name. */
function browser() {
  const jar = new Map();
  return {
    header() { return [...jar].map(([k, v]) => `${k}=${v}`).join("; "); },
    keep(r) {
      for (const c of r.headers.getSetCookie?.() ?? []) {
        const [pair, ...attrs] = c.split(";");
        const i = pair.indexOf("=");
        const [k, v] = [pair.slice(0, i).trim(), pair.slice(i + 1).trim()];
        if (attrs.some((a) => a.trim() === "Max-Age=0")) jar.delete(k); else jar.set(k, v);
      }
    },
  };
}

/** Whether `url` is the client's redirect URI (a loopback callback that is neither bb nor Bitbucket). */
function isClients(url) {
  return url.pathname === "/callback" && url.origin !== publicUrl && !url.href.startsWith(stack);
}

/** The person's browser: follows `url` through bb's consent page and Bitbucket's (logged in to Bitbucket as
 * `slug`, answering `decision` at both), and returns the URL it was finally sent to (the client's redirect URI).
 * `seen` collects bb's consent pages. */
async function browse(url, slug, { decision = "allow", jar = browser(), seen = [] } = {}) {
  const login = "Basic " + Buffer.from(`${slug}:${users[slug].password}`).toString("base64");
  let next = new URL(url);
  for (let hop = 0; hop < 10; hop++) {
    if (isClients(next)) return next;
    const onBitbucket = next.href.startsWith(stack);
    const headers = onBitbucket ? { authorization: login } : { cookie: jar.header() };
    const r = await fetch(next, { redirect: "manual", headers });
    if (!onBitbucket) jar.keep(r);
    if (r.status === 302 || r.status === 303) { next = new URL(r.headers.get("location"), next); continue; }
    const text = await r.text();
    if (!onBitbucket && r.status === 200 && /name="login"/.test(text)) {
      // bb's own consent page: it names the client and where the login ends, and may not be framed.
      seen.push(text);
      assert.match(r.headers.get("content-security-policy"), /frame-ancestors 'none'/);
      const field = (n) => text.match(new RegExp(`name="${n}" value="([^"]+)"`))[1];
      const answered = await fetch(new URL("/oauth/consent", publicUrl), { method: "POST", redirect: "manual",
        headers: { cookie: jar.header(), "content-type": "application/x-www-form-urlencoded", origin: publicUrl },
        body: new URLSearchParams({ login: field("login"), token: field("token"), decision }) });
      jar.keep(answered);
      assert.equal(answered.status, 303, await answered.text());
      next = new URL(answered.headers.get("location"));
      continue;
    }
    const consent = onBitbucket && r.status === 200 && text.match(/name="consent" value="([^"]+)"/);
    assert.ok(consent, `expected a redirect or a consent page, got ${r.status} at ${next.pathname}: ${text}`);
    const answered = await fetch(new URL("/rest/oauth2/latest/authorize", stack), { method: "POST", redirect: "manual",
      headers: { authorization: login, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ consent: consent[1], decision }) });
    assert.equal(answered.status, 302, await answered.text());
    next = new URL(answered.headers.get("location"));
  }
  throw new Error("too many redirects");
}

/** An MCP client's OAuth provider, in memory: dynamic registration, PKCE, tokens. */
function provider(slug, { registered = REDIRECT, redirect = REDIRECT, method = "none" } = {}) {
  const p = {
    info: undefined, saved: undefined, verifier: undefined, authUrl: undefined,
    get redirectUrl() { return redirect; },
    get clientMetadata() {
      return { client_name: `bb-e2e-${slug}`, redirect_uris: [registered], grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"], token_endpoint_auth_method: method };
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
async function loggedIn(slug, options = {}) {
  const auth = provider(slug, options);
  const first = new StreamableHTTPClientTransport(new URL("/mcp", publicUrl), { authProvider: auth });
  const probe = new Client({ name: `bb-e2e-${slug}`, version: "1.0.0" }, { capabilities: {} });
  await assert.rejects(probe.connect(first), UnauthorizedError, "no token yet: 401, then the SDK sends the person to log in");
  assert.ok(auth.authUrl, "the SDK asked to send the person to bb's authorization endpoint");
  assert.equal(auth.authUrl.origin, publicUrl);
  const seen = [];
  const back = await browse(auth.authUrl, slug, { seen });
  assert.equal(seen.length, 1, "a client first seen is named on bb's consent page");
  assert.match(seen[0], new RegExp(`bb-e2e-${slug}`));
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
  return { client, call, auth, back };
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
  // The replay ends what the code's first use gave (RFC 6749 §4.1.2).
  const ping = await fetch(new URL("/mcp", publicUrl), { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    headers: { authorization: `Bearer ${first.body.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" } });
  assert.equal(ping.status, 401);
  const refreshed = await token({ grant_type: "refresh_token", client_id: again.client_id, refresh_token: first.body.refresh_token });
  assert.equal(refreshed.body.error, "invalid_grant");
});

test("a token for another resource is refused with invalid_target", async () => {
  const url = new URL("/oauth/authorize", publicUrl);
  const reg = await (await fetch(`${publicUrl}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [REDIRECT] }) })).json();
  url.search = new URLSearchParams({ client_id: reg.client_id, redirect_uri: REDIRECT, response_type: "code", state: "s2",
    code_challenge: createHash("sha256").update("x".repeat(43)).digest("base64url"), code_challenge_method: "S256",
    resource: "https://other.example/mcp" }).toString();
  const r = await fetch(url, { redirect: "manual" });
  assert.equal(r.status, 400, "an error before the person consents is bb's page, never a redirect");
  assert.equal(r.headers.get("location"), null);
  assert.match(await r.text(), /another resource/);
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

test("a client registered with a portless loopback redirect logs in on the port it chose at login", async () => {
  const port = await freePort();
  const alice = await loggedIn("alice", { registered: "http://127.0.0.1/callback", redirect: `http://127.0.0.1:${port}/callback` });
  try {
    assert.equal(alice.back.port, String(port), "bb sent the code to the port chosen at login (RFC 8252 §7.3)");
    assert.ok(!(await alice.call("list_pr_comments", {})).error);
  } finally {
    await alice.client.close();
  }
});

test("a confidential client (client_secret_post) is issued a secret and logs in with it", async () => {
  const carol = await loggedIn("carol", { method: "client_secret_post" });
  try {
    assert.ok(carol.auth.info.client_secret, "registration issued a secret");
    assert.equal(carol.auth.info.token_endpoint_auth_method, "client_secret_post");
    assert.ok(!(await carol.call("list_pr_comments", {})).error);
    const stolen = await token({ grant_type: "refresh_token", client_id: carol.auth.info.client_id,
      refresh_token: carol.auth.saved.refresh_token });
    assert.equal(stolen.status, 401, "without its secret the client's refresh token is useless");
    assert.equal(stolen.body.error, "invalid_client");
  } finally {
    await carol.client.close();
  }
});

test("a person's second login with the same client in the same browser is not asked again; another client is", async () => {
  const jar = browser();
  const first = await rawLoginIn("alice", jar);
  assert.equal(first.seen.length, 1);
  const again = await rawLoginIn("alice", jar, first.client_id);
  assert.equal(again.seen.length, 0, "the consent is remembered for this person and client");
  const other = await rawLoginIn("alice", jar);
  assert.equal(other.seen.length, 1, "a client first seen is always asked about");
  const denied = await rawLoginIn("alice", browser(), undefined, "deny");
  assert.equal(denied.back.searchParams.get("error"), "access_denied", "Deny sends the client access_denied");
});

/** A raw login in the browser `jar`, for `client_id` (registered anew when not given). */
async function rawLoginIn(slug, jar, client_id, decision = "allow") {
  if (!client_id) {
    const reg = await fetch(`${publicUrl}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: "raw" }) });
    ({ client_id } = await reg.json());
  }
  const verifier = randomBytes(32).toString("base64url");
  const url = new URL("/oauth/authorize", publicUrl);
  url.search = new URLSearchParams({ client_id, redirect_uri: REDIRECT, response_type: "code", state: "s",
    code_challenge: createHash("sha256").update(verifier).digest("base64url"), code_challenge_method: "S256" }).toString();
  const seen = [];
  const back = await browse(url, slug, { jar, seen, decision });
  return { client_id, back, seen };
}

test("an implicit-flow request to a registered phishing page gets bb's page, not a redirect", async () => {
  const reg = await (await fetch(`${publicUrl}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: ["https://phish.example/login"] }) })).json();
  const url = new URL("/oauth/authorize", publicUrl);
  url.search = new URLSearchParams({ client_id: reg.client_id, redirect_uri: "https://phish.example/login", response_type: "token" }).toString();
  const r = await fetch(url, { redirect: "manual" });
  assert.equal(r.status, 400);
  assert.equal(r.headers.get("location"), null);
  for (const bad of ["http://127.0.0.1:1@evil.example/cb", "vbscript:x", "blob:https://x/y"]) {
    const refused = await fetch(`${publicUrl}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [bad] }) });
    assert.equal(refused.status, 400, bad);
  }
});

test("scopes are advertised, a browser client can read the challenge, and only /mcp's resource document is served", async () => {
  const origin = `http://localhost:${new URL(publicUrl).port}`;
  const r = await fetch(new URL("/mcp", publicUrl), { method: "POST", headers: { "content-type": "application/json",
    accept: "application/json, text/event-stream", origin }, body: "{}" });
  assert.equal(r.status, 401);
  assert.match(r.headers.get("www-authenticate"), /scope="REPO_(READ|WRITE)"/);
  assert.equal(r.headers.get("access-control-allow-origin"), origin);
  assert.match(r.headers.get("access-control-expose-headers"), /www-authenticate/i);
  assert.equal(r.headers.get("access-control-allow-credentials"), null);
  const preflight = await fetch(`${publicUrl}/oauth/token`, { method: "OPTIONS", headers: { origin,
    "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" } });
  assert.equal(preflight.status, 204);
  assert.match(preflight.headers.get("access-control-allow-methods"), /POST/);
  assert.equal(preflight.headers.get("access-control-allow-origin"), origin);
  const prm = await (await fetch(`${publicUrl}/.well-known/oauth-protected-resource/mcp`)).json();
  assert.ok(prm.scopes_supported.length > 0);
  const as = await (await fetch(`${publicUrl}/.well-known/oauth-authorization-server`)).json();
  assert.deepEqual(as.scopes_supported, prm.scopes_supported);
  assert.ok(as.token_endpoint_auth_methods_supported.includes("client_secret_post"));
  const root = await fetch(`${publicUrl}/.well-known/oauth-protected-resource`);
  assert.equal(root.status, 404, "a root document would name a resource other than the one it was formed from");
});

test("the SDK refreshes an expired access token, and a replay of the spent refresh token ends the login", async () => {
  // A bb whose access tokens live 10 s (BB_OAUTH_ACCESS_TTL), on a public URL of its own.
  const port = await freePort();
  const shortUrl = `http://127.0.0.1:${port}`;
  const link = await fetch(`${stack}/_stack/oauth/links`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ clientId: "bb-short", clientSecret: "short-secret-1", redirectUri: `${shortUrl}/oauth/callback` }) });
  assert.equal(link.status, 200);
  const env = { ...process.env, BB_OAUTH_CLIENT_ID: "bb-short", BB_OAUTH_CLIENT_SECRET: "short-secret-1", BB_OAUTH_ACCESS_TTL: "10s" };
  delete env.BB_HTTP_TOKEN;
  const bb = spawn(BB, ["ai", "mcp", "serve", "--http", `127.0.0.1:${port}`, "--host", stack, "--oauth",
    "--public-url", shortUrl, "--log-level", "info"], { stdio: ["ignore", "ignore", "pipe"], env });
  children.push(bb);
  await firstLines(bb, "stderr", 1, "bb");
  let log = "";
  bb.stderr.on("data", (d) => { log += d; });
  const saved = publicUrl;
  publicUrl = shortUrl;
  try {
    const alice = await loggedIn("alice");
    try {
      assert.equal(alice.auth.saved.expires_in, 10);
      const spent = alice.auth.saved.refresh_token;
      const expired = alice.auth.saved.access_token;
      // Wait until bb no longer takes the first access token (10 s, polled).
      for (let i = 0; ; i++) {
        const ping = await fetch(new URL("/mcp", shortUrl), { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
          headers: { authorization: `Bearer ${expired}`, "content-type": "application/json", accept: "application/json, text/event-stream" } });
        if (ping.status === 401) break;
        assert.ok(i < 120, "the access token expires");
        await new Promise((r) => setTimeout(r, 250));
      }
      // The SDK meets the 401, refreshes on its own, and the call goes through.
      const r = await alice.call("list_pr_comments", {});
      assert.ok(!r.error, r.text);
      assert.notEqual(alice.auth.saved.refresh_token, spent, "the SDK refreshed: a new pair");
      // A stolen copy of the spent refresh token, replayed: refused, and the whole login ends.
      const replay = await token({ grant_type: "refresh_token", client_id: alice.auth.info.client_id, refresh_token: spent });
      assert.equal(replay.status, 400);
      assert.equal(replay.body.error, "invalid_grant");
      const after = await fetch(new URL("/mcp", shortUrl), { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
        headers: { authorization: `Bearer ${alice.auth.saved.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" } });
      assert.equal(after.status, 401, "the successor of the replayed refresh token is revoked too");
      const successor = await token({ grant_type: "refresh_token", client_id: alice.auth.info.client_id, refresh_token: alice.auth.saved.refresh_token });
      assert.equal(successor.body.error, "invalid_grant");
      assert.match(log, /used a second time: every token of that login is revoked/);
      assert.doesNotMatch(log, new RegExp(spent), "no token in the log");
    } finally {
      await alice.client.close().catch(() => {});
    }
  } finally {
    publicUrl = saved;
  }
});
