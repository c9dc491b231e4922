#!/usr/bin/env bash
# Installs the Debian 12 packages voxcol needs to build, test and benchmark. Idempotent: does
# nothing when everything is already installed. With --serve, only what building and running the
# server and the CLI needs (scripts/run.sh): the Dockerfile's build stage list, no test peers, no
# client toolchains, no clang. clang-14, its sanitizer runtimes, libFuzzer and
# llvm-14 (llvm-symbolizer) are for scripts/test-sanitizers.sh and scripts/fuzz.sh.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libgtest-dev libgmock-dev libbenchmark-dev libccd-dev
  librocksdb-dev libzstd-dev liblz4-dev
  python3 python3-yaml libcivetweb-dev clang-format libcli11-dev
  # The Python client (python/): stubs come from protoc with grpc_python_plugin (above); Debian's
  # python3-grpc-tools (1.14) is too old for proto3 `optional`.
  python3-grpcio python3-protobuf python3-setuptools python3-wheel python3-pip python3-venv
  openssl libssl-dev
  # The C ABI's bindings (clients/c/bindings): the C# one is built and run with Debian's mono.
  mono-mcs mono-runtime
  # The Go client (clients/go) builds offline from Debian's Go packages (clients/go/offline.sh).
  golang-go protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev
  libbullet-dev libembree-dev libpng-dev
  # Navigation meshes (core/nav): Recast and Detour.
  librecast-dev
  clang-14 libclang-rt-14-dev libfuzzer-14-dev llvm-14
)

if [ "${1:-}" = --serve ]; then
  packages=(
    build-essential cmake ninja-build ccache pkg-config git
    libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
    librocksdb-dev libzstd-dev liblz4-dev libcivetweb-dev libssl-dev libcli11-dev libpng-dev openssl
    librecast-dev
  )
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
updated=""

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  updated=1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "${1:-}" = --serve ] && exit 0  # the rest is for tests and clients

# Node.js and npm for the TypeScript client (clients/ts): Debian's, unless a node is installed
# already (this machine kind ships Node 20; a bare Debian 12 gets Debian's Node 18 and npm 9).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-deps: installing nodejs npm" >&2
  [ -n "$updated" ] || $sudo apt-get update -qq
  updated=1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

# kubectl renders the kustomize overlays offline (scripts/check-manifests.sh): Debian's
# kubernetes-client, unless a kubectl is installed already (it would conflict with another one).
if ! command -v kubectl >/dev/null; then
  echo "install-deps: installing kubernetes-client (kubectl)" >&2
  [ -n "$updated" ] || $sudo apt-get update -qq
  updated=1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends kubernetes-client >/dev/null
fi

# promtool (the metrics exposition test) is taken out of Debian's prometheus package into .deps/
# rather than installed: installing the package would also start a Prometheus daemon.
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -x "$repo/.deps/bin/promtool" ]; then
  echo "install-deps: extracting promtool from Debian's prometheus package into .deps/" >&2
  [ -n "$updated" ] || $sudo apt-get update -qq
  scratch=$(mktemp -d)
  (cd "$scratch" && apt-get download -qq prometheus >/dev/null 2>&1 && dpkg-deb -x prometheus_*.deb root)
  mkdir -p "$repo/.deps/bin"
  cp "$scratch/root/usr/bin/promtool" "$repo/.deps/bin/promtool"
  rm -rf "$scratch"
fi
