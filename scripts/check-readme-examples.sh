#!/usr/bin/env bash
# Runs the CLI examples of the README and docs/cli.md against a real server and checks that each
# prints output of the documented shape.
#
#   bash scripts/check-readme-examples.sh [BUILD_DIR] [--numbers] [--show] [FILE.md ...]
#
# BUILD_DIR defaults to ./build and must hold server/voxcol_server and client/voxcol; FILE.md
# defaults to README.md and docs/cli.md (paths relative to the repository root).
#
# Convention in the markdown: every ```console block is an example session. A line starting with
# "$ " is a command (a trailing backslash continues it on the next line; "# ..." is a shell
# comment), the lines after it up to the next "$ " line are its expected output (stdout and stderr
# together). A line holding only "..." in an expected output stands for any number of lines. Blocks
# that must not be run are fenced as ```text (or ```sh). Each console block runs against its own
# freshly started server (a new data directory with the default world, loopback, a free port), in
# block order, in a temporary working directory; only commands starting with `voxcol` may appear.
# `voxcol` is replaced by BUILD_DIR/client/voxcol and --server=127.0.0.1:PORT is added.
#
# The output is compared by shape: after every number is replaced by a placeholder and runs of
# blanks are collapsed, the lines must be equal (so the same number of lines, the same words, keys
# and field names); a line holding a JSON object (--json) must have the same key paths. With --numbers every number must also match within 0.002 + 1% (use it after
# pasting fresh output, to catch stale figures). With --show the actual output of every example is
# printed (for refreshing the docs: paste real output, never edit it by hand).
#
# Exit status: 0 every example matched, 1 some example differed (each is named by file:line), 2 bad
# usage or no server.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 - "$root" "$@" <<'PY'
import difflib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

root = sys.argv[1]
args = sys.argv[2:]
numbers = "--numbers" in args
show = "--show" in args
args = [a for a in args if a not in ("--numbers", "--show")]


def usage_error(msg):
    print("check-readme-examples: " + msg, file=sys.stderr)
    sys.exit(2)


build = os.path.join(root, "build")
if args and not args[0].endswith(".md"):
    build = args.pop(0)
    if not os.path.isdir(build):
        usage_error(f"{build} is not a build directory")
for a in args:
    if not a.endswith(".md") or not os.path.isfile(os.path.join(root, a)):
        usage_error(f"{a} is not a markdown file")
build = os.path.abspath(build)
files = args or ["README.md", "docs/cli.md"]
server_bin = os.path.join(build, "server", "voxcol_server")
cli_bin = os.path.join(build, "client", "voxcol")
for b in (server_bin, cli_bin):
    if not os.access(b, os.X_OK):
        usage_error(f"{b} is missing; build voxcol_server and voxcol first")

NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def parse(path):
    """Returns the console blocks of a markdown file: lists of (line, command, expected lines)."""
    blocks, block, indent, ex = [], None, "", None
    with open(os.path.join(root, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        raw = lines[i]
        m = re.match(r"^(\s*)```(\S*)\s*$", raw)
        if block is None:
            if m and m.group(2) == "console":
                block, indent = [], m.group(1)
        elif m and not m.group(2):
            blocks.append(block)
            block = None
        else:
            line = raw[len(indent):] if raw.startswith(indent) else raw.lstrip()
            if line.startswith("$ "):
                start, cmd = i + 1, line[2:]
                while cmd.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    nxt = lines[i]
                    cmd = cmd[:-1] + " " + (nxt[len(indent):] if nxt.startswith(indent) else nxt).strip()
                ex = (start, cmd, [])
                block.append(ex)
            elif block:
                block[-1][2].append(line)
            elif line.strip():
                usage_error(f"{path}:{i + 1}: console block output before any '$ ' command")
        i += 1
    if block is not None:
        usage_error(f"{path}: unterminated console block")
    return blocks


def shape(line):
    return " ".join(NUM.sub("#", line).split())


def json_keys(line, prefix=""):
    """The key paths of a one-line JSON object (array elements merged), or None if it is not one."""
    if prefix == "":
        if not line.lstrip().startswith("{"):
            return None
        try:
            line = json.loads(line)
        except ValueError:
            return None
    keys = set()
    if isinstance(line, dict):
        for k, v in line.items():
            keys.add(prefix + k)
            keys |= json_keys(v, prefix + k + ".")
    elif isinstance(line, list):
        for v in line:
            keys |= json_keys(v, prefix + "[].")
    return keys


def same_shape(e, a):
    ke = json_keys(e)
    if ke is not None:
        return ke == json_keys(a)
    return shape(e) == shape(a)


def trim(lines):
    lines = [l.rstrip() for l in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def match(expected, actual):
    """Aligns expected with actual lines ("..." matches any run); returns [(e, a)] pairs or None."""
    memo = {}

    def go(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            r = [] if j == len(actual) else None
        elif expected[i].strip() == "...":
            r = None
            for k in range(j, len(actual) + 1):
                rest = go(i + 1, k)
                if rest is not None:
                    r = rest
                    break
        elif j < len(actual) and same_shape(expected[i], actual[j]):
            rest = go(i + 1, j + 1)
            r = None if rest is None else [(expected[i], actual[j])] + rest
        else:
            r = None
        memo[(i, j)] = r
        return r

    return go(0, 0)


def numbers_differ(pairs):
    for e, a in pairs:
        if json_keys(e) is not None:
            continue
        for x, y in zip(NUM.findall(e), NUM.findall(a)):
            if abs(float(x) - float(y)) > 0.002 + 0.01 * abs(float(x)):
                return f"number {y} where the docs say {x}:\n  docs:   {e.strip()}\n  actual: {a.strip()}"
    return None


def start_server(tmp):
    port_file = os.path.join(tmp, "port")
    log = open(os.path.join(tmp, "server.log"), "w")
    proc = subprocess.Popen(
        [server_bin, "--data_dir=" + os.path.join(tmp, "data"), "--listen=127.0.0.1:0",
         "--port_file=" + port_file, "--metrics_listen="],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            break
        if os.path.exists(port_file):
            port = open(port_file).read().strip()
            if port:
                return proc, port
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    with open(os.path.join(tmp, "server.log")) as f:
        sys.stderr.write(f.read()[-2000:])
    usage_error("the server did not start")


def stop_server(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


failures, total, nblocks = [], 0, 0
env = dict(os.environ, LC_ALL="C")
for path in files:
    for block in parse(path):
        if not block:
            continue
        nblocks += 1
        with tempfile.TemporaryDirectory(prefix="voxcol-examples-") as tmp:
            work = os.path.join(tmp, "work")
            os.mkdir(work)
            proc, port = start_server(tmp)
            try:
                for line, cmd, expected in block:
                    total += 1
                    name = f"{path}:{line}: `{cmd}`"
                    argv = shlex.split(cmd, comments=True)
                    if not argv or argv[0] != "voxcol":
                        failures.append(f"{name}: only `voxcol` commands may appear in a console block "
                                        "(fence it as ```text to leave it out)")
                        continue
                    argv = [cli_bin, f"--server=127.0.0.1:{port}"] + argv[1:]
                    try:
                        r = subprocess.run(argv, cwd=work, env=env, stdin=subprocess.DEVNULL,
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                           timeout=30, text=True)
                        out, code = r.stdout, r.returncode
                    except subprocess.TimeoutExpired as e:
                        out, code = e.stdout or "", None
                        if isinstance(out, bytes):
                            out = out.decode(errors="replace")
                    actual = trim(out.split("\n"))
                    exp = trim(expected)
                    if show:
                        print(f"--- {name} (exit {code})")
                        print("\n".join(actual))
                    if code is None:
                        failures.append(f"{name}: did not finish within 30 s")
                        continue
                    if code == 3:
                        failures.append(f"{name}: exit 3 (server unreachable or deadline exceeded):\n" + out)
                        continue
                    pairs = match(exp, actual)
                    if pairs is None:
                        diff = "\n".join(difflib.unified_diff(exp, actual, "documented", "actual", lineterm=""))
                        failures.append(f"{name}: output differs in shape (exit {code}):\n{diff}")
                        continue
                    if numbers:
                        why = numbers_differ(pairs)
                        if why:
                            failures.append(f"{name}: {why}")
            finally:
                stop_server(proc)

for f in failures:
    print("MISMATCH " + f + "\n", file=sys.stderr)
print(f"check-readme-examples: {total - len(failures)} of {total} examples in {nblocks} blocks "
      f"({', '.join(files)}) matched" + (" (numbers too)" if numbers else ""))
sys.exit(1 if failures else 0)
PY
