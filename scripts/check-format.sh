#!/usr/bin/env bash
# Fails (exit 1) when clang-format, with the committed .clang-format, would change any tracked C++
# file, and names the files. `--fix` formats them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: clang-format would change ${#bad[@]} file(s):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "run: bash scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files clean"
