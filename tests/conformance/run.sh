#!/usr/bin/env bash
# The MCP conformance suite (@modelcontextprotocol/conformance, on the Node 22 from the `node` package) against
# `bb ai mcp serve --http`. Builds nothing: run `cargo build -p bb` first (or set BB_BIN), and `npm ci` here once.
# Exits non-zero if any scenario fails.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bb="${BB_BIN:-$root/target/debug/bb}"
node="$here/node_modules/.bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
scenarios=(server-initialize ping tools-list resources-list logging-set-level dns-rebinding-protection)

[ -x "$bb" ] || { echo "run.sh: no bb binary at $bb (cargo build -p bb, or set BB_BIN)" >&2; exit 2; }
[ -x "$node" ] && [ -f "$suite" ] || { echo "run.sh: run \`npm ci\` in $here first" >&2; exit 2; }

log="$(mktemp)"
"$bb" ai mcp serve --http 127.0.0.1:0 --log-level warning 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$log"' EXIT

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
