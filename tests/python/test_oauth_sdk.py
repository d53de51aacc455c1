"""Log in with Bitbucket (`--oauth`) through the official MCP Python SDK (PyPI `mcp`), as a confidential client.

The SDK's `OAuthClientProvider` discovers bb's metadata, registers itself asking for
`token_endpoint_auth_method: client_secret_post` (issue 55, item 7), sends the person's browser to bb's
authorization endpoint and exchanges the code with its secret. The browser is driven here with `http.client`,
as a person's would go: bb's own consent page (with bb's cookie), the stand-in's Bitbucket consent page
(logged in to Bitbucket as the person), bb's callback, then the client's redirect URI. The client then lists
tools and calls one, and the stand-in's request log shows the call was made as the person, never as the
operator whose token bb was started with.

Run: python -m unittest discover -s tests/python -v (from the repository root). The binaries are $BB_BIN and
$BB_STACK_BIN, else ${CARGO_TARGET_DIR:-target}/debug/{bb,bb-stack} (built with cargo when missing).
"""

import asyncio
import base64
import http.client
import json
import os
import queue
import re
import socket
import subprocess
import threading
import unittest
import urllib.parse
from pathlib import Path

import anyio
import httpx
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

ROOT = Path(__file__).resolve().parents[2]
PR = {"project": "BB", "repo": "api", "pr_id": 2}
LINK = {"clientId": "bb-incoming-link-py", "clientSecret": "link-secret-never-logged-py-9c1e"}
PERSON = "carol"  # who logs in
OPERATOR = "alice"  # whose token bb is started with (the stand-in's default user)
CLIENT_NAME = "bb-e2e-python-sdk"
WAIT = 60  # seconds: the bound on every wait


def binary(env_name: str, name: str) -> Path:
    if os.environ.get(env_name):
        return Path(os.environ[env_name])
    target = Path(os.environ.get("CARGO_TARGET_DIR") or "target")
    return (target if target.is_absolute() else ROOT / target) / "debug" / name


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lines:
    """A child's output stream read on a thread (so its pipe never fills): its lines, kept and waited for."""

    def __init__(self, stream, what: str):
        self.what, self.lines, self.q = what, [], queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append(line)
            self.q.put(line)
        self.q.put(None)

    def first(self) -> str:
        try:
            line = self.q.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"{self.what} printed nothing within {WAIT} s") from None
        if line is None:
            raise AssertionError(f"{self.what} exited before printing a line")
        return line.strip()

    def text(self) -> str:
        return "\n".join(self.lines)


def request(method: str, url: str, headers=None, body: bytes | None = None):
    """One HTTP request, no redirect followed: (status, headers as a list of pairs, body text)."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=WAIT)
    try:
        path = u.path + (f"?{u.query}" if u.query else "")
        conn.request(method, path or "/", body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.getheaders(), r.read().decode("utf-8", "replace")
    finally:
        conn.close()


def header(headers, name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name.lower()), None)


def get_json(url: str):
    status, _, text = request("GET", url)
    assert status == 200, f"GET {url}: {status} {text}"
    return json.loads(text)


def post(url: str, form: dict, headers=None):
    """A form POST: (status, headers, body text)."""
    h = {"content-type": "application/x-www-form-urlencoded", **(headers or {})}
    return request("POST", url, h, urllib.parse.urlencode(form).encode())


class Browser:
    """A person's browser: its cookies for bb (host-only, by name), and the pages it went through."""

    def __init__(self, public_url: str, stack: str, slug: str, password: str):
        self.public_url, self.stack = public_url, stack
        self.login = "Basic " + base64.b64encode(f"{slug}:{password}".encode()).decode()
        self.jar: dict[str, str] = {}
        self.consent_pages: list[str] = []

    def cookie(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.jar.items())

    def keep(self, headers):
        for k, v in headers:
            if k.lower() != "set-cookie":
                continue
            pair, *attrs = v.split(";")
            name, _, value = pair.partition("=")
            if any(a.strip().lower() == "max-age=0" for a in attrs):
                self.jar.pop(name.strip(), None)
            else:
                self.jar[name.strip()] = value.strip()

    def is_clients(self, url: str) -> bool:
        u = urllib.parse.urlsplit(url)
        return u.path == "/callback" and not url.startswith(self.public_url) and not url.startswith(self.stack)

    def go(self, url: str) -> str:
        """Follows `url` through bb's consent page and Bitbucket's, allowing at both; the URL the browser is
        finally sent to (the client's redirect URI)."""
        for _ in range(10):
            if self.is_clients(url):
                return url
            on_bitbucket = url.startswith(self.stack)
            headers = {"authorization": self.login} if on_bitbucket else {"cookie": self.cookie()}
            status, got, text = request("GET", url, headers)
            if not on_bitbucket:
                self.keep(got)
            if status in (302, 303):
                url = urllib.parse.urljoin(url, header(got, "location"))
                continue
            if not on_bitbucket and status == 200 and 'name="login"' in text:
                # bb's own consent page: answered with the browser's cookie, from bb's origin.
                self.consent_pages.append(text)

                def field(n):
                    return re.search(rf'name="{n}" value="([^"]+)"', text).group(1)

                status, got, answer = post(
                    f"{self.public_url}/oauth/consent",
                    {"login": field("login"), "token": field("token"), "decision": "allow"},
                    {"cookie": self.cookie(), "origin": self.public_url},
                )
                self.keep(got)
                assert status == 303, f"bb's consent answered {status}: {answer}"
                url = urllib.parse.urljoin(url, header(got, "location"))
                continue
            consent = on_bitbucket and status == 200 and re.search(r'name="consent" value="([^"]+)"', text)
            assert consent, f"expected a redirect or a consent page, got {status} at {url}: {text}"
            status, got, answer = post(
                f"{self.stack}/rest/oauth2/latest/authorize",
                {"consent": consent.group(1), "decision": "allow"},
                {"authorization": self.login},
            )
            assert status == 302, f"Bitbucket's consent answered {status}: {answer}"
            url = urllib.parse.urljoin(url, header(got, "location"))
        raise AssertionError("too many redirects")


