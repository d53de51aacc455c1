#!/usr/bin/env bash
# bb beside a reference MCP server on the official Rust SDK (rmcp), serving bb's own tool list.
#
#   bash bench/compare/run.sh
#
# Builds bb and the stand-in (root workspace, release) and this bench (its own workspace and
# target dir, bench/compare/target), starts the stand-in, `bb ai mcp serve --http` and `rmcp-ref`
# on 127.0.0.1 ports of their own choosing, and drives each with `mcp-load` (one thread, epoll,
# closed loop): tools/list and tools/call `show {}`, with sessions (2025-11-25, each connection its
# own session) and stateless (2026-07-28, no session), at 1, 16 and 64 connections; bb and rmcp
# alternately, ROUNDS rounds, medians. Then memory. Prints a Markdown table and the targets.
#
# Environment: ROUNDS (6), DURATION seconds measured per run (5), WARMUP seconds before it (1),
# CONNS ("1 16 64"), BB_BIN (a bb binary to use instead of building one),
# PIN_SERVER / PIN_LOAD (taskset CPU lists, e.g. 0 and 1; unset: nothing pinned; either way the
# same for both servers), LOAD_NICE (the load generator's niceness, -10: it is the instrument, and on
# cores it shares with the server its own stalls would count as the server's latency; as root only,
# otherwise 0), IDLE_STARTS (5: idle RSS is the median of this many fresh starts of each server, as
# which pages of a binary a start maps varies from one start to the next).
set -euo pipefail

ROUNDS=${ROUNDS:-6}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
CONNS=${CONNS:-"1 16 64"}
PIN_SERVER=${PIN_SERVER:-}
PIN_LOAD=${PIN_LOAD:-}
LOAD_NICE=${LOAD_NICE:--10}
IDLE_STARTS=${IDLE_STARTS:-5}

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bb-compare.XXXXXX")
PIDS=()

