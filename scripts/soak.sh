#!/usr/bin/env bash
# Soak (issue 38): a primary and a read replica under mixed load (edits with idempotency keys,
# rays on both, a change-feed subscriber) while faults strike at random every 1-4 s: kill -9 of
# either server, and partitions, 200 ms delays, throttling and resets through fault proxies
# between the replica and the primary and between the clients and the primary. At the end every
# acknowledged edit must be on the primary after one more kill -9, the replica must hold the
# primary's voxels byte for byte at the same version, no answer may be other than OK or a
# transport failure, the feed must have no gap, and no server may have grown by more than
# --rss_growth_mb. Builds what it needs into build/.
#
# Usage: bash scripts/soak.sh [--minutes=N (default 5)] [--seed=S] [--rss_growth_mb=M]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=5
args=()
for arg in "$@"; do
  case "$arg" in
    --minutes=*) minutes=${arg#--minutes=} ;;
    --seed=* | --rss_growth_mb=*) args+=("$arg") ;;
    *) echo "usage: bash scripts/soak.sh [--minutes=N] [--seed=S] [--rss_growth_mb=M]" >&2; exit 2 ;;
  esac
done
if ! [[ "$minutes" =~ ^[0-9]+$ ]] || [ "$minutes" -lt 1 ]; then
  echo "soak.sh: --minutes must be a positive whole number" >&2
  exit 2
fi
bash scripts/build.sh voxcol_server voxcol_soak >/dev/null
exec build/tests/soak/voxcol_soak --server=build/server/voxcol_server \
  --seconds=$((minutes * 60)) "${args[@]}"
