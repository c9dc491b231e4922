#include "core/geometry/closest_point.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/geometry/ray_triangle.h"

namespace voxcol {

Vec3 ClosestPointOnSegment(const Vec3& p, const Vec3& a, const Vec3& b) {
  Vec3 ab = b - a;
  float len_sq = LengthSq(ab);
  if (len_sq == 0) return a;
  float t = std::clamp(Dot(p - a, ab) / len_sq, 0.0f, 1.0f);
  return a + ab * t;
}

Vec3 ClosestPointOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  // Ericson 5.1.5: classify p against the vertex, edge and face Voronoi regions using the dot
  // products d1..d6; the signed areas va, vb, vc are the unnormalised barycentrics of the
  // projection of p.
  Vec3 ab = b - a, ac = c - a, ap = p - a;
  float d1 = Dot(ab, ap), d2 = Dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) return a;
  Vec3 bp = p - b;
  float d3 = Dot(ab, bp), d4 = Dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) return b;
  float vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return a + ab * (d1 / (d1 - d3));
  Vec3 cp = p - c;
  float d5 = Dot(ab, cp), d6 = Dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) return c;
  float vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return a + ac * (d2 / (d2 - d6));
  float va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
  }
  float sum = va + vb + vc;
  // A degenerate triangle (sum == 0) lands in an edge region above unless p projects onto it;
  // fall back to the closest edge point then.
  if (!(sum > 0)) {
    Vec3 e[3] = {ClosestPointOnSegment(p, a, b), ClosestPointOnSegment(p, b, c),
                 ClosestPointOnSegment(p, c, a)};
    int best = 0;
    for (int i = 1; i < 3; ++i) {
      if (LengthSq(e[i] - p) < LengthSq(e[best] - p)) best = i;
    }
    return e[best];
  }
  float inv = 1.0f / sum;
  return a + ab * (vb * inv) + ac * (vc * inv);
}

SegmentPair ClosestPointsSegmentSegment(const Vec3& p0, const Vec3& p1, const Vec3& q0,
                                        const Vec3& q1) {
  // Ericson 5.1.9: minimise |p0 + s d1 - q0 - t d2|^2 over [0,1]^2. Solve for s on the
  // infinite lines, clamp, recompute t for the clamped s, clamp t and recompute s.
  Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  float a = LengthSq(d1), e = LengthSq(d2), f = Dot(d2, r);
  float s = 0, t = 0;
  if (a == 0 && e == 0) return {p0, q0};
  if (a == 0) {
    t = std::clamp(f / e, 0.0f, 1.0f);
  } else {
    float c = Dot(d1, r);
    if (e == 0) {
      s = std::clamp(-c / a, 0.0f, 1.0f);
    } else {
      float b = Dot(d1, d2);
      float denom = a * e - b * b;  // >= 0; zero for parallel segments
      s = denom > 0 ? std::clamp((b * f - c * e) / denom, 0.0f, 1.0f) : 0.0f;
      t = (b * s + f) / e;
      if (t < 0) {
        t = 0, s = std::clamp(-c / a, 0.0f, 1.0f);
      } else if (t > 1) {
        t = 1, s = std::clamp((b - c) / a, 0.0f, 1.0f);
      }
    }
  }
  return {p0 + d1 * s, q0 + d2 * t};
}

namespace {

// The closest points between the segment and the triangle's three edges.
SegmentPair ClosestToEdges(const Vec3& p0, const Vec3& p1, const Vec3& a, const Vec3& b,
                           const Vec3& c) {
  SegmentPair best = ClosestPointsSegmentSegment(p0, p1, a, b);
  float best_sq = LengthSq(best.on_first - best.on_second);
  for (const auto& [q0, q1] : {std::pair(&b, &c), std::pair(&c, &a)}) {
    const SegmentPair cand = ClosestPointsSegmentSegment(p0, p1, *q0, *q1);
    const float sq = LengthSq(cand.on_first - cand.on_second);
    if (sq < best_sq) best = cand, best_sq = sq;
  }
  return best;
}

// Every candidate: the crossing, both endpoints against the face, the segment against each edge.
// For degenerate triangles and segments lying in the triangle's plane.
SegmentPair ClosestByAllCandidates(const Vec3& p0, const Vec3& p1, const Vec3& a, const Vec3& b,
                                   const Vec3& c) {
  const Vec3 d = p1 - p0;
  const RayTriangleHit crossing = RayTriangle(p0, d, a, b, c, /*max_t=*/1.0f);
  if (crossing.hit) {
    const Vec3 x = p0 + d * crossing.t;
    return {x, x};
  }
  SegmentPair best = ClosestToEdges(p0, p1, a, b, c);
  float best_sq = LengthSq(best.on_first - best.on_second);
  for (const Vec3* p : {&p0, &p1}) {
    const SegmentPair cand{*p, ClosestPointOnTriangle(*p, a, b, c)};
    const float sq = LengthSq(cand.on_first - cand.on_second);
    if (sq < best_sq) best = cand, best_sq = sq;
  }
  return best;
}

}  // namespace

SegmentPair ClosestPointsSegmentTriangle(const Vec3& p0, const Vec3& p1, const Vec3& a,
                                         const Vec3& b, const Vec3& c) {
  // The minimum is attained where the segment crosses the triangle, at the endpoint nearer the
  // plane against the face, or between the segment and an edge. The face matters only where the
  // point on the segment projects inside the triangle. If the segment crosses the plane outside
  // the triangle, or stays on one side with its nearer endpoint projecting outside, then from any
  // point projecting inside, the segment runs toward the plane and over an edge, no farther from
  // the plane there: the edges alone hold the minimum.
  const Vec3 n = Cross(b - a, c - a);  // not unit
  const float nn = LengthSq(n);
  const float h0 = Dot(n, p0 - a), h1 = Dot(n, p1 - a);
  if (!(nn > 0) || (h0 == 0 && h1 == 0)) return ClosestByAllCandidates(p0, p1, a, b, c);
  if ((h0 < 0 && h1 > 0) || (h0 > 0 && h1 < 0)) {
    const Vec3 x = p0 + (p1 - p0) * (h0 / (h0 - h1));
    if (ProjectsIntoTriangle(x, a, b, c, n)) return {x, x};
  } else {
    const bool first = std::fabs(h0) <= std::fabs(h1);
    const Vec3& e = first ? p0 : p1;
    if (ProjectsIntoTriangle(e, a, b, c, n)) return {e, e - n * ((first ? h0 : h1) / nn)};
  }
  return ClosestToEdges(p0, p1, a, b, c);
}

}  // namespace voxcol
