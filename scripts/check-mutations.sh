#!/usr/bin/env bash
# Gate for the mutation catalogue (scripts/mutation-check.sh runs it; docs/testing.md lists it):
# every row of scripts/mutations/mutations.tsv has a patch that still applies to the tree, and
# every patch has a row. A refactor that moves the
# mutated line must remake the patch, or the mutation would silently stop being checked.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
declare -A listed
while IFS=$'\t' read -r name _; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  listed[$name]=1
  patch=scripts/mutations/$name.patch
  if [ ! -f "$patch" ]; then
    echo "check-mutations: $name is listed but $patch is missing" >&2
    status=1
  elif ! git apply --check "$patch" 2>/dev/null; then
    echo "check-mutations: $patch no longer applies; remake it against the current code" >&2
    status=1
  fi
done < scripts/mutations/mutations.tsv
for patch in scripts/mutations/*.patch; do
  name=$(basename "$patch" .patch)
  if [ -z "${listed[$name]:-}" ]; then
    echo "check-mutations: $patch has no row in scripts/mutations/mutations.tsv" >&2
    status=1
  fi
done
exit $status