class MemoryStorage(TokenStorage):
    """The SDK's token storage, in memory."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class OAuthWithPythonSdk(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        bb, stack_bin = binary("BB_BIN", "bb"), binary("BB_STACK_BIN", "bb-stack")
        if not os.environ.get("BB_BIN") and not (bb.exists() and stack_bin.exists()):
            subprocess.run(["cargo", "build", "-q", "-p", "bb", "-p", "bb-stack"], cwd=ROOT, check=True)
        cls.children = []
        cls.addClassCleanup(cls.stop_children)

        stack = subprocess.Popen([str(stack_bin), "--port", "0"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        cls.children.append(stack)
        cls.stack = Lines(stack.stdout, "bb-stack").first()
        assert cls.stack.startswith("http://127.0.0.1:"), cls.stack
        cls.users = {u["slug"]: u for u in get_json(f"{cls.stack}/_stack")["users"]}

        port = free_port()
        cls.public_url = f"http://127.0.0.1:{port}"
        status, _, text = request(
            "POST",
            f"{cls.stack}/_stack/oauth/links",
            {"content-type": "application/json"},
            json.dumps({**LINK, "redirectUri": f"{cls.public_url}/oauth/callback"}).encode(),
        )
        assert status == 200, f"registering bb's incoming link: {status} {text}"

        env = {k: v for k, v in os.environ.items() if not k.startswith(("BB_HTTP_TOKEN", "BITBUCKET_"))}
        env.update(
            BB_OAUTH_CLIENT_ID=LINK["clientId"],
            BB_OAUTH_CLIENT_SECRET=LINK["clientSecret"],
            # The operator's own token: with --oauth, no call may be made with it.
            BITBUCKET_TOKEN=cls.users[OPERATOR]["token"],
        )
        args = ["ai", "mcp", "serve", "--http", f"127.0.0.1:{port}", "--host", cls.stack, "--oauth"]
        args += ["--public-url", cls.public_url, "--log-level", "info"]
        server = subprocess.Popen(
            [str(bb), *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
        )
        cls.children.append(server)
        cls.bb_log = Lines(server.stderr, "bb")
        first = cls.bb_log.first()
        assert first == f"{cls.public_url}/mcp", f"bb did not start: {first}"

    @classmethod
    def stop_children(cls):
        for child in reversed(cls.children):
            if child.poll() is None:
                child.terminate()
                try:
                    child.wait(timeout=25)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()

    def stack_log(self):
        return get_json(f"{self.stack}/_stack/log")["requests"]

    def token(self, form: dict):
        status, _, text = post(f"{self.public_url}/oauth/token", form)
        return status, json.loads(text)

    def test_confidential_client_logs_in_with_client_secret_post(self):
        request("DELETE", f"{self.stack}/_stack/requests")
        asyncio.run(asyncio.wait_for(self.login_and_call(), WAIT))

    async def login_and_call(self):
        storage = MemoryStorage()
        browser = Browser(self.public_url, self.stack, PERSON, self.users[PERSON]["password"])
        redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
        landed: list[str] = []
        sent: list[httpx.Request] = []
        registered: list[tuple[int, dict]] = []  # bb's registration answers, as sent

        async def redirect_handler(authorization_url: str) -> None:
            self.assertTrue(authorization_url.startswith(f"{self.public_url}/"), authorization_url)
            landed.append(await anyio.to_thread.run_sync(browser.go, authorization_url))

        async def callback_handler() -> tuple[str, str | None]:
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(landed[-1]).query)
            self.assertEqual(query.get("iss"), [self.public_url], "RFC 9207: the issuer rides on the redirect")
            return query["code"][0], query["state"][0]

        oauth = OAuthClientProvider(
            server_url=f"{self.public_url}/mcp",
            client_metadata=OAuthClientMetadata(
                client_name=CLIENT_NAME,
                redirect_uris=[redirect_uri],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method="client_secret_post",
            ),
            storage=storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
            timeout=WAIT,
        )

        async def record(req: httpx.Request) -> None:
            sent.append(req)

        async def answered(r: httpx.Response) -> None:
            if r.request.url.path == "/oauth/register":
                registered.append((r.status_code, json.loads(await r.aread())))

        hooks = {"request": [record], "response": [answered]}
        http_client = httpx.AsyncClient(auth=oauth, timeout=httpx.Timeout(WAIT), event_hooks=hooks)
        async with http_client:
            async with streamable_http_client(f"{self.public_url}/mcp", http_client=http_client) as (read, write, _):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    self.assertEqual(init.serverInfo.name, "bb")
                    tools = await session.list_tools()
                    names = [t.name for t in tools.tools]
                    self.assertIn("list_pr_comments", names)
                    result = await session.call_tool("list_pr_comments", PR)
                    text = "\n".join(getattr(c, "text", "") for c in result.content)
                    self.assertFalse(result.isError, text)

        # The person saw bb's consent page naming the client.
        self.assertEqual(len(browser.consent_pages), 1)
        self.assertIn(CLIENT_NAME, browser.consent_pages[0])

        # Registration: the SDK asked for client_secret_post; bb's answer carried a secret and the method.
        def form_of(req):
            return dict(urllib.parse.parse_qsl(req.content.decode()))

        registrations = [r for r in sent if r.url.path == "/oauth/register"]
        self.assertEqual(len(registrations), 1)
        self.assertEqual(json.loads(registrations[0].content)["token_endpoint_auth_method"], "client_secret_post")
        [(status, answer)] = registered
        self.assertEqual(status, 201, answer)
        self.assertTrue(answer.get("client_secret"), "registration issued a secret")
        self.assertEqual(answer.get("token_endpoint_auth_method"), "client_secret_post")
        info = storage.client_info  # what the SDK kept of that answer, and logs in with
        self.assertEqual((info.client_id, info.client_secret), (answer["client_id"], answer["client_secret"]))
        self.assertEqual(info.token_endpoint_auth_method, "client_secret_post")

        # The token exchange sent the secret in the form (not in a Basic header).
        exchanges = [form_of(r) for r in sent if r.url.path == "/oauth/token"]
        self.assertEqual([f["grant_type"] for f in exchanges], ["authorization_code"])
        self.assertEqual(exchanges[0].get("client_secret"), info.client_secret)
        self.assertEqual(exchanges[0].get("client_id"), info.client_id)
        token_request = next(r for r in sent if r.url.path == "/oauth/token")
        self.assertNotIn("authorization", token_request.headers)
        tokens = storage.tokens
        self.assertTrue(tokens and tokens.access_token and tokens.refresh_token)
        self.assertFalse(tokens.access_token.startswith("bbat-"), "bb's own token, never Bitbucket's")

        # ... and bb holds the client to it: its refresh token is useless without the secret.
        refresh = {"grant_type": "refresh_token", "client_id": info.client_id, "refresh_token": tokens.refresh_token}
        status, body = self.token(refresh)
        self.assertEqual((status, body.get("error")), (401, "invalid_client"), body)
        status, body = self.token({**refresh, "client_secret": info.client_secret + "x"})
        self.assertEqual((status, body.get("error")), (401, "invalid_client"), body)
        status, body = self.token({**refresh, "client_secret": info.client_secret})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["token_type"], "Bearer")
        self.assertNotEqual(body["refresh_token"], tokens.refresh_token, "a refresh gives a new pair")

        # Bitbucket was called as the person, never as the operator.
        pr_path = "/rest/api/latest/projects/BB/repos/api/pull-requests/2"
        log = self.stack_log()
        mine = [q for q in log if q["path"].startswith(pr_path)]
        self.assertTrue(mine, "the call read the pull request")
        self.assertEqual({q["user"] for q in mine}, {PERSON}, mine)
        self.assertNotIn(OPERATOR, {q["user"] for q in log}, log)

        # No secret reaches bb's log.
        bb_log = self.bb_log.text()
        for secret in (LINK["clientSecret"], info.client_secret, tokens.access_token, tokens.refresh_token):
            self.assertNotIn(secret, bb_log)
        self.assertNotRegex(bb_log, r"bbat-|bbrt-")


if __name__ == "__main__":
    unittest.main()
