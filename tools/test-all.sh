#!/usr/bin/env bash
# Runs every test bb has: the Rust workspace (unit, property, end-to-end against the local stack)
# and the end-to-end tests with real MCP clients from the npm registry.
# Needs: cargo, node and npm. Installs the npm packages from the committed lockfiles.
set -euo pipefail
cd "$(dirname "$0")/.."

# Property tests run with a pinned seed unless one is given.
export BB_PROPTEST_SEED="${BB_PROPTEST_SEED:-187}"

echo "== build"
cargo build --workspace --all-targets

echo "== npm packages"
for dir in tests/e2e tests/conformance; do
  if [ -f "$dir/package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done

if [ -x tests/conformance/run.sh ]; then
  echo "== MCP conformance suite (HTTP)"
  bash tests/conformance/run.sh
fi

echo "== cargo test"
cargo test --workspace

echo "== end-to-end with the reference MCP client"
(cd tests/e2e && node --test)
