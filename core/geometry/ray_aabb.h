// Ray-box slab test after Williams, Barrus, Morley and Shirley, "An Efficient and Robust Ray-Box
// Intersection Algorithm" (JGT 2005): precomputed reciprocal direction and signs, IEEE infinities
// for axis-parallel rays, no branches on the direction.
#pragma once

#include "core/geometry/vec3.h"

namespace voxcol {

// A ray prepared for many box tests.
struct SlabRay {
  Vec3 origin;
  Vec3 inv_dir;  // 1 / dir per component; +-inf for zero components
  int sign[3];   // 1 where dir < 0 (component picks the box's max corner for the entry plane)

  SlabRay(const Vec3& o, const Vec3& dir);
};

struct RayAabbHit {
  bool hit = false;
  float t_enter = 0, t_exit = 0;  // the ray's overlap with the box, clipped to [t_min, t_max]
};

// Overlap of origin + t dir, t in [t_min, t_max], with the closed box. A ray starting inside
// reports t_enter = t_min.
RayAabbHit RayAabb(const SlabRay& ray, const Aabb& box, float t_min, float t_max);

}  // namespace voxcol
