#!/usr/bin/env bash
# The installed C++ SDK works for a project outside this build (docs/sdk.md): installs the `sdk`
# component of BUILD_DIR into a temporary prefix, configures and builds tests/sdk/consumer against
# it with find_package(voxcol CONFIG) and, a second time, with the flags of voxcol.pc; starts the
# real server on a free loopback port with a temporary data dir and runs both consumers, which
# check their answers (a raycast against the voxels of its column, a Query-stream batch, a tick),
# and the CMake + C++ example of docs/sdk.md, extracted from the page. Also: voxcol.pc's flags are
# -I<prefix>/include alone; a shared library linked from the installed static libraries loads
# and raycasts; the installed C ABI (libvoxcol_c.so) passes its Python (ctypes) and C# (mono)
# self-checks (clients/c/bindings).
# Usage: consumer_test.sh BUILD_DIR SERVER_BINARY
set -euo pipefail

build_dir=$1
server=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/voxcol-sdk-test-XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" --component sdk >"$work/install.log"
# Nothing of the core or server may be installed, only the client and the generated proto code.
libs=$(find "$prefix" \( -name '*.a' -o -name '*.so*' \) -printf '%f\n' | sort | tr '\n' ' ')
if [ "$libs" != "libvoxcol_c.so libvoxcol_c.so.1 libvoxcol_c.so.1.0.0 libvoxcol_client.a libvoxcol_proto.a " ]; then
  echo "unexpected libraries installed: $libs" >&2
  exit 1
fi

# The CLI and the server are components of their own.
for component in cli server; do
  cmake --install "$build_dir" --prefix "$work/$component" --component "$component" >/dev/null
done
[ "$(cd "$work/cli" && find . -type f)" = "./bin/voxcol" ] || { echo "cli component" >&2; exit 1; }
[ "$(cd "$work/server" && find . -type f)" = "./bin/voxcol_server" ] || { echo "server component" >&2; exit 1; }
"$work/cli/bin/voxcol" --help >/dev/null

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$here/consumer" -B "$work/consumer-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" >"$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer-build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }

# The CMake and C++ example of docs/sdk.md, as written there.
example=$work/doc-example
mkdir -p "$example"
awk '/^```cmake$/{f=1;next} /^```$/{f=0} f' "$here/../../docs/sdk.md" >"$example/CMakeLists.txt"
awk '/^```cpp$/{f=1;next} /^```$/{f=0} f' "$here/../../docs/sdk.md" >"$example/main.cc"
cmake -S "$example" -B "$example/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" \
  >"$work/configure-example.log" || { cat "$work/configure-example.log"; exit 1; }
cmake --build "$example/build" >"$work/build-example.log" || { cat "$work/build-example.log"; exit 1; }

# The same consumer built with nothing but the pkg-config file's flags.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
read -r -a pc_cflags <<<"$(pkg-config --cflags voxcol)"
read -r -a pc_libs <<<"$(pkg-config --libs voxcol)"
${CXX:-c++} -std=c++17 -O1 "${pc_cflags[@]}" "$here/consumer/main.cc" -o "$work/consumer-pc" "${pc_libs[@]}"
# Only -I<prefix>/include: the installed headers find each other from there.
include_dirs=$(pkg-config --cflags-only-I voxcol | tr ' ' '\n' | sed -n 's/^-I//p' | xargs -r realpath)
[ "$include_dirs" = "$(realpath "$prefix/include")" ] || { echo "voxcol.pc -I: $include_dirs" >&2; exit 1; }
# A shared library from the installed static libraries (they are position-independent).
${CXX:-c++} -std=c++17 -O1 -shared -fPIC "${pc_cflags[@]}" "$here/consumer/plugin.cc" \
  -o "$work/libconsumer_plugin.so" "${pc_libs[@]}" -Wl,--no-undefined

"$server" --listen=127.0.0.1:0 --port_file="$work/port" --metrics_listen=127.0.0.1:0 \
  --data_dir="$work/data" --world_size=128,96,128 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 300); do
  [ -s "$work/port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; echo "server exited" >&2; exit 1; }
  sleep 0.1
done
port=$(cat "$work/port")
[ -n "$port" ] || { echo "server did not write its port" >&2; exit 1; }

for consumer in "$work/consumer-build/voxcol_consumer" "$work/consumer-pc"; do
  echo "== $consumer"
  "$consumer" "127.0.0.1:$port" | tee "$work/out.txt"
  grep -q "^consumer: all checks passed$" "$work/out.txt"
done
echo "== docs/sdk.md example"
"$example/build/voxcol_example" "127.0.0.1:$port" | tee "$work/out.txt"
grep -Eq '^ground at y -?[0-9]+\.[0-9]{3}$' "$work/out.txt"
grep -Eq '^batch at version [0-9]+: ground at y -?[0-9.]+, probe may touch solid: 1$' "$work/out.txt"

echo "== a shared library built from the installed SDK, loaded with ctypes"
python3 - "$work/libconsumer_plugin.so" "127.0.0.1:$port" <<'PY'
import ctypes, sys
plugin = ctypes.CDLL(sys.argv[1])
plugin.consumer_plugin_ground_y.argtypes = [ctypes.c_char_p, ctypes.c_float, ctypes.c_float,
                                            ctypes.POINTER(ctypes.c_float)]
y = ctypes.c_float()
code = plugin.consumer_plugin_ground_y(sys.argv[2].encode(), 10.5, -20.5, ctypes.byref(y))
assert code == 0, f"raycast through the plugin: code {code}"
assert -48 < y.value < 40, y.value
print(f"plugin: ground at y {y.value:.3f}")
PY

# The C ABI as installed, from Python (ctypes, the machine's default python3 and Debian's) and
# from C# (P/Invoke under Debian's mono): clients/c/bindings, each a self-check against the server.
lib_c=$prefix/lib/libvoxcol_c.so
[ -f "$prefix/include/voxcol/voxcol_c.h" ] || { echo "voxcol_c.h not installed" >&2; exit 1; }
for py in python3 /usr/bin/python3; do
  echo "== C ABI from $py (ctypes)"
  "$py" "$here/../../clients/c/bindings/voxcol_native.py" "$lib_c" "127.0.0.1:$port"
done
echo "== C ABI from C# (mono)"
mcs -nologo -out:"$work/voxcol_native.exe" "$here/../../clients/c/bindings/VoxcolNative.cs"
LD_LIBRARY_PATH=$prefix/lib mono "$work/voxcol_native.exe" "127.0.0.1:$port"
