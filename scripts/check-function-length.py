#!/usr/bin/env python3
"""Reports C++ functions longer than a limit (issue 14: none over 80 lines).

Usage:
  scripts/check-function-length.py [--max N] [--allowlist FILE] PATH...

PATH is a file or a directory (searched for *.h, *.hpp, *.cc, *.cpp). Prints one line per
function over the limit, `file:line: Name: N lines (max M)`, and exits 1 if there is any (0
otherwise, 2 on a usage error). A function's length runs from the line of its name to the line of
its closing brace, both included, so it counts the signature, blank lines and comments.

The allowlist (default: scripts/function-length-allowlist.txt beside this script, if present)
holds one `path:Name` per line, path relative to the repository root (or any suffix of a checked
file's path); `#` starts a comment. Listed functions are not reported.

Meant for clang-format-formatted code: braces are matched after comments, string and character
literals are blanked out, and of an #if/#else the first branch alone is read (each branch of such
code opens and closes the same braces). Functions are definitions at namespace or class scope,
lambdas and local classes count toward the function around them.
"""

import argparse
import os
import re
import sys

EXTENSIONS = (".h", ".hpp", ".cc", ".cpp")
DEFAULT_ALLOWLIST = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "function-length-allowlist.txt")


def blank_comments_and_literals(text):
    """Replaces comments and string/char literals by spaces, keeping newlines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append('"' + " " * (j - i - 1) + '"')
            i = j + 1
        elif c == "'" and (i == 0 or not text[i - 1].isalnum()):  # not a digit separator
            m = re.match(r"'(\\.[^']*|[^\\'\n])'", text[i:])
            if m:
                out.append("'" + " " * (len(m.group(0)) - 2) + "'")
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def first_branch_only(text):
    """Blanks preprocessor lines and every #else/#elif branch, keeping line numbers."""
    lines = text.split("\n")
    # Per open #if: whether we are skipping its current branch.
    stack = []
    for k, line in enumerate(lines):
        s = line.strip()
        directive = re.match(r"#\s*(\w+)", s)
        skipping = any(stack)
        if directive:
            d = directive.group(1)
            if d in ("if", "ifdef", "ifndef"):
                stack.append(False)
            elif d in ("else", "elif") and stack:
                stack[-1] = True
            elif d == "endif" and stack:
                stack.pop()
            lines[k] = ""
            # A directive continued over several lines.
            j = k
            while lines[j].endswith("\\") and j + 1 < len(lines):
                j += 1
                lines[j] = ""
        elif skipping:
            lines[k] = ""
    return "\n".join(lines)


def strip_template_heads(header):
    """Removes `template <...>` parameter lists (which may say `class`)."""
    while True:
        m = re.search(r"\btemplate\s*<", header)
        if not m:
            return header
        depth, j = 0, m.end() - 1
        while j < len(header):
            if header[j] == "<":
                depth += 1
            elif header[j] == ">":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        header = header[:m.start()] + " " + header[j + 1:]


NAME_RE = re.compile(r"((?:~?[A-Za-z_]\w*\s*(?:<[^<>(){};]*>)?\s*::\s*)*"
                     r"(?:operator\s*(?:\(\s*\)|[^\s(]+)|~?[A-Za-z_]\w*))\s*\(")
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "decltype",
           "static_assert", "alignas", "noexcept", "throw"}


def classify(header):
    """What a `{` opens at namespace or class scope: ('function', name) or (kind, None)."""
    h = strip_template_heads(" ".join(header.split()))
    if re.search(r"\bnamespace\b", h) or re.match(r'\s*extern\s*""', h):
        return "namespace", None
    if re.match(r"\s*(?:\[\[[^\]]*\]\]\s*)*(?:typedef\s+)?(class|struct|union|enum)\b", h):
        return "class", None
    if "(" not in h:
        return "other", None
    if re.search(r"(?<![=!<>])=(?!=)", h.split("(")[0]) and "operator" not in h:
        return "other", None  # an initializer, e.g. `auto f = [](int) {` or `T x = T(...){`
    for m in NAME_RE.finditer(h):
        name = re.sub(r"\s+", "", m.group(1))
        if name.split("::")[-1] in CONTROL:
            continue
        if re.fullmatch(r"[A-Z][A-Z0-9_]*", name):  # a macro such as TEST(Suite, Name)
            depth, j = 0, m.end() - 1
            while j < len(h):
                depth += h[j] == "("
                depth -= h[j] == ")"
                if depth == 0:
                    break
                j += 1
            name = re.sub(r"\s+", " ", h[m.start(1):j + 1])
        return "function", name
    return "other", None


def functions(path):
    """Yields (line, name, length) for each function defined in `path`."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = first_branch_only(blank_comments_and_literals(f.read()))
    # scope stack entries: (kind, name, start_line)
    stack = []
    header, header_line = [], None
    line = 1
    for c in text:
        if c == "\n":
            line += 1
        in_function = any(kind in ("function", "block") for kind, _, _ in stack)
        if in_function:
            if c == "{":
                stack.append(("block", None, line))
            elif c == "}" and stack:
                kind, name, start = stack.pop()
                if kind == "function":
                    yield start, name, line - start + 1
            continue
        if c == "{":
            kind, name = classify("".join(header))
            start = line
            if kind == "function":
                m = re.search(re.escape(name.split("(")[0].split("::")[-1]) + r"\s*\(",
                              "".join(header))
                offset = "".join(header)[:m.start()].count("\n") if m else 0
                start = header_line + offset
            stack.append((kind, name, start))
            header, header_line = [], None
        elif c in ";}":
            if c == "}" and stack:
                stack.pop()
            header, header_line = [], None
        elif c == ":" and header and re.search(r"\b(public|private|protected)\s*$", "".join(header)):
            header, header_line = [], None
        else:
            if header_line is None and not c.isspace():
                header_line = line
            if header_line is not None:
                header.append(c)


def load_allowlist(path):
    entries = set()
    if not path or not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for raw in f:
            entry = raw.split("#", 1)[0].strip()
            if entry:
                file_part, _, name = entry.partition(":")  # paths have no colon; names may have ::
                entries.add((os.path.normpath(file_part), name))
    return entries


def allowed(allowlist, path, name):
    norm = os.path.normpath(path)
    for file_part, allowed_name in allowlist:
        if name == allowed_name and (norm == file_part or norm.endswith(os.sep + file_part)):
            return True
    return False


def source_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith(EXTENSIONS):
                        yield os.path.join(root, name)
        else:
            yield p


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="files or directories")
    parser.add_argument("--max", type=int, default=80, help="longest allowed function (lines)")
    parser.add_argument("--allowlist", default=DEFAULT_ALLOWLIST, help="path:Name per line")
    args = parser.parse_args()
    allowlist = load_allowlist(args.allowlist)
    failures = 0
    for path in source_files(args.paths):
        for line, name, length in functions(path):
            if length > args.max and not allowed(allowlist, path, name):
                print(f"{path}:{line}: {name}: {length} lines (max {args.max})")
                failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