cleanup() {
    local p
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${PIDS[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { echo "$*" >&2; }
die() { say "run.sh: $*"; exit 1; }

server_prefix=()
[ -n "$PIN_SERVER" ] && server_prefix=(taskset -c "$PIN_SERVER")
load_prefix=()
[ -n "$PIN_LOAD" ] && load_prefix=(taskset -c "$PIN_LOAD")
if [ "$LOAD_NICE" != 0 ]; then
    if nice -n "$LOAD_NICE" true 2>/dev/null && [ "$(nice -n "$LOAD_NICE" nice)" = "$LOAD_NICE" ]; then
        load_prefix=(nice -n "$LOAD_NICE" "${load_prefix[@]}")
    else
        LOAD_NICE=0
    fi
fi

# --- build -------------------------------------------------------------------------------------
BB_TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
say "building bb and bb-stack (root workspace, release)…"
(cd "$ROOT" && cargo build --release -q -p bb -p bb-stack)
BB=${BB_BIN:-$BB_TARGET/release/bb}
STACK=$BB_TARGET/release/bb-stack
say "building rmcp-ref and mcp-load (bench/compare, its own workspace and target dir)…"
cargo build --release -q --manifest-path "$HERE/Cargo.toml" --target-dir "$HERE/target"
LOAD=$HERE/target/release/mcp-load
RMCP=$HERE/target/release/rmcp-ref
RAW=$HERE/target/last-run.txt
: >"$RAW"

# shellcheck source=common.sh
source "$HERE/common.sh"

kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# --- the stand-in, bb, and bb's catalogue --------------------------------------------------------
start_stack

# start_bb / start_rmcp LOG: start one server; its pid in SPID, its URL in SURL.
start_bb() {
    env -u BITBUCKET_USER -u BITBUCKET_PASSWORD -u BB_HTTP_TOKEN BITBUCKET_URL="$BASE_URL" BITBUCKET_TOKEN="$TOKEN" \
        "${server_prefix[@]}" "$BB" ai mcp serve --http 127.0.0.1:0 </dev/null >/dev/null 2>"$1" &
    SPID=$!
    PIDS+=("$SPID")
    SURL=$(wait_url "$1" "$SPID")
}
start_rmcp() {
    "${server_prefix[@]}" "$RMCP" --catalogue "$WORK/catalogue.json" </dev/null >/dev/null 2>"$1" &
    SPID=$!
    PIDS+=("$SPID")
    SURL=$(wait_url "$1" "$SPID")
}
# idle_rss START: VmRSS of a fresh server 0.3 s after it printed its address; then it is stopped.
idle_rss() {
    "$1" "$WORK/idle.err"
    sleep 0.3
    kib "$SPID" VmRSS
    kill "$SPID" 2>/dev/null || true
    wait "$SPID" 2>/dev/null || true
}
middle() { printf '%s\n' "$@" | sort -n | awk '{ a[++n] = $1 } END { print (n % 2) ? a[(n + 1) / 2] : int((a[n / 2] + a[n / 2 + 1]) / 2) }'; }

start_bb "$WORK/bb.err"
BB_PID=$SPID
BB_URL=$SURL
"$LOAD" dump --url "$BB_URL" --out "$WORK/catalogue.json" >&2

say "idle RSS: $IDLE_STARTS fresh starts of each, alternately…"
bb_idle=()
rmcp_idle=()
for i in $(seq 1 "$IDLE_STARTS"); do
    bb_idle+=("$(idle_rss start_bb)")
    rmcp_idle+=("$(idle_rss start_rmcp)")
done
BB_IDLE=$(middle "${bb_idle[@]}")
RMCP_IDLE=$(middle "${rmcp_idle[@]}")

start_rmcp "$WORK/rmcp.err"
RMCP_PID=$SPID
RMCP_URL=$SURL
say "bb $BB_URL (pid $BB_PID), rmcp-ref $RMCP_URL (pid $RMCP_PID), catalogue $(wc -c <"$WORK/catalogue.json") bytes"

# --- memory with 64 open sessions ----------------------------------------------------------------
sessions_rss() { "${load_prefix[@]}" "$LOAD" sessions --url "$1" --count 64 --pid "$2" | sed -n 's/.*rss_kib=\([0-9]*\).*/\1/p'; }
BB_64=$(sessions_rss "$BB_URL" "$BB_PID")
RMCP_64=$(sessions_rss "$RMCP_URL" "$RMCP_PID")

# --- throughput ----------------------------------------------------------------------------------
declare -A V # "request|mode|conns|server|metric" -> values of the rounds, space-separated
FAILED=0
GEN_MAX=0
limit=$(awk -v w="$WARMUP" -v d="$DURATION" 'BEGIN { printf "%d", w + d + 60 }')
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

one_run() { # server url pid request mode conns
    local server=$1 url=$2 pid=$3 request=$4 mode=$5 conns=$6 out key
    key="$request|$mode|$conns|$server"
    kill -0 "$pid" 2>/dev/null || die "$server (pid $pid) is gone"
    if out=$(timeout "$limit" "${load_prefix[@]}" "$LOAD" run --url "$url" --pid "$pid" --request "$request" \
        --mode "$mode" --connections "$conns" --warmup "$WARMUP" --duration "$DURATION" 2>&1); then
        echo "$server $request $mode $conns $out" >>"$RAW"
        V[$key|rps]+=" $(field rps "$out")"
        V[$key|p50]+=" $(field p50_us "$out")"
        V[$key|p99]+=" $(field p99_us "$out")"
        V[$key|cpu]+=" $(field server_cpu_us_per_req "$out")"
        V[$key|bytes]=$(field answer_bytes "$out")
        GEN_MAX=$(awk -v a="$GEN_MAX" -v b="$(field gen_cpu_pct "$out")" 'BEGIN { print (b > a ? b : a) }')
        [ "$(field errors "$out")" = 0 ] && [ "$(field dead "$out")" = 0 ] ||
            { say "  $server $request $mode $conns: errors in the run: $out"; FAILED=$((FAILED + 1)); }
    else
        say "  $server $request $mode $conns: run failed: $out"
        echo "$server $request $mode $conns FAILED $out" >>"$RAW"
        FAILED=$((FAILED + 1))
    fi
}

median() {
    printf '%s\n' $1 | grep -v '^$' | sort -g | awk '{ a[++n] = $1 } END {
        if (n == 0) { print "NA"; exit }
        print (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }'
}

nconns=$(wc -w <<<"$CONNS")
total=$((2 * 2 * nconns * 2 * ROUNDS))
n=0
started=$(date +%s)
for request in list show; do
    for mode in session stateless; do
        for conns in $CONNS; do
            for round in $(seq 1 "$ROUNDS"); do
                n=$((n + 1))
                say "[$n/$total] $request $mode $conns connections, round $round: bb"
                one_run bb "$BB_URL" "$BB_PID" "$request" "$mode" "$conns"
                n=$((n + 1))
                say "[$n/$total] $request $mode $conns connections, round $round: rmcp"
                one_run rmcp "$RMCP_URL" "$RMCP_PID" "$request" "$mode" "$conns"
            done
        done
    done
done
BB_AFTER=$(kib "$BB_PID" VmRSS)
BB_HWM=$(kib "$BB_PID" VmHWM)
RMCP_AFTER=$(kib "$RMCP_PID" VmRSS)
RMCP_HWM=$(kib "$RMCP_PID" VmHWM)

# --- report --------------------------------------------------------------------------------------
declare -A MISS # target -> rows that miss it
f0() { [ "$1" = NA ] && echo NA || printf '%.0f' "$1"; }
f1() { [ "$1" = NA ] && echo NA || printf '%.1f' "$1"; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "NA" && b != "NA" && a + 0 >= b + 0) }'; }

echo
RMCP_VERSION=$(awk '/^name = "rmcp"$/ { getline; gsub(/version = |"/, ""); print }' "$HERE/Cargo.lock")
BB_REV=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
if [ -n "$PIN_SERVER$PIN_LOAD" ]; then
    PINNING="servers pinned to CPUs ${PIN_SERVER:-any}, load generator to ${PIN_LOAD:-any}"
else
    PINNING="nothing pinned"
fi
[ "$LOAD_NICE" != 0 ] && PINNING="$PINNING, load generator at niceness $LOAD_NICE"
echo "bb ($BB_REV) vs rmcp-ref (rmcp $RMCP_VERSION, axum, tokio): $ROUNDS rounds of $DURATION s after $WARMUP s warm-up,"
echo "bb and rmcp alternately, medians of the rounds; $(nproc) cores, $PINNING."
echo
echo "| request | mode | connections | bb req/s | rmcp req/s | bb / rmcp | p50 bb µs | p99 bb µs | p50 rmcp µs | p99 rmcp µs | CPU µs/req bb / rmcp |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for request in list show; do
    label=$([ "$request" = list ] && echo "tools/list" || echo "tools/call show")
    for mode in session stateless; do
        mlabel=$([ "$mode" = session ] && echo "sessions (2025-11-25)" || echo "stateless (2026-07-28)")
        for conns in $CONNS; do
            b="$request|$mode|$conns|bb"
            r="$request|$mode|$conns|rmcp"
            brps=$(median "${V[$b|rps]:-}")
            rrps=$(median "${V[$r|rps]:-}")
            bp50=$(median "${V[$b|p50]:-}")
            bp99=$(median "${V[$b|p99]:-}")
            rp50=$(median "${V[$r|p50]:-}")
            rp99=$(median "${V[$r|p99]:-}")
            bcpu=$(median "${V[$b|cpu]:-}")
            rcpu=$(median "${V[$r|cpu]:-}")
            ratio=$(awk -v a="$brps" -v b="$rrps" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "NA"; else printf "%.2f×", a / b }')
            echo "| $label | $mlabel | $conns | $(f0 "$brps") | $(f0 "$rrps") | $ratio | $(f0 "$bp50") | $(f0 "$bp99") | $(f0 "$rp50") | $(f0 "$rp99") | $(f1 "$bcpu") / $(f1 "$rcpu") |"
            # At 16 and 64 connections bb is to answer at least 1.5x rmcp's rate (issue 39), at 1 at least rmcp's.
            want=$(awk -v r="$rrps" -v c="$conns" 'BEGIN { if (r == "NA") print "NA"; else print (c >= 16 ? 1.5 : 1) * r }')
            ge "$brps" "$want" || MISS[rps$conns]+="${MISS[rps$conns]:+, }$label $mode"
            ge "$rp99" "$bp99" || MISS[p99]+="${MISS[p99]:+, }$label $mode $conns"
            if [ "$conns" -ge 16 ]; then
                ge "$(awk -v a="$bp50" 'BEGIN { print (a == "NA") ? "NA" : 2 * a }')" "$bp99" ||
                    MISS[tail]+="${MISS[tail]:+, }$label $mode $conns"
            fi
        done
    done
done
echo
echo "Answer body sizes in bytes (bb / rmcp): $(for request in list show; do for mode in session stateless; do
    c=${CONNS%% *}
    printf '%s %s %s / %s; ' "$request" "$mode" "${V[$request|$mode|$c|bb|bytes]:-NA}" "${V[$request|$mode|$c|rmcp|bytes]:-NA}"
done; done | sed 's/; $//')."
echo
echo "Memory (KiB, VmRSS; the servers' own /proc/PID/status):"
echo
echo "| | bb | rmcp |"
echo "|---|---:|---:|"
echo "| idle after start (median of $IDLE_STARTS starts: ${bb_idle[*]} / ${rmcp_idle[*]}) | $BB_IDLE | $RMCP_IDLE |"
echo "| 64 open sessions | $BB_64 | $RMCP_64 |"
echo "| after the load | $BB_AFTER | $RMCP_AFTER |"
echo "| peak (VmHWM) | $BB_HWM | $RMCP_HWM |"
for m in idle:BB_IDLE:RMCP_IDLE 64:BB_64:RMCP_64 after:BB_AFTER:RMCP_AFTER peak:BB_HWM:RMCP_HWM; do
    IFS=: read -r name bv rv <<<"$m"
    ge "${!rv}" "${!bv}" || MISS[rss]+="${MISS[rss]:+, }$name"
done
echo
mark() { [ -z "${MISS[$1]:-}" ] && echo "met" || echo "not met (${MISS[$1]})"; }
echo "Targets:"
echo
for conns in $CONNS; do
    echo "- bb ≥ $([ "$conns" -ge 16 ] && echo 1.5 || echo 1.0)× rmcp req/s at $conns connection(s): $(mark "rps$conns")"
done
echo "- p99 bb ≤ p99 rmcp: $(mark p99)"
echo "- p99 bb ≤ 2× p50 bb at 16 and 64 connections: $(mark tail)"
echo "- RSS bb ≤ rmcp: $(mark rss)"
echo
echo "Notes: the load generator (mcp-load, one thread) runs on the same $(nproc) cores as the server under test"
echo "(it used at most ${GEN_MAX}% of a core in any run), so both servers compete with it alike. CPU µs/req is the"
echo "server's utime+stime over the measured window divided by the requests answered in it. rmcp answers with sessions"
echo "as text/event-stream (its session mode always streams), bb as application/json; stateless requests are the"
echo "same 2026-07-28 requests for both, answered as JSON by both. Raw runs: bench/compare/target/last-run.txt."
[ "$FAILED" = 0 ] || echo "$FAILED run(s) failed or had errors: see bench/compare/target/last-run.txt."
say "done in $(($(date +%s) - started)) s of runs"
