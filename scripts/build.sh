#!/usr/bin/env bash
# Configures and builds voxcol into ./build (Release with debug info). Extra args go to the build
# tool, e.g. `scripts/build.sh voxcol_server`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=${VOXCOL_JOBS:-2}
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build build -j "$jobs" -- "$@"
