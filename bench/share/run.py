#!/usr/bin/env python3
"""bb's own share of issue 37's figures, against the stand-in that serves reads at once. Figures, not a test.

Starts the stand-in (release) with its committed seed plus two pull requests of BB/api made here: #90, 20 files of
10,000 generated lines of Rust (the stand-in's per-file cap), and #91, which adds `web/vendor/bundle.min.js`, 2,000
lines of 15 KB each (30 MB, generated: `generate.lineBytes`). Each of the four parts then starts a fresh release bb
over Streamable HTTP on 127.0.0.1 (port chosen by the OS, `--rate-limit off`, so that bb and not the rate budget of
the one Bitbucket user every session acts as decides the figures) and prints its figures beside the targets:

  1. connections  512 connections from 127.0.0.2-5 (128 each) proven by GET /healthz every 8 s (three rounds),
                  then a person's `initialize` from 127.0.0.1 and from 127.0.0.6: the status of each.
  2. unread       3 connections each POST a 2025-03-26 JSON-RPC batch of 40 `show` file views of the 30 MB file
                  (2,000-line windows) and never read the answer: bb's peak RSS while unread, and how long until
                  its RSS is back under 100 MiB for good (sampled every 50 ms for at most UNREAD_S seconds, 90 by
                  default; "for good" is the last 15 s of samples, or to the end of the window).
  3. get_file     40 concurrent `get_file` windows of those 2,000 lines, one session each: bb's peak RSS.
  4. diffs        a batch of 20 `show` diff views of #90 plus 8 sessions x 3 views, while another session loops
                  `get_pull_request` on #1: bb's peak RSS and that session's p50/p99; the stand-in's own answer to
                  the same pull request meanwhile, asked directly, shows how much of the wait is the stand-in's.

RSS is VmRSS and VmHWM from /proc/PID/status. Every wait is bounded; only loopback addresses are used.
Run from the repository: `python3 bench/share/run.py` (builds `cargo build --release -p bb -p bb-stack` first
unless BB_BIN and STACK_BIN name the binaries; BB_ARGS adds flags to `bb ai mcp serve`; PARTS=1,3 runs some parts).
"""

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UI = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
HUGE_DIFF = 90
WIDE_PR = 91
WIDE_BRANCH = "feature/minified-bundle"
WIDE_FILE = "web/vendor/bundle.min.js"
WINDOW = {"project": "BB", "repo": "api", "path": WIDE_FILE, "at": WIDE_BRANCH, "start_line": 1, "line_count": 2000}
DIFF = {"kind": "diff", "project": "BB", "repo": "api", "pr_id": HUGE_DIFF}
TIMEOUT = 600
ROWS = []  # (figure, measured, target): the table printed at the end


def row(figure, measured, target):
    ROWS.append((figure, measured, target))


def seed_file():
    with open(os.path.join(ROOT, "tools/stack/seed/seed.json")) as f:
        seed = json.load(f)
    files = [{"path": f"src/generated/part_{i:02}.rs", "change": "ADD", "generate": {"language": "rust", "lines": 10000}}
             for i in range(20)]
    common = {"repo": "BB/api", "author": "bob", "state": "OPEN", "created": 1765051200000,
              "updated": 1765054800000, "reviewers": [{"user": "alice"}]}
    seed["pullRequests"].append({
        **common, "id": HUGE_DIFF, "title": "Generated: 20 files of 10,000 lines", "description": "Made by bench/share.",
        "from": "feature/generated-huge", "files": files,
    })
    seed["pullRequests"].append({
        **common, "id": WIDE_PR, "title": "Generated: a minified bundle", "description": "Made by bench/share.",
        "from": WIDE_BRANCH, "files": [{"path": WIDE_FILE, "change": "ADD",
                                        "generate": {"language": "typescript", "lines": 2000, "lineBytes": 15000}}],
    })
    path = os.path.join(tempfile.mkdtemp(prefix="bb-share-"), "seed.json")
    with open(path, "w") as f:
        json.dump(seed, f)
    return path


def binaries():
    bb, stack = os.environ.get("BB_BIN"), os.environ.get("STACK_BIN")
    if not (bb and stack):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "bb", "-p", "bb-stack"], cwd=ROOT, check=True)
        bb = os.path.join(ROOT, "target/release/bb")
        stack = os.path.join(ROOT, "target/release/bb-stack")
    return bb, stack


