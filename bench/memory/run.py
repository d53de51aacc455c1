#!/usr/bin/env python3
"""bb under large diffs: memory and another person's latency (issue 25). Figures, not a test.

Starts the stand-in with its committed seed plus one pull request made here (BB/api #90: 20 files of
10,000 generated lines of Rust each, the stand-in's per-file cap), and bb over Streamable HTTP on
127.0.0.1, both release builds. Then, printing bb's RSS before, at its peak and 10 s after each:

  views   16 sessions each show the diff of #90 (3 times each), while another session calls
          get_pull_request on a small pull request again and again: its p50/p99/max latency;
  batch   one 2025-03-26 session posts one JSON-RPC batch of 20 `show` diff calls of #90.

Run from the repository: `python3 bench/memory/run.py` (builds `cargo build --release -p bb -p bb-stack`
first unless BB_BIN and STACK_BIN name the binaries; BB_ARGS adds flags to `bb ai mcp serve`). bb runs with
`--rate-limit off`: this measures bb's memory and CPU, every session acts as one Bitbucket user, and with bb's
default budget of that user's rate limit (60, then 5 a second, shared by the 17 sessions) the budget, not bb,
would decide every figure (BB_ARGS="--rate-limit 60/5" shows it: another session's call then waits its turn
for a token, about 1.3 s). Only
loopback addresses are used.
"""

import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UI = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
HUGE = 90


