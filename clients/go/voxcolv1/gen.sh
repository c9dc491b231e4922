#!/bin/sh
# Generates the voxcol.v1 messages (protoc-gen-go) and gRPC stubs (protoc-gen-go-grpc) into this
# directory from the .proto files in $VOXCOL_PROTO_DIR (default: the repository's proto/). The
# protos' go_package names voxcol.dev/api/voxcol/v1; the M options map them to this package
# instead. Files are replaced only when their content changes, so repeated runs keep the build
# cache warm and concurrent runs never see a half-written file.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
proto_dir=${VOXCOL_PROTO_DIR:-$here/../../../proto}
pkg=github.com/voxcol/voxcol/clients/go/voxcolv1

files=$(cd "$proto_dir" && ls voxcol/v1/*.proto)
m=""
for f in $files; do m="$m,M$f=$pkg;voxcolv1"; done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
protoc -I "$proto_dir" \
  --go_out="$out" --go_opt="module=$pkg$m" \
  --go-grpc_out="$out" --go-grpc_opt="module=$pkg$m" \
  $files
for f in "$out"/*.pb.go; do
  dst="$here/$(basename "$f")"
  if ! cmp -s "$f" "$dst"; then
    cp "$f" "$dst.tmp.$$" && mv "$dst.tmp.$$" "$dst"
  fi
done
# Drop outputs whose .proto is gone.
for f in "$here"/*.pb.go; do
  [ -e "$out/$(basename "$f")" ] || rm -f "$f"
done