def memory(pid):
    """VmRSS and VmHWM (the peak since start) in MiB; zeros once the process is gone."""
    out = {"VmRSS": 0, "VmHWM": 0}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in out:
                    out[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return out["VmRSS"], out["VmHWM"]


class Sampler:
    """VmRSS every 50 ms in a thread: (seconds since start, MiB) pairs."""

    def __init__(self, pid):
        self.pid, self.samples, self.stop = pid, [], threading.Event()
        self.t0 = time.perf_counter()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            self.samples.append((time.perf_counter() - self.t0, memory(self.pid)[0]))
            time.sleep(0.05)

    def peak(self):
        return max((m for _, m in self.samples), default=0.0)

    def done(self):
        self.stop.set()
        self.thread.join()


class Client:
    """One MCP session over HTTP/1.1 keep-alive; reads JSON and SSE answers alike."""

    def __init__(self, host, port, version="2025-11-25", source=None):
        self.conn = http.client.HTTPConnection(host, port, timeout=TIMEOUT,
                                               source_address=(source, 0) if source else None)
        self.session = None
        self.version = version
        self.next_id = 1
        self.status, _ = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                    "params": {"protocolVersion": version, "capabilities": UI,
                                               "clientInfo": {"name": "bench-share", "version": "1"}}})
        if self.status == 200:
            self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def headers(self):
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session:
            h["Mcp-Session-Id"] = self.session
            h["MCP-Protocol-Version"] = self.version
        return h

    def post(self, message):
        self.conn.request("POST", "/mcp", json.dumps(message).encode(), self.headers())
        r = self.conn.getresponse()
        self.session = r.getheader("Mcp-Session-Id") or self.session
        data = r.read()
        if r.getheader("Content-Type", "").startswith("text/event-stream"):
            events = [line[5:].strip() for line in data.decode().splitlines() if line.startswith("data:")]
            data = events[-1].encode() if events else b""
        return r.status, data

    def call(self, name, arguments):
        self.next_id += 1
        return self.post({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments}})


def failed(status, data):
    return status != 200 or b'"isError":true' in data or b'"error":' in data[:200]


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")


def start_stack(stack, seed):
    s = subprocess.Popen([stack, "--port", "0", "--data", seed], stdout=subprocess.PIPE, text=True)
    base, token = s.stdout.readline().strip(), s.stdout.readline().strip()
    if not base.startswith("http"):
        s.wait()
        raise SystemExit("the stand-in did not start")
    return s, base, token


def start_bb(bb, base, token):
    b = subprocess.Popen([bb, "ai", "mcp", "serve", "--http", "127.0.0.1:0", "--host", base, "--token", token,
                          "--log-level", "error", "--rate-limit", "off", *os.environ.get("BB_ARGS", "").split()],
                         stderr=subprocess.PIPE, text=True)
    url = b.stderr.readline().strip()
    if "//" not in url:
        stop(b)
        raise SystemExit(f"bb did not start: {url}")
    threading.Thread(target=b.stderr.read, daemon=True).start()
    hostport = url.split("//")[1].split("/")[0]
    host, port = hostport.rsplit(":", 1)
    time.sleep(0.5)
    return b, host, int(port)


def stop(p):
    p.terminate()
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


class Raw:
    """One HTTP/1.1 connection from a chosen loopback address, never reconnected: a request on a connection bb
    closed fails instead of opening another (as http.client would)."""

    def __init__(self, source, host, port):
        self.host, self.port = host, port
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.bind((source, 0))
        self.sock.connect((host, port))
        self.buf = b""

    def send(self, method, path, body=b"", headers=None):
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Length: {len(body)}\r\n"
        for k, v in (headers or {}).items():
            head += f"{k}: {v}\r\n"
        self.sock.sendall(head.encode() + b"\r\n" + body)

    def status(self):
        """The status of the next answer, its body read when it has a length; 0 if the connection closed."""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                return 0
            self.buf += chunk
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "content-length":
                length = int(v.strip())
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        self.buf = rest[length:]
        return int(lines[0].split(" ")[1])

    def close(self):
        self.sock.close()


def part_connections(bb, base, token):
    b, host, port = start_bb(bb, base, token)
    try:
        addresses = [f"127.0.0.{i}" for i in range(2, 6)]
        conns = {a: [] for a in addresses}
        rounds = []

        def prove(addr, first):
            ok = 0
            if first:
                for _ in range(128):
                    try:
                        conns[addr].append(Raw(addr, host, port))
                    except OSError:
                        conns[addr].append(None)
            for i, c in enumerate(conns[addr]):
                if c is None:
                    continue
                try:
                    c.send("GET", "/healthz")
                    if c.status() == 200:
                        ok += 1
                    else:
                        c.close()
                        conns[addr][i] = None
                except OSError:
                    c.close()
                    conns[addr][i] = None
            counts[addr] = ok

        def round_of(first):
            nonlocal counts
            counts = {}
            threads = [threading.Thread(target=prove, args=(a, first)) for a in addresses]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            rounds.append(sum(counts.values()))

        counts = {}
        t0 = time.perf_counter()
        round_of(True)
        initialized = {}
        for source in ("127.0.0.1", "127.0.0.6"):
            try:
                initialized[source] = Client(host, port, source=source).status
            except OSError as e:
                initialized[source] = f"no answer ({e.__class__.__name__})"
        for n in (1, 2):
            time.sleep(max(0.0, t0 + 8 * n - time.perf_counter()))
            round_of(False)
        rss, hwm = memory(b.pid)
        for cs in conns.values():
            for c in cs:
                if c is not None:
                    c.close()
        print("1. connections: 512 from 127.0.0.2-5 (128 each), GET /healthz every 8 s")
        print(f"   answered 200: {rounds[0]}/512 at once, {rounds[1]}/512 after 8 s, {rounds[2]}/512 after 16 s "
              f"(target: 512 each)")
        for source, status in initialized.items():
            print(f"   a person's initialize from {source}: {status} (target: 200)")
        print(f"   bb RSS: {rss:.1f} MiB, peak {hwm:.1f} MiB")
        row("1. /healthz 200 of 512 (at once, +8 s, +16 s)", " / ".join(map(str, rounds)), "512 each")
        for source, status in initialized.items():
            row(f"1. initialize from {source}", str(status), "200")
    finally:
        stop(b)


