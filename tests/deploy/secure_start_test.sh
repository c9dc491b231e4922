#!/usr/bin/env bash
# The README's secure start, run as written (issue 40): its ```sh block after "A secure start" is
# executed in the repository with scripts/dev-certs.sh and scripts/run.sh themselves; only the
# port is a free one, the server's data directory a temporary one and its metrics port any free
# one (tests run in parallel: the default 9464 may be taken). The CLI line must answer
# `info` over mutual TLS with the query token; the same line without the token must be refused
# UNAUTHENTICATED, and with the query token an edit PERMISSION_DENIED.
# usage: tests/deploy/secure_start_test.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
server_pid=""
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "secure_start_test: $*" >&2; [ -f "$work/server.log" ] && tail -20 "$work/server.log" >&2; exit 1; }
# The block, continuation lines joined, comments dropped: one command per line.
/usr/bin/python3 - README.md >"$work/block" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
at = text.index("A secure start")
block = re.search(r"```sh\n(.*?)```", text[at:], re.S).group(1)
block = re.sub(r"\\\n\s*", "", block)
for line in block.splitlines():
    line = re.sub(r"\s+#.*$", "", line).strip()
    if line:
        print(line)
PY
mapfile -t commands <"$work/block"
[ "${#commands[@]}" -eq 3 ] || fail "expected 3 commands in the README block, got ${#commands[@]}"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sub() { printf '%s' "${1//50051/$port}"; }
[[ "${commands[0]}" == "bash scripts/dev-certs.sh"* ]] || fail "first command is not dev-certs: ${commands[0]}"
eval "$(sub "${commands[0]}")" >/dev/null
[[ "${commands[1]}" == "bash scripts/run.sh "* ]] || fail "second command is not run.sh: ${commands[1]}"
# exec: the job becomes run.sh, which execs the server, so that $server_pid is the server's and
# the cleanup stops it (a subshell around it left the server running after the test).
eval "exec $(sub "${commands[1]}") --data_dir=$work/data --metrics_listen=127.0.0.1:0" \
  >"$work/server.log" 2>&1 &
server_pid=$!
cli=$(sub "${commands[2]}")
[[ "$cli" == "build/client/voxcol "* ]] || fail "third command is not the CLI: $cli"
for _ in $(seq 1 600); do
  grep -q "event=serving" "$work/server.log" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || fail "the server exited"
  sleep 0.2
done
grep -q "event=serving" "$work/server.log" || fail "the server did not start"
out=$(eval "$cli") || fail "the README's CLI line failed: $out"
grep -q "^version" <<<"$out" || fail "no world version in: $out"
no_token=${cli/--token_file=deploy\/secrets\/query.token/}
if out=$(eval "$no_token" 2>&1); then fail "answered without a token: $out"; fi
grep -q UNAUTHENTICATED <<<"$out" || fail "without a token, not UNAUTHENTICATED: $out"
edit=${cli/ info/ fill-ball --center=0,0,0 --radius=2}
if out=$(eval "$edit" 2>&1); then fail "a query token edited: $out"; fi
grep -q PERMISSION_DENIED <<<"$out" || fail "an edit with the query token, not PERMISSION_DENIED: $out"
echo "secure_start_test: README secure start served TLS with tokens on port $port (info ok, no token refused, query token cannot edit)"
