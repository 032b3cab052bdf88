#!/usr/bin/env bash
# ./gtpcp bench: the data path (a group driven by the emulator, against a bare
# relay) and the codec, with figures printed. Figures mean most on an
# otherwise idle machine; the options of tools/bench/bench.py pass through.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec python3 "$ROOT/tools/bench/bench.py" "$@"
