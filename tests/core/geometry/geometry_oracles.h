// Double-precision brute-force oracles for the closed-form geometry tests.
#pragma once

#include <algorithm>
#include <cmath>

#include "tests/core/narrowphase/random_cases.h"

namespace voxcol::testing {

inline double PointSegmentDist(const D3& p, const D3& a, const D3& b) {
  D3 ab = b - a;
  double len_sq = DotD(ab, ab);
  double t = len_sq > 0 ? std::clamp(DotD(p - a, ab) / len_sq, 0.0, 1.0) : 0.0;
  return LenD(p - (a + ab * t));
}

// Project onto the plane; inside (by edge-side signs) -> plane distance, else nearest edge.
inline double PointTriangleDist(const D3& p, const D3& a, const D3& b, const D3& c) {
  D3 n = CrossD(b - a, c - a);
  double n_len = LenD(n);
  if (n_len > 0) {
    n = n * (1 / n_len);
    double h = DotD(p - a, n);
    D3 q = p - n * h;
    bool inside = DotD(CrossD(b - a, q - a), n) >= 0 && DotD(CrossD(c - b, q - b), n) >= 0 &&
                  DotD(CrossD(a - c, q - c), n) >= 0;
    if (inside) return std::fabs(h);
  }
  return std::min(
      {PointSegmentDist(p, a, b), PointSegmentDist(p, b, c), PointSegmentDist(p, c, a)});
}

// Minimises a convex function of s in [0, 1] by ternary search.
template <typename F>
double MinimiseConvex(F f) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 200; ++i) {
    double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (f(m1) < f(m2))
      hi = m2;
    else
      lo = m1;
  }
  return std::min({f(0.5 * (lo + hi)), f(0.0), f(1.0)});
}

inline double SegmentSegmentDist(const D3& p0, const D3& p1, const D3& q0, const D3& q1) {
  return MinimiseConvex([&](double s) { return PointSegmentDist(p0 + (p1 - p0) * s, q0, q1); });
}

inline double SegmentTriangleDist(const D3& p0, const D3& p1, const D3& a, const D3& b,
                                  const D3& c) {
  return MinimiseConvex([&](double s) { return PointTriangleDist(p0 + (p1 - p0) * s, a, b, c); });
}

}  // namespace voxcol::testing
