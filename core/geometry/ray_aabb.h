// Ray/box slab test (Kay & Kajiya; robust form after Williams et al., "An Efficient and Robust
// Ray-Box Intersection Algorithm", JGT 2005).
#pragma once

#include <algorithm>

#include "core/geometry/vec3.h"

namespace voxcol {

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
