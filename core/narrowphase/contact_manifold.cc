#include "core/narrowphase/contact_manifold.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace voxcol {
namespace {

// Twice the signed area of (a, b, c) seen along n (positive when counter-clockwise).
float SignedArea2(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& n) {
  return Dot(Cross(b - a, c - a), n);
}

// Index maximising score(i) over points not yet chosen, or -1 if no score is positive.
template <typename Score>
int ArgMax(int count, Score score) {
  int best = -1;
  float best_score = 0;
  for (int i = 0; i < count; ++i) {
    float s = score(i);
    if (s > best_score) best_score = s, best = i;
  }
  return best;
}

}  // namespace

int ReduceContactIndices(const ManifoldPoint* points, int count, const Vec3& normal,
                         int out[kMaxManifoldPoints]) {
  if (count <= 0) return 0;
  auto pos = [&](int i) { return points[i].position; };
  auto planar_sq = [&](const Vec3& d) { return LengthSq(d - normal * Dot(d, normal)); };
  // 1. The deepest point anchors the manifold. Among points equally deep (within 1e-3 of the
  //    points' spread: a face lying on a face), the one farthest from their centroid, so the anchor
  //    is a corner of the contact area and the other three can be corners too.
  float max_depth = points[0].depth;
  Vec3 centroid;
  for (int i = 0; i < count; ++i) {
    max_depth = std::max(max_depth, points[i].depth);
    centroid += pos(i);
  }
  centroid *= 1.0f / float(count);
  float spread_sq = 0;
  for (int i = 0; i < count; ++i) spread_sq = std::max(spread_sq, planar_sq(pos(i) - centroid));
  const float tie = 1e-3f * std::sqrt(spread_sq);
  int i0 = -1;
  for (int i = 0; i < count; ++i) {
    if (points[i].depth < max_depth - tie) continue;
    if (i0 < 0 || planar_sq(pos(i) - centroid) > planar_sq(pos(i0) - centroid)) i0 = i;
  }
  out[0] = i0;
  // 2. Farthest from it in the contact plane.
  int i1 = ArgMax(count, [&](int i) { return planar_sq(pos(i) - pos(i0)); });
  if (i1 < 0) return 1;
  out[1] = i1;
  // 3. Largest triangle with that edge, on either side.
  int i2 = ArgMax(count, [&](int i) {
    float a = SignedArea2(pos(i0), pos(i1), pos(i), normal);
    return a < 0 ? -a : a;
  });
  if (i2 < 0) return 2;
  out[2] = i2;
  // 4. Orient the triangle counter-clockwise; a point outside edge (p, q) adds the area of
  //    (q, p, x), which is positive exactly when x is on the outer side.
  Vec3 tri[3] = {pos(i0), pos(i1), pos(i2)};
  if (SignedArea2(tri[0], tri[1], tri[2], normal) < 0) std::swap(tri[1], tri[2]);
  int i3 = ArgMax(count, [&](int i) {
    float gain = 0;
    for (int e = 0; e < 3; ++e) {
      float a = SignedArea2(tri[(e + 1) % 3], tri[e], pos(i), normal);
      if (a > gain) gain = a;
    }
    return gain;
  });
  if (i3 < 0) return 3;
  out[3] = i3;
  return 4;
}

int ReduceContacts(const ManifoldPoint* points, int count, const Vec3& normal,
                   ManifoldPoint out[kMaxManifoldPoints]) {
  int kept[kMaxManifoldPoints];
  const int n = ReduceContactIndices(points, count, normal, kept);
  for (int i = 0; i < n; ++i) out[i] = points[kept[i]];
  return n;
}

}  // namespace voxcol
