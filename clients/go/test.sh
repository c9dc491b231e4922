#!/usr/bin/env bash
# Builds and tests the Go client offline against Debian's Go packages, then proves that a Go
# module outside the repository builds against it. Idempotent; a couple of minutes on 2 cores.
#
#   clients/go/test.sh [RUNNER_PATH]
#
# RUNNER_PATH: where to build the conformance runner (cmd/voxcol-conformance), if given.
# $VOXCOL_SERVER and $VOXCOL_CLI: the server and CLI binaries the tests run
# (default /work/helper-bin/voxcol_server and /work/helper-bin/voxcol).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export VOXCOL_SERVER=${VOXCOL_SERVER:-/work/helper-bin/voxcol_server}
export VOXCOL_CLI=${VOXCOL_CLI:-/work/helper-bin/voxcol}
export VOXCOL_REQUIRE_SERVER=1 # tests fail, not skip, without the binaries
runner_out=${1:-}
scratch=$(mktemp -d)
# offline.sh's module files and stand-ins go with the rest (by default they stay under $TMPDIR).
export VOXCOL_GO_BUILD_DIR=${VOXCOL_GO_BUILD_DIR:-$scratch/offline}
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

failed=()
step() { # step NAME COMMAND...: runs one check and records its outcome
  local name=$1
  shift
  echo "== $name"
  if "$@"; then
    echo "PASS $name"
  else
    echo "FAIL $name"
    failed+=("$name")
  fi
}

offline() { "$here/offline.sh" "$@"; }

check_tools() {
  local missing=()
  for tool in go protoc protoc-gen-go protoc-gen-go-grpc; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  [ -d /usr/share/gocode/src/github.com/golang/protobuf/proto ] &&
    grep -q protoimpl /usr/share/gocode/src/github.com/golang/protobuf/proto/*.go 2>/dev/null ||
    missing+=("golang-github-golang-protobuf-1-5-dev")
  for bin in "$VOXCOL_SERVER" "$VOXCOL_CLI"; do
    [ -x "$bin" ] || missing+=("$bin")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "missing: ${missing[*]} (bash scripts/install-deps.sh installs the Debian packages)" >&2
    return 1
  fi
}

gofmt_clean() {
  local unformatted
  unformatted=$(cd "$here" && gofmt -l $(find . -name '*.go' -not -name '*.pb.go'))
  [ -z "$unformatted" ] || { echo "gofmt needed: $unformatted" >&2; return 1; }
}

readme_example_current() {
  # The README's quick start is examples/quickstart/main.go, which the consumer check runs.
  awk '/^```go$/ { on = 1; next } on && /^```$/ { exit } on' "$here/README.md" | diff -u "$here/examples/quickstart/main.go" -
}

build_runner() {
  local out=${runner_out:-$scratch/voxcol-conformance}
  case $out in /*) ;; *) out=$PWD/$out ;; esac
  offline go build -o "$out" ./cmd/voxcol-conformance && echo "runner: $out"
}

# A module outside the repository that requires this one (replaced by this directory, as
# `go mod edit -replace` would for a local checkout) and builds and runs the quick start.
outside_module() {
  local mod=$scratch/consumer
  mkdir -p "$mod"
  cp "$here/examples/quickstart/main.go" "$mod/main.go"
  {
    printf 'module example.com/voxcol-consumer\n\ngo 1.19\n\n'
    printf 'require github.com/voxcol/voxcol/clients/go v0.0.0-00010101000000-000000000000\n\n'
    printf 'replace github.com/voxcol/voxcol/clients/go => %s\n' "$here"
    "$here/offline.sh" --replace "$here/go.mod"
  } >"$mod/go.mod"
  (cd "$mod" && export GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off && go build -o consumer . && go vet .) || return 1

  "$VOXCOL_SERVER" --data_dir="$scratch/data" --world_size=128,96,128 --listen=127.0.0.1:0 \
    --port_file="$scratch/port" --metrics_listen=127.0.0.1:0 >"$scratch/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do [ -s "$scratch/port" ] && break; sleep 0.1; done
  [ -s "$scratch/port" ] || { echo "server did not start:" >&2; cat "$scratch/server.log" >&2; return 1; }
  "$mod/consumer" "127.0.0.1:$(cat "$scratch/port")"
}

step "toolchain and binaries" check_tools || true
if [ ${#failed[@]} -eq 0 ]; then
  step "gofmt" gofmt_clean
  step "README quick start is examples/quickstart" readme_example_current
  step "go build (offline)" offline go build ./...
  step "go vet" offline go vet ./...
  step "go test (against $VOXCOL_SERVER)" offline go test -count=1 -timeout 240s ./...
  step "conformance runner build" build_runner
  step "a module outside the repo builds and runs against this one" outside_module
fi

echo
if [ ${#failed[@]} -gt 0 ]; then
  echo "clients/go: FAILED: ${failed[*]}"
  exit 1
fi
echo "clients/go: all checks passed"
