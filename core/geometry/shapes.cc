#include "core/geometry/shapes.h"

#include <cassert>

namespace voxcol {
namespace {

// Index of the point with the largest projection on dir; ties keep the first.
int ArgMaxDot(const Vec3* points, int count, const Vec3& dir) {
  int best = 0;
  float best_dot = Dot(points[0], dir);
  for (int i = 1; i < count; ++i) {
    float d = Dot(points[i], dir);
    if (d > best_dot) best_dot = d, best = i;
  }
  return best;
}

}  // namespace

Vec3 ConvexShape::SupportPoints(const Vec3& dir) const {
  if (type == ShapeType::kTriangle) return triangle[ArgMaxDot(triangle.data(), 3, dir)];
  assert(type == ShapeType::kConvexHull);
  return points[ArgMaxDot(points, num_points, dir)];
}

Aabb ConvexShape::LocalBounds() const {
  Aabb core;
  switch (type) {
    case ShapeType::kSphere:
      break;
    case ShapeType::kCapsule:
      core = {{0, -half_height, 0}, {0, half_height, 0}};
      break;
    case ShapeType::kBox:
      core = {-half_extents, half_extents};
      break;
    case ShapeType::kConvexHull:
    case ShapeType::kTriangle: {
      const Vec3* p = type == ShapeType::kTriangle ? triangle.data() : points;
      int n = type == ShapeType::kTriangle ? 3 : num_points;
      core = {p[0], p[0]};
      for (int i = 1; i < n; ++i) core = {Min(core.min, p[i]), Max(core.max, p[i])};
      break;
    }
  }
  Vec3 r{convex_radius, convex_radius, convex_radius};
  return {core.min - r, core.max + r};
}

ConvexShape MakeSphere(float radius) {
  assert(radius > 0);
  ConvexShape s;
  s.type = ShapeType::kSphere;
  s.convex_radius = radius;
  return s;
}

ConvexShape MakeCapsule(float half_height, float radius) {
  assert(half_height >= 0 && radius > 0);
  ConvexShape s;
  s.type = ShapeType::kCapsule;
  s.convex_radius = radius;
  s.half_height = half_height;
  return s;
}

ConvexShape MakeBox(const Vec3& half_extents, float convex_radius) {
  assert(half_extents.x > 0 && half_extents.y > 0 && half_extents.z > 0 && convex_radius >= 0);
  assert(convex_radius <= half_extents.x && convex_radius <= half_extents.y &&
         convex_radius <= half_extents.z);
  ConvexShape s;
  s.type = ShapeType::kBox;
  s.convex_radius = convex_radius;
  s.half_extents = half_extents - Vec3{convex_radius, convex_radius, convex_radius};
  return s;
}

ConvexShape MakeConvexHull(const Vec3* points, int count, float convex_radius) {
  assert(points != nullptr && count >= 1 && count <= kMaxHullPoints && convex_radius >= 0);
  ConvexShape s;
  s.type = ShapeType::kConvexHull;
  s.convex_radius = convex_radius;
  s.points = points;
  s.num_points = count;
  return s;
}

ConvexShape MakeTriangle(const Vec3& a, const Vec3& b, const Vec3& c, float convex_radius) {
  assert(convex_radius >= 0);
  ConvexShape s;
  s.type = ShapeType::kTriangle;
  s.convex_radius = convex_radius;
  s.triangle = {a, b, c};
  return s;
}

}  // namespace voxcol
