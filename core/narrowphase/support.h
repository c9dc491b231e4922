// Support mapping of the Minkowski difference of two posed shapes (core/geometry/posed_shape.h;
// the configuration space obstacle, CSO, of van den Bergen), the only geometry GJK, EPA and
// GJK-raycast see.
#pragma once

#include <array>
#include <cstdint>

#include "core/geometry/posed_shape.h"  // IWYU pragma: export
#include "core/geometry/shapes.h"
#include "core/geometry/transform.h"

namespace voxcol {

// A CSO point w = a - b with the shape points it came from, so closest points on A and B can be
// recovered from barycentric coordinates.
struct SupportPoint {
  Vec3 w, a, b;
};

namespace support_internal {

// The core of a sphere (the point 0), a capsule (the segment 0 +- (0, h, 0)) and a box are all
// boxes [-e, e]: their support is three branch-free sign selects. A triangle's is the first of its
// corners with the largest projection, as ConvexShape::SupportCore. Hulls go through SupportCore.
// Equal to SupportCore up to the sign of zero coordinates.
struct CoreSupport {
  explicit CoreSupport(const ConvexShape& s) : shape(&s) {
    switch (s.type) {
      case ShapeType::kSphere:
        break;
      case ShapeType::kCapsule:
        extents = {0, s.half_height, 0};
        break;
      case ShapeType::kBox:
        extents = s.half_extents;
        break;
      case ShapeType::kTriangle:
        kind = kTriangle;
        break;
      default:
        kind = kOther;
    }
  }
  Vec3 operator()(const Vec3& d) const {
    if (kind == kBox) {
      return {SignedLike(d.x, extents.x), SignedLike(d.y, extents.y), SignedLike(d.z, extents.z)};
    }
    if (kind == kOther) return shape->SupportCore(d);
    const std::array<Vec3, 3>& t = shape->triangle;
    const float d0 = Dot(t[0], d), d1 = Dot(t[1], d), d2 = Dot(t[2], d);
    const int first = d1 > d0 ? 1 : 0;
    return t[d2 > (first ? d1 : d0) ? 2 : first];
  }
  enum Kind : uint8_t { kBox, kTriangle, kOther };
  const ConvexShape* shape;
  Vec3 extents;
  Kind kind = kBox;
};

// A rotation as a 3x3 matrix by columns: one matrix-vector product per rotation instead of the
// quaternion's two cross products.
struct Mat3 {
  explicit Mat3(const Quat& q)
      : c0{1 - 2 * (q.y * q.y + q.z * q.z), 2 * (q.x * q.y + q.w * q.z),
           2 * (q.x * q.z - q.w * q.y)},
        c1{2 * (q.x * q.y - q.w * q.z), 1 - 2 * (q.x * q.x + q.z * q.z),
           2 * (q.y * q.z + q.w * q.x)},
        c2{2 * (q.x * q.z + q.w * q.y), 2 * (q.y * q.z - q.w * q.x),
           1 - 2 * (q.x * q.x + q.y * q.y)} {}
  Vec3 Apply(const Vec3& v) const { return c0 * v.x + c1 * v.y + c2 * v.z; }
  Vec3 ApplyTransposed(const Vec3& v) const { return {Dot(c0, v), Dot(c1, v), Dot(c2, v)}; }
  Vec3 c0, c1, c2;
};

}  // namespace support_internal

// Support of A - B: s_{A-B}(d) = s_A(d) - s_B(-d). `rounded` selects the full shapes; otherwise the
// cores (the caller then accounts for the convex radii).
//
// The CSO lives in A's local frame: A's supports need no transform and B's go through the one
// relative transform, kept as a matrix. Algorithms convert their inputs with ToLocalDir and their
// results with ToWorldDir / ToWorldPoint.
class MinkowskiDifference {
 public:
  MinkowskiDifference(const PosedShape& a, const PosedShape& b, bool rounded)
      : a_(a),
        b_(b),
        b_in_a_(a.pose.Inverse() * b.pose),
        b_rotation_(b_in_a_.rotation),
        core_a_(*a.shape),
        core_b_(*b.shape),
        radius_a_(rounded ? a.Radius() : 0),
        radius_b_(rounded ? b.Radius() : 0) {}

  // Support along dir (A's frame). Precondition for rounded supports: dir != 0.
  SupportPoint Support(const Vec3& dir) const {
    Vec3 db = b_rotation_.ApplyTransposed(-dir);
    Vec3 pa = core_a_(dir), sb = core_b_(db);
    if (radius_a_ != 0 || radius_b_ != 0) {
      const float inv = 1.0f / Length(dir);  // |db| = |dir|
      pa += dir * (radius_a_ * inv);
      sb += db * (radius_b_ * inv);
    }
    Vec3 pb = b_rotation_.Apply(sb) + b_in_a_.translation;
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
  support_internal::Mat3 b_rotation_;
  support_internal::CoreSupport core_a_, core_b_;
  float radius_a_, radius_b_;
};

}  // namespace voxcol
