#!/usr/bin/env python3
"""Views at the round-trip limit (issue 26). Figures, not a test.

A view's time is bounded below by its Bitbucket dependency depth times the round trip; everything above
that is bb's. This adds L ms to every stand-in request (L = 50 and 150), and for each view kind, on a
fresh bb (cold: no avatar cached) and then again (warm), prints:

  requests   the Bitbucket requests the call made (the stand-in's request log)
  rounds     how many rounds they went out in: a request starting later than L/2 after the first of its
             round starts a new one (the stand-in logs when each request arrived)
  limit      rounds x L + 15 ms (the issue's target for one session)
  measured   the call's time as the client saw it

Then 8 sessions at once, each showing the card of another pull request (warm: their avatars cached), against
the same call alone: the slowest of the 8 against the alone time (target: at most 2x). Twice: 8 people each
with their own token (per-person mode: each has their own share of Bitbucket's rate limit), and one shared
service account that Bitbucket exempts from rate limiting (`--rate-limit off`). With a shared account that is
rate limited, bb keeps to its 60-request bucket refilled at 5 a second, which is what bounds such a burst.

Run from the repository: `python3 bench/roundtrip/run.py` (builds `cargo build --release -p bb -p bb-stack`
first unless BB_BIN and STACK_BIN name the binaries; BB_ARGS adds flags to `bb ai mcp serve`). Only loopback.
"""

import http.client
import json
import os
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UI = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}

VIEWS = [
    ("card", {"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}),
    ("list", {"kind": "pull_requests", "project": "BB", "repo": "api"}),
    ("diff", {"kind": "diff", "project": "BB", "repo": "api", "pr_id": 1}),
]
OPEN_PRS = [1, 2, 3, 6, 7, 8, 9, 10]


def binaries():
    bb, stack = os.environ.get("BB_BIN"), os.environ.get("STACK_BIN")
    if not (bb and stack):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "bb", "-p", "bb-stack"], cwd=ROOT, check=True)
        bb = os.path.join(ROOT, "target/release/bb")
        stack = os.path.join(ROOT, "target/release/bb-stack")
    return bb, stack


class Http:
    def __init__(self, base):
        hostport = base.split("//")[1].split("/")[0]
        host, port = hostport.rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port), timeout=120)

    def ask(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        h = {"Content-Type": "application/json", **(headers or {})}
        self.conn.request(method, path, data, h)
        r = self.conn.getresponse()
        raw = r.read()
        return r, raw


PERSON_HEADER = "X-Bitbucket-Token"
PEOPLE = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]


class Session:
    """One MCP session over HTTP/1.1 keep-alive; reads JSON and SSE answers alike."""

    def __init__(self, url, person=None):
        self.http = Http(url)
        self.person = person
        self.session = None
        self.next_id = 1
        self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": UI,
                              "clientInfo": {"name": "bench", "version": "1"}}})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message):
        headers = {"Accept": "application/json, text/event-stream"}
        if self.person:
            headers[PERSON_HEADER] = "stack-token-" + self.person
        if self.session:
            headers["Mcp-Session-Id"] = self.session
            headers["MCP-Protocol-Version"] = "2025-11-25"
        r, data = self.http.ask("POST", "/mcp", message, headers)
        self.session = r.getheader("Mcp-Session-Id") or self.session
        if r.getheader("Content-Type", "").startswith("text/event-stream"):
            events = [line[5:].strip() for line in data.decode().splitlines() if line.startswith("data:")]
            data = events[-1].encode() if events else b""
        return data

    def show(self, args):
        self.next_id += 1
        t = time.perf_counter()
        data = self.post({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                          "params": {"name": "show", "arguments": args}})
        took = (time.perf_counter() - t) * 1000
        if b'"isError":true' in data:
            sys.exit(f"show {args} failed: {data[:300]!r}")
        return took


