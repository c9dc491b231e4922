// Rigid transforms (rotation then translation) for posing shapes in the world frame.
#pragma once

#include "core/geometry/vec3.h"

namespace voxcol {

// Hamilton product: (a * b).Rotate(v) == a.Rotate(b.Rotate(v)).
inline Quat operator*(const Quat& a, const Quat& b) {
  return {
      a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
      a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}

// Rotates v by the inverse of unit quaternion q.
inline Vec3 InverseRotate(const Quat& q, const Vec3& v) { return q.Conjugate().Rotate(v); }

// x_world = rotation.Rotate(x_local) + translation. The rotation must be a unit quaternion.
struct RigidTransform {
  Quat rotation;
  Vec3 translation;

  Vec3 Apply(const Vec3& p) const { return rotation.Rotate(p) + translation; }
  Vec3 ApplyInverse(const Vec3& p) const { return InverseRotate(rotation, p - translation); }
  RigidTransform Inverse() const {
    Quat inv = rotation.Conjugate();
    return {inv, -inv.Rotate(translation)};
  }
  // (this * o).Apply(p) == this->Apply(o.Apply(p)).
  RigidTransform operator*(const RigidTransform& o) const {
    return {rotation * o.rotation, Apply(o.translation)};
  }
};

}  // namespace voxcol
