#!/usr/bin/env bash
# Checks deploy/monitoring (issue 40):
#   1. promtool checks the alert rules and runs their unit tests (each alert fires on synthetic
#      series of its failure and stays quiet on healthy ones: alerts_test.yml);
#   2. a real primary and a read replica following it are started on loopback and scraped; every
#      metric that a dashboard panel's query or an alert rule names must be one of theirs;
#   3. self-test: a misspelled metric in a panel and in a rule must each be reported.
# usage: scripts/check-monitoring.sh build/server/voxcol_server
set -euo pipefail
cd "$(dirname "$0")/.."
server=${1:?usage: scripts/check-monitoring.sh path/to/voxcol_server}
promtool=${PROMTOOL:-.deps/bin/promtool}
"$promtool" check rules deploy/monitoring/alerts.yml >/dev/null
"$promtool" test rules deploy/monitoring/alerts_test.yml >/dev/null
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# Starts a server with the given flags and the log in $work/$1.log; waits for both ports.
start() {
  local name=$1
  shift
  "$server" --data_dir="$work/$name" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 \
    --world_size=64,64,64 "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 200); do
    grep -q "event=serving" "$work/$name.log" && grep -q "event=metrics_serving" "$work/$name.log" && return 0
    sleep 0.1
  done
  cat "$work/$name.log" >&2
  echo "check-monitoring: $name did not start" >&2
  exit 1
}
port_of() { sed -n "s/.*event=$2 .*port=\([0-9]*\).*/\1/p" "$work/$1.log" | head -1; }
start primary
start replica --replica_of="127.0.0.1:$(port_of primary serving)"
for name in primary replica; do
  /usr/bin/python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
    "http://127.0.0.1:$(port_of "$name" metrics_serving)/metrics" >"$work/$name.metrics"
done
/usr/bin/python3 - "$work" <<'PY'
import copy, json, re, sys
import yaml

work = sys.argv[1]
exported = set()
for name in ("primary", "replica"):
    for line in open(f"{work}/{name}.metrics"):
        m = re.match(r"# TYPE (\w+) (\w+)", line)
        if m:
            exported.add(m.group(1))
            if m.group(2) == "histogram":
                exported.update(m.group(1) + s for s in ("_bucket", "_sum", "_count"))

def names(expr):
    return set(re.findall(r"\b((?:voxcol|process)_\w+)", expr))

def unknown(dashboard, rules):
    errors = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            for n in sorted(names(target["expr"]) - exported):
                errors.append(f"panel {panel['title']!r}: {n} is not exported")
    for v in dashboard.get("templating", {}).get("list", []):
        for n in sorted(names(str(v.get("query", ""))) - exported):
            errors.append(f"variable {v['name']}: {n} is not exported")
    for group in rules["groups"]:
        for rule in group["rules"]:
            for n in sorted(names(rule["expr"]) - exported):
                errors.append(f"alert {rule['alert']}: {n} is not exported")
    return errors

dashboard = json.load(open("deploy/monitoring/grafana-dashboard.json"))
rules = yaml.safe_load(open("deploy/monitoring/alerts.yml"))
errors = unknown(dashboard, rules)
for e in errors:
    print(f"check-monitoring: {e}", file=sys.stderr)
if errors:
    sys.exit(1)
panels = sum(len(p.get("targets", [])) for p in dashboard["panels"])
bad = copy.deepcopy(dashboard)
bad["panels"][0]["targets"][0]["expr"] = "rate(voxcol_edit_ack_seconds_bucket[5m])"
assert unknown(bad, rules), "a panel naming a missing metric was not caught"
bad = copy.deepcopy(rules)
bad["groups"][0]["rules"][0]["expr"] = "voxcol_replica_lag > 5"
assert unknown(dashboard, bad), "a rule naming a missing metric was not caught"
print(f"check-monitoring: rules tested; {panels} panel queries and "
      f"{sum(len(g['rules']) for g in rules['groups'])} rules name only exported metrics "
      f"({len(exported)} names from a primary and a replica); 2 self-test mutations caught")
PY
