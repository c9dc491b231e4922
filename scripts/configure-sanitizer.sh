#!/usr/bin/env bash
# Configures a sanitizer tree with clang-14 (idempotent): `asan` -> build-asan/ (ASan+UBSan, the
# libFuzzer targets too), `tsan` -> build-tsan/. Tests only (no benchmarks), -O1 with line tables,
# assertions on, ccache as in the default build.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  asan) dir=build-asan; flags=(-DVOXCOL_SANITIZE=address,undefined -DVOXCOL_FUZZ=ON) ;;
  tsan) dir=build-tsan; flags=(-DVOXCOL_SANITIZE=thread) ;;
  *) echo "usage: $0 asan|tsan" >&2; exit 2 ;;
esac
[ -f "$dir/build.ninja" ] && exit 0
CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DVOXCOL_BUILD_BENCH=OFF "${flags[@]}" >/dev/null
