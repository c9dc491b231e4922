// Expanding Polytope Algorithm for penetration depth, after van den Bergen, "Proximity Queries and
// Penetration Depth Computation on 3D Game Objects" (GDC 2001) and SOLID 3's penDepth: start from
// the GJK simplex that encloses the origin (blowing a segment or triangle up into a polytope),
// repeatedly expand the face closest to the origin by the support point along its normal,
// re-triangulate the silhouette seen from that point, and stop when the upper bound (support
// distance) and lower bound (face distance) agree within a relative tolerance.
#pragma once

#include "core/narrowphase/support.h"

namespace voxcol {

struct EpaSettings {
  // Stop when upper - lower <= relative_tolerance * upper.
  float relative_tolerance = 1e-5f;
  int max_iterations = 96;
};

struct EpaResult {
  bool ok = false;  // false: degenerate start or topology failure; the other fields are unset
  float depth = 0;  // penetration depth, >= 0
  // Unit direction from A toward B: translating B by depth * normal makes the shapes touch.
  Vec3 normal;
  Vec3 point_a, point_b;  // deepest points; point_a - point_b = depth * normal
  int iterations = 0;
};

// Penetration of A and B given a GJK simplex simplex[0..count) (1..4 points of A - B, rounded
// supports, in the CSO's frame) that contains the origin within tolerance. `cso` must use rounded
// supports. The result is in world space.
EpaResult Epa(const MinkowskiDifference& cso, const SupportPoint* simplex, int count,
              const EpaSettings& settings = {});

}  // namespace voxcol
