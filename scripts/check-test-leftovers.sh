#!/usr/bin/env bash
# After a test run (issue 43): fails when the run's TMPDIR ($1) still holds anything (a test did
# not remove its temporary directory) or a process of the server binary ($2) is still running.
set -euo pipefail
tmp=$1
server=$2
status=0
if [ -n "$(ls -A "$tmp")" ]; then
  echo "check-test-leftovers: the tests left files in their TMPDIR $tmp:" >&2
  ls -la "$tmp" >&2
  status=1
fi
# A server killed with its test may take a moment to go.
for _ in $(seq 50); do
  pgrep -f "^$server( |$)" >/dev/null || break
  sleep 0.1
done
if pgrep -af "^$server( |$)" >&2; then
  echo "check-test-leftovers: the servers above outlived their tests" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "check-test-leftovers: no files left in TMPDIR, no server left running"
exit "$status"
