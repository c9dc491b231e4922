// Ray-triangle intersection after Moller and Trumbore, "Fast, Minimum Storage Ray/Triangle
// Intersection" (JGT 1997): solves origin + t dir = (1-u-v) a + u b + v c by Cramer's rule.
#pragma once

#include "core/geometry/vec3.h"

namespace voxcol {

struct RayTriangleHit {
  bool hit = false;
  float t = 0;         // hit = origin + t * dir, in units of |dir|
  float u = 0, v = 0;  // barycentrics of b and c
};

// Two-sided test of origin + t dir, t in [0, max_t], against triangle (a, b, c). Rays parallel to
// the triangle's plane (within float precision) and degenerate triangles miss.
RayTriangleHit RayTriangle(const Vec3& origin, const Vec3& dir, const Vec3& a, const Vec3& b,
                           const Vec3& c, float max_t);

}  // namespace voxcol
