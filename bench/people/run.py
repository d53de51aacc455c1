#!/usr/bin/env python3
"""Issue 58's people bench: N people, each with their own Bitbucket token, session and loopback address, each with a
live pull request card open and a model call every 30 s, against the stand-in with Bitbucket's rate limit on.
Figures, not a test.

For each topology x latency x number of people, a fresh stand-in (release) serves the committed seed plus N users
(`p0001` ... with tokens `bench-token-0001` ...), with Bitbucket Data Center's per-user rate limit on at its admin
page's defaults (bucket 60, refill 5 a second, `POST /_stack/rate-limit`) and, for the 100 ms rows, 100 ms added to
every Bitbucket answer (`STACK_LATENCY_MS=100` in the stand-in's environment). A fresh bb (release) serves
Streamable HTTP with `--per-user-token-header X-Bitbucket-Token` and its rate limit at its default (on):

  direct   one bb on 127.0.0.1, people connecting straight to it;
  haproxy  two bb replicas sharing the rate budget in a redis-server (`--rate-store redis://127.0.0.1:PORT
           --replicas 2`) behind haproxy (round robin, sticky by `Mcp-Session-Id`, `option forwardfor`), each bb
           with BB_PROXY_ARGS (by default `--trusted-proxy 127.0.0.1` when `bb ai mcp serve --help` offers it).

Each person, ramped in over RAMP_S seconds, connects from an address of their own (127.1.x.y) and speaks MCP
2025-11-25 over HTTP/1.1 keep-alive connections (answers as JSON or `text/event-stream` alike): `initialize` with the
MCP Apps UI extension (a refused one, 503 or 429, is tried again after its `Retry-After`, as a client would, and
counted), `notifications/initialized`, `show` a pull request card (BB/api #1, PR=KEY/repo/id to change it), then
`refresh_view` at every `next` bb answers, and `get_pull_request` on the same pull request every MODEL_EVERY_S
seconds (the model). A connection bb closed while idle is opened again and the request sent again (counted as a
reconnect, not an error); a session bb no longer knows (404) is initialized again (counted as an error).

Once everyone has a card (or 60 s after the ramp, whichever is first), the steady window of DURATION_S seconds
begins; the figures are the window's:

  live views         people whose card's last refresh succeeded (not deferred, not an error) and is not overdue,
                     at the window's end (and the least seen, sampled every 5 s)
  bb RSS peak        VmHWM and VmRSS sampled every 0.5 s from /proc/PID/status (per replica behind haproxy)
  bb CPU s/min       utime + stime from /proc/PID/stat over the window (the replicas' sum)
  fds                /proc/PID/fd counted every 0.5 s, the peak
  Bitbucket req/min  the stand-in's `/_stack/requests` counters (reset at the window's start), read every second:
                     the per-second peak over the mean is the burstiness (from `/_stack/log`'s startMs in 1 s
                     buckets instead when the log, which keeps the last 10,000, covers the window); and how many
                     the stand-in's rate limit refused (429)
  p50 / p99          per call kind: `initialize` (every attempt answered, the ramp included; `show` likewise, in
                     the notes), `refresh_view`, the model call (`get_pull_request`); each from the request's first
                     byte sent to its answer's last
  errors             by kind, from the first initialize to the window's end (a person refused during the ramp
                     met it): HTTP status, JSON-RPC error code, a tool's `isError`, timeouts (REQUEST_TIMEOUT_S,
                     30 s), connections reset or refused

It prints one Markdown table per topology x latency, the machine line (cores, RAM), the bench's own CPU (it shares
the cores with bb), the "done when" checks of the issue against the figures, and writes everything to OUT
(bench/people/last.json by default, git-ignored).

Run from the repository: `python3 bench/people/run.py` (builds `cargo build --release -p bb -p bb-stack` first unless
BB_BIN and STACK_BIN name the binaries). Knobs: PEOPLE=10,100,300,1000  DURATION_S=180  RAMP_S=20  LATENCY=0,100
TOPOLOGY=direct,haproxy  MODEL_EVERY_S=30  REQUEST_TIMEOUT_S=30  PR=BB/api/1  BB_ARGS (added to every bb)
BB_PROXY_ARGS (added to each replica behind haproxy)  OUT. Every wait is bounded; only loopback addresses are used.
The process raises its own file limit to the hard limit, and starts bb, the stand-in, haproxy and redis with it too.
"""

import asyncio
import json
import os
import random
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UI = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
VERSION = "2025-11-25"
TOKEN_HEADER = "X-Bitbucket-Token"


def env_list(name, default):
    return [x.strip() for x in os.environ.get(name, default).split(",") if x.strip()]


