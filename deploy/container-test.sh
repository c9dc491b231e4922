#!/usr/bin/env bash
# Containerized integration test: builds the image from this checkout, runs the server container on
# a data volume, edits and queries it with the CLI from the image, kills the container with SIGKILL,
# starts a new one on the same volume and checks that every acknowledged edit is still there. The
# server runs as deployed: TLS and bearer tokens, with a test CA, server certificate and token file
# made here with openssl and mounted read-only (never part of the image or the repository).
#
# Needs root. Installs podman, runc and debootstrap if missing. There is no image registry here, so
# the Debian 12 base images are built with debootstrap (minbase) and imported locally, tagged both
# debian:bookworm and debian:bookworm-slim (minbase is the slim variant's package set).
set -euo pipefail
cd "$(dirname "$0")/.."

export CONTAINERS_CONF=${CONTAINERS_CONF:-/var/tmp/voxcol-containers.conf}
printf '[containers]\ndefault_ulimits = []\n' > "$CONTAINERS_CONF"   # setting rlimits is not permitted here
pm() { podman --runtime runc "$@"; }                                  # crun fails on this cgroup layout
log() { echo "container-test: $*" >&2; }

if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  log "installing podman runc debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap >/dev/null
fi

if ! pm image exists docker.io/library/debian:bookworm; then
  mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
  [ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
  root=$(mktemp -d /var/tmp/voxcol-debroot.XXXX)
  log "building the Debian 12 base image with debootstrap from $mirror"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
  tar -C "$root" -c . | pm import - docker.io/library/debian:bookworm >/dev/null
  rm -rf "$root"
fi
pm image exists docker.io/library/debian:bookworm-slim ||
  pm tag docker.io/library/debian:bookworm docker.io/library/debian:bookworm-slim

image=localhost/voxcol:test
# Also tagged with the release's version, the tag the manifests and the compose file name.
version=$(sed -n 's/^project(voxcol VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
log "building $image (and localhost/voxcol:$version)"
pm build --pull=never --network host --format docker -t "$image" -t "localhost/voxcol:$version" . \
  >/var/tmp/voxcol-image-build.log 2>&1 ||
  { tail -50 /var/tmp/voxcol-image-build.log; exit 1; }

# 1. The runtime image holds no compiler and no -dev package.
pm run --rm --no-healthcheck --network host --entrypoint sh "$image" -c '
  for c in gcc g++ cc c++ clang cpp ld; do command -v $c && { echo "compiler $c present"; exit 1; }; done
  dev=$(dpkg-query -W -f="\${Package}\n" | grep -E -- "-dev(:|$)" || true)
  [ -z "$dev" ] || { echo "dev packages present: $dev"; exit 1; }'
size=$(pm image inspect --format '{{.Size}}' "$image")
log "runtime image has no compiler and no -dev package; size $((size / 1000000)) MB"

# 2. Server on a data volume, edited and queried with the image's CLI.
tag=voxcol-ct-$$
volume=$tag-data
secrets=$(mktemp -d /var/tmp/voxcol-ct-secrets.XXXX)
cleanup() {
  pm rm -f "$tag-1" "$tag-2" >/dev/null 2>&1 || true
  pm volume rm -f "$volume" >/dev/null 2>&1 || true
  rm -rf "$secrets"
}
trap cleanup EXIT
pm volume create "$volume" >/dev/null

# Test secrets: a CA, a server certificate for `voxcol` and 127.0.0.1, and one edit token.
mkdir -p "$secrets/tls" "$secrets/tokens"
(
  cd "$secrets/tls"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 -subj "/CN=voxcol test CA" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout tls.key -out tls.csr -subj "/CN=voxcol" 2>/dev/null
  printf 'subjectAltName=DNS:voxcol,DNS:localhost,IP:127.0.0.1\n' > san.ext
  openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile san.ext -out tls.crt 2>/dev/null
  rm -f ca.key tls.csr san.ext ca.srl
)
token=$(openssl rand -hex 24)
echo "$(printf %s "$token" | openssl dgst -sha256 -r | cut -d' ' -f1) edit container-test" > "$secrets/tokens/tokens"
chown -R 10001:10001 "$secrets"   # the image's user
chmod 0500 "$secrets/tls" "$secrets/tokens" && chmod 0400 "$secrets"/tls/* "$secrets"/tokens/*
tls_client=(--tls_ca=/etc/voxcol/tls/ca.crt --tls_server_name=voxcol)

port=""
current=""
start_server() {
  local name=$1
  current=$name
  # As the Kubernetes manifests run it (Pod Security "restricted"): read-only root filesystem with
  # a tmpfs /tmp, every capability dropped, no privilege escalation.
  pm run -d --no-healthcheck --network host --name "$name" -v "$volume:/data" \
    --read-only --tmpfs /tmp --cap-drop=ALL --security-opt=no-new-privileges \
    -v "$secrets/tls:/etc/voxcol/tls:ro" -v "$secrets/tokens:/etc/voxcol/tokens:ro" "$image" \
    --data_dir=/data --listen=0.0.0.0:0 --metrics_listen=127.0.0.1:0 --port_file=/data/port \
    --world_size=128,128,128 --tls_cert=/etc/voxcol/tls/tls.crt --tls_key=/etc/voxcol/tls/tls.key \
    --auth_tokens=/etc/voxcol/tokens/tokens --audit_log=/data/audit.jsonl >/dev/null
  for _ in $(seq 1 100); do
    port=$(pm exec "$name" cat /data/port 2>/dev/null || true)
    [ -n "$port" ] && pm exec "$name" voxcol "${tls_client[@]}" --server="127.0.0.1:$port" health >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  pm logs "$name" >&2
  return 1
}
# The image's own CLI, run inside the server container, over TLS with the token.
cli() { pm exec -e VOXCOL_TOKEN="$token" "$current" voxcol "${tls_client[@]}" --server="127.0.0.1:$port" --json "$@"; }
json_version() { sed -n 's/.*"version":"\{0,1\}\([0-9]*\).*/\1/p'; }

start_server "$tag-1"
log "server 1 serving with TLS and tokens on port $port"
# Without the token: UNAUTHENTICATED; in plaintext: no connection.
anon=$(pm exec "$current" voxcol "${tls_client[@]}" --server="127.0.0.1:$port" info 2>&1 || true)
case "$anon" in *UNAUTHENTICATED*) ;; *) echo "a call without a token was not refused: $anon"; exit 1 ;; esac
plain=$(pm exec -e VOXCOL_TOKEN="$token" "$current" voxcol --server="127.0.0.1:$port" info 2>&1 || true)
case "$plain" in *UNAVAILABLE*) ;; *) echo "a plaintext call was not refused: $plain"; exit 1 ;; esac
positions=("-40.5,50.5,-40.5" "20.5,50.5,-10.5" "0.5,50.5,30.5" "35.5,50.5,35.5" "-20.5,50.5,10.5")
acked=0
for p in "${positions[@]}"; do
  ack=$(cli fill-ball --center="$p" --radius=3 --material=rock)
  acked=$(echo "$ack" | json_version)
