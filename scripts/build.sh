#!/usr/bin/env bash
# Configures and builds voxcol into ./build (Release with debug info). Extra args go to the build
# tool, e.g. `scripts/build.sh voxcol_server`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=${VOXCOL_JOBS:-2}
# Configures on a fresh checkout, and again when scripts/run.sh configured build/ without the
# tests and benchmarks.
if [ ! -f build/build.ninja ] || grep -q "^VOXCOL_BUILD_\(TESTS\|BENCH\):BOOL=OFF" build/CMakeCache.txt; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOXCOL_BUILD_TESTS=ON \
    -DVOXCOL_BUILD_BENCH=ON >/dev/null
fi
cmake --build build -j "$jobs" -- "$@"
