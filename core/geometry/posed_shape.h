// A convex shape placed in the world with the support mappings of its full shape and of its core:
// the input of the narrowphase algorithms (core/narrowphase) and of the terrain shape queries.
#pragma once

#include "core/geometry/shapes.h"
#include "core/geometry/transform.h"
#include "core/geometry/vec3.h"

namespace voxcol {

// A shape placed in the world. The shape must outlive this view.
struct PosedShape {
  const ConvexShape* shape;
  RigidTransform pose;

  // Support of the posed core: T(S(R^T d)) for the rigid map T(x) = R x + t.
  Vec3 SupportCore(const Vec3& dir) const {
    return pose.Apply(shape->SupportCore(InverseRotate(pose.rotation, dir)));
  }
  Vec3 Support(const Vec3& dir) const {
    // A sphere's needs no rotation (the contacts of a large one ask for it per triangle).
    if (shape->type == ShapeType::kSphere) {
      return pose.translation + dir * (shape->convex_radius / Length(dir));
    }
    return pose.Apply(shape->Support(InverseRotate(pose.rotation, dir)));
  }
  float Radius() const { return shape->convex_radius; }
  // Capsule only: the world-space ends of its core segment.
  void CapsuleSegment(Vec3* p0, Vec3* p1) const {
    const Vec3 axis = pose.rotation.Rotate({0, shape->half_height, 0});
    *p0 = pose.translation - axis;
    *p1 = pose.translation + axis;
  }
};

}  // namespace voxcol
