// Ray-box slab test after Williams, Barrus, Morley and Shirley, "An Efficient and Robust Ray-Box
// Intersection Algorithm" (JGT 2005): precomputed reciprocal direction and signs, IEEE infinities
// for axis-parallel rays, no branches on the direction.
#pragma once

#include <algorithm>
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

// Inline form for tight loops (the kD-tree traversal): clips an interval in place.
// Clips [*t0, *t1] to the part of the ray o + t d inside `box` (closed). Returns false when the
// clipped interval is empty. inv_d is 1 / d per axis (infinite where d is 0).
inline bool ClipRayToAabb(const Vec3& o, const Vec3& d, const Vec3& inv_d, const Aabb& box,
                          float* t0, float* t1) {
  for (int a = 0; a < 3; ++a) {
    if (d[a] == 0.0f) {
      if (o[a] < box.min[a] || o[a] > box.max[a]) return false;
      continue;
    }
    float ta = (box.min[a] - o[a]) * inv_d[a], tb = (box.max[a] - o[a]) * inv_d[a];
    if (ta > tb) std::swap(ta, tb);
    *t0 = std::max(*t0, ta);
    *t1 = std::min(*t1, tb);
  }
  return *t0 <= *t1;
}

}  // namespace voxcol
