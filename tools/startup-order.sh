#!/usr/bin/env bash
# Writes app/startup-order.txt: the functions of the release `bb` that a start and an idle server
# run (over HTTP; over stdio, with a client's first exchange), which the linker then lays out first and together (app/build.rs),
# so that an idle server maps a few pages of its code instead of ~25 scattered 64 KiB windows (the kernel
# maps the neighbours of every page a process touches in a file).
#
# Run it after a change to what bb does at start, or to its dependencies or compiler (their symbol names
# carry hashes; a name the binary no longer has is skipped by the linker, silently, so a stale list only
# costs memory), then rebuild. Needs valgrind (`apt-get install valgrind`); takes a release build and ~20 s.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "startup-order: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
cargo build --release -p bb >&2
BIN=target/release/bb
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# record NAME ARGS...: runs bb under callgrind until it is idle, then has callgrind write what ran.
# Nothing listens on port 9 of 127.0.0.1: bb starts, checks its configuration and waits, as an idle
# server does; it asks Bitbucket nothing before a request. Its stdin and stdout are pipes, as an MCP
# client's are; stdin stays open, with INPUT on it (a client's first requests) or nothing.
INPUT=
record() {
    local name=$1
    shift
    { printf '%s' "$INPUT"; sleep 8; } | BITBUCKET_URL=http://127.0.0.1:9 BITBUCKET_TOKEN=startup-order \
        valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/cg.$name.%p" \
        "$BIN" "$@" 2>"$WORK/$name.err" | cat >/dev/null &
    sleep 5 # a start under valgrind, then the idle threads settle
    local pid
    pid=$(pgrep -f "callgrind-out-file=$WORK/cg.$name" | head -1)
    [ -n "$pid" ] || { cat "$WORK/$name.err" >&2; exit 1; }
    callgrind_control -d "$pid" >/dev/null 2>&1
    sleep 1
    kill -9 "$pid" 2>/dev/null || true
    wait 2>/dev/null || true
}
record http ai mcp serve --http 127.0.0.1:0
# Over stdio, a client's first exchange too: what the stdio bench measures after `initialize`.
INPUT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"startup-order","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"ping"}
'
record stdio ai mcp serve
grep -q '^http://' "$WORK/http.err" || { echo "startup-order: bb did not start over HTTP:" >&2; cat "$WORK/http.err" >&2; exit 1; }

# Every function callgrind named (with `--demangle=no`, as the linker knows it) that is a function of bb.
nm "$BIN" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u >"$WORK/bb-functions"
cat "$WORK"/cg.* | sed -n 's/^c\{0,1\}fn=([0-9]*) //p' | sort -u >"$WORK/seen"
comm -12 "$WORK/seen" "$WORK/bb-functions" >app/startup-order.txt
echo "startup-order: $(wc -l <app/startup-order.txt) functions in app/startup-order.txt" >&2