PEOPLE = [int(x) for x in env_list("PEOPLE", "10,100,300,1000")]
DURATION_S = float(os.environ.get("DURATION_S", "180"))
RAMP_S = float(os.environ.get("RAMP_S", "20"))
LATENCY = [int(x) for x in env_list("LATENCY", "0,100")]
TOPOLOGY = env_list("TOPOLOGY", "direct,haproxy")
MODEL_EVERY_S = float(os.environ.get("MODEL_EVERY_S", "30"))
REQUEST_TIMEOUT_S = float(os.environ.get("REQUEST_TIMEOUT_S", "30"))
SETTLE_S = 60.0  # after the ramp, how long to wait for everyone's card before the window starts anyway
OUT = os.environ.get("OUT", os.path.join(ROOT, "bench/people/last.json"))
_pr = os.environ.get("PR", "BB/api/1").split("/")
PR = {"project": _pr[0], "repo": _pr[1], "pr_id": int(_pr[2])}
CARD = {"kind": "pull_request", **PR}


def raise_file_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def child_limits():
    """preexec_fn: the child gets the hard file limit as its soft one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def machine():
    cores = os.cpu_count()
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    ram = 0
    try:
        with open("/proc/meminfo") as f:
            ram = next(int(line.split()[1]) for line in f if line.startswith("MemTotal")) / 1024 / 1024
    except (OSError, StopIteration):
        pass
    try:
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
    except OSError:
        load = "?"
    return {"cores": cores, "cpu": model, "ram_gib": round(ram, 1), "loadavg_at_start": load}


def binaries():
    bb, stack = os.environ.get("BB_BIN"), os.environ.get("STACK_BIN")
    if not (bb and stack):
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "bb", "-p", "bb-stack"], cwd=ROOT, check=True,
                       timeout=3600)
        bb = os.path.join(target, "release/bb")
        stack = os.path.join(target, "release/bb-stack")
    return bb, stack


def token(i):
    return f"bench-token-{i:04}"


def seed_file(people, workdir):
    with open(os.path.join(ROOT, "tools/stack/seed/seed.json")) as f:
        seed = json.load(f)
    first_id = max(u["id"] for u in seed["users"]) + 1
    for i in range(people):
        seed["users"].append({
            "slug": f"p{i:04}", "id": first_id + i, "displayName": f"Person {i:04}",
            "email": f"p{i:04}@example.invalid", "password": f"p{i:04}-password", "token": token(i),
            "colour": f"#{(i * 2654435761) & 0xffffff:06x}",
        })
    path = os.path.join(workdir, f"seed-{people}.json")
    with open(path, "w") as f:
        json.dump(seed, f)
    return path


def address(i):
    """Person i's own loopback address: 127.1.x.y."""
    return f"127.1.{i // 250}.{i % 250 + 1}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(p):
    if p is None or p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(timeout=30)


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else None


# ---------------------------------------------------------------------------------------------------------------
# Processes: the stand-in, bb, redis-server, haproxy


def start_stack(stack, seed, latency_ms):
    env = dict(os.environ, STACK_LATENCY_MS=str(latency_ms))
    s = subprocess.Popen([stack, "--port", "0", "--data", seed], stdout=subprocess.PIPE, text=True, env=env,
                         preexec_fn=child_limits)
    ready = {}
    t = threading.Thread(target=lambda: ready.update(base=s.stdout.readline().strip(),
                                                     token=s.stdout.readline().strip()), daemon=True)
    t.start()
    t.join(60)
    if not ready.get("base", "").startswith("http"):
        stop(s)
        raise SystemExit("the stand-in did not start")
    threading.Thread(target=s.stdout.read, daemon=True).start()
    return s, ready["base"]


def start_bb(bb, base, extra):
    b = subprocess.Popen([bb, "ai", "mcp", "serve", "--http", "127.0.0.1:0", "--host", base,
                          "--per-user-token-header", TOKEN_HEADER, "--log-level", "error", *extra,
                          *os.environ.get("BB_ARGS", "").split()],
                         stderr=subprocess.PIPE, text=True, preexec_fn=child_limits)
    got = {}
    t = threading.Thread(target=lambda: got.update(url=b.stderr.readline().strip()), daemon=True)
    t.start()
    t.join(60)
    url = got.get("url", "")
    if "//" not in url:
        stop(b)
        raise SystemExit(f"bb did not start: {url!r}")
    tail = []

    def drain():
        for line in b.stderr:
            tail.append(line.rstrip())
            del tail[:-20]

    threading.Thread(target=drain, daemon=True).start()
    host, port = url.split("//")[1].split("/")[0].rsplit(":", 1)
    b.log_tail = tail
    return b, host, int(port)


