#include "core/narrowphase/collide_vs_triangle.h"

#include <cassert>

#include "core/geometry/triangle_contact.h"

namespace voxcol {
namespace {

TriangleCollision FromTriangleContact(const TriangleContact& tc) {
  TriangleCollision r;
  r.overlapping = tc.overlapping;
  r.contact = {tc.point_on_triangle, tc.normal, -tc.distance};
  return r;
}

}  // namespace

TriangleCollision CollideSphereVsTriangle(const Vec3& center, float radius, const Vec3& a,
                                          const Vec3& b, const Vec3& c) {
  return FromTriangleContact(SphereVsTriangle(center, radius, a, b, c));
}

TriangleCollision CollideCapsuleVsTriangle(const PosedShape& capsule, const Vec3& a, const Vec3& b,
                                           const Vec3& c) {
  assert(capsule.shape->type == ShapeType::kCapsule);
  Vec3 axis = capsule.pose.rotation.Rotate({0, capsule.shape->half_height, 0});
  const Vec3& centre = capsule.pose.translation;
  return FromTriangleContact(
      CapsuleVsTriangle(centre - axis, centre + axis, capsule.Radius(), a, b, c));
}

TriangleCollision CollideConvexVsTriangle(const PosedShape& shape, const Vec3& a, const Vec3& b,
                                          const Vec3& c, const PenetrationSettings& settings) {
  ConvexShape triangle = MakeTriangle(a, b, c);
  // Triangle as A: the normal then points from the triangle toward the shape.
  PenetrationResult p = Penetration({&triangle, {}}, shape, settings);
  TriangleCollision r;
  r.overlapping = p.overlapping;
  r.contact = {p.point_a, p.normal, p.overlapping ? p.depth : -p.separation};
  return r;
}

}  // namespace voxcol
