#!/bin/bash
# The benchmark's floor: gtpcp-peer (SGWs and a PGW) through gtpcp-relay,
# modify-only, one run per rate given, one line each (tx/s achieved, Modify
# Bearer latency, timeouts, drops). Every run is bounded (--duration, timeout)
# and the relay it starts is stopped by PID.
#   tools/relay/floor.sh [-b BUILD_DIR] RATE...
set -euo pipefail
BUILD="$(cd "$(dirname "$0")/../.." && pwd)/build/release"
if [[ "${1:-}" == "-b" ]]; then BUILD="$2"; shift 2; fi
BIN="$BUILD/bin"
NET=127.58.0
DURATION=${DURATION:-5}
SUBSCRIBERS=${SUBSCRIBERS:-20000}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for rate in "$@"; do
  "$BIN/gtpcp-relay" --listen $NET.1 --upstream $NET.21 --pairs $NET.11,$NET.12 \
    --duration $((DURATION * 4 + 30)) > "$OUT/relay.out" 2>&1 &
  relay=$!
  sleep 0.2
  rc=0
  timeout $((DURATION * 4 + 30)) "$BIN/gtpcp-peer" --proxy $NET.1 --relay --sgw $NET.11,$NET.12 \
    --pgw $NET.21 --subscribers "$SUBSCRIBERS" --mode modify-only --rate "$rate" \
    --setup-rate 10000 --duration "$DURATION" --t3-ms 1000 --json "$OUT/peer.json" \
    > "$OUT/peer.out" 2>&1 || rc=$?
  kill "$relay" 2>/dev/null || true
  wait "$relay" 2>/dev/null || true
  python3 - "$OUT/peer.json" "$rate" "$rc" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); l = j["latency_ms"]["modify_bearer"]
print("rate %7s exit %s  tx/s %8.0f  p50 %8.3f  p99 %8.3f  p99.9 %8.3f  max %8.3f ms  "
      "timeouts %d  retrans %d  drops %d  lagged %d" %
      (sys.argv[2], sys.argv[3], j["tps_achieved"], l["p50"], l["p99"], l["p99_9"], l["max"],
       j["timeouts"], j["retransmissions"], j["socket"]["drops"], j["schedule"]["lagged"]))
PY
done
