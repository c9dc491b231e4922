#!/usr/bin/env bash
# Installs the Python client (python/) with pip into a fresh venv that sees Debian's python3-grpcio
# and python3-protobuf (--system-site-packages; nothing is downloaded: --no-index, and
# --no-build-isolation uses Debian's setuptools), then runs tests/python/test_*.py with unittest
# against the real server. The package is built from a copy so the source tree stays clean.
# Usage: run_python_tests.sh PYTHON SERVER_BINARY CLI_BINARY
set -euo pipefail

python=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/voxcol-python-test-XXXXXX")
trap 'rm -rf "$work"' EXIT

"$python" -m venv --system-site-packages "$work/venv"
cp -r "$root/python" "$work/python"
VOXCOL_PROTO_DIR="$root/proto" "$work/venv/bin/pip" install --quiet --no-index --no-build-isolation \
  "$work/python" >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; exit 1; }

# From a directory without the package sources: the tests import the installed package.
cd "$work"
VOXCOL_SERVER=$2 VOXCOL_CLI=$3 "$work/venv/bin/python" -m unittest discover -s "$here" -p 'test_*.py' -v
