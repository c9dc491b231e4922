// Shared by the body tests: bodies of several parts and an independent ray oracle.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/bodies/body_types.h"

namespace voxcol::test {

// A humanoid hitbox set: head sphere (part 1), torso capsule (2), two arm boxes (3, 4), a rotated
// pelvis box (5).
inline std::vector<BodyPartDesc> HumanoidParts() {
  std::vector<BodyPartDesc> parts(5);
  parts[0] = {1, MakeSphere(0.15f), {Quat{}, {0, 0.75f, 0}}};
  parts[1] = {2, MakeCapsule(0.3f, 0.22f), {Quat{}, {0, 0.2f, 0}}};
  parts[2] = {3, MakeBox({0.06f, 0.3f, 0.06f}), {Quat{}, {-0.32f, 0.2f, 0}}};
  parts[3] = {4, MakeBox({0.06f, 0.3f, 0.06f}), {Quat{}, {0.32f, 0.2f, 0}}};
  parts[4] = {
      5, MakeBox({0.2f, 0.1f, 0.12f}), {Quat::FromAxisAngle({0, 1, 0}, 0.4f), {0, -0.25f, 0}}};
  return parts;
}

inline Quat RandomRotation(std::mt19937& rng) {
  std::normal_distribution<float> n;
  Quat q{n(rng), n(rng), n(rng), n(rng)};
  const float l = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  return {q.w / l, q.x / l, q.y / l, q.z / l};
}

// --- The oracle: double precision, signed distance along the ray, no code shared with the
// library. The signed distance of a convex shape is convex along a line, so its minimum over
// [0, max_t] is found by ternary search and the first zero before it by bisection.

struct D3 {
  double x, y, z;
};
inline D3 ToD(const Vec3& v) { return {v.x, v.y, v.z}; }
inline D3 RotateInv(const Quat& q, const D3& v) {
  // v' = R^T v with R from the unit quaternion (w, x, y, z), written out as a matrix.
  const double w = q.w, x = q.x, y = q.y, z = q.z;
  const double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                          {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                          {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
  return {r[0][0] * v.x + r[1][0] * v.y + r[2][0] * v.z,
          r[0][1] * v.x + r[1][1] * v.y + r[2][1] * v.z,
          r[0][2] * v.x + r[1][2] * v.y + r[2][2] * v.z};
}

// Signed distance of local point p to a sphere, capsule or sharp box.
inline double SignedDistance(const ConvexShape& s, const D3& p) {
  switch (s.type) {
    case ShapeType::kSphere:
      return std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z) - s.convex_radius;
    case ShapeType::kCapsule: {
      const double y = p.y - std::clamp(p.y, -double(s.half_height), double(s.half_height));
      return std::sqrt(p.x * p.x + y * y + p.z * p.z) - s.convex_radius;
    }
    default: {  // sharp box
      const double q[3] = {std::fabs(p.x) - s.half_extents.x, std::fabs(p.y) - s.half_extents.y,
                           std::fabs(p.z) - s.half_extents.z};
      double out = 0, in = std::max({q[0], q[1], q[2]});
      for (double c : q) out += std::max(c, 0.0) * std::max(c, 0.0);
      return std::sqrt(out) + std::min(in, 0.0);
    }
  }
}

struct OracleHit {
  bool hit = false;
  double t = 0;
  double min_distance = 0;  // smallest signed distance along the segment (grazing when ~0)
};

// First t in [0, max_t] where origin + t dir enters the part, whose world frame is
// body_pose * part_local (composed here in double, independently of RigidTransform).
inline OracleHit OracleRayPart(const Vec3& origin, const Vec3& dir, double max_t,
                               const ConvexShape& shape, const RigidTransform& body,
                               const RigidTransform& local) {
  // World -> body -> part, each an inverse rotation of the offset.
  auto to_part = [&](const D3& w) {
    const D3 t = ToD(body.translation);
    D3 b = RotateInv(body.rotation, {w.x - t.x, w.y - t.y, w.z - t.z});
    const D3 lt = ToD(local.translation);
    return RotateInv(local.rotation, {b.x - lt.x, b.y - lt.y, b.z - lt.z});
  };
  const D3 o = ToD(origin), d = ToD(dir);
  auto f = [&](double t) {
    return SignedDistance(shape, to_part({o.x + t * d.x, o.y + t * d.y, o.z + t * d.z}));
  };
  OracleHit r;
  if (f(0) <= 0) return {true, 0, f(0)};
  // Cull: a segment that stays farther from the part's centre than its bounding radius (plus a
  // margin) misses it.
  const double bound = shape.type == ShapeType::kSphere    ? shape.convex_radius
                       : shape.type == ShapeType::kCapsule ? shape.half_height + shape.convex_radius
                                                           : Length(shape.half_extents);
  const D3 c = to_part(o);  // the segment in the part frame: c + t e
  const D3 e = to_part({o.x + d.x, o.y + d.y, o.z + d.z});
  const D3 dir_p{e.x - c.x, e.y - c.y, e.z - c.z};
  const double tc = std::clamp(-(c.x * dir_p.x + c.y * dir_p.y + c.z * dir_p.z), 0.0, max_t);
  const D3 near{c.x + tc * dir_p.x, c.y + tc * dir_p.y, c.z + tc * dir_p.z};
  const double near_dist = std::sqrt(near.x * near.x + near.y * near.y + near.z * near.z);
  if (near_dist > bound + 0.01) return {false, 0, near_dist - bound};
  double lo = 0, hi = max_t;
  for (int i = 0; i < 100; ++i) {
    const double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (f(m1) < f(m2)) {
      hi = m2;
    } else {
      lo = m1;
    }
  }
  const double t_min = (lo + hi) / 2;
  r.min_distance = f(t_min);
  if (r.min_distance > 0) return r;
  double a = 0, b = t_min;  // f(a) > 0 >= f(b), f decreasing on [0, t_min]
  for (int i = 0; i < 80; ++i) {
    const double m = (a + b) / 2;
    (f(m) > 0 ? a : b) = m;
  }
  r.hit = true;
  r.t = b;
  return r;
}

}  // namespace voxcol::test
