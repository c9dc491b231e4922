#!/usr/bin/env bash
# Structure gate of issue 36: every folder under server/ is one library of at most 16 files, and
# its sources include headers of the folders below it only. The order (bottom first) is the one
# server/CMakeLists.txt builds them in; a folder may include any folder before it in the list.
# Also: `grpc::Status(` only in server/convert/convert.cc.
set -euo pipefail
cd "$(dirname "$0")/.."
order=(telemetry convert stream bodies nav exec feed world security session rpc replica app)
status=0
known=" ${order[*]} "
for dir in server/*/; do
  name=$(basename "$dir")
  if [[ "$known" != *" $name "* ]]; then
    echo "check-layers: server/$name is not in scripts/check-layers.sh's order" >&2
    status=1
  fi
done
for i in "${!order[@]}"; do
  name=${order[$i]}
  allowed=" ${order[*]:0:$((i + 1))} "
  files=$(git ls-files "server/$name" | grep -v CMakeLists.txt | wc -l)
  if [ "$files" -gt 16 ]; then
    echo "check-layers: server/$name holds $files files (at most 16)" >&2
    status=1
  fi
  while IFS=: read -r file line include; do
    used=$(sed -E 's|.*"server/([a-z_]+)/.*|\1|' <<<"$include")
    if [[ "$allowed" != *" $used "* ]]; then
      echo "check-layers: $file:$line includes server/$used, above server/$name" >&2
      status=1
    fi
  done < <(git grep -n '#include "server/' -- "server/$name" | sed -E 's|^([^:]+):([0-9]+):(.*)$|\1:\2:\3|')
done
# One status mapping (issue 36): server code works with absl::Status and converts at the edge,
# so gRPC statuses are built only by ToGrpcStatus in server/convert/convert.cc.
while IFS=: read -r file line _; do
  echo "check-layers: $file:$line builds a grpc::Status; return ToGrpcStatus(absl::...Error(...))" >&2
  status=1
done < <(git grep -nP '(?<!<)grpc::Status\(' -- 'server/*.cc' 'server/*.h' ':!server/convert/convert.cc' |
  grep -v '^[^:]*:[0-9]*: *//')  # `<grpc::Status(` is a function type (std::function), not a status
[ "$status" -eq 0 ] && echo "check-layers: ${#order[@]} server folders, each includes only the ones below it" || true
exit "$status"
