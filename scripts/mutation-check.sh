#!/usr/bin/env bash
# Mutation check (not part of CI: it rebuilds). Applies each deliberate bug of
# scripts/mutations/<name>.patch to a scratch worktree of HEAD, rebuilds only the test targets
# listed for it in scripts/mutations/mutations.tsv, runs the matching tests and reports whether
# they caught it (some test failed) or it survived (all passed), with the failing tests. The
# caller's tree is never touched; the scratch worktree is reset after every mutation.
#
# Usage: bash scripts/mutation-check.sh [name...]     (default: every mutation in the list)
# Env:   VOXCOL_MUTATION_DIR  scratch worktree (default: <repo>-mutation beside the repo, so that
#                             ccache's base_dir covers it)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
list="$repo/scripts/mutations/mutations.tsv"
scratch=${VOXCOL_MUTATION_DIR:-"$repo-mutation"}
jobs=${VOXCOL_JOBS:-2}

if [ ! -d "$scratch" ]; then
  git -C "$repo" worktree add --detach "$scratch" HEAD >/dev/null
else
  git -C "$scratch" checkout --detach -q "$(git -C "$repo" rev-parse HEAD)"
fi
# Mutations and their list come from the caller's tree (they may be newer than HEAD).
cleanup() { git -C "$scratch" checkout -q -- . 2>/dev/null || true; }
trap cleanup EXIT
cleanup
# Tools that scripts/install-deps.sh extracts under the repository (promtool) are not in the
# scratch worktree: point its build at the caller's.
extra=()
[ -x "$repo/.deps/bin/promtool" ] && extra+=("-DPROMTOOL=$repo/.deps/bin/promtool")
cmake -S "$scratch" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}" >/dev/null

wanted=("$@")
results=()
while IFS=$'\t' read -r name targets tests; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  if [ ${#wanted[@]} -gt 0 ] && [[ ! " ${wanted[*]} " == *" $name "* ]]; then continue; fi
  cleanup
  if ! git -C "$scratch" apply "$repo/scripts/mutations/$name.patch"; then
    results+=("$name|NOT APPLIED|the patch no longer applies to HEAD")
    continue
  fi
  echo "== $name: building $targets" >&2
  # shellcheck disable=SC2086
  if ! cmake --build "$scratch/build" -j "$jobs" --target $targets >"$scratch/build/mutation-$name.log" 2>&1; then
    results+=("$name|CAUGHT (build)|does not compile, see $scratch/build/mutation-$name.log")
    continue
  fi
  failed=()
  for t in $tests; do
    binary=${t%%:*}
    filter='*'
    [[ "$t" == *:* ]] && filter=${t#*:}
    echo "== $name: $binary --gtest_filter=$filter" >&2
    out=$("$scratch/build/$binary" --gtest_filter="$filter" 2>&1 || true)
    while read -r line; do failed+=("$line"); done < <(
      sed -n 's/^\[  FAILED  \] \([A-Za-z0-9_./]*\) (.*/\1/p' <<<"$out" | sort -u)
    # Here-strings, not `printf | grep -q`: under pipefail, grep -q's early exit can fail the
    # printf with SIGPIPE and make a passing run look crashed.
    if ! grep -q '^\[  PASSED  \]' <<<"$out"; then
      grep -q '^\[  FAILED  \]' <<<"$out" || failed+=("$(basename "$binary") crashed")
    fi
  done
  if [ ${#failed[@]} -gt 0 ]; then
    results+=("$name|caught|${#failed[@]} failing: $(printf '%s, ' "${failed[@]}" | sed 's/, $//')")
  else
    results+=("$name|SURVIVED|all selected tests passed")
  fi
done <"$list"
cleanup

echo
echo "| mutation | result | tests that failed |"
echo "| --- | --- | --- |"
for r in "${results[@]}"; do
  IFS='|' read -r n res detail <<<"$r"
  echo "| \`$n\` | $res | $detail |"
done
