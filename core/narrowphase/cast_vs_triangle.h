// Shape casts against one triangle, the primitive of terrain sweeps. Spheres use the closed form
// (the swept sphere meets the triangle's face slab, an edge cylinder or a vertex sphere); other
// convex shapes, capsules included, use GJK-raycast with the triangle as shape B.
#pragma once

#include "core/narrowphase/gjk_raycast.h"

namespace voxcol {

// Sphere (center, radius > 0) moving by translation (nonzero) against the two-sided triangle
// (a, b, c), non-degenerate. point is on the triangle; normal points from the triangle toward the
// sphere at the time of impact. A sphere already touching reports initially_overlapping.
CastResult CastSphereVsTriangle(const Vec3& center, float radius, const Vec3& translation,
                                const Vec3& a, const Vec3& b, const Vec3& c);

// Any posed convex shape moving by translation against triangle (a, b, c) (world space).
CastResult CastConvexVsTriangle(const PosedShape& shape, const Vec3& translation, const Vec3& a,
                                const Vec3& b, const Vec3& c, const CastSettings& settings = {});

}  // namespace voxcol
