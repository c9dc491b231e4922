// Ray against one posed convex shape: closed forms for spheres, capsules and sharp boxes (the
// hitbox shapes), GJK-raycast (core/narrowphase) for hulls and rounded boxes.
#pragma once

#include "core/geometry/shapes.h"
#include "core/geometry/transform.h"
#include "core/geometry/vec3.h"

namespace voxcol {

struct ShapeRayHit {
  bool hit = false;
  float t = 0;  // distance along the unit direction, world units
  Vec3 normal;  // unit outward surface normal at the hit, world frame; -dir when inside at t = 0
};

// First point of origin + t dir, t in [0, max_t], inside `shape` posed by `pose`. dir must be unit
// length and max_t finite and >= 0. A ray that starts inside the shape hits at t = 0.
ShapeRayHit RayVsShape(const Vec3& origin, const Vec3& dir, float max_t, const ConvexShape& shape,
                       const RigidTransform& pose);

// The closed forms, in the shape's frame (sphere and capsule centred at the origin, capsule along
// Y, box of half extents `half`).
ShapeRayHit RayVsSphere(const Vec3& o, const Vec3& d, float max_t, float radius);
ShapeRayHit RayVsCapsule(const Vec3& o, const Vec3& d, float max_t, float half_height,
                         float radius);
ShapeRayHit RayVsBox(const Vec3& o, const Vec3& d, float max_t, const Vec3& half);

}  // namespace voxcol