def wait_port(port, what, proc, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited ({proc.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{what} did not listen on 127.0.0.1:{port} within {timeout} s")


def start_redis(port):
    exe = shutil.which("redis-server")
    if not exe:
        raise SystemExit("the haproxy topology needs redis-server (apt-get install redis-server)")
    r = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=child_limits)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return r
        except OSError:
            pass
        time.sleep(0.1)
    stop(r)
    raise SystemExit("redis-server did not answer PING within 30 s")


def start_haproxy(lb, replicas, workdir, maxconn):
    exe = shutil.which("haproxy")
    if not exe:
        raise SystemExit("the haproxy topology needs haproxy (apt-get install haproxy)")
    servers = "".join(f"  server r{i} 127.0.0.1:{port}\n" for i, port in enumerate(replicas))
    config = os.path.join(workdir, f"haproxy-{lb}.cfg")
    with open(config, "w") as f:
        f.write(
            f"global\n  maxconn {maxconn}\n"
            "defaults\n  mode http\n  option forwardfor\n  timeout connect 5s\n  timeout client 120s\n"
            "  timeout server 120s\n  timeout http-keep-alive 75s\n"
            f"frontend mcp\n  bind 127.0.0.1:{lb}\n  default_backend bb\n"
            "backend bb\n  balance roundrobin\n"
            "  stick-table type string len 64 size 200k expire 60m\n"
            "  stick match req.hdr(mcp-session-id)\n"
            "  stick store-response res.hdr(mcp-session-id)\n"
            f"{servers}")
    h = subprocess.Popen([exe, "-db", "-f", config], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         preexec_fn=child_limits)
    try:
        wait_port(lb, "haproxy", h)
    except SystemExit:
        stop(h)
        print(h.stderr.read()[-2000:], file=sys.stderr)
        raise
    threading.Thread(target=h.stderr.read, daemon=True).start()
    return h


def proxy_args(bb):
    given = os.environ.get("BB_PROXY_ARGS")
    if given is not None:
        return given.split()
    try:
        help_text = subprocess.run([bb, "ai", "mcp", "serve", "--help"], capture_output=True, text=True,
                                   timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        help_text = ""
    return ["--trusted-proxy", "127.0.0.1"] if "--trusted-proxy" in help_text else []


# ---------------------------------------------------------------------------------------------------------------
# /proc


class Proc:
    """A process's RSS, fds and CPU seconds, sampled."""

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self, pid):
        self.pid, self.rss_peak, self.hwm, self.fds_peak = pid, 0.0, 0.0, 0

    def cpu(self):
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / self.TICK
        except (OSError, IndexError, ValueError):
            return 0.0

    def sample(self):
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        self.rss_peak = max(self.rss_peak, int(line.split()[1]) / 1024)
                    elif line.startswith("VmHWM:"):
                        self.hwm = max(self.hwm, int(line.split()[1]) / 1024)
            self.fds_peak = max(self.fds_peak, len(os.listdir(f"/proc/{self.pid}/fd")))
        except OSError:
            pass

    def peak(self):
        return max(self.rss_peak, self.hwm)


# ---------------------------------------------------------------------------------------------------------------
# A small HTTP/1.1 client on asyncio, one connection per request in flight, kept alive


class Closed(Exception):
    """The connection closed before any byte of the answer: a kept-alive connection the server closed meanwhile."""


class Conn:
    def __init__(self, reader, writer):
        self.reader, self.writer, self.used = reader, writer, 0

    def close(self):
        try:
            self.writer.close()
        except Exception:
            pass


async def read_answer(reader):
    """(status, headers, body, keep) of one answer."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            raise Closed()
        raise ConnectionResetError("the connection closed inside an answer's head")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
    keep = headers.get("connection", "").lower() != "close"
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass
                break
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        body = b"".join(parts)
    elif "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif status in (204, 304) or 100 <= status < 200:
        body = b""
    else:
        body = await reader.read()
        keep = False
    return status, headers, body, keep


def jsonrpc_of(headers, body, want_id):
    """The JSON-RPC message answering `want_id` in a JSON or SSE body, or None."""
    if headers.get("content-type", "").startswith("text/event-stream"):
        found = None
        for event in body.decode("utf-8", "replace").replace("\r\n", "\n").split("\n\n"):
            data = "\n".join(line[5:].lstrip() for line in event.splitlines() if line.startswith("data:"))
            if not data:
                continue
            try:
                message = json.loads(data)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == want_id:
                found = message
        return found
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


class Target:
    """Where people connect: host and port, and what goes in `Host`."""

    def __init__(self, host, port):
        self.host, self.port = host, port


# ---------------------------------------------------------------------------------------------------------------
# One run


class Run:
    def __init__(self, people, target):
        self.people, self.target = people, target
        self.samples = {}  # kind -> [(t_start, seconds)]
        self.errors = {}  # kind -> count
        self.window = None  # (start, end) on time.monotonic()
        self.reconnects = 0
        self.to_session = []  # seconds from a person's first initialize to their session
        self.deferred = 0
        self.refreshes = 0
        self.stopping = False

    def error(self, kind):
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def in_window(self, t):
        return self.window is not None and self.window[0] <= t < self.window[1]

    def counted(self, t):
        """Errors count from the start (a refused initialize during the ramp is an error a person met) to the end."""
        return self.window is None or t < self.window[1]


class Person:
    def __init__(self, run, i):
        self.run, self.i = run, i
        self.addr = address(i)
        self.token = token(i)
        self.idle = []
        self.session = None
        self.next_id = 0
        self.fingerprint = None
        self.card = False
        self.last_refresh = None  # (when, ok, next seconds)

    async def connect(self):
        t = self.run.target
        r, w = await asyncio.open_connection(t.host, t.port, local_addr=(self.addr, 0), limit=1 << 20)
        return Conn(r, w)

    async def http(self, body, session=True):
        """POST /mcp on an idle connection of this person's (or a new one): (status, headers, body, seconds).
        A kept-alive connection found closed is opened again and the request sent again, once."""
        t = self.run.target
        head = (f"POST /mcp HTTP/1.1\r\nHost: {t.host}:{t.port}\r\nContent-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\n{TOKEN_HEADER}: {self.token}\r\n"
                f"Content-Length: {len(body)}\r\n")
        if session and self.session:
            head += f"Mcp-Session-Id: {self.session}\r\nMCP-Protocol-Version: {VERSION}\r\n"
        data = head.encode() + b"\r\n" + body
        for attempt in range(2):
            conn = self.idle.pop() if self.idle else None
            reused = conn is not None
            if conn is None:
                conn = await self.connect()
            t0 = time.monotonic()
            try:
                conn.writer.write(data)
                await conn.writer.drain()
                status, headers, answer, keep = await read_answer(conn.reader)
            except (Closed, ConnectionResetError, BrokenPipeError):
                conn.close()
                if reused and attempt == 0:
                    self.run.reconnects += 1
                    continue
                raise
            except BaseException:
                conn.close()
                raise
            seconds = time.monotonic() - t0
            conn.used += 1
            if keep:
                self.idle.append(conn)
            else:
                conn.close()
            return status, headers, answer, seconds, t0
        raise ConnectionResetError("closed twice")

    async def rpc(self, kind, method, params, notification=False):
        """One JSON-RPC request; (message or None, t0). Errors are counted under `kind`; never raises but
        CancelledError."""
        self.next_id += 1
        # This request's own id: the person's refreshes and model calls run at once, so the counter moves on.
        rid = self.next_id
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notification:
            msg["id"] = rid
        body = json.dumps(msg).encode()
        started = time.monotonic()
        try:
            status, headers, answer, seconds, t0 = await asyncio.wait_for(
                self.http(body, session=method != "initialize"), REQUEST_TIMEOUT_S)
        except asyncio.TimeoutError:
            if self.run.counted(started):
                self.run.error(f"{kind}: timeout")
            self.drop_connections()
            return None, None
        except (ConnectionResetError, BrokenPipeError, Closed):
            if self.run.counted(started):
                self.run.error(f"{kind}: connection reset")
            return None, None
        except ConnectionRefusedError:
            if self.run.counted(started):
                self.run.error(f"{kind}: connection refused")
            return None, None
        except OSError as e:
            if self.run.counted(started):
                self.run.error(f"{kind}: {e.__class__.__name__} {e.errno}")
            return None, None
        if status == 200 and method == "initialize":
            self.session = headers.get("mcp-session-id") or self.session
        if notification:
            if status not in (200, 202) and self.run.counted(t0):
                self.run.error(f"{kind}: HTTP {status}")
            return {"status": status}, t0
        if status != 200:
            if self.run.counted(t0):
                self.run.error(f"{kind}: HTTP {status}")
            return {"status": status, "retry_after": headers.get("retry-after")}, t0
        message = jsonrpc_of(headers, answer, rid)
        if kind in ("initialize", "show") or self.run.in_window(t0):
            self.run.samples.setdefault(kind, []).append((t0, seconds))
        if message is None:
            if self.run.counted(t0):
                self.run.error(f"{kind}: no JSON-RPC answer")
            return None, t0
        if "error" in message:
            if self.run.counted(t0):
                self.run.error(f"{kind}: JSON-RPC {message['error'].get('code')}")
        elif (message.get("result") or {}).get("isError"):
            if self.run.counted(t0):
                self.run.error(f"{kind}: isError")
        message["status"] = 200
        return message, t0

    def drop_connections(self):
        for c in self.idle:
            c.close()
        self.idle.clear()

    async def initialize(self, deadline):
        """A session, trying again after a refusal's Retry-After (every attempt counted), until `deadline`."""
        first = time.monotonic()
        self.session = None
        while time.monotonic() < deadline and not self.run.stopping:
            m, _ = await self.rpc("initialize", "initialize", {
                "protocolVersion": VERSION, "capabilities": UI,
                "clientInfo": {"name": "bench-people", "version": "1"}})
            if m and m.get("status") == 200 and "result" in m and self.session:
                await self.rpc("initialized", "notifications/initialized", None, notification=True)
                self.run.to_session.append(time.monotonic() - first)
                return True
            wait = 1.0
            if m and m.get("retry_after"):
                try:
                    wait = max(0.1, min(30.0, float(m["retry_after"])))
                except ValueError:
                    pass
            await asyncio.sleep(wait * random.uniform(1.0, 1.2))
        return False

    def view_of(self, m):
        result = (m or {}).get("result") or {}
        return ((result.get("_meta") or {}).get("bb/view")) or {}, bool(result.get("isError"))

    async def open_card(self, deadline):
        while time.monotonic() < deadline and not self.run.stopping:
            if not self.session and not await self.initialize(deadline):
                return None
            m, _ = await self.rpc("show", "tools/call", {"name": "show", "arguments": CARD})
            view, is_error = self.view_of(m)
            if m and m.get("status") == 404:
                self.session = None
                continue
            if m and "result" in m and not is_error and view.get("fingerprint"):
                self.fingerprint = view["fingerprint"]
                self.card = True
                return view.get("next")
            await asyncio.sleep(5)
        return None

    async def live(self, deadline):
        """Opens the card, then refreshes it at every next; the model calls beside it."""
        nxt = await self.open_card(deadline)
        if nxt is None:
            return
        model = asyncio.create_task(self.model(deadline))
        try:
            while time.monotonic() < deadline and not self.run.stopping:
                if nxt is None:
                    return  # the view says it will not change again
                await asyncio.sleep(min(nxt / 1000, max(0.0, deadline - time.monotonic())))
                if time.monotonic() >= deadline:
                    return
                m, t0 = await self.rpc("refresh_view", "tools/call", {
                    "name": "refresh_view", "arguments": {"show": CARD, "fingerprint": self.fingerprint}})
                if m and m.get("status") == 404:
                    self.card, self.last_refresh = False, (time.monotonic(), False, 5)
                    nxt = await self.open_card(deadline)
                    continue
                view, is_error = self.view_of(m)
                ok = bool(m and "result" in m and not is_error)
                deferred = bool(view.get("deferred"))
                if self.run.in_window(t0 or 0):
                    self.run.refreshes += 1
                    self.run.deferred += deferred
                if view.get("fingerprint"):
                    self.fingerprint = view["fingerprint"]
                nxt = view.get("next", 5000) if (ok or view) else 5000
                self.last_refresh = (time.monotonic(), ok and not deferred, (nxt or 0) / 1000)
        finally:
            model.cancel()

    async def model(self, deadline):
        period = MODEL_EVERY_S
        at = time.monotonic() + random.uniform(0, period)
        while not self.run.stopping:
            await asyncio.sleep(max(0.0, at - time.monotonic()))
            if time.monotonic() >= deadline:
                return
            m, _ = await self.rpc("model", "tools/call", {"name": "get_pull_request", "arguments": PR})
            if m and m.get("status") == 404:
                self.session = None
                await self.initialize(deadline)
            at = max(at + period, time.monotonic())

    def is_live(self, now):
        if not self.card or self.last_refresh is None:
            return self.card  # the card was opened and its first refresh is not due yet
        when, ok, nxt = self.last_refresh
        return ok and now - when <= 2 * nxt + 5


class StackClient:
    """The stand-in's control API on one kept-alive connection (from 127.0.0.1)."""

    def __init__(self, base):
        self.host, port = base.split("//")[1].split("/")[0].rsplit(":", 1)
        self.port = int(port)
        self.conn = None

    async def request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else b""
        for attempt in range(2):
            if self.conn is None:
                self.conn = Conn(*await asyncio.open_connection(self.host, self.port, limit=1 << 24))
            head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(data)}\r\n\r\n")
            try:
                self.conn.writer.write(head.encode() + data)
                await self.conn.writer.drain()
                status, headers, answer, keep = await asyncio.wait_for(read_answer(self.conn.reader), 60)
            except (Closed, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                self.conn = None
                if attempt == 0:
                    continue
                raise
            if not keep:
                self.conn.close()
                self.conn = None
            return status, json.loads(answer) if answer else None
        return 0, None

    def close(self):
        if self.conn:
            self.conn.close()


async def run_people(people, target, base, procs):
    run = Run(people, target)
    control = StackClient(base)
    status, _ = await control.request("POST", "/_stack/rate-limit", {"capacity": 60, "refill": 5})
    if status != 200:
        raise SystemExit(f"the stand-in's rate limit: HTTP {status}")
    persons = [Person(run, i) for i in range(people)]
    t_start = time.monotonic()
    hard_end = t_start + RAMP_S + SETTLE_S + DURATION_S + 30

    async def one(p, delay):
        await asyncio.sleep(delay)
        await p.live(hard_end)

    tasks = [asyncio.create_task(one(p, RAMP_S * i / people)) for i, p in enumerate(persons)]
    # Everyone has a card, or the ramp plus SETTLE_S has passed.
    settle = t_start + RAMP_S + SETTLE_S
    while time.monotonic() < settle:
        if time.monotonic() >= t_start + RAMP_S and all(p.card for p in persons):
            break
        await asyncio.sleep(0.25)
    connected = sum(p.card for p in persons)
    ramp_took = time.monotonic() - t_start

    # The window.
    await control.request("DELETE", "/_stack/requests")
    await control.request("GET", "/rest/api/latest/application-properties?bench=window-start")
    cpu0 = {pid: pr.cpu() for pid, pr in procs.items()}
    self_cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    w0 = time.monotonic()
    run.window = (w0, w0 + DURATION_S)
    counts = []  # (t, total, rateLimited)
    live_seen = []
    next_sample, next_count, next_live = w0, w0, w0
    while time.monotonic() < run.window[1]:
        now = time.monotonic()
        if now >= next_sample:
            for pr in procs.values():
                pr.sample()
            next_sample += 0.5
        if now >= next_count:
            try:
                s, body = await control.request("GET", "/_stack/requests")
                if s == 200:
                    counts.append((time.monotonic(), body["total"], body.get("rateLimited", 0)))
            except (OSError, asyncio.TimeoutError, ValueError):
                pass
            next_count += 1.0
        if now >= next_live:
            live_seen.append(sum(p.is_live(now) for p in persons))
            next_live += 5.0
        await asyncio.sleep(max(0.0, min(next_sample, next_count, next_live) - time.monotonic()))
    w1 = time.monotonic()
    live_end = sum(p.is_live(w1) for p in persons)
    cpu1 = {pid: pr.cpu() for pid, pr in procs.items()}
    self_cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    await control.request("GET", "/rest/api/latest/application-properties?bench=window-end")
    s, final = await control.request("GET", "/_stack/requests")
    run.stopping = True
    for t in tasks:
        t.cancel()
    await asyncio.wait(tasks, timeout=30)
    for p in persons:
        p.drop_connections()
    for pr in procs.values():
        pr.sample()
    s, log = await control.request("GET", "/_stack/log")
    control.close()

    minutes = (w1 - w0) / 60
    # Bitbucket requests: the log's startMs when it covers the window, else the counters read every second.
    entries = (log or {}).get("requests", [])
    marks = {e.get("query", ""): e["startMs"] for e in entries if "bench=window" in (e.get("query") or "")}
    start_q = next((q for q in marks if "window-start" in q), None)
    end_q = next((q for q in marks if "window-end" in q), None)
    if start_q and end_q:
        a, b = marks[start_q], marks[end_q]
        inside = [e for e in entries if a < e["startMs"] < b and "bench=window" not in (e.get("query") or "")]
        buckets = [0] * max(1, int((b - a) // 1000) + 1)
        for e in inside:
            buckets[int((e["startMs"] - a) // 1000)] += 1
        total = len(inside)
        source = "log"
        rate_limited = sum(1 for e in inside if e.get("status") == 429)
    else:
        buckets = [b[1] - a[1] for a, b in zip(counts, counts[1:])]
        total = counts[-1][1] - counts[0][1] if len(counts) > 1 else 0
        source = "counters"
        rate_limited = counts[-1][2] - counts[0][2] if len(counts) > 1 else 0
    mean = (sum(buckets) / len(buckets)) if buckets else 0
    cpu = sum(cpu1[pid] - cpu0[pid] for pid in procs) / minutes
    self_cpu = ((self_cpu1.ru_utime + self_cpu1.ru_stime) - (self_cpu0.ru_utime + self_cpu0.ru_stime)) / minutes

    def lat(kind):
        xs = [s for _, s in run.samples.get(kind, [])]
        return {"n": len(xs), "p50_ms": ms(pct(xs, 0.5)), "p99_ms": ms(pct(xs, 0.99)), "max_ms": ms(max(xs, default=None))}

    return {
        "people": people,
        "connected_before_window": connected,
        "ramp_and_settle_s": round(ramp_took, 1),
        "window_s": round(w1 - w0, 1),
        "live_views_end": live_end,
        "live_views_min": min(live_seen, default=0),
        "bb": [{"pid": pid, "rss_peak_mib": round(pr.peak(), 1), "fds_peak": pr.fds_peak,
                "cpu_s_per_min": round((cpu1[pid] - cpu0[pid]) / minutes, 2)} for pid, pr in procs.items()],
        "bb_cpu_s_per_min": round(cpu, 2),
        "bench_cpu_s_per_min": round(self_cpu, 2),
        "bitbucket": {"requests": total, "per_min": round(total / minutes), "source": source,
                      "peak_per_s": max(buckets, default=0), "mean_per_s": round(mean, 1),
                      "burstiness": round(max(buckets, default=0) / mean, 2) if mean else None,
                      "rate_limited_429": rate_limited},
        "latency": {"initialize": lat("initialize"), "show": lat("show"), "refresh_view": lat("refresh_view"),
                    "model": lat("model")},
        "time_to_session": {"p50_ms": ms(pct(run.to_session, 0.5)), "p99_ms": ms(pct(run.to_session, 0.99))},
        "refreshes": run.refreshes,
        "deferred_refreshes": run.deferred,
        "reconnects": run.reconnects,
        "errors": dict(sorted(run.errors.items())),
        "errors_total": sum(run.errors.values()),
    }


def ms(seconds):
    return None if seconds is None else round(seconds * 1000, 1)


# ---------------------------------------------------------------------------------------------------------------
# Rows, tables, checks


def one_row(bb, stack, topology, latency, people, workdir, proxy):
    seed = seed_file(people, workdir)
    s, base = start_stack(stack, seed, latency)
    started = []
    try:
        if topology == "direct":
            b, host, port = start_bb(bb, base, [])
            started.append(b)
            target = Target(host, port)
        else:
            redis_port, lb = free_port(), free_port()
            started.append(start_redis(redis_port))
            ports = []
            for _ in range(2):
                b, _, port = start_bb(bb, base, ["--rate-store", f"redis://127.0.0.1:{redis_port}", "--replicas", "2",
                                                 "--allow-host", f"127.0.0.1:{lb}", *proxy])
                started.append(b)
                ports.append(port)
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            maxconn = max(256, min(20000, (hard if hard != resource.RLIM_INFINITY else 40000) // 2 - 200))
            started.append(start_haproxy(lb, ports, workdir, maxconn))
            target = Target("127.0.0.1", lb)
        bbs = {p.pid: Proc(p.pid) for p in started if "bb" == os.path.basename(p.args[0])}
        stack_proc = Proc(s.pid)
        c0 = stack_proc.cpu()
        result = asyncio.run(run_people(people, target, base, bbs))
        result["stack_cpu_s_per_min"] = round((stack_proc.cpu() - c0) / (result["window_s"] / 60), 2)
        for p in started:
            if p.poll() is not None and os.path.basename(p.args[0]) == "bb":
                result.setdefault("exited", []).append({"code": p.returncode, "log": getattr(p, "log_tail", [])})
        return {"topology": topology, "latency_ms": latency, **result}
    finally:
        for p in reversed(started):
            stop(p)
        stop(s)


def fmt_ms(v):
    if v is None:
        return "–"
    return f"{v / 1000:.2f} s" if v >= 1000 else f"{v:.0f} ms"


def table(rows):
    out = ["| people | live views | bb RSS peak | bb CPU s/min | Bitbucket req/min | initialize p50 / p99 "
           "| refresh p50 / p99 | model p99 | errors |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        rss = " / ".join(f"{b['rss_peak_mib']:.0f}" for b in r["bb"]) + " MiB"
        fds = " / ".join(str(b["fds_peak"]) for b in r["bb"])
        bbq = r["bitbucket"]
        lat = r["latency"]
        live = f"{r['live_views_end']} (min {r['live_views_min']})"
        out.append(
            f"| {r['people']:,} | {live} | {rss} ({fds} fds) | {r['bb_cpu_s_per_min']:.1f} "
            f"| {bbq['per_min']:,} (peak/mean {bbq['burstiness'] or 0:.1f}, {bbq['rate_limited_429']} × 429) "
            f"| {fmt_ms(lat['initialize']['p50_ms'])} / {fmt_ms(lat['initialize']['p99_ms'])} "
            f"| {fmt_ms(lat['refresh_view']['p50_ms'])} / {fmt_ms(lat['refresh_view']['p99_ms'])} "
            f"| {fmt_ms(lat['model']['p99_ms'])} | {r['errors_total']:,} |")
    return "\n".join(out)


def notes(rows):
    out = []
    for r in rows:
        extra = (f"  {r['people']:,} people: {r['connected_before_window']} had a card before the window "
                 f"({r['ramp_and_settle_s']} s); {r['refreshes']:,} refreshes in the window, "
                 f"{r['deferred_refreshes']:,} deferred; {r['reconnects']:,} reconnects; "
                 f"time to a session p50/p99 {fmt_ms(r['time_to_session']['p50_ms'])} / "
                 f"{fmt_ms(r['time_to_session']['p99_ms'])}; show p99 {fmt_ms(r['latency']['show']['p99_ms'])}; "
                 f"Bitbucket {r['bitbucket']['peak_per_s']}/s peak, {r['bitbucket']['mean_per_s']}/s mean "
                 f"({r['bitbucket']['source']}); CPU s/min: stand-in {r['stack_cpu_s_per_min']}, this bench "
                 f"{r['bench_cpu_s_per_min']}")
        out.append(extra)
        if r["errors"]:
            out.append("    errors: " + ", ".join(f"{k} × {v}" for k, v in r["errors"].items()))
        for e in r.get("exited", []):
            out.append(f"    a bb exited with {e['code']}: " + " | ".join(e["log"][-3:]))
    return "\n".join(out)


def checks(rows):
    def find(topology, latency, people):
        return next((r for r in rows if r["topology"] == topology and r["latency_ms"] == latency
                     and r["people"] == people), None)

    out = []

    def check(what, row, ok):
        out.append({"check": what, "result": "not run" if row is None else ("met" if ok(row) else "NOT met")})

    def p99(row, kind):
        v = row["latency"][kind]["p99_ms"]
        return float("inf") if v is None else v

    d = find("direct", 0, 1000)
    check("1,000 people directly: 0 errors", d, lambda r: r["errors_total"] == 0)
    check("1,000 people directly: initialize p99 <= 1 s", d, lambda r: p99(r, "initialize") <= 1000)
    check("1,000 people directly: refresh p99 <= 1 s", d, lambda r: p99(r, "refresh_view") <= 1000)
    check("1,000 people directly: model p99 <= 250 ms", d, lambda r: p99(r, "model") <= 250)
    d = find("direct", 100, 1000)
    check("1,000 people, 100 ms latency: 0 errors", d, lambda r: r["errors_total"] == 0)
    check("1,000 people, 100 ms latency: initialize p99 <= 2 s", d, lambda r: p99(r, "initialize") <= 2000)
    check("1,000 people, 100 ms latency: model p99 <= ~500 ms", d, lambda r: p99(r, "model") <= 500)
    proxied = [r for r in rows if r["topology"] == "haproxy"]

    def no_refusals(rs):
        return all(not any(k.endswith("HTTP 429") or k.endswith("HTTP 503") for k in r["errors"]) for r in rs)

    out.append({"check": "behind haproxy: 0 answers 429 or 503 to a person" +
                (f" ({', '.join(str(r['people']) for r in proxied)} people)" if proxied else ""),
                "result": "not run" if not proxied else ("met" if no_refusals(proxied) else "NOT met")})
    return out


def main():
    limit = raise_file_limit()
    bb, stack = binaries()
    info = machine()
    proxy = proxy_args(bb)
    workdir = tempfile.mkdtemp(prefix="bb-people-")
    print(f"machine: {info['cores']} cores ({info['cpu']}), {info['ram_gib']} GiB RAM, load {info['loadavg_at_start']}; "
          f"file limit {limit}", flush=True)
    print(f"each row: ramp {RAMP_S:g} s, window {DURATION_S:g} s, model call every {MODEL_EVERY_S:g} s, card "
          f"{PR['project']}/{PR['repo']} #{PR['pr_id']}, stand-in rate limit 60/5 per user; behind haproxy, "
          f"each replica adds {' '.join(proxy) or '(nothing)'}", flush=True)
    rows = []
    report = {"machine": info, "config": {
        "people": PEOPLE, "duration_s": DURATION_S, "ramp_s": RAMP_S, "latency_ms": LATENCY, "topology": TOPOLOGY,
        "model_every_s": MODEL_EVERY_S, "request_timeout_s": REQUEST_TIMEOUT_S, "pr": PR, "proxy_args": proxy,
        "bb_args": os.environ.get("BB_ARGS", "")}, "rows": rows}

    def save():
        report["checks"] = checks(rows)
        os.makedirs(os.path.dirname(os.path.abspath(OUT)), exist_ok=True)
        with open(OUT, "w") as f:
            json.dump(report, f, indent=1)

    try:
        for topology in TOPOLOGY:
            for latency in LATENCY:
                group = []
                for people in PEOPLE:
                    print(f"... {topology}, {latency} ms, {people:,} people", file=sys.stderr, flush=True)
                    row = one_row(bb, stack, topology, latency, people, workdir, proxy)
                    rows.append(row)
                    group.append(row)
                    save()
                print()
                print(f"### {topology}{' (haproxy, 2 replicas, Redis)' if topology == 'haproxy' else ''}, "
                      f"{latency} ms added to every Bitbucket answer")
                print()
                print(table(group))
                print()
                print(notes(group), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        save()
    print()
    print("done when (issue 58):")
    for c in report["checks"]:
        print(f"  {c['result']:>8}  {c['check']}")
    print(f"\nraw figures: {OUT}")


if __name__ == "__main__":
    sys.exit(main())
