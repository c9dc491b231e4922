#!/usr/bin/env bash
# Runs every test: installs dependencies, builds everything (incl. voxcol_bench), runs the unit and
# integration tests in parallel with CTest, then a short smoke run of every benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
jobs=${VOXCOL_JOBS:-2}
(cd build && ctest -j "$jobs" --output-on-failure --timeout 600)
# Benchmarks are not pass/fail on speed here; this only proves that each one runs.
build/tests/bench/voxcol_bench --benchmark_min_time=0.01 >/dev/null
echo "voxcol_bench: all benchmarks ran"
