#include "core/narrowphase/contact_manifold.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace voxcol {
namespace {

// A point in the contact plane, in an orthonormal basis (u, v) with u x v = normal.
struct P2 {
  float x, y;
};
P2 operator-(P2 a, P2 b) { return {a.x - b.x, a.y - b.y}; }
float LengthSq(P2 a) { return a.x * a.x + a.y * a.y; }
// Twice the signed area of (a, b, c) seen along the normal (positive when counter-clockwise).
float SignedArea2(P2 a, P2 b, P2 c) {
  const P2 ab = b - a, ac = c - a;
  return ab.x * ac.y - ab.y * ac.x;
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
  // Every step below measures in the contact plane: the points are projected once. The buffer is
  // the thread's (a large shape's contacts reduce thousands of runs per query).
  thread_local std::vector<P2> projected;
  projected.resize(size_t(count));
  P2* const q = projected.data();
  const Vec3 u = Normalize(std::fabs(normal.x) < 0.57f ? Cross(normal, Vec3(1, 0, 0))
                                                       : Cross(normal, Vec3(0, 1, 0)));
  const Vec3 v = Cross(normal, u);
  for (int i = 0; i < count; ++i) q[i] = {Dot(points[i].position, u), Dot(points[i].position, v)};
  // 1. The deepest point anchors the manifold. Among points equally deep (within 1e-3 of the
  //    points' spread: a face lying on a face), the one farthest from their centroid, so the anchor
  //    is a corner of the contact area and the other three can be corners too.
  float max_depth = points[0].depth;
  P2 centroid{0, 0};
  for (int i = 0; i < count; ++i) {
    max_depth = std::max(max_depth, points[i].depth);
    centroid.x += q[i].x, centroid.y += q[i].y;
  }
  centroid.x /= float(count), centroid.y /= float(count);
  float spread_sq = 0;
  for (int i = 0; i < count; ++i) spread_sq = std::max(spread_sq, LengthSq(q[i] - centroid));
  const float tie = 1e-3f * std::sqrt(spread_sq);
  int i0 = -1;
  for (int i = 0; i < count; ++i) {
    if (points[i].depth < max_depth - tie) continue;
    if (i0 < 0 || LengthSq(q[i] - centroid) > LengthSq(q[i0] - centroid)) i0 = i;
  }
  out[0] = i0;
  // 2. Farthest from it in the contact plane.
  int i1 = ArgMax(count, [&](int i) { return LengthSq(q[i] - q[i0]); });
  if (i1 < 0) return 1;
  out[1] = i1;
  // 3. Largest triangle with that edge, on either side.
  int i2 = ArgMax(count, [&](int i) { return std::fabs(SignedArea2(q[i0], q[i1], q[i])); });
  if (i2 < 0) return 2;
  out[2] = i2;
  // 4. Orient the triangle counter-clockwise; a point outside edge (p, q) adds the area of
  //    (q, p, x), which is positive exactly when x is on the outer side.
  P2 tri[3] = {q[i0], q[i1], q[i2]};
  if (SignedArea2(tri[0], tri[1], tri[2]) < 0) std::swap(tri[1], tri[2]);
  int i3 = ArgMax(count, [&](int i) {
    float gain = 0;
    for (int e = 0; e < 3; ++e) gain = std::max(gain, SignedArea2(tri[(e + 1) % 3], tri[e], q[i]));
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
