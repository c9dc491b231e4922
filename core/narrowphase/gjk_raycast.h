// Convex casts by GJK-raycast, after van den Bergen, "Ray Casting against General Convex Objects
// with Application to Continuous Collision Detection" (2004): A moving by `translation` hits B at
// the first t where the ray -t * translation from the origin enters the CSO A - B. The algorithm
// advances a conservative lower bound on t with support planes of the CSO while GJK shrinks the
// simplex around the closest point, so one loop gives the time of impact, the point and the normal.
// Convex radii are handled on the cores: the ray stops at distance ra + rb from the core CSO.
#pragma once

#include "core/narrowphase/support.h"

namespace voxcol {

struct CastSettings {
  // The hit is accepted when the ray point is within tolerance * scale of the CSO surface, with
  // scale = max(ra + rb, size of the core simplex).
  float relative_tolerance = 1e-6f;
  int max_iterations = 64;
};

struct CastResult {
  bool hit = false;
  // A already overlaps B at fraction 0 (use Penetration for the MTD); point and normal unset.
  bool initially_overlapping = false;
  float fraction = 0;  // time of impact as a fraction of translation, in [0, 1]
  Vec3 point;          // contact point on B's surface at the time of impact, world space
  Vec3 normal;         // unit surface normal of B at the contact, pointing toward A
  int iterations = 0;
};

// Casts A along translation (world units, nonzero) against a static B. The fraction only ever
// grows through support planes, so it never passes the true time of impact; if max_iterations runs
// out first, the (early, conservative) fraction reached is reported as the hit rather than a miss.
// An A that overlaps B within tolerance at the start reports initially_overlapping.
CastResult GjkRaycast(const PosedShape& a, const Vec3& translation, const PosedShape& b,
                      const CastSettings& settings = {});

}  // namespace voxcol
