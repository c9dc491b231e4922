#!/usr/bin/env bash
# Bounded load test on loopback: starts a server on a fresh world, runs `voxcol loadtest` against
# it (default 32 streams for 60 s plus an editing client), samples the server's resident memory
# every second, and prints the report with peak and final RSS. Run after scripts/build.sh.
#
#   bash scripts/loadtest.sh [--seconds=60] [--streams=32] [--batch_size=64] [--edit_rate=20]
#
# Server flags come from VOXCOL_SERVER_FLAGS, e.g. the cache budgets whose sum bounds memory:
#   VOXCOL_SERVER_FLAGS="--store_cache_mb=64 --chunk_collision_cache_mb=64" bash scripts/loadtest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/voxcol-load.XXXX)
build/server/voxcol_server --data_dir="$work/data" --listen=127.0.0.1:0 --port_file="$work/port" \
  --metrics_listen=127.0.0.1:0 ${VOXCOL_SERVER_FLAGS:-} 2>"$work/server.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
rss_kb() { awk '/VmRSS/{print $2}' /proc/$pid/status; }
start_rss=$(rss_kb)
peak=$start_rss
( while kill -0 $pid 2>/dev/null; do r=$(rss_kb); echo "$r"; sleep 1; done ) > "$work/rss" &
sampler=$!
status=0
build/client/voxcol --server="127.0.0.1:$port" loadtest "$@" || status=$?
kill $sampler 2>/dev/null || true
peak=$(sort -n "$work/rss" | tail -1)
echo "server RSS: start $((start_rss / 1024)) MiB, peak $((peak / 1024)) MiB, end $(( $(rss_kb) / 1024 )) MiB"
exit $status
