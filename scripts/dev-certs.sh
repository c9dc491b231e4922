#!/usr/bin/env bash
# Makes everything a secure local start needs, for development and tests only (issue 40):
#   <dir>/ca.crt, ca.key          a throwaway CA (10 years)
#   <dir>/tls.crt, tls.key        the server's certificate, SANs voxcol, voxcol-replica, localhost,
#                                 127.0.0.1 (what the compose file, the CLI and tests dial)
#   <dir>/client.crt, client.key  a client certificate (CN game-dev) for mutual TLS
#   <dir>/tokens                  the server's token file: SHA-256 hashes, one per role
#   <dir>/{query,edit,admin,replica}.token   the tokens themselves (give each to one client)
# The server reads tls.crt/tls.key/tokens (deploy/compose.yaml mounts the directory); clients read
# ca.crt and a token: see the README's "Security model". Idempotent: existing files are kept
# (delete the directory to start over). Production certificates come from your own CA.
# usage: scripts/dev-certs.sh [dir]   (default: deploy/secrets, ignored by git)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-deploy/secrets}
command -v openssl >/dev/null || { echo "dev-certs: openssl missing (apt-get install openssl)" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
umask 077
quiet() { "$@" >/dev/null 2>&1 || { echo "dev-certs: failed: $*" >&2; exit 1; }; }
if [ ! -f ca.crt ]; then
  quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
    -subj "/CN=voxcol dev CA"
fi
# Signs <name>.crt for subject CN=<cn> with the extensions in the 3rd argument.
sign() {
  local name=$1 cn=$2 ext=$3
  [ -f "$name.crt" ] && return 0
  quiet openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "/CN=$cn"
  printf '%s\n' "$ext" >"$name.ext"
  quiet openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 \
    -extfile "$name.ext" -out "$name.crt"
  rm -f "$name.csr" "$name.ext"
}
sign tls voxcol "subjectAltName=DNS:voxcol,DNS:voxcol-replica,DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth"
sign client game-dev "extendedKeyUsage=clientAuth"
# One token per role; the replica follows its primary with an admin token (Subscribe,
# GetWorldInfo and ExportRegion for a re-seed: docs/security.md).
if [ ! -f tokens ]; then
  {
    echo "# sha256 of the token                                           role   identity"
    for entry in query:query:dev-query edit:edit:dev-edit admin:admin:dev-admin replica:admin:replica; do
      IFS=: read -r file role identity <<<"$entry"
      token=$(openssl rand -hex 32)
      printf '%s\n' "$token" >"$file.token"
      echo "$(printf %s "$token" | openssl dgst -sha256 -r | cut -d' ' -f1)  $role  $identity"
    done
  } >tokens.tmp
  mv tokens.tmp tokens
fi
# The container runs as uid 10001: it must read what it mounts (a dev directory only).
chmod 0644 ./*.crt tokens ./*.token
chmod 0644 tls.key
echo "dev-certs: $(pwd): ca.crt tls.crt/key client.crt/key tokens {query,edit,admin,replica}.token"
