#!/usr/bin/env bash
# Builds this module offline against Debian's Go packages (golang-google-grpc-dev and friends,
# installed under /usr/share/gocode/src) instead of downloading modules.
#
#   ./offline.sh go build ./...          run any go command on this module offline
#   ./offline.sh --replace FILE.mod      print `replace` directives for FILE.mod's dependency graph
#
# go.mod names the normal upstream modules and versions. Debian ships the same modules as
# source trees with their go.mod files, so an alternate module file (-modfile, kept in
# $VOXCOL_GO_BUILD_DIR, by default a directory under $TMPDIR) adds one directory `replace` per
# module of the dependency graph: the Debian tree where there is one, else an empty stand-in
# module (a module only mentioned by some go.mod in the graph, never imported by what is built;
# if something imports it after all, the build fails naming the package). Nothing is fetched
# (GOPROXY=off) and the repository is left untouched apart from the generated voxcolv1/*.pb.go.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
gocode=${VOXCOL_GOCODE:-/usr/share/gocode/src}
build=${VOXCOL_GO_BUILD_DIR:-${TMPDIR:-/tmp}/voxcol-go-offline-$(id -u)}

# The module paths a go.mod requires.
requires() {
  awk '
    /^require[ \t]*\(/ { block = 1; next }
    block && /^[ \t]*\)/ { block = 0; next }
    block && $1 !~ /^\/\// && NF >= 2 { gsub(/"/, "", $1); print $1; next }
    /^require[ \t]+[^( \t]/ { gsub(/"/, "", $2); print $2 }
  ' "$1"
}

module_path() { awk '$1 == "module" { gsub(/"/, "", $2); print $2; exit }' "$1"; }

# Prints a replace directive for every module reachable from the go.mod file $1.
replacements() {
  local -A seen=()
  local -a queue
  mapfile -t queue < <(requires "$1")
  while [ ${#queue[@]} -gt 0 ]; do
    local m=${queue[0]}
    queue=("${queue[@]:1}")
    [ -n "${seen[$m]:-}" ] && continue
    seen[$m]=1
    local dir=$gocode/$m
    if [ -f "$dir/go.mod" ] && [ "$(module_path "$dir/go.mod")" = "$m" ]; then
      echo "replace $m => $dir"
      mapfile -t -O ${#queue[@]} queue < <(requires "$dir/go.mod")
    else
      local stub=$build/standin/$m
      if [ ! -f "$stub/go.mod" ]; then
        mkdir -p "$stub"
        printf 'module %s\n' "$m" >"$stub/go.mod.$$" && mv "$stub/go.mod.$$" "$stub/go.mod"
      fi
      echo "replace $m => $stub"
    fi
  done
}

mkdir -p "$build"
if [ "${1:-}" = "--replace" ]; then
  [ $# -eq 2 ] || { echo "usage: $0 --replace FILE.mod" >&2; exit 2; }
  replacements "$2"
  exit 0
fi
[ $# -gt 0 ] || { echo "usage: $0 go COMMAND [ARGS...]" >&2; exit 2; }
[ -d "$gocode/google.golang.org/grpc" ] || {
  echo "offline.sh: $gocode has no google.golang.org/grpc: apt-get install golang-google-grpc-dev" \
    "golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev protoc-gen-go protoc-gen-go-grpc" >&2
  exit 1
}

sh "$here/voxcolv1/gen.sh"

modfile=$build/go.mod
{ cat "$here/go.mod"; echo; replacements "$here/go.mod"; } >"$modfile.$$"
mv "$modfile.$$" "$modfile"
touch "$build/go.sum"

export GOFLAGS="-mod=mod -modfile=$modfile" GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local
cd "$here"
exec "$@"
