#!/usr/bin/env python3
"""Checks scripts/check-function-length.py on a C++ file whose function lengths are known."""

import os
import subprocess
import sys
import tempfile
import unittest

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                       "check-function-length.py")

SOURCE = """\
#include <vector>

namespace voxcol {
namespace {

// A comment with braces { { { that must not count.
int Short(int x) {
  const char* s = "}}}";
  const char c = '{';
  return x + s[0] + c;
}

}  // namespace

template <class T>
class Walker : public Base<T> {
 public:
  Walker(int a, int b)
      : a_(a),
        b_(b) {
    Init();
  }
  int Walk(const std::vector<int>& v) const {
    auto step = [&](int i) {
      return v[i];
    };
    int sum = 0;
#if defined(__SSE2__)
    for (int i = 0; i < 4; ++i) {
#else
    for (int i = 0; i < 2; ++i) {
#endif
      sum += step(i);
    }
    return sum;
  }

 private:
  struct Inner {
    int x;
  };
  int a_, b_;
};

template <typename C>
void Walker<C>::Later(C& c,
                      int n) const {
  if (n) {
    c.Add();
  }
}

const int kTable[2] = {
    1,
    2,
};

}  // namespace voxcol
"""


class CheckFunctionLengthTest(unittest.TestCase):
    def run_checker(self, *args):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "sample.cc")
            with open(path, "w") as f:
                f.write(SOURCE)
            r = subprocess.run([sys.executable, CHECKER, *args, path], capture_output=True,
                               text=True)
            return r.returncode, [line.split(": ", 1)[1] for line in r.stdout.splitlines()]

    def test_reports_every_function_with_its_length(self):
        rc, lines = self.run_checker("--max", "0", "--allowlist", os.devnull)
        self.assertEqual(rc, 1)
        self.assertEqual(lines, [
            "Short: 5 lines (max 0)",
            "Walker: 5 lines (max 0)",
            "Walk: 14 lines (max 0)",
            "Walker<C>::Later: 6 lines (max 0)",
        ])

    def test_passes_under_the_limit(self):
        rc, lines = self.run_checker("--max", "14", "--allowlist", os.devnull)
        self.assertEqual((rc, lines), (0, []))

    def test_allowlist_exempts_a_function(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# comment\nsample.cc:Walk\n")
        try:
            rc, lines = self.run_checker("--max", "13", "--allowlist", f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual((rc, lines), (0, []))


if __name__ == "__main__":
    unittest.main()
