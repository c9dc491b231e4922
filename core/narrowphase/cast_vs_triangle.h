// Shape casts against one triangle, the primitive of terrain sweeps. Spheres and capsules use
// closed forms (the swept sphere meets the triangle's face slab, an edge cylinder or a vertex
// sphere; a capsule is its two end spheres plus its segment's side); other convex shapes use
// GJK-raycast with the triangle as shape B.
#pragma once

#include "core/narrowphase/gjk_raycast.h"

namespace voxcol {

// Sphere (center, radius > 0) moving by translation against the two-sided triangle (a, b, c),
// non-degenerate. point is on the triangle; normal points from the triangle toward the sphere at
// the time of impact. A sphere already touching reports initially_overlapping. A translation
// whose squared length underflows to 0 (a character's last sliver of motion) only reports that.
CastResult CastSphereVsTriangle(const Vec3& center, float radius, const Vec3& translation,
                                const Vec3& a, const Vec3& b, const Vec3& c);

// Capsule (its core segment p0-p1, as PosedShape::CapsuleSegment gives it, and radius > 0) moving
// by translation against the two-sided, non-degenerate triangle (a, b, c), in closed
// form: the earliest contact of its end spheres, of its segment with the triangle's vertices, and
// of its segment with the triangle's edges. Results as CastSphereVsTriangle's.
CastResult CastCapsuleVsTriangle(const Vec3& p0, const Vec3& p1, float radius,
                                 const Vec3& translation, const Vec3& a, const Vec3& b,
                                 const Vec3& c);

// Any posed convex shape moving by translation against triangle (a, b, c) (world space).
CastResult CastConvexVsTriangle(const PosedShape& shape, const Vec3& translation, const Vec3& a,
                                const Vec3& b, const Vec3& c, const CastSettings& settings = {});

}  // namespace voxcol
