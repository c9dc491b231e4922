#!/usr/bin/env bash
# Installs the Debian 12 packages voxcol needs to build, test and benchmark. Idempotent: does
# nothing when everything is already installed. clang-14, its sanitizer runtimes, libFuzzer and
# llvm-14 (llvm-symbolizer) are for scripts/test-sanitizers.sh and scripts/fuzz.sh.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libgtest-dev libgmock-dev libbenchmark-dev libccd-dev
  librocksdb-dev libzstd-dev liblz4-dev
  python3 python3-yaml libcivetweb-dev clang-format
  libbullet-dev libembree-dev
  clang-14 libclang-rt-14-dev libfuzzer-14-dev llvm-14
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