class Stand:
    def __init__(self, stack_bin):
        self.p = subprocess.Popen([stack_bin, "--port", "0"], stdout=subprocess.PIPE, text=True)
        self.base, self.token = self.p.stdout.readline().strip(), self.p.stdout.readline().strip()
        self.ctl = Http(self.base)

    def control(self, method, path, body=None):
        r, raw = self.ctl.ask(method, "/_stack" + path, body)
        return json.loads(raw) if raw else None

    def reset(self, latency):
        self.control("POST", "/reset", {})
        self.control("PUT", "/latency", {"pathPrefix": "/", "millis": latency})

    def log(self):
        return self.control("GET", "/log")["requests"]

    def stop(self):
        self.p.kill()


def bb_http(bb_bin, stand, *extra):
    b = subprocess.Popen([bb_bin, "ai", "mcp", "serve", "--http", "127.0.0.1:0", "--host", stand.base, "--token",
                          stand.token, "--log-level", "error", *extra, *os.environ.get("BB_ARGS", "").split()],
                         stderr=subprocess.PIPE, text=True)
    url = b.stderr.readline().strip()
    threading.Thread(target=b.stderr.read, daemon=True).start()
    return b, url


def rounds(entries, latency):
    starts = sorted(e["startMs"] for e in entries)
    count, first = 0, None
    for s in starts:
        if first is None or s > first + latency / 2:
            count, first = count + 1, s
    return count


def one_view(bb_bin, stand, latency, args):
    stand.reset(latency)
    b, url = bb_http(bb_bin, stand)
    try:
        s = Session(url)
        out = []
        for _ in ("cold", "warm"):
            since = len(stand.log())
            took = s.show(args)
            entries = stand.log()[since:]
            n = rounds(entries, latency)
            out.append((len(entries), n, n * latency + 15, took))
        return out
    finally:
        b.kill()


def together(bb_bin, stand, latency, per_person):
    stand.reset(latency)
    extra = ["--per-user-token-header", PERSON_HEADER] if per_person else ["--rate-limit", "off"]
    b, url = bb_http(bb_bin, stand, *extra)
    try:
        cards = [{"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": n} for n in OPEN_PRS]
        people = PEOPLE if per_person else [None] * len(cards)
        for person, c in zip(people, cards):
            Session(url, person).show(c)  # avatars cached
        alone = [Session(url, person).show(c) for person, c in zip(people, cards)]
        sessions = [Session(url, person) for person in people]
        times = [0.0] * len(cards)
        gate = threading.Barrier(len(cards))

        def run(i):
            gate.wait()
            times[i] = sessions[i].show(cards[i])

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(cards))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        worst = max(range(len(cards)), key=lambda i: times[i] / alone[i])
        return max(alone), max(times), times[worst] / alone[worst]
    finally:
        b.kill()


def main():
    bb_bin, stack_bin = binaries()
    stand = Stand(stack_bin)
    try:
        for latency in (50, 150):
            print(f"\n{latency} ms added to every Bitbucket request (release build, one HTTP session)")
            print(f"{'view':<6} {'':<5} {'requests':>8} {'rounds':>6} {'limit':>8} {'measured':>9}  within")
            for name, args in VIEWS:
                for label, (n, r, limit, took) in zip(("cold", "warm"), one_view(bb_bin, stand, latency, args)):
                    ok = "yes" if took <= limit else "no"
                    print(f"{name:<6} {label:<5} {n:>8} {r:>6} {limit:>6} ms {took:>6.0f} ms  {ok}")
            for per_person, who in ((True, "8 people, each their own token"),
                                    (False, "one service account exempt from rate limiting (--rate-limit off)")):
                alone, worst, ratio = together(bb_bin, stand, latency, per_person)
                print(f"8 sessions at once, each a warm card of another pull request; {who}: slowest {worst:.0f} ms, "
                      f"alone at most {alone:.0f} ms, worst ratio {ratio:.2f}x (target <= 2x)")
    finally:
        stand.stop()


if __name__ == "__main__":
    main()
