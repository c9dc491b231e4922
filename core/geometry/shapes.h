// Convex shapes described by support functions, in their local frame.
//
// Every shape is a "core" (point, segment, box, hull or triangle) swept by a sphere of
// convex_radius. GJK runs on the cores and adds the radii afterwards (exact for spheres and
// capsules, and it keeps the iteration on polytopes); EPA and casts use the same split. A box with
// a nonzero convex radius is a rounded box with the given outer half extents.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "core/geometry/vec3.h"

namespace voxcol {

enum class ShapeType : uint8_t { kSphere, kCapsule, kBox, kConvexHull, kTriangle };

// h (>= 0) with the sign bit set when d < 0 (-0 and NaN count as positive), without a branch:
// the sign selects of box and capsule supports, whose directions have random signs.
inline float SignedLike(float d, float h) {
  uint32_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  bits ^= uint32_t(d < 0) << 31;
  std::memcpy(&h, &bits, sizeof h);
  return h;
}

// Maximum number of points of a ConvexHull.
inline constexpr int kMaxHullPoints = 64;

struct ConvexShape {
  ShapeType type = ShapeType::kSphere;
  float convex_radius = 0;  // sphere and capsule radius; rounding radius of the others
  Vec3 half_extents;        // box core half extents (outer half extents - convex_radius)
  float half_height = 0;    // capsule: core segment from (0,-h,0) to (0,h,0)
  std::array<Vec3, 3> triangle{};
  const Vec3* points = nullptr;  // hull points, not owned; the caller keeps them alive
  int num_points = 0;

  // Farthest core point along dir (any dir, zero allowed; the result is then some core point).
  // Inline for spheres, capsules and boxes (bounds, plane depths and supports run per triangle).
  Vec3 SupportCore(const Vec3& dir) const {
    switch (type) {
      case ShapeType::kSphere:
        return {};
      case ShapeType::kCapsule:
        return {0, SignedLike(dir.y, half_height), 0};
      case ShapeType::kBox:
        return {SignedLike(dir.x, half_extents.x), SignedLike(dir.y, half_extents.y),
                SignedLike(dir.z, half_extents.z)};
      default:
        return SupportPoints(dir);
    }
  }
  // SupportCore of hulls and triangles: the first point with the largest projection.
  Vec3 SupportPoints(const Vec3& dir) const;
  // Farthest point of the full (rounded) shape along dir. Precondition: dir != 0.
  Vec3 Support(const Vec3& dir) const {
    Vec3 core = SupportCore(dir);
    return convex_radius == 0 ? core : core + dir * (convex_radius / Length(dir));
  }
  // Local bounding box of the full shape.
  Aabb LocalBounds() const;
};

// Sphere of the given radius (> 0) centred at the origin.
ConvexShape MakeSphere(float radius);
// Capsule along local Y: a segment of half length half_height (>= 0) swept by radius (> 0).
ConvexShape MakeCapsule(float half_height, float radius);
// Box centred at the origin with outer half extents (> 0), edges rounded by convex_radius, which
// must not exceed the smallest half extent.
ConvexShape MakeBox(const Vec3& half_extents, float convex_radius = 0);
// Convex hull of points[0..count) (1 <= count <= kMaxHullPoints, points need not be extreme),
// inflated by convex_radius. The points must outlive the shape.
ConvexShape MakeConvexHull(const Vec3* points, int count, float convex_radius = 0);
// Triangle a, b, c inflated by convex_radius.
ConvexShape MakeTriangle(const Vec3& a, const Vec3& b, const Vec3& c, float convex_radius = 0);

}  // namespace voxcol
