#!/usr/bin/env bash
# Structure gates of issue 14: no source file in core/, server/ or client/ over 600 lines, and no
# function there over 80 lines outside the allowlisted hot SIMD traversal
# (scripts/function-length-allowlist.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
while read -r lines file; do
  [ "$file" = total ] && continue
  if [ "$lines" -gt 600 ]; then
    echo "check-sizes: $file has $lines lines (max 600)" >&2
    status=1
  fi
done < <(git ls-files 'core/*.cc' 'core/*.h' 'server/*.cc' 'server/*.h' 'client/*.cc' 'client/*.h' |
  xargs wc -l)
python3 scripts/check-function-length.py core server client || status=1
[ "$status" -eq 0 ] && echo "check-sizes: files <= 600 lines, functions <= 80 lines"
exit "$status"