def part_unread(bb, base, token):
    b, host, port = start_bb(bb, base, token)
    try:
        window = int(os.environ.get("UNREAD_S", "90"))
        sessions = [Client(host, port, version="2025-03-26") for _ in range(3)]
        statuses = [s.status for s in sessions]
        before, _ = memory(b.pid)
        batch = json.dumps([{"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                             "params": {"name": "show", "arguments": {"kind": "file", **WINDOW}}}
                            for i in range(40)]).encode()
        sampler = Sampler(b.pid)
        raws = []
        for s in sessions:
            r = Raw("127.0.0.1", host, port)
            r.send("POST", "/mcp", batch, {k: v for k, v in s.headers().items()})
            raws.append(r)
        # Never read. Back under 100 MiB: RSS has been above it, and under it ever since (for 15 s at least, to stop
        # early; otherwise the window ends). It may rise, fall and rise again while bb reads the stand-in's answers.
        back = None
        deadline = time.perf_counter() + window
        while time.perf_counter() < deadline:
            time.sleep(0.1)
            samples = list(sampler.samples)
            above = [t for t, m in samples if m >= 100]
            if above and samples[-1][0] - above[-1] >= 15:
                break
        samples = list(sampler.samples)
        above = [t for t, m in samples if m >= 100]
        if above and samples[-1][1] < 100:
            back = next(t for t, m in samples if t > above[-1])
        sampler.done()
        peak, last = sampler.peak(), sampler.samples[-1][1] if sampler.samples else 0.0
        _, hwm = memory(b.pid)
        for r in raws:
            r.close()
        time.sleep(5)
        closed, _ = memory(b.pid)
        print("2. unread: 3 connections each POST a batch of 40 show file views (2,000 lines of 15 KB) and never read")
        print(f"   initialize statuses {statuses}; bb RSS before {before:.1f} MiB")
        print(f"   bb RSS while unread: peak {peak:.1f} MiB sampled, VmHWM {hwm:.1f} MiB (target: <= 300 MiB)")
        if back is not None:
            print(f"   back under 100 MiB {back:.1f} s after sending (target: within bb's write timeout)")
        elif all(m < 100 for _, m in sampler.samples):
            print("   never above 100 MiB")
        else:
            print(f"   not back under 100 MiB within {window} s: {last:.1f} MiB (target: within bb's write timeout)")
        print(f"   5 s after the client closed the 3 connections: {closed:.1f} MiB")
        row("2. bb RSS while 3 batches of 40 file views are unread", f"{max(peak, hwm):.0f} MiB", "<= 300 MiB")
        row("2. until RSS < 100 MiB", f"{back:.1f} s" if back is not None else
            ("never above" if all(m < 100 for _, m in sampler.samples) else f"> {window} s ({last:.0f} MiB)"),
            "within the write timeout")
    finally:
        stop(b)


def part_get_file(bb, base, token):
    b, host, port = start_bb(bb, base, token)
    try:
        sessions = [Client(host, port) for _ in range(40)]
        before, _ = memory(b.pid)
        sampler = Sampler(b.pid)
        go = threading.Barrier(40)
        results = []

        def one(c):
            go.wait(timeout=TIMEOUT)
            t = time.perf_counter()
            status, data = c.call("get_file", WINDOW)
            results.append((time.perf_counter() - t, len(data), failed(status, data)))

        threads = [threading.Thread(target=one, args=(c,)) for c in sessions]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
        took = time.perf_counter() - t0
        sampler.done()
        _, hwm = memory(b.pid)
        errors = sum(1 for r in results if r[2])
        print("3. get_file: 40 concurrent windows of 2,000 lines of 15 KB")
        print(f"   {len(results)} answered in {took:.1f} s ({errors} errors), answers "
              f"{pct([r[1] for r in results], 0.5) / 1e3:.0f} KB median; slowest {max(r[0] for r in results):.1f} s")
        print(f"   bb RSS: before {before:.1f} MiB, peak {max(hwm, sampler.peak()):.1f} MiB (target: <= 512 MiB)")
        row("3. bb peak RSS, 40 get_file windows", f"{max(hwm, sampler.peak()):.0f} MiB", "<= 512 MiB")
    finally:
        stop(b)


def part_diffs(bb, base, token):
    b, host, port = start_bb(bb, base, token)
    try:
        viewers = [Client(host, port) for _ in range(8)]
        batcher = Client(host, port, version="2025-03-26")
        other = Client(host, port)
        before, _ = memory(b.pid)
        done = threading.Event()
        errors, lat, direct, got = [], [], [], {}

        def view(c):
            for _ in range(3):
                status, data = c.call("show", DIFF)
                if failed(status, data):
                    errors.append(data[:200])

        def batch():
            msgs = [{"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": {"name": "show", "arguments": DIFF}}
                    for i in range(20)]
            got["status"], got["data"] = batcher.post(msgs)

        def loop():
            while not done.is_set():
                t = time.perf_counter()
                other.call("get_pull_request", {"project": "BB", "repo": "api", "pr_id": 1})
                lat.append((time.perf_counter() - t) * 1000)

        def stand_in():
            h, p = base.split("//")[1].split("/")[0].rsplit(":", 1)
            conn = http.client.HTTPConnection(h, int(p), timeout=TIMEOUT)
            while not done.is_set():
                t = time.perf_counter()
                conn.request("GET", "/rest/api/latest/projects/BB/repos/api/pull-requests/1",
                             headers={"Authorization": "Bearer " + token})
                conn.getresponse().read()
                direct.append((time.perf_counter() - t) * 1000)
                time.sleep(0.02)

        sampler = Sampler(b.pid)
        loops = [threading.Thread(target=loop), threading.Thread(target=stand_in)]
        work = [threading.Thread(target=view, args=(c,)) for c in viewers] + [threading.Thread(target=batch)]
        t0 = time.perf_counter()
        for t in loops + work:
            t.start()
        for t in work:
            t.join(TIMEOUT)
        took = time.perf_counter() - t0
        done.set()
        for t in loops:
            t.join(TIMEOUT)
        sampler.done()
        _, hwm = memory(b.pid)
        answers = json.loads(got["data"]) if got.get("data", b"").startswith(b"[") else []
        refused = sum(1 for a in answers if "error" in a or (a.get("result") or {}).get("isError"))
        print("4. diffs: a batch of 20 show diff views of 20 x 10,000 lines plus 8 sessions x 3 views")
        print(f"   done in {took:.1f} s; the batch: HTTP {got.get('status')}, {refused} of {len(answers)} answered "
              f"with an error; the views: {len(errors)} of 24 with an error")
        print(f"   bb RSS: before {before:.1f} MiB, peak {max(hwm, sampler.peak()):.1f} MiB (target: <= 512 MiB)")
        print(f"   another session's get_pull_request: {len(lat)} calls, p50 {pct(lat, 0.5):.1f} ms, "
              f"p99 {pct(lat, 0.99):.1f} ms (target: <= 100 ms), max {max(lat, default=0):.1f} ms")
        print(f"   the stand-in's own answer to that pull request meanwhile: p50 {pct(direct, 0.5):.1f} ms, "
              f"p99 {pct(direct, 0.99):.1f} ms")
        row("4. bb peak RSS, 20-view batch + 8 x 3 diff views", f"{max(hwm, sampler.peak()):.0f} MiB", "<= 512 MiB")
        row("4. another session's get_pull_request p99", f"{pct(lat, 0.99):.0f} ms", "<= 100 ms")
        row("4. (the stand-in's own p99 for it, direct)", f"{pct(direct, 0.99):.0f} ms", "")
    finally:
        stop(b)


def main():
    bb, stack = binaries()
    s, base, token = start_stack(stack, seed_file())
    parts = {"1": part_connections, "2": part_unread, "3": part_get_file, "4": part_diffs}
    chosen = os.environ.get("PARTS", "1,2,3,4").split(",")
    try:
        for key in chosen:
            parts[key.strip()](bb, base, token)
            sys.stdout.flush()
    finally:
        stop(s)
    print()
    width = max(len(r[0]) for r in ROWS) if ROWS else 10
    print(f"| {'figure':<{width}} | measured | target |")
    print(f"|{'-' * (width + 2)}|----------|--------|")
    for figure, measured, target in ROWS:
        print(f"| {figure:<{width}} | {measured} | {target} |")


if __name__ == "__main__":
    sys.exit(main())