done
carve=$(cli fill-ball --center="0.5,0,0.5" --radius=6 --material=air)
acked=$(echo "$carve" | json_version)
[ "$acked" = "$(( ${#positions[@]} + 1 ))" ] || { echo "unexpected ack version '$acked'"; exit 1; }
declare -a before
for p in "${positions[@]}" "0.5,60,0.5"; do
  x=${p%%,*}; z=${p##*,}
  before+=("$(cli raycast --origin="$x,63.5,$z" --direction=0,-1,0 --max_distance=200 --mode=blocky)")
done
case "${before[0]}" in *'"hit":true'*'"y":53,'*) ;; *) echo "raycast missed the new ball: ${before[0]}"; exit 1 ;; esac
log "$acked edits acknowledged; killing the container with SIGKILL"

# 3. SIGKILL, a new container on the same volume, everything acknowledged is still there.
pm kill -s KILL "$tag-1" >/dev/null
pm rm -f "$tag-1" >/dev/null
start_server "$tag-2"
info=$(cli info)
version=$(echo "$info" | json_version)
[ "$version" = "$acked" ] || { echo "version after restart is '$version', expected $acked"; exit 1; }
i=0
for p in "${positions[@]}" "0.5,60,0.5"; do
  x=${p%%,*}; z=${p##*,}
  after=$(cli raycast --origin="$x,63.5,$z" --direction=0,-1,0 --max_distance=200 --mode=blocky)
  [ "$after" = "${before[$i]}" ] || { echo "edit at $p lost: before ${before[$i]} after $after"; exit 1; }
  i=$((i + 1))
done
audited=$(pm exec "$current" cat /data/audit.jsonl | grep -c '"identity":"container-test"' || true)
[ "$audited" = "$acked" ] || { echo "audit log holds $audited edits by container-test, expected $acked"; exit 1; }
pm stop -t 10 "$tag-2" >/dev/null
log "PASS: all $acked acknowledged edits survived SIGKILL; image size $((size / 1000000)) MB"
