// Closest points between points, segments and triangles (Ericson, Real-Time Collision Detection,
// 5.1.2, 5.1.5, 5.1.9). All in one frame; results are points in that frame.
#pragma once

#include "core/geometry/vec3.h"

namespace voxcol {

// Whether x projects into triangle (a, b, c) along n, a normal of its plane either way round (on
// an edge counts as in). The three triple products do not change along n, so x need not lie in
// the plane. They sum to the triangle's doubled area times |n|, so inside they share one sign.
inline bool ProjectsIntoTriangle(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c,
                                 const Vec3& n) {
  const float sa = Dot(Cross(b - a, x - a), n);
  const float sb = Dot(Cross(c - b, x - b), n);
  const float sc = Dot(Cross(a - c, x - c), n);
  return (sa >= 0 && sb >= 0 && sc >= 0) || (sa <= 0 && sb <= 0 && sc <= 0);
}

// Point of segment [a, b] closest to p. a == b is allowed.
Vec3 ClosestPointOnSegment(const Vec3& p, const Vec3& a, const Vec3& b);

// Point of triangle (a, b, c) closest to p, via its Voronoi regions. Degenerate triangles are
// allowed (the result is then the closest point of their edges).
Vec3 ClosestPointOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c);

struct SegmentPair {
  Vec3 on_first, on_second;
};

// Closest points between segments [p0, p1] and [q0, q1]; degenerate (point) segments allowed.
SegmentPair ClosestPointsSegmentSegment(const Vec3& p0, const Vec3& p1, const Vec3& q0,
                                        const Vec3& q1);

// Closest points between segment [p0, p1] and triangle (a, b, c). When the segment crosses the
// triangle both points are the crossing point.
SegmentPair ClosestPointsSegmentTriangle(const Vec3& p0, const Vec3& p1, const Vec3& a,
                                         const Vec3& b, const Vec3& c);

}  // namespace voxcol
