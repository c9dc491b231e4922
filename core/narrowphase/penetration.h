// Penetration depth and direction of two posed convex shapes: GJK on the cores first (exact and
// cheap when only the rounded parts overlap, e.g. any sphere or capsule pair), EPA on the full
// shapes only when the cores themselves overlap.
#pragma once

#include "core/narrowphase/epa.h"
#include "core/narrowphase/gjk.h"

namespace voxcol {

struct PenetrationSettings {
  GjkSettings gjk;
  EpaSettings epa;
};

struct PenetrationResult {
  bool overlapping = false;
  // Penetration depth, >= 0; 0 when the shapes are apart.
  float depth = 0;
  // Distance between the shapes, >= 0; 0 when they overlap.
  float separation = 0;
  // Unit direction from A toward B: translating B by depth * normal separates the shapes. Set in
  // both cases (for separated shapes it is the closest-point direction).
  Vec3 normal;
  Vec3 point_a, point_b;  // deepest (or closest) points in world space
  bool used_epa = false;
  bool epa_failed = false;  // degenerate EPA start; depth is then 0 and normal from the cores
};

PenetrationResult ComputePenetration(const PosedShape& a, const PosedShape& b,
                                     const PenetrationSettings& settings = {});

}  // namespace voxcol
