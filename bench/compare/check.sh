#!/usr/bin/env bash
# The bench regression check CI runs: bb's tools/list throughput as a ratio of the rmcp reference
# server's, measured in this run on this machine, against the ratio committed in `baseline.txt`.
# It fails when a ratio has dropped to less than half its baseline (a 2x regression), never on an
# absolute time: both servers run on the same cores under the same noise, alternately.
#
#   bash bench/compare/check.sh           # measure and compare (CI)
#   bash bench/compare/check.sh --write   # measure and write baseline.txt (commit it with the change that moved it)
#
# Builds what run.sh builds (bb and the stand-in in release, fat LTO; rmcp-ref and mcp-load in their own
# workspace), then for each row of baseline.txt (request, mode, connections) runs bb and rmcp
# alternately ROUNDS times for DURATION seconds each after WARMUP, and takes the median of the
# per-round ratios. Environment: ROUNDS (5), DURATION (2), WARMUP (0.5), BB_BIN, STACK_BIN.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-2}
WARMUP=${WARMUP:-0.5}
WRITE=0
[ "${1:-}" = --write ] && WRITE=1

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BASELINE=${BASELINE:-$HERE/baseline.txt}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bb-check.XXXXXX")
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "$*" >&2; }
die() { say "check.sh: $*"; exit 1; }

BB_TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
if [ -z "${BB_BIN:-}" ] || [ -z "${STACK_BIN:-}" ]; then
    say "building bb and bb-stack (release)…"
    (cd "$ROOT" && cargo build --release -q -p bb -p bb-stack)
fi
BB=${BB_BIN:-$BB_TARGET/release/bb}
STACK=${STACK_BIN:-$BB_TARGET/release/bb-stack}
say "building rmcp-ref and mcp-load (bench/compare, its own workspace)…"
cargo build --release -q --locked --manifest-path "$HERE/Cargo.toml" --target-dir "$HERE/target"
LOAD=$HERE/target/release/mcp-load
RMCP=$HERE/target/release/rmcp-ref

# shellcheck source=common.sh
source "$HERE/common.sh"

start_stack

env -u BITBUCKET_USER -u BITBUCKET_PASSWORD -u BB_HTTP_TOKEN -u BB_TOOLSETS BITBUCKET_URL="$BASE_URL" BITBUCKET_TOKEN="$TOKEN" \
    "$BB" ai mcp serve --http 127.0.0.1:0 </dev/null >/dev/null 2>"$WORK/bb.err" &
BB_PID=$!
PIDS+=("$BB_PID")
BB_URL=$(wait_url "$WORK/bb.err" "$BB_PID")
"$LOAD" dump --url "$BB_URL" --out "$WORK/catalogue.json" >&2
"$RMCP" --catalogue "$WORK/catalogue.json" </dev/null >/dev/null 2>"$WORK/rmcp.err" &
RMCP_PID=$!
PIDS+=("$RMCP_PID")
RMCP_URL=$(wait_url "$WORK/rmcp.err" "$RMCP_PID")

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
rps() { # url pid request mode conns
    local out
    out=$("$LOAD" run --url "$1" --pid "$2" --request "$3" --mode "$4" --connections "$5" \
        --warmup "$WARMUP" --duration "$DURATION" 2>&1) || die "a run failed: $out"
    [ "$(field errors "$out")" = 0 ] && [ "$(field dead "$out")" = 0 ] || die "errors in a run: $out"
    field rps "$out"
}
median() { printf '%s\n' "$@" | sort -g | awk '{ a[++n] = $1 } END { print (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }'; }

[ -f "$BASELINE" ] || die "no $BASELINE"
rows=$(grep -v '^#' "$BASELINE" | awk 'NF >= 3 { print $1, $2, $3 }')
[ -n "$rows" ] || die "$BASELINE has no rows"
failed=0
out=()
while read -r request mode conns; do
    ratios=()
    for round in $(seq 1 "$ROUNDS"); do
        b=$(rps "$BB_URL" "$BB_PID" "$request" "$mode" "$conns")
        r=$(rps "$RMCP_URL" "$RMCP_PID" "$request" "$mode" "$conns")
        ratios+=("$(awk -v a="$b" -v b="$r" 'BEGIN { printf "%.3f", a / b }')")
    done
    ratio=$(median "${ratios[@]}")
    base=$(awk -v q="$request" -v m="$mode" -v c="$conns" '$1 == q && $2 == m && $3 == c { print $4 }' "$BASELINE")
    if [ "$WRITE" = 1 ]; then
        out+=("$request $mode $conns $ratio")
        say "$request $mode $conns: bb / rmcp = $ratio (rounds: ${ratios[*]})"
    else
        verdict=ok
        awk -v r="$ratio" -v b="$base" 'BEGIN { exit !(r + 0 >= b / 2) }' || { verdict="FAILED: below half the baseline"; failed=1; }
        echo "$request $mode $conns connections: bb / rmcp = $ratio (rounds: ${ratios[*]}), baseline $base: $verdict"
    fi
done <<<"$rows"

if [ "$WRITE" = 1 ]; then
    {
        echo "# bb's throughput as a ratio of rmcp-ref's (bench/compare/check.sh --write), measured in one run:"
        echo "# request mode connections ratio. check.sh fails when a measured ratio is below half of its row's."
        echo "# Written $(date -u +%Y-%m-%d) at $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown) on $(nproc) cores."
        printf '%s\n' "${out[@]}"
    } >"$BASELINE"
    say "wrote $BASELINE"
fi
exit "$failed"
