#include "core/geometry/ray_aabb.h"

namespace voxcol {

SlabRay::SlabRay(const Vec3& o, const Vec3& dir)
    : origin(o), inv_dir{1.0f / dir.x, 1.0f / dir.y, 1.0f / dir.z} {}

RayAabbHit RayAabb(const SlabRay& ray, const Aabb& box, float t_min, float t_max) {
  float t0 = t_min, t1 = t_max;
  if (!ClipRayToAabb(ray.origin, ray.inv_dir, box, &t0, &t1)) return {};
  return {true, t0, t1};
}

}  // namespace voxcol
