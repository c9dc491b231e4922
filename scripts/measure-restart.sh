#!/usr/bin/env bash
# Time from starting voxcol_server on a data directory with N stored edited chunks until it serves
# (the server writes --port_file once the gRPC server is up). Usage:
#   bash scripts/measure-restart.sh [BUILD_DIR] [CHUNKS] [RUNS]
# Every run but the last ends with kill -9, so the next start replays the write-ahead log (the
# slow case); the last run follows a clean shutdown.
set -euo pipefail
build=${1:-build}
chunks=${2:-100000}
runs=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$build/tests/bench/voxcol_store_populate" --data_dir="$work/data" --chunks="$chunks"
du -sh "$work/data/store" | sed 's/^/store size: /'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq "$runs"); do
  rm -f "$work/port"
  start=$(date +%s.%N)
  "$build/server/voxcol_server" --data_dir="$work/data" --listen=127.0.0.1:0 --port_file="$work/port" \
    2>"$work/server.log" &
  pid=$!
  while [ ! -s "$work/port" ]; do sleep 0.005; done
  end=$(date +%s.%N)
  address=127.0.0.1:$(cat "$work/port")
  # A first query through the edited block: its chunks load from the store on this first touch.
  hit=$("$build/client/voxcol" --server="$address" raycast --origin=-500.5,90,-500.5 --direction=0,-1,0 | head -1)
  version=$("$build/client/voxcol" --server="$address" --json info | grep -o '"version":"[0-9]*"')
  if [ "$run" -lt "$runs" ]; then
    kill -9 "$pid"; how="kill -9"
  else
    kill "$pid"; how="SIGTERM"
  fi
  wait "$pid" || true
  echo "run $run: serving after $(awk "BEGIN { printf \"%.3f\", $end - $start }") s; $version; first raycast: $hit; stopped with $how"
done
