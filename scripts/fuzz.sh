#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (docs/testing.md, "Fuzzing and sanitizers").
#
#   bash scripts/fuzz.sh [--seconds=N] [--no-build] [TARGET...]   fuzz each target for N s (45)
#   bash scripts/fuzz.sh --seed                                   regenerate tests/fuzz/corpus
#
# TARGET is request, query or decode (default: all three). The fuzzers live in the ASan+UBSan
# tree build-asan/ (VOXCOL_FUZZ=ON, built by scripts/test-sanitizers.sh or here). Each target first
# runs every committed regression input (tests/fuzz/regressions/TARGET) once, then fuzzes from the
# committed seeds plus a scratch corpus (build-asan/fuzz-corpus/TARGET, kept between runs, never
# committed). Any crash, leak, timeout (60 s per input) or sanitizer report fails the script; the
# input is saved as build-asan/fuzz-artifacts/TARGET/crash-* (add it to tests/fuzz/regressions/).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${VOXCOL_FUZZ_SECONDS:-45}
build=1
seed=0
targets=()
for arg in "$@"; do
  case "$arg" in
    --seconds=*) seconds=${arg#--seconds=} ;;
    --no-build) build=0 ;;
    --seed) seed=1 ;;
    request | query | decode) targets+=("$arg") ;;
    *) echo "usage: $0 [--seconds=N] [--no-build] [--seed] [request|query|decode...]" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(request query decode)
dir=build-asan
if [ "$build" = 1 ]; then
  bash scripts/configure-sanitizer.sh asan
  cmake --build "$dir" -j "${VOXCOL_JOBS:-2}" --target voxcol_fuzzers
fi
if [ "$seed" = 1 ]; then
  rm -rf tests/fuzz/corpus
  "$dir/tests/fuzz/voxcol_fuzz_seeds" tests/fuzz/corpus
  echo "fuzz: seeds written to tests/fuzz/corpus"
  exit 0
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
for t in "${targets[@]}"; do
  bin="$dir/tests/fuzz/voxcol_fuzz_$t"
  artifacts="$dir/fuzz-artifacts/$t"
  work="$dir/fuzz-corpus/$t"
  mkdir -p "$artifacts" "$work"
  regressions=(tests/fuzz/regressions/"$t"/*)
  if [ -e "${regressions[0]}" ]; then
    "$bin" -runs=1 "${regressions[@]}" >"$artifacts/regressions.log" 2>&1 ||
      { cat "$artifacts/regressions.log"; echo "fuzz $t: a regression input fails" >&2; exit 1; }
  fi
  log="$artifacts/fuzz.log"
  if ! "$bin" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz $t: FAILED (input in $artifacts/, log $log)" >&2
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  echo "fuzz $t: ${seconds}s, $runs inputs, $cov, no crash"
done
