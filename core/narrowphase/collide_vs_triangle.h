// Shape-vs-triangle overlap with a contact point, the primitive of terrain contacts. Spheres and
// capsules use the closed forms of core/geometry/triangle_contact.h; other convex shapes use
// Penetration (GJK, then EPA when the cores overlap) with the triangle as shape A.
#pragma once

#include "core/narrowphase/contact_manifold.h"
#include "core/narrowphase/penetration.h"

namespace voxcol {

struct TriangleCollision {
  bool overlapping = false;
  ManifoldPoint contact;  // position on the triangle, normal from the triangle toward the shape
};

// Sphere (center, radius > 0) vs the non-degenerate triangle (a, b, c).
TriangleCollision CollideSphereVsTriangle(const Vec3& center, float radius, const Vec3& a,
                                          const Vec3& b, const Vec3& c);

// Capsule (its core segment p0-p1, as PosedShape::CapsuleSegment gives it, and radius > 0) vs the
// non-degenerate triangle (a, b, c). An axis crossing the triangle is pushed out along the face
// normal (see CapsuleVsTriangle).
TriangleCollision CollideCapsuleVsTriangle(const Vec3& p0, const Vec3& p1, float radius,
                                           const Vec3& a, const Vec3& b, const Vec3& c);

// Sharp box (posed; kBox with convex_radius 0) vs the non-degenerate triangle (a, b, c) by the
// separating axis test on the 13 axes (3 box faces, the triangle's face, 9 edge pairs): for two
// convex polytopes the minimum overlap over these axes is the exact penetration depth, so this
// equals EPA's answer at a fraction of the cost. Separated pairs report overlapping = false with
// contact.depth = -(the separation along the first separating axis found), a lower bound on the
// distance.
TriangleCollision CollideBoxVsTriangle(const PosedShape& box, const Vec3& a, const Vec3& b,
                                       const Vec3& c);

// Any posed convex shape vs triangle (a, b, c): the minimum translation of the shape out of the
// triangle (two-sided).
TriangleCollision CollideConvexVsTriangle(const PosedShape& shape, const Vec3& a, const Vec3& b,
                                          const Vec3& c, const PenetrationSettings& settings = {});

}  // namespace voxcol
