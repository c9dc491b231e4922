#!/usr/bin/env bash
# Runs one client's conformance runner and the reference (the C++ SDK's) over every scenario,
# each against fresh servers, and compares them (tests/conformance/README.md).
#
#   run.sh --server VOXCOL_SERVER --reference "CPP_RUNNER" --client NAME --runner "COMMAND..."
#          [--allow_skips] [--throughput_seconds N [--throughput_packed]] [--coverage]
#
# Per scenario and runner: a fresh plaintext server and a fresh TLS + token server (a throwaway
# CA made here), so versions and answers do not depend on what ran before. --coverage also fails
# when an RPC of the proto has no scenario. --throughput_seconds runs the reference's and the
# client's throughput modes against one fresh server and prints both and their ratio (a smoke
# check: the figures in docs/benchmarks.md come from longer runs); with --throughput_packed the
# reference sends its rays as packed arrays, as a client whose batcher sends them so does.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
server="" reference="" client="" runner="" allow_skips="" throughput="" coverage="" packed=0
while [ $# -gt 0 ]; do
  case $1 in
    --server) server=$2; shift 2 ;;
    --reference) reference=$2; shift 2 ;;
    --client) client=$2; shift 2 ;;
    --runner) runner=$2; shift 2 ;;
    --allow_skips) allow_skips=--allow_skips; shift ;;
    --throughput_seconds) throughput=$2; shift 2 ;;
    --coverage) coverage=1; shift ;;
    --throughput_packed) packed=1; shift ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$server" ] && [ -n "$reference" ] && [ -n "$client" ] && [ -n "$runner" ] ||
  { echo "run.sh: --server, --reference, --client and --runner are required" >&2; exit 2; }
read -r -a reference_cmd <<<"$reference"
read -r -a runner_cmd <<<"$runner"

work=$(mktemp -d "${TMPDIR:-/tmp}/voxcol-conformance-XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The throwaway CA, a server certificate for 127.0.0.1, and a token with the admin role.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=conformance-ca \
  -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$work/server.key" \
  -out "$work/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$work/san.ext"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
  -CAcreateserial -days 2 -extfile "$work/san.ext" -out "$work/server.crt" 2>/dev/null
token=conformance-token-$RANDOM$RANDOM
printf '%s admin conformance\n' "$(printf '%s' "$token" | sha256sum | cut -d' ' -f1)" >"$work/tokens"

# Starts a server in directory $1 (extra flags after it); sets $port.
start_server() {
  local dir=$1
  shift
  mkdir -p "$dir"
  "$server" --data_dir="$dir/data" --world_size=128,96,128 --listen=127.0.0.1:0 \
    --port_file="$dir/port" --metrics_listen=127.0.0.1:0 --backup_root="$dir/backups" \
    "$@" 2>"$dir/server.log" &
  pids+=($!)
  for _ in $(seq 300); do
    [ -s "$dir/port" ] && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    sleep 0.05
  done
  port=$(cat "$dir/port")
}

stop_servers() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  pids=()
}

# Runs runner "$1" (name) = the command in the rest over every scenario into $work/$1/.
run_all() {
  local name=$1
  shift
  mkdir -p "$work/$name"
  for scenario in "$here"/scenarios/*.json; do
    local base
    base=$(basename "$scenario" .json)
    start_server "$work/$name/$base-plain"
    local plain=$port
    start_server "$work/$name/$base-secure" --tls_cert="$work/server.crt" \
      --tls_key="$work/server.key" --auth_tokens="$work/tokens"
    local secure=$port
    if ! "$@" --target "127.0.0.1:$plain" --scenario "$scenario" --out "$work/$name/$base.jsonl" \
      --secure_target "127.0.0.1:$secure" --ca "$work/ca.crt" --token "$token" \
      >"$work/$name/$base.log" 2>&1; then
      echo "run.sh: the $name runner failed on $base:" >&2
      cat "$work/$name/$base.log" >&2
      exit 1
    fi
    stop_servers
  done
}

if [ -n "$coverage" ]; then
  python3 "$here/compare.py" --coverage --scenarios "$here/scenarios" \
    --proto_dir "$here/../../proto/voxcol/v1"
fi
run_all reference "${reference_cmd[@]}"
run_all "$client" "${runner_cmd[@]}"
python3 "$here/compare.py" --scenarios "$here/scenarios" --reference "$work/reference" \
  --candidate "$work/$client" $allow_skips

if [ -n "$throughput" ]; then
  start_server "$work/throughput"
  ref=$("${reference_cmd[@]}" --target "127.0.0.1:$port" --throughput_seconds "$throughput" \
    --throughput_packed "$packed" |
    sed -n 's/^rays_per_second=//p')
  got=$("${runner_cmd[@]}" --target "127.0.0.1:$port" --throughput_seconds "$throughput" |
    sed -n 's/^rays_per_second=//p')
  stop_servers
  [ -n "$ref" ] && [ -n "$got" ] || { echo "run.sh: a throughput run printed no rate" >&2; exit 1; }
  awk -v c="$client" -v r="$ref" -v g="$got" \
    -v form="$([ "$packed" = 1 ] && echo packed || echo per-ray)" \
    'BEGIN { printf "throughput (%s): %s %.0f rays/s, C++ QueryBatcher %.0f rays/s, ratio %.2fx\n", form, c, g, r, g / r }'
fi
echo "conformance: $client agrees with the C++ SDK on every scenario"
