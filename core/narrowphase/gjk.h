// GJK distance and intersection between convex shapes, after van den Bergen, "A Fast and Robust GJK
// Implementation for Collision Detection of Convex Objects" (JGT 1999) and his SOLID library:
// Johnson's sub-algorithm with cached determinants (johnson_simplex.h), a relative stopping
// tolerance on the gap between the upper bound |v| and the lower bound v.w/|v|, the
// duplicate-support and monotonicity guards and the backup procedure.
#pragma once

#include "core/narrowphase/johnson_simplex.h"
#include "core/narrowphase/support.h"

namespace voxcol {

struct GjkSettings {
  // Stop when |v| - v.w/|v| <= relative_tolerance * |v|.
  float relative_tolerance = 1e-6f;
  // The simplex contains the origin when |v|^2 <= zero_tolerance * max |w|^2 (scale-relative).
  float zero_tolerance = 1e-10f;
  int max_iterations = 64;
};

struct GjkResult {
  // The shapes' cores (or full shapes, see GjkClosest) overlap or touch within tolerance.
  bool overlapping = false;
  // Distance between the full shapes, >= 0 (0 when overlapping).
  float distance = 0;
  // Unit vector from A toward B along the closest points (undefined when overlapping).
  Vec3 normal;
  Vec3 point_a, point_b;  // closest points on A and B in world space (when not overlapping)
  int iterations = 0;
};

// Closest points of two posed convex shapes. Runs GJK on the cores and subtracts the convex radii;
// shapes whose cores are apart but whose rounded hulls overlap report overlapping with distance 0.
GjkResult GjkDistance(const PosedShape& a, const PosedShape& b, const GjkSettings& settings = {});

// Boolean intersection test of the full shapes (van den Bergen's separating-axis variant: stops as
// soon as a separating axis v with v.w > 0 is found). `axis`, if not null, is the start direction
// and receives the last axis, for warm starts across frames.
bool GjkIntersect(const PosedShape& a, const PosedShape& b, Vec3* axis = nullptr,
                  const GjkSettings& settings = {});

// GJK on a Minkowski difference, the engine of the functions above and of EPA. Leaves the final
// simplex in *simplex and returns |v|^2 of the closest point found; *overlapping says whether the
// origin is inside the simplex within tolerance. initial_dir may be any vector. initial_dir, *v
// and the simplex are in the CSO's frame (A's local frame).
float GjkClosest(const MinkowskiDifference& cso, const Vec3& initial_dir,
                 const GjkSettings& settings, JohnsonSimplex* simplex, Vec3* v, bool* overlapping,
                 int* iterations);

}  // namespace voxcol
