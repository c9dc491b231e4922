// Support mappings of posed shapes and of their Minkowski difference (the configuration space
// obstacle, CSO, of van den Bergen), the only geometry GJK, EPA and GJK-raycast see.
#pragma once

#include "core/geometry/shapes.h"
#include "core/geometry/transform.h"

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
    return pose.Apply(shape->Support(InverseRotate(pose.rotation, dir)));
  }
  float Radius() const { return shape->convex_radius; }
};

// A CSO point w = a - b with the shape points it came from, so closest points on A and B can be
// recovered from barycentric coordinates.
struct SupportPoint {
  Vec3 w, a, b;
};

// Support of A - B: s_{A-B}(d) = s_A(d) - s_B(-d). `rounded` selects the full shapes; otherwise the
// cores (the caller then accounts for the convex radii).
class MinkowskiDifference {
 public:
  MinkowskiDifference(const PosedShape& a, const PosedShape& b, bool rounded)
      : a_(a), b_(b), rounded_(rounded) {}

  // Precondition for rounded supports: dir != 0.
  SupportPoint Support(const Vec3& dir) const {
    Vec3 pa = rounded_ ? a_.Support(dir) : a_.SupportCore(dir);
    Vec3 pb = rounded_ ? b_.Support(-dir) : b_.SupportCore(-dir);
    return {pa - pb, pa, pb};
  }
  const PosedShape& a() const { return a_; }
  const PosedShape& b() const { return b_; }

 private:
  const PosedShape& a_;
  const PosedShape& b_;
  bool rounded_;
};

}  // namespace voxcol
