#include "core/narrowphase/collide_vs_triangle.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "core/geometry/closest_point.h"
#include "core/geometry/triangle_contact.h"

namespace voxcol {
namespace {

TriangleCollision FromTriangleContact(const TriangleContact& tc) {
  TriangleCollision r;
  r.overlapping = tc.overlapping;
  r.contact = {tc.point_on_triangle, tc.normal, -tc.distance};
  return r;
}

// The separating axis test of a box [-e, e] and a triangle p[0..2] in the box's frame.
struct BoxTriangleAxis {
  // The largest separation over the axes tested; > 0 when a separating axis was found (the search
  // stops there, so this is a lower bound on the distance).
  float separation = -std::numeric_limits<float>::infinity();
  float depth = std::numeric_limits<float>::infinity();  // the minimum overlap
  Vec3 normal;    // unit axis of the minimum overlap, from the triangle toward the box
  int kind = -1;  // 0..2 box face, 3 triangle face, 4 + 3 i + j edge pair (box axis i, edge j)
};

// Tests the 13 axes (3 box faces, the triangle's face, 9 edge pairs) and keeps the one of minimum
// overlap.
BoxTriangleAxis MinimumOverlapAxis(const Vec3& e, const Vec3 p[3]) {
  const Vec3 f[3] = {p[1] - p[0], p[2] - p[1], p[0] - p[2]};
  BoxTriangleAxis best;
  // `reference2`: the squared length the axis has when its factors are perpendicular; much shorter
  // means parallel edges, which give no axis.
  auto test = [&](Vec3 axis, int kind, float reference2) {
    if (best.separation > 0) return;  // a separating axis was found: nothing else matters
    const float len2 = LengthSq(axis);
    if (!(len2 > 1e-12f * reference2)) return;
    axis = axis * (1.0f / std::sqrt(len2));
    const float r = e.x * std::fabs(axis.x) + e.y * std::fabs(axis.y) + e.z * std::fabs(axis.z);
    float lo = Dot(p[0], axis), hi = lo;
    for (int k = 1; k < 3; ++k) {
      const float d = Dot(p[k], axis);
      lo = std::min(lo, d), hi = std::max(hi, d);
    }
    best.separation = std::max(best.separation, std::max(lo - r, -r - hi));
    // Pushing the box along +axis by hi + r clears the triangle; along -axis by r - lo.
    const float up = hi + r, down = r - lo;
    const float depth = std::min(up, down);
    if (depth < best.depth) {
      best.depth = depth;
      best.normal = up <= down ? axis : -axis;
      best.kind = kind;
    }
  };
  for (int i = 0; i < 3; ++i) {
    Vec3 u;
    u[i] = 1;
    test(u, i, 1.0f);
  }
  test(Cross(f[0], p[2] - p[0]), 3, LengthSq(f[0]) * LengthSq(f[2]));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      Vec3 u;
      u[i] = 1;
      test(Cross(u, f[j]), 4 + 3 * i + j, LengthSq(f[j]));
    }
  return best;
}

// The box corner furthest along d.
Vec3 BoxSupport(const Vec3& e, const Vec3& d) {
  return Vec3(d.x < 0 ? -e.x : e.x, d.y < 0 ? -e.y : e.y, d.z < 0 ? -e.z : e.z);
}

// The deepest point on the triangle for an overlapping axis (box frame): the box corner furthest
// along -n pushed out by the depth (triangle face), the triangle corner furthest along +n (box
// face), or the closest point of the two edges (edge pair).
Vec3 DeepestTrianglePoint(const Vec3& e, const Vec3 p[3], const BoxTriangleAxis& axis) {
  const Vec3& n = axis.normal;
  if (axis.kind == 3) return BoxSupport(e, -n) + n * axis.depth;
  if (axis.kind < 3) {
    int k = 0;
    for (int m = 1; m < 3; ++m) {
      if (Dot(p[m], n) > Dot(p[k], n)) k = m;
    }
    return p[k];
  }
  const int i = (axis.kind - 4) / 3, j = (axis.kind - 4) % 3;
  Vec3 s0 = BoxSupport(e, -n), s1 = s0;
  s0[i] = -e[i];
  s1[i] = e[i];
  return ClosestPointsSegmentSegment(s0, s1, p[j], p[(j + 1) % 3]).on_second;
}

}  // namespace

TriangleCollision CollideSphereVsTriangle(const Vec3& center, float radius, const Vec3& a,
                                          const Vec3& b, const Vec3& c) {
  return FromTriangleContact(SphereVsTriangle(center, radius, a, b, c));
}

TriangleCollision CollideCapsuleVsTriangle(const Vec3& p0, const Vec3& p1, float radius,
                                           const Vec3& a, const Vec3& b, const Vec3& c) {
  return FromTriangleContact(CapsuleVsTriangle(p0, p1, radius, a, b, c));
}

TriangleCollision CollideBoxVsTriangle(const PosedShape& box, const Vec3& a, const Vec3& b,
                                       const Vec3& c) {
  assert(box.shape->type == ShapeType::kBox && box.shape->convex_radius == 0);
  const Vec3& e = box.shape->half_extents;
  // Box frame: the box is [-e, e].
  const Vec3 p[3] = {box.pose.ApplyInverse(a), box.pose.ApplyInverse(b), box.pose.ApplyInverse(c)};
  const BoxTriangleAxis axis = MinimumOverlapAxis(e, p);
  TriangleCollision r;
  if (axis.separation > 0) {
    r.contact.depth = -axis.separation;
    return r;
  }
  r.overlapping = true;
  r.contact = {box.pose.Apply(DeepestTrianglePoint(e, p, axis)),
               box.pose.rotation.Rotate(axis.normal), axis.depth};
  return r;
}

TriangleCollision CollideConvexVsTriangle(const PosedShape& shape, const Vec3& a, const Vec3& b,
                                          const Vec3& c, const PenetrationSettings& settings) {
  ConvexShape triangle = MakeTriangle(a, b, c);
  // Triangle as A: the normal then points from the triangle toward the shape.
  PenetrationResult p = ComputePenetration({&triangle, {}}, shape, settings);
  TriangleCollision r;
  r.overlapping = p.overlapping;
  r.contact = {p.point_a, p.normal, p.overlapping ? p.depth : -p.separation};
  return r;
}

}  // namespace voxcol
