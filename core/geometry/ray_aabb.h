// Ray-box slab test after Williams, Barrus, Morley and Shirley, "An Efficient and Robust Ray-Box
// Intersection Algorithm" (JGT 2005): precomputed reciprocal direction; an axis-parallel ray
// (infinite reciprocal) only tests whether its origin lies in that slab. ClipRayToAabb serves
// RayAabb and the kD-tree's clip to its tree AABB; the kD-tree's node test (KdBoxClip) is a 4-wide
// copy of it.
#pragma once

#include <algorithm>
#include <cmath>

#include "core/geometry/vec3.h"

namespace voxcol {

// A ray prepared for many box tests.
struct SlabRay {
  Vec3 origin;
  Vec3 inv_dir;  // 1 / dir per component; +-inf for zero components

  SlabRay(const Vec3& o, const Vec3& dir);
};

struct RayAabbHit {
  bool hit = false;
  float t_enter = 0, t_exit = 0;  // the ray's overlap with the box, clipped to [t_min, t_max]
};

// Overlap of origin + t dir, t in [t_min, t_max], with the closed box. A ray starting inside
// reports t_enter = t_min.
RayAabbHit RayAabb(const SlabRay& ray, const Aabb& box, float t_min, float t_max);

// Clips [*t0, *t1] to the part of the ray o + t d inside `box` (closed), given inv_d = 1 / d per
// axis. Returns false when the clipped interval is empty. An axis with d = 0 has an infinite inv_d
// and only tests whether the origin lies within that slab (on a face counts as inside). Inline: it
// is called once per ray and tree.
inline bool ClipRayToAabb(const Vec3& o, const Vec3& inv_d, const Aabb& box, float* t0, float* t1) {
  for (int a = 0; a < 3; ++a) {
    if (std::isinf(inv_d[a])) {
      if (o[a] < box.min[a] || o[a] > box.max[a]) return false;
      continue;
    }
    const float ta = (box.min[a] - o[a]) * inv_d[a], tb = (box.max[a] - o[a]) * inv_d[a];
    *t0 = std::max(*t0, std::min(ta, tb));  // min / max, not a swap: the order is random per ray
    *t1 = std::min(*t1, std::max(ta, tb));
  }
  return *t0 <= *t1;
}

}  // namespace voxcol
