// Contact manifold reduction: keep at most 4 of many contact points of one shape pair so that the
// kept points span as much area as possible (a solver needs the support polygon, not every point),
// in the manner of Bullet's and Jolt's manifold reduction.
#pragma once

#include "core/geometry/vec3.h"

namespace voxcol {

struct ManifoldPoint {
  Vec3 position;  // world space, on the terrain side
  Vec3 normal;    // unit, from terrain toward the shape
  // > 0: penetration depth along normal; < 0: separation (a speculative point within a margin).
  float depth = 0;
};

inline constexpr int kMaxManifoldPoints = 4;

// Writes at most 4 of points[0..count) to out and returns how many. Greedy on the plane
// orthogonal to `normal` (unit): the deepest point (of equally deep ones, within 1e-3 of the
// points' spread, the farthest from their centroid), the point farthest from it, the point
// maximising the triangle area with those two, then the point adding the most area outside that
// triangle. Points that add no area are dropped, so collinear input gives 2 points and coincident
// input 1. count may be 0.
int ReduceContacts(const ManifoldPoint* points, int count, const Vec3& normal,
                   ManifoldPoint out[kMaxManifoldPoints]);

// The same choice as indices into points[0..count), for callers that keep data beside each point.
int ReduceContactIndices(const ManifoldPoint* points, int count, const Vec3& normal,
                         int out[kMaxManifoldPoints]);

}  // namespace voxcol
