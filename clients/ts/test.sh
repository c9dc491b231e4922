#!/usr/bin/env bash
# Builds and tests the TypeScript client (@voxcol/client) against real servers, then installs it
# the way its users do: `npm pack`, `npm install <tarball>` into an empty project, a script there
# that connects and raycasts, and a TypeScript file type-checked against the installed .d.ts.
#
#   bash clients/ts/test.sh [RUNNER_WRAPPER_PATH]
#
# VOXCOL_SERVER and VOXCOL_CLI name the binaries (default /work/helper-bin/voxcol_server and
# /work/helper-bin/voxcol). With an argument, a script at that path runs the conformance runner
# (`RUNNER_WRAPPER_PATH --target HOST:PORT --scenario FILE --out FILE ...`). Idempotent; npm
# works from its cache when the packages were fetched before.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
export VOXCOL_SERVER="${VOXCOL_SERVER:-/work/helper-bin/voxcol_server}"
export VOXCOL_CLI="${VOXCOL_CLI:-/work/helper-bin/voxcol}"

die() { echo "clients/ts/test.sh: $*" >&2; exit 1; }
[ -x "$VOXCOL_SERVER" ] || die "no server binary at $VOXCOL_SERVER (set VOXCOL_SERVER)"
[ -x "$VOXCOL_CLI" ] || die "no CLI binary at $VOXCOL_CLI (set VOXCOL_CLI)"
for tool in node npm openssl; do command -v "$tool" >/dev/null || die "$tool is required"; done

npm_flags=(--prefer-offline --no-audit --no-fund --loglevel=error)

echo "== npm ci"
npm ci "${npm_flags[@]}"

echo "== build (generate from ../../proto, tsc)"
npm run --silent build
npm run --silent build:test

echo "== tests (node --test, real servers)"
node --test --test-concurrency=1 build/test/

echo "== npm pack, then npm install of the tarball into an empty project"
scratch="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

tarball="$(npm pack --silent --pack-destination "$scratch" | tail -n 1)"
[ -f "$scratch/$tarball" ] || die "npm pack wrote no tarball"
listing="$(tar -tzf "$scratch/$tarball")"
for f in package/dist/index.js package/dist/index.d.ts package/dist/gen/voxcol/v1/query_service.d.ts \
         package/dist/bin/voxcol-conformance.js package/README.md; do
  grep -qx "$f" <<<"$listing" || die "$tarball lacks $f"
done
if grep -q '^package/src/' <<<"$listing"; then die "$tarball holds sources"; fi

mkdir "$scratch/consumer"
cd "$scratch/consumer"
npm init -y >/dev/null
npm install "${npm_flags[@]}" "$scratch/$tarball"
[ ! -e node_modules/.bin/protoc ] || die "the install pulled in protoc"

"$VOXCOL_SERVER" --data_dir="$scratch/data" --world_size=128,96,128 --listen=127.0.0.1:0 \
  --port_file="$scratch/port" --metrics_listen=127.0.0.1:0 2>"$scratch/server.log" &
server_pid=$!
for _ in $(seq 1 200); do [ -s "$scratch/port" ] && break; sleep 0.05; done
[ -s "$scratch/port" ] || die "the server did not start: $(tail -n 5 "$scratch/server.log")"
target="127.0.0.1:$(cat "$scratch/port")"

cat > raycast.js <<'EOF'
const { connect } = require("@voxcol/client");

async function main() {
  const client = await connect(process.argv[2]);
  try {
    const down = await client.raycast({ origin: { x: 0.5, y: 40, z: 0.5 }, direction: { y: -1 }, maxDistance: 90 });
    if (!down.hit) throw new Error("no hit");
    console.log(`ground at y ${down.first.position.y.toFixed(3)} distance ${down.first.distance}`);
  } finally {
    client.close();
  }
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
EOF
ours="$(node raycast.js "$target")"
echo "installed package: $ours"
cli_distance="$("$VOXCOL_CLI" --server="$target" raycast --origin=0.5,40,0.5 --max_distance=90 --json |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(Math.fround(JSON.parse(s).first.distance)))')"
[ "$ours" = "ground at y $(node -e "console.log((40-$cli_distance).toFixed(3))") distance $cli_distance" ] ||
  die "the installed package's raycast ($ours) differs from the CLI's distance $cli_distance"

cat > check.ts <<'EOF'
import { connect, RaycastMode, type RaycastResponse, VoxcolError } from "@voxcol/client";

export async function groundY(target: string): Promise<number | undefined> {
  const client = await connect(target, { timeoutMs: 2000 });
  const answer: RaycastResponse = await client.raycast({
    origin: { x: 0.5, y: 40, z: 0.5 }, direction: { y: -1 }, maxDistance: 90, mode: RaycastMode.RAYCAST_MODE_SMOOTH,
  });
  client.close();
  return answer.first?.position?.y;
}
export const isVoxcolError = (e: unknown): e is VoxcolError => e instanceof VoxcolError;
EOF
"$here/node_modules/.bin/tsc" --noEmit --strict --module node16 --moduleResolution node16 --target ES2022 \
  --typeRoots "$here/node_modules/@types" --types node check.ts
echo "installed .d.ts type-check: ok"

# The README's quick start, as written there (its first ts block), against this server.
awk '/^```ts$/{n++; if (n == 1) {f=1; next}} /^```$/{f=0} f' "$here/README.md" |
  sed "s/127.0.0.1:50051/$target/" >quickstart.mts
"$here/node_modules/.bin/tsc" --strict --module node16 --moduleResolution node16 --target ES2022 \
  --typeRoots "$here/node_modules/@types" --types node quickstart.mts
quick="$(node quickstart.mjs)"
echo "$quick" | sed 's/^/README quick start: /'
grep -q '^tick at version [0-9]*:' <<<"$quick" || die "the README's quick start ran no tick"
grep -q '^version [0-9]*: [0-9]* chunks changed' <<<"$quick" || die "the quick start read no change"
grep -q '^direction must be non-zero' <<<"$quick" || die "the quick start's bad ray was not refused"
cd "$here"

if [ $# -ge 1 ] && [ -n "$1" ]; then
  mkdir -p "$(dirname "$1")"
  cat > "$1" <<EOF
#!/bin/sh
# The TypeScript client's conformance runner (built by clients/ts/test.sh).
exec node "$here/dist/bin/voxcol-conformance.js" "\$@"
EOF
  chmod +x "$1"
  echo "conformance runner: $1"
fi
echo "clients/ts/test.sh: all passed"
