#include "core/geometry/ray_aabb.h"

namespace voxcol {

SlabRay::SlabRay(const Vec3& o, const Vec3& dir)
    : origin(o), inv_dir{1.0f / dir.x, 1.0f / dir.y, 1.0f / dir.z} {
  for (int i = 0; i < 3; ++i) sign[i] = inv_dir[i] < 0;
}

RayAabbHit RayAabb(const SlabRay& ray, const Aabb& box, float t_min, float t_max) {
  const Vec3 corners[2] = {box.min, box.max};
  float t0 = t_min, t1 = t_max;
  for (int axis = 0; axis < 3; ++axis) {
    // Entry plane is the min corner for a positive direction, the max corner otherwise. With a
    // zero component inv_dir is infinite and the slab is all or nothing; the comparisons are
    // written so that a NaN (origin exactly on the plane) never shrinks [t0, t1].
    float near = (corners[ray.sign[axis]][axis] - ray.origin[axis]) * ray.inv_dir[axis];
    float far = (corners[1 - ray.sign[axis]][axis] - ray.origin[axis]) * ray.inv_dir[axis];
    if (near > t0) t0 = near;
    if (far < t1) t1 = far;
    if (t0 > t1) return {};
  }
  return {true, t0, t1};
}

}  // namespace voxcol
