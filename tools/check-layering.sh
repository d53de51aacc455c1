#!/usr/bin/env bash
# The layering check (issue 10): no import circle in core/src (between its top-level modules, with the
# folder rules of tools/, views/, reads/ and writes/), none between the files of app, bitbucket, shell-http,
# shell-stdio, drive, the Bitbucket stand-in (tools/stack) and the hyper-on-smol glue (hyper-smol), no drive loop
# (`poll_output()`) outside core, drive/src and test, bench or fuzz code, and no crate naming a bb crate that is
# not below it (app -> shell-stdio, shell-http, bitbucket -> drive -> core).
# See tools/check-layering.py for how imports are read.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tools/check-layering.py "$@"
