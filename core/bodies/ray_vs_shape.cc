// Closed-form ray tests (Ericson, Real-Time Collision Detection, 5.3.2 ray vs sphere, 5.3.7 ray vs
// cylinder, 5.3.3 slabs) and the GJK-raycast fallback.
#include "core/bodies/ray_vs_shape.h"

#include <algorithm>
#include <cmath>

#include "core/narrowphase/gjk_raycast.h"

namespace voxcol {

ShapeRayHit RayVsSphere(const Vec3& o, const Vec3& d, float max_t, float radius) {
  // |o + t d|^2 = r^2 with |d| = 1: t^2 + 2 b t + c = 0. The discriminant b^2 - c is taken as
  // r^2 - |o - b d|^2 (the squared distance of the line from the centre), which does not cancel
  // catastrophically far from the sphere (Haines et al., Ray Tracing Gems, ch. 7).
  const float b = Dot(o, d), c = Dot(o, o) - radius * radius;
  if (c <= 0) return {true, 0, -d};
  if (b > 0) return {};  // outside and heading away
  const Vec3 perp = o - d * b;
  const float disc = radius * radius - Dot(perp, perp);
  if (disc < 0) return {};
  const float t = -b - std::sqrt(disc);
  if (t > max_t) return {};
  return {true, std::max(t, 0.0f), Normalize(o + d * t)};
}

ShapeRayHit RayVsCapsule(const Vec3& o, const Vec3& d, float max_t, float half_height,
                         float radius) {
  // Inside: the origin is within radius of the core segment.
  const float oy = std::clamp(o.y, -half_height, half_height);
  const Vec3 off{o.x, o.y - oy, o.z};
  if (Dot(off, off) <= radius * radius) return {true, 0, -d};
  // The capsule is the union of the cylinder |xz| <= r, |y| <= h and two end spheres; the ray
  // starts outside all three, so it enters the union where it first enters any of them. A ray
  // crossing a flat end of the cylinder is inside that end's sphere first, so the cylinder only
  // counts through its side.
  ShapeRayHit best;
  const float a = d.x * d.x + d.z * d.z;
  if (a > 0) {
    // b^2 - a c written as a r^2 - (o x d)_y^2 (Lagrange's identity), the stable form as above.
    const float b = o.x * d.x + o.z * d.z, cross = o.x * d.z - o.z * d.x;
    const float disc = a * radius * radius - cross * cross;
    if (disc < 0) return {};  // misses the infinite cylinder, which holds the whole capsule
    const float t = (-b - std::sqrt(disc)) / a;
    const float y = o.y + t * d.y;
    if (t >= 0 && t <= max_t && std::fabs(y) <= half_height) {
      const Vec3 p = o + d * t;
      best = {true, t, Normalize(Vec3{p.x, 0, p.z})};
    }
  }
  for (float end : {-half_height, half_height}) {
    const ShapeRayHit s = RayVsSphere(o - Vec3{0, end, 0}, d, best.hit ? best.t : max_t, radius);
    if (s.hit && (!best.hit || s.t < best.t)) best = s;
  }
  return best;
}

ShapeRayHit RayVsBox(const Vec3& o, const Vec3& d, float max_t, const Vec3& half) {
  float t0 = 0, t1 = max_t;
  int axis = -1;
  for (int a = 0; a < 3; ++a) {
    if (d[a] == 0) {
      if (std::fabs(o[a]) > half[a]) return {};
      continue;
    }
    const float inv = 1.0f / d[a];
    float near = (-half[a] - o[a]) * inv, far = (half[a] - o[a]) * inv;
    if (near > far) std::swap(near, far);
    if (near > t0) t0 = near, axis = a;
    t1 = std::min(t1, far);
    if (t0 > t1) return {};
  }
  if (axis < 0) return {true, 0, -d};  // no slab entered after t = 0: the origin is inside
  Vec3 n;
  n[axis] = d[axis] > 0 ? -1.0f : 1.0f;
  return {true, t0, n};
}

namespace {

// Hulls and rounded boxes: GJK-raycast of a point (a sphere of radius 0) against the shape.
ShapeRayHit RayVsConvex(const Vec3& origin, const Vec3& dir, float max_t, const ConvexShape& shape,
                        const RigidTransform& pose) {
  ConvexShape point;
  point.type = ShapeType::kSphere;
  point.convex_radius = 0;
  const PosedShape a{&point, {Quat{}, origin}}, b{&shape, pose};
  if (max_t <= 0) max_t = 1e-6f;  // GjkRaycast needs a nonzero translation
  const CastResult r = GjkRaycast(a, dir * max_t, b);
  if (!r.hit) return {};
  if (r.initially_overlapping) return {true, 0, -dir};
  return {true, r.fraction * max_t, r.normal};
}

}  // namespace

ShapeRayHit RayVsShape(const Vec3& origin, const Vec3& dir, float max_t, const ConvexShape& shape,
                       const RigidTransform& pose) {
  const bool closed_form = shape.type == ShapeType::kSphere || shape.type == ShapeType::kCapsule ||
                           (shape.type == ShapeType::kBox && shape.convex_radius == 0);
  if (!closed_form) return RayVsConvex(origin, dir, max_t, shape, pose);
  const Vec3 o = pose.ApplyInverse(origin), d = InverseRotate(pose.rotation, dir);
  ShapeRayHit h;
  if (shape.type == ShapeType::kSphere) {
    h = RayVsSphere(o, d, max_t, shape.convex_radius);
  } else if (shape.type == ShapeType::kCapsule) {
    h = RayVsCapsule(o, d, max_t, shape.half_height, shape.convex_radius);
  } else {
    h = RayVsBox(o, d, max_t, shape.half_extents);
  }
  if (h.hit) h.normal = pose.rotation.Rotate(h.normal);
  return h;
}

}  // namespace voxcol
