#!/usr/bin/env bash
# The MCP conformance suite (@modelcontextprotocol/conformance, on the Node 22 from the `node` package) against
# `bb ai mcp serve --http`, with the local Bitbucket stand-in behind it (resources/list reads the person's pull
# requests). Builds nothing: run `cargo build -p bb -p bb-stack` first (or set BB_BIN and BB_STACK_BIN), and
# `npm ci` here once.
# Exits non-zero if any scenario fails.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bb="${BB_BIN:-$root/target/debug/bb}"
stack="${BB_STACK_BIN:-$(dirname "$bb")/bb-stack}"
node="$here/node_modules/.bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
scenarios=(server-initialize ping tools-list resources-list prompts-list logging-set-level dns-rebinding-protection)

[ -x "$bb" ] || { echo "run.sh: no bb binary at $bb (cargo build -p bb, or set BB_BIN)" >&2; exit 2; }
[ -x "$stack" ] || { echo "run.sh: no stand-in at $stack (cargo build -p bb-stack, or set BB_STACK_BIN)" >&2; exit 2; }
[ -x "$node" ] && [ -f "$suite" ] || { echo "run.sh: run \`npm ci\` in $here first" >&2; exit 2; }

log="$(mktemp)"
stack_out="$(mktemp)"
"$stack" --port 0 >"$stack_out" &
stack_pid=$!
pid=""
trap 'kill $pid "$stack_pid" 2>/dev/null; wait $pid "$stack_pid" 2>/dev/null; rm -f "$log" "$stack_out"' EXIT
for _ in $(seq 1 100); do
  [ "$(wc -l <"$stack_out")" -ge 2 ] && break
  kill -0 "$stack_pid" 2>/dev/null || { echo "run.sh: the stand-in exited" >&2; exit 2; }
  sleep 0.05
done
stack_url="$(sed -n 1p "$stack_out")"
stack_token="$(sed -n 2p "$stack_out")"
case "$stack_url" in http://*) ;; *) echo "run.sh: the stand-in printed no URL" >&2; exit 2 ;; esac

BITBUCKET_URL="$stack_url" BITBUCKET_TOKEN="$stack_token" "$bb" ai mcp serve --http 127.0.0.1:0 --log-level warning 2>"$log" &
pid=$!

url=""
for _ in $(seq 1 100); do
  url="$(head -n 1 "$log")"
  case "$url" in http://*) break ;; esac
  kill -0 "$pid" 2>/dev/null || { echo "run.sh: bb exited: $(cat "$log")" >&2; exit 2; }
  sleep 0.05
done
case "$url" in http://*) ;; *) echo "run.sh: bb printed no URL" >&2; exit 2 ;; esac
echo "bb serves $url"

failed=()
for s in "${scenarios[@]}"; do
  echo "=== $s"
  if ! (cd "$here" && "$node" "$suite" server --url "$url" --scenario "$s"); then
    failed+=("$s")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "conformance: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "conformance: all ${#scenarios[@]} scenarios passed"
