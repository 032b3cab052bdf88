#!/usr/bin/env bash
# ./gtpcp demo: a gtpcp group working on this machine, then gone.
#
# Starts a group of 2 workers on 127.0.0.1 with the example routing document
# (config/routing.yaml: pool "internet" = pgw1 and pgw2 weighted 3:1, pool
# "ims" = pgw3), drives it with gtpcp-peer as 2 SGWs and the 3 PGWs through
# attach / modify / detach for a few thousand subscribers on two APNs, prints
# a summary and a few of its metrics from gtpcp-console, and stops everything it
# started.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${GTPCP_BIN:-$ROOT/build/release/bin}"
WORK="$(mktemp -d /tmp/gtpcp-demo-XXXXXX)"
CONFIG="$WORK/gtpcp.yaml"
SUBSCRIBERS="${GTPCP_DEMO_SUBSCRIBERS:-3000}"
RATE="${GTPCP_DEMO_RATE:-3000}"

cat >"$CONFIG" <<EOF
# The demo's instance: config/gtpcp.yaml's defaults, group "demo".
group: demo
run_dir: $WORK/run
workers: 2
routing: $ROOT/config/routing.yaml
gtpc:
  access:
    ipv4: 127.0.0.1
  recovery: 7
EOF

cleanup() {
  "$BIN/gtpcp" -c "$CONFIG" stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== gtpcp demo"
echo "routing document: $ROOT/config/routing.yaml"
"$BIN/gtpcp" -c "$CONFIG" check-config | sed 's/^/  /'
echo
echo "== starting the group"
"$BIN/gtpcp" -c "$CONFIG" start | sed 's/^/  /'
echo
echo "== $SUBSCRIBERS subscribers attach, modify 3 times and detach, at $RATE transactions/s"
echo "   2 SGWs (127.0.0.11, .12) -> gtpcp (127.0.0.1) -> 3 PGWs (127.0.0.21, .22, .23)"
# IMSIs outside the routing document's test range (0010100...), so that the
# APN picks the pool: internet -> pgw1/pgw2 by weight, ims -> pgw3.
set +e
"$BIN/gtpcp-peer" --proxy 127.0.0.1 --sgw 127.0.0.11,127.0.0.12 --pgw 127.0.0.21,127.0.0.22,127.0.0.23 \
  --subscribers "$SUBSCRIBERS" --imsi-start 001011000000001 --apn internet,ims --modify 3 --cycles 1 \
  --rate "$RATE" --duration 30 --progress --json "$WORK/peer.json" 2>&1 >"$WORK/peer.txt" | sed 's/^/  /'
status=${PIPESTATUS[0]}
set -e

echo
echo "== summary"
python3 - "$WORK/peer.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
t = s["transactions"]
lat = s["latency_ms"]
names = {"127.0.0.21": "pgw1 (internet, weight 3)", "127.0.0.22": "pgw2 (internet, weight 1)",
         "127.0.0.23": "pgw3 (ims)"}
print(f"  sessions      created {s['sessions']['created']}, rejected {s['sessions']['rejected']}, "
      f"closed {s['sessions']['deleted']}")
print("  split         " + ", ".join(f"{names.get(k, k)}: {v}" for k, v in sorted(s["split"].items())))
print(f"  transactions  {t['total']['completed']} of {t['total']['attempted']} completed "
      f"({t['create_session']['completed']} create, {t['modify_bearer']['completed']} modify, "
      f"{t['delete_session']['completed']} delete), {s['tps_achieved']:.0f} per second")
print(f"  latency       p50 {lat['all']['p50']:.3f} ms, p99 {lat['all']['p99']:.3f} ms, "
      f"p99.9 {lat['all']['p99_9']:.3f} ms")
errors = s["timeouts"] + s["mismatches"]["total"] + s["malformed"]["total"]
print(f"  errors        {s['timeouts']} timeouts, {s['mismatches']['total']} mismatches "
      f"(wrong TEID, sequence number or F-TEID), {s['malformed']['total']} malformed")
print("  result        " + ("OK" if errors == 0 else "ERRORS"))
EOF
echo
echo "== the proxy's own view (gtpcp status)"
"$BIN/gtpcp" -c "$CONFIG" status | sed 's/^/  /'
echo
echo "== its metrics, as Prometheus scrapes them (http://127.0.0.1:9123/metrics; dashboards in deploy/grafana)"
python3 - <<'EOF'
import re, urllib.error, urllib.request
def get(path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:9123" + path, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
status, ready = get("/readyz")
print(f"  /readyz       {status} {ready.strip().splitlines()[0]}")
_, text = get("/metrics")
series = [l for l in text.splitlines() if l and not l.startswith("#")]
print(f"  /metrics      {len(series)} series, {len(text)} bytes; among them:")
wanted = re.compile(r'^gtpcp_(transactions_total|gateway_creations_accepted_total|gateway_up|rule_sessions_total|sessions)\{')
for l in series:
    if wanted.match(l):
        print("    " + l)
count = next((float(l.rsplit(" ", 1)[1]) for l in series
              if l.startswith('gtpcp_proxy_latency_seconds_count{version="2"}')), 0)
for l in series:
    m = re.match(r'^gtpcp_proxy_latency_seconds_bucket\{version="2",le="([^"]+)"\} (\S+)$', l)
    if count and m and m.group(1) != "+Inf" and float(m.group(2)) >= 0.99 * count:
        print(f"  proxy-added latency, GTPv2: 99% of {int(count)} messages under {float(m.group(1)) * 1e3:g} ms")
        break
EOF
echo
echo "== stopping"
"$BIN/gtpcp" -c "$CONFIG" stop | sed 's/^/  /'
exit "$status"
