#include "core/geometry/triangle_contact.h"

#include <algorithm>
#include <cassert>

#include "core/geometry/closest_point.h"

namespace voxcol {
namespace {

Vec3 FaceNormal(const Vec3& a, const Vec3& b, const Vec3& c) {
  Vec3 n = Cross(b - a, c - a);
  assert(LengthSq(n) > 0);
  return Normalize(n);
}

// Contact from a core point and its closest triangle point; on-triangle cores take the normal
// fallback() returns (called only then: a sphere's contacts rarely need the face normal).
template <typename Fallback>
TriangleContact FromClosest(const Vec3& core, const Vec3& on_tri, float radius,
                            Fallback&& fallback) {
  Vec3 d = core - on_tri;
  float dist = Length(d);
  TriangleContact c;
  c.point_on_triangle = on_tri;
  c.normal = dist > 0 ? d * (1.0f / dist) : fallback();
  c.distance = dist - radius;
  c.overlapping = c.distance < 0;
  return c;
}

}  // namespace

TriangleContact SphereVsTriangle(const Vec3& center, float radius, const Vec3& a, const Vec3& b,
                                 const Vec3& c) {
  assert(radius > 0);
  return FromClosest(center, ClosestPointOnTriangle(center, a, b, c), radius,
                     [&] { return FaceNormal(a, b, c); });
}

TriangleContact CapsuleVsTriangle(const Vec3& p0, const Vec3& p1, float radius, const Vec3& a,
                                  const Vec3& b, const Vec3& c) {
  assert(radius > 0);
  SegmentPair pair = ClosestPointsSegmentTriangle(p0, p1, a, b, c);
  Vec3 n = FaceNormal(a, b, c);
  if (pair.on_first != pair.on_second) {
    return FromClosest(pair.on_first, pair.on_second, radius, [&] { return n; });
  }
  // The axis crosses the triangle. Push out along the face normal toward the endpoint that is
  // less deep: the other endpoint lies `behind` below the face.
  float h0 = Dot(p0 - a, n), h1 = Dot(p1 - a, n);
  if (h0 + h1 < 0) n = -n, h0 = -h0, h1 = -h1;
  float behind = std::max(0.0f, -std::min(h0, h1));
  TriangleContact contact;
  contact.overlapping = true;
  contact.distance = -(radius + behind);
  contact.point_on_triangle = pair.on_second;
  contact.normal = n;
  return contact;
}

}  // namespace voxcol
