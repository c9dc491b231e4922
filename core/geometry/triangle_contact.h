// Closed-form sphere-triangle and capsule-triangle proximity (no GJK): closest points, signed
// distance and a contact normal pointing from the triangle toward the shape. The signed distance is
// not a depth: it is negative when the shape penetrates (collide_vs_triangle.h turns it into the
// depth of a ManifoldPoint, depth = -distance).
#pragma once

#include "core/geometry/vec3.h"

namespace voxcol {

struct TriangleContact {
  bool overlapping = false;  // distance < 0
  // Signed distance from the shape's surface to the triangle: > 0 apart, < 0 penetrating (by
  // -distance).
  float distance = 0;
  Vec3 point_on_triangle;  // closest (or deepest-contact) point on the triangle
  Vec3 normal;             // unit, from the triangle toward the shape
};

// Sphere (center, radius > 0) vs triangle (a, b, c). A centre exactly on the triangle uses the face
// normal of the counter-clockwise winding (b - a) x (c - a). Precondition: non-degenerate triangle.
TriangleContact SphereVsTriangle(const Vec3& center, float radius, const Vec3& a, const Vec3& b,
                                 const Vec3& c);

// Capsule (segment [p0, p1] swept by radius > 0) vs triangle (a, b, c). When the segment crosses
// the triangle the normal is the face normal on the side of the less deep endpoint and the
// penetration (-distance) is radius plus how far that endpoint's opposite lies behind the face, so
// it pushes the capsule out to the front. Precondition: non-degenerate triangle.
TriangleContact CapsuleVsTriangle(const Vec3& p0, const Vec3& p1, float radius, const Vec3& a,
                                  const Vec3& b, const Vec3& c);

}  // namespace voxcol
