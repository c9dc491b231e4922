#!/usr/bin/env bash
# Builds and starts the server on the default generated cave world, data in ./data.
# Extra arguments are passed to voxcol_server (see `build/server/voxcol_server --help`).
# Installs and builds only what serving needs (the server and the CLI): on a fresh checkout it
# configures build/ without tests and benchmarks; scripts/test.sh turns them on in the same
# directory when it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --serve
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOXCOL_BUILD_TESTS=OFF \
    -DVOXCOL_BUILD_BENCH=OFF >/dev/null
fi
cmake --build build -j "${VOXCOL_JOBS:-2}" --target voxcol_server voxcol
exec build/server/voxcol_server --data_dir=./data "$@"
