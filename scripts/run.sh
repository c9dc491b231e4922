#!/usr/bin/env bash
# Builds and starts the server on the default generated cave world, data in ./data.
# Extra arguments are passed to voxcol_server (see `build/server/voxcol_server --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh voxcol_server voxcol
exec build/server/voxcol_server --data_dir=./data "$@"
