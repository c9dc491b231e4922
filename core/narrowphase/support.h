// Support mapping of the Minkowski difference of two posed shapes (core/geometry/posed_shape.h;
// the configuration space obstacle, CSO, of van den Bergen), the only geometry GJK, EPA and
// GJK-raycast see.
#pragma once

#include "core/geometry/posed_shape.h"  // IWYU pragma: export
#include "core/geometry/shapes.h"
#include "core/geometry/transform.h"

namespace voxcol {

// A CSO point w = a - b with the shape points it came from, so closest points on A and B can be
// recovered from barycentric coordinates.
struct SupportPoint {
  Vec3 w, a, b;
};

// Support of A - B: s_{A-B}(d) = s_A(d) - s_B(-d). `rounded` selects the full shapes; otherwise the
// cores (the caller then accounts for the convex radii).
//
// The CSO lives in A's local frame: A's supports need no transform and B's go through the one
// relative transform, two quaternion rotations per support instead of four. Algorithms convert
// their inputs with ToLocalDir and their results with ToWorldDir / ToWorldPoint.
class MinkowskiDifference {
 public:
  MinkowskiDifference(const PosedShape& a, const PosedShape& b, bool rounded)
      : a_(a), b_(b), b_in_a_(a.pose.Inverse() * b.pose), rounded_(rounded) {}

  // Support along dir (A's frame). Precondition for rounded supports: dir != 0.
  SupportPoint Support(const Vec3& dir) const {
    Vec3 pa = rounded_ ? a_.shape->Support(dir) : a_.shape->SupportCore(dir);
    Vec3 db = InverseRotate(b_in_a_.rotation, -dir);
    Vec3 pb = b_in_a_.Apply(rounded_ ? b_.shape->Support(db) : b_.shape->SupportCore(db));
    return {pa - pb, pa, pb};
  }
  // Centre of A minus centre of B in A's frame: a good first search direction.
  Vec3 CentreOffset() const { return -b_in_a_.translation; }
  Vec3 ToLocalDir(const Vec3& d) const { return InverseRotate(a_.pose.rotation, d); }
  Vec3 ToWorldDir(const Vec3& d) const { return a_.pose.rotation.Rotate(d); }
  Vec3 ToWorldPoint(const Vec3& p) const { return a_.pose.Apply(p); }
  const PosedShape& a() const { return a_; }
  const PosedShape& b() const { return b_; }

 private:
  const PosedShape& a_;
  const PosedShape& b_;
  RigidTransform b_in_a_;
  bool rounded_;
};

}  // namespace voxcol
