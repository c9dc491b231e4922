#!/usr/bin/env bash
# Runs every test: installs dependencies, builds everything (incl. voxcol_bench), runs the unit and
# integration tests in parallel with CTest, then a short smoke run of every benchmark, then the
# sanitizer suites and the fuzzers (scripts/test-sanitizers.sh; VOXCOL_SKIP_SANITIZERS=1 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# Style gates first: they take seconds and fail fast.
bash scripts/check-format.sh
bash scripts/check-sizes.sh
bash scripts/check-layers.sh
bash scripts/check-mutations.sh
# Every kustomize overlay under deploy/k8s renders offline and passes the placement checks.
bash scripts/check-manifests.sh build/server/voxcol_server
# Alert rules unit-tested with promtool; dashboard and rules name only metrics a server exports.
bash scripts/check-monitoring.sh build/server/voxcol_server
jobs=${VOXCOL_JOBS:-2}
# Hermetic (issue 43): the tests' temporary directories go to a fresh TMPDIR that must be empty
# again afterwards, and no server may outlive its test (ServerProcess kills its server when the
# test process dies, also on a CTest timeout).
test_tmp=$(mktemp -d)
(cd build && TMPDIR="$test_tmp" ctest -j "$jobs" --output-on-failure --timeout 600)
bash scripts/check-test-leftovers.sh "$test_tmp" "$PWD/build/server/voxcol_server"
rmdir "$test_tmp"
# The README's and docs/cli.md's CLI examples, run against a real server, output shape compared.
bash scripts/check-readme-examples.sh build
# Benchmarks are not pass/fail on speed here; this only proves that each one runs.
# The tick-rate latency benchmarks (bench_tick_latency.cc) call for --tick_seconds each: 1 s here.
build/tests/bench/voxcol_bench --benchmark_min_time=0.01 --tick_seconds=1 >/dev/null
build/tests/bench/voxcol_bench --client_apart --benchmark_min_time=0.01 \
  --benchmark_filter='^BM_Raycast(Arrays)?(GrpcStream|InProcess)/256/' >/dev/null
echo "voxcol_bench: all benchmarks ran"
[ "${VOXCOL_SKIP_SANITIZERS:-0}" = 1 ] || bash scripts/test-sanitizers.sh
# The containerized integration test needs root for podman. Inside a container (e.g. the fresh
# Debian check, /run/.containerenv) podman cannot nest, so it is reported as skipped there.
if [ "$(id -u)" -ne 0 ]; then
  echo "container test: SKIPPED (needs root for podman)"
elif [ -e /run/.containerenv ]; then
  echo "container test: SKIPPED (already inside a container)"
else
  bash deploy/container-test.sh
fi
