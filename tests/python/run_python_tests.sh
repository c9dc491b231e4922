#!/usr/bin/env bash
# Builds the Python client (python/) as its users install it and tests it against the real server,
# offline (pip --no-index: nothing is downloaded):
#   1. the sdist, built with PYTHON (it must carry the .proto files: checked), then the wheel built
#      from the sdist alone (no repository around it);
#   2. into venvs of PYTHON (Debian's, with python3-grpcio: --system-site-packages) and of the
#      machine's default python3 when that is another CPython of the same version (e.g. pyenv's,
#      without grpcio: its venv gets a .pth naming Debian's dist-packages, the same ABI), it
#      installs the wheel in one venv and the sdist (built in the venv, --no-build-isolation) in
#      another, as docs/sdk.md describes;
#   3. runs tests/python/test_*.py with unittest in each wheel venv, and checks each sdist venv
#      imports the package with its generated stubs.
# With VOXCOL_CONFORMANCE_REFERENCE (the C++ runner, voxcol_conformance_cpp) it also runs the
# conformance suite (tests/conformance/run.sh) with the Python runner, `python -m
# voxcol.conformance`, and its throughput check.
# Usage: run_python_tests.sh PYTHON SERVER_BINARY CLI_BINARY
set -euo pipefail

python=$1
server=$2
cli=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/voxcol-python-test-XXXXXX")
trap 'rm -rf "$work"' EXIT

# Runs a command quietly, showing its output only when it fails.
quiet() {
  local log=$work/step.log
  "$@" >"$log" 2>&1 || { cat "$log"; echo "run_python_tests.sh: failed: $*" >&2; exit 1; }
}

# ---- 1. sdist, then the wheel from the sdist alone
cp -r "$root/python" "$work/src"  # builds write egg-info next to setup.py: keep the tree clean
(cd "$work/src" && VOXCOL_PROTO_DIR="$root/proto" quiet "$python" -c \
  'from setuptools import build_meta; build_meta.build_sdist("../dist")')
sdist=$(echo "$work"/dist/voxcol-*.tar.gz)
tar tzf "$sdist" >"$work/sdist.list"
for proto in types world_service body_service query_service edit_service admin_service replica_service; do
  grep -qx "voxcol-[^/]*/proto/voxcol/v1/$proto.proto" "$work/sdist.list" ||
    { echo "run_python_tests.sh: the sdist lacks $proto.proto" >&2; exit 1; }
done
(cd "$work/dist" && unset VOXCOL_PROTO_DIR && quiet "$python" -m pip wheel --no-index \
  --no-build-isolation --no-deps --no-cache-dir -w . "$sdist")
wheel=$(echo "$work"/dist/voxcol-*.whl)
echo "built $(basename "$sdist") and $(basename "$wheel")"

# ---- 2. venvs of each python
# Where PYTHON finds grpc and protobuf (Debian: /usr/lib/python3/dist-packages).
grpc_site=$("$python" -c 'import grpc, os; print(os.path.dirname(os.path.dirname(grpc.__file__)))')
abi() { "$1" -c 'import sys, sysconfig; print(sys.implementation.name, sysconfig.get_config_var("SOABI"))'; }

pythons=("$python")
default_python=$(command -v python3 >/dev/null && python3 -c 'import sys; print(sys.executable)' || true)
if [ -n "$default_python" ] && [ "$(realpath "$default_python")" != "$(realpath "$(command -v "$python")")" ]; then
  if [ "$(abi "$default_python")" = "$(abi "$python")" ]; then
    pythons+=("$default_python")
  else
    echo "note: the default python3 ($default_python, $(abi "$default_python")) is not ABI-compatible" \
      "with $python ($(abi "$python")): only $python is tested" >&2
  fi
fi

# make_venv PYTHON DIR: a venv that sees grpcio and protobuf without downloading them.
make_venv() {
  if "$1" -c 'import grpc, google.protobuf' 2>/dev/null; then
    quiet "$1" -m venv --system-site-packages "$2"
  else
    quiet "$1" -m venv "$2"
    local site
    site=$("$2/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    echo "$grpc_site" >"$site/voxcol-system-grpc.pth"
  fi
}

wheel_venvs=()
for i in "${!pythons[@]}"; do
  p=${pythons[$i]}
  make_venv "$p" "$work/venv$i-wheel"
  quiet "$work/venv$i-wheel/bin/python" -m pip install --no-index --no-cache-dir "$wheel"
  wheel_venvs+=("$work/venv$i-wheel")
  make_venv "$p" "$work/venv$i-sdist"
  (cd "$work" && unset VOXCOL_PROTO_DIR && quiet "$work/venv$i-sdist/bin/python" -m pip \
    install --no-index --no-cache-dir --no-build-isolation "$sdist")
  # From a directory without the sources: the installed package with its generated stubs.
  (cd "$work" && quiet "$work/venv$i-sdist/bin/python" -c '
import voxcol, voxcol.conformance, voxcol.v1.query_service_pb2_grpc as g, sys
assert "site-packages" in voxcol.__file__, voxcol.__file__
assert hasattr(g, "QueryServiceStub")
print(voxcol.__version__, sys.executable)')
  echo "installed the wheel and the sdist into venvs of $p ($("$p" --version 2>&1))"
done

# ---- 3. the tests, in every wheel venv, from a directory without the package sources
cd "$work"
for venv in "${wheel_venvs[@]}"; do
  echo "== tests/python with $("$venv/bin/python" --version) ($(readlink -f "$venv/bin/python"))"
  VOXCOL_SERVER=$server VOXCOL_CLI=$cli "$venv/bin/python" -m unittest discover -s "$here" \
    -p 'test_*.py' -v
done

if [ -n "${VOXCOL_CONFORMANCE_REFERENCE:-}" ]; then
  bash "$root/tests/conformance/run.sh" --server "$server" \
    --reference "$VOXCOL_CONFORMANCE_REFERENCE" --client python \
    --runner "${wheel_venvs[-1]}/bin/python -m voxcol.conformance" --throughput_seconds 1
fi
