#!/usr/bin/env bash
# Runs every test bb has: the Rust workspace (unit, property, end-to-end against the local stack)
# and the end-to-end tests with real MCP clients from the npm registry and PyPI.
# Needs: cargo, node, npm, Debian chromium (browser tests), haproxy (the scale-out test), redis-server (the shared rate budget)
# and python3 with venv (the Python SDK's login). Installs the npm packages from the committed lockfiles and the Python
# SDK from tests/python/requirements.txt into a temporary venv.
set -euo pipefail
cd "$(dirname "$0")/.."

# What the tests need beyond cargo: node with npm, and Debian's chromium for the browser tests.
# As root (CI, a fresh machine) they are installed; otherwise say what is missing.
need() {
  if ! command -v "$1" >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      [ -n "${apt_updated:-}" ] || { apt-get update; apt_updated=1; }
      apt-get install -y "$2"
    else
      echo "test-all: $1 is missing: install the Debian package $2" >&2
      exit 1
    fi
  fi
}
need node nodejs
need npm npm
need chromium chromium
# The scale-out test puts two bb processes behind a real load balancer.
need haproxy haproxy
# The replicas' shared rate budget (--rate-store) is tested against a real Redis.
need redis-server redis-server
# The official MCP Python SDK logs in (tests/python/), from a venv: Debian's python3 needs python3-venv for that.
need python3 python3
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    [ -n "${apt_updated:-}" ] || { apt-get update; apt_updated=1; }
    apt-get install -y python3-venv
  else
    echo "test-all: python3 cannot make a venv: install the Debian package python3-venv" >&2
    exit 1
  fi
fi

# Property tests run with a pinned seed unless one is given.
export BB_PROPTEST_SEED="${BB_PROPTEST_SEED:-187}"

echo "== build"
cargo build --workspace --all-targets

echo "== install bb into a temporary root, as the README says (reusing this build: a few seconds, not a release build)"
root="$(mktemp -d)"
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}" cargo install --locked --offline --debug --quiet --path app --root "$root"
"$root/bin/bb" --version | grep -E '^bb [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}|unknown)\)$'
rm -rf "$root"

echo "== npm packages"
for dir in tests/e2e tests/conformance tests/browser; do
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

echo "== browser tests of the view page (headless Chromium, the reference AppBridge as host)"
(cd tests/browser && node --test)

echo "== end-to-end with the official MCP Python SDK (PyPI mcp, pinned in tests/python/requirements.txt)"
venv="$(mktemp -d)"
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/python/requirements.txt
"$venv/bin/python" -m unittest discover -s tests/python -v