def seed_file():
    with open(os.path.join(ROOT, "tools/stack/seed/seed.json")) as f:
        seed = json.load(f)
    files = [{"path": f"src/generated/part_{i:02}.rs", "change": "ADD", "generate": {"language": "rust", "lines": 10000}}
             for i in range(20)]
    seed["pullRequests"].append({
        "repo": "BB/api", "id": HUGE, "title": "Generated: 20 files of 10,000 lines", "description": "Made by bench/memory.",
        "from": "feature/generated-huge", "author": "bob", "state": "OPEN", "created": 1765051200000,
        "updated": 1765054800000, "reviewers": [{"user": "alice"}], "files": files,
    })
    path = os.path.join(tempfile.mkdtemp(prefix="bb-memory-"), "seed.json")
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
    """VmRSS and VmHWM (the peak since start) in MiB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    return out["VmRSS"], out["VmHWM"]


class Client:
    """One MCP session over HTTP/1.1 keep-alive; reads JSON and SSE answers alike."""

    def __init__(self, host, port, version="2025-11-25"):
        self.conn = http.client.HTTPConnection(host, port, timeout=600)
        self.session = None
        self.version = version
        self.next_id = 1
        self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": version, "capabilities": UI, "clientInfo": {"name": "bench", "version": "1"}}})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message):
        body = json.dumps(message).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
            headers["MCP-Protocol-Version"] = self.version
        self.conn.request("POST", "/mcp", body, headers)
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


STAND_IN = {}


def start(bb, stack, seed):
    s = subprocess.Popen([stack, "--port", "0", "--data", seed], stdout=subprocess.PIPE, text=True)
    base, token = s.stdout.readline().strip(), s.stdout.readline().strip()
    STAND_IN.update(base=base, token=token)
    b = subprocess.Popen([bb, "ai", "mcp", "serve", "--http", "127.0.0.1:0", "--host", base, "--token", token,
                          "--log-level", "error", "--rate-limit", "off", *os.environ.get("BB_ARGS", "").split()],
                         stderr=subprocess.PIPE, text=True)
    url = b.stderr.readline().strip()
    threading.Thread(target=b.stderr.read, daemon=True).start()
    hostport = url.split("//")[1].split("/")[0]
    host, port = hostport.rsplit(":", 1)
    return s, b, host, int(port)


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def main():
    bb, stack = binaries()
    s, b, host, port = start(bb, stack, seed_file())
    try:
        diff = {"kind": "diff", "project": "BB", "repo": "api", "pr_id": HUGE}
        time.sleep(1)
        idle, _ = memory(b.pid)
        print(f"bb idle: {idle:.1f} MiB RSS")

        # views: 16 sessions, 3 diff views each, beside another person's small calls.
        sizes, errors = [], []
        done = threading.Event()

        def viewer():
            c = Client(host, port)
            for _ in range(3):
                status, data = c.call("show", diff)
                sizes.append(len(data))
                if status != 200 or b'"isError":true' in data:
                    errors.append(data[:300])

        lat, pings = [], []

        def other():
            c = Client(host, port)
            while not done.is_set():
                t = time.perf_counter()
                c.call("get_pull_request", {"project": "BB", "repo": "api", "pr_id": 1})
                lat.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                c.next_id += 1
                c.post({"jsonrpc": "2.0", "id": c.next_id, "method": "ping"})
                pings.append((time.perf_counter() - t) * 1000)

        direct = []

        def stand_in():
            # The stand-in's own time for the pull request get_pull_request reads first: it serves reads
            # at once (its world behind a shared lock), but the diffs it makes share the cores with it.
            hostport = STAND_IN["base"].split("//")[1].split("/")[0]
            h, p = hostport.rsplit(":", 1)
            conn = http.client.HTTPConnection(h, int(p), timeout=600)
            while not done.is_set():
                t = time.perf_counter()
                conn.request("GET", "/rest/api/latest/projects/BB/repos/api/pull-requests/1",
                             headers={"Authorization": "Bearer " + STAND_IN["token"]})
                conn.getresponse().read()
                direct.append((time.perf_counter() - t) * 1000)
                time.sleep(0.02)

        t0 = time.perf_counter()
        viewers = [threading.Thread(target=viewer) for _ in range(16)]
        o = threading.Thread(target=other)
        o.start()
        d = threading.Thread(target=stand_in)
        d.start()
        for v in viewers:
            v.start()
        while any(v.is_alive() for v in viewers):
            time.sleep(0.05)
        took = time.perf_counter() - t0
        done.set()
        o.join()
        d.join()
        _, hwm = memory(b.pid)
        time.sleep(10)
        after, _ = memory(b.pid)
        print(f"views: 16 sessions x 3 diff views of 20 x 10,000 lines in {took:.1f} s; answers "
              f"{statistics.median(sizes) / 1e6:.2f} MB median, {max(sizes) / 1e6:.2f} MB largest; {len(errors)} errors")
        if errors:
            print("  first error:", errors[0][:300])
        print(f"  another session's get_pull_request: {len(lat)} calls, p50 {pct(lat, 0.5):.1f} ms, "
              f"p99 {pct(lat, 0.99):.1f} ms, max {max(lat):.1f} ms; its ping (no Bitbucket read): p50 "
              f"{pct(pings, 0.5):.1f} ms, p99 {pct(pings, 0.99):.1f} ms")
        print(f"  the stand-in's own answer to that pull request meanwhile: p50 {pct(direct, 0.5):.1f} ms, "
              f"p99 {pct(direct, 0.99):.1f} ms")
        print(f"  bb RSS: before {idle:.1f} MiB, peak {hwm:.1f} MiB, 10 s after {after:.1f} MiB")

        # batch: one POST of 20 show diff calls (2025-03-26).
        c = Client(host, port, version="2025-03-26")
        batch = [{"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": {"name": "show", "arguments": diff}}
                 for i in range(20)]
        before, _ = memory(b.pid)
        t0 = time.perf_counter()
        got = {}
        poster = threading.Thread(target=lambda: got.update(answer=c.post(batch)))
        poster.start()
        peak2 = before
        while poster.is_alive():
            peak2 = max(peak2, memory(b.pid)[0])
            time.sleep(0.05)
        took = time.perf_counter() - t0
        status, data = got["answer"]
        time.sleep(10)
        after2, _ = memory(b.pid)
        answers = json.loads(data) if data.startswith(b"[") else []
        refused = sum(1 for a in answers if "error" in a or (a.get("result") or {}).get("isError"))
        print(f"batch: 20 diff views in one POST: HTTP {status}, {len(data) / 1e6:.1f} MB answered in {took:.1f} s, "
              f"{refused} of {len(answers)} answered with an error")
        print(f"  bb RSS: before {before:.1f} MiB, peak {peak2:.1f} MiB (sampled every 50 ms), 10 s after {after2:.1f} MiB")
    finally:
        for p in (b, s):
            p.terminate()
            p.wait()


if __name__ == "__main__":
    sys.exit(main())
