// An independent answer for rays against body parts (issue 42's tests): textbook ray-sphere,
// ray-capsule (a cylinder and two end spheres) and slab ray-box in double precision, with the
// part's frame composed by hand from the body pose and the part's local pose. Shares no code with
// core/bodies (whose closed forms it checks).
#pragma once

#include <cmath>
#include <limits>
#include <optional>

namespace voxcol::testing {

struct D3 {
  double x = 0, y = 0, z = 0;
};
inline D3 operator+(D3 a, D3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline D3 operator-(D3 a, D3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline D3 operator*(D3 a, double s) { return {a.x * s, a.y * s, a.z * s}; }
inline double Dot(D3 a, D3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

// A rotation about +Y by `angle` radians (the tests' bodies turn about the vertical only).
struct YawPose {
  double angle = 0;
  D3 position;
  D3 RotateInverse(D3 v) const {
    const double c = std::cos(angle), s = std::sin(angle);
    // R(a) maps (x, z) to (c x + s z, -s x + c z); its inverse is R(-a).
    return {c * v.x - s * v.z, v.y, s * v.x + c * v.z};
  }
  D3 ToLocal(D3 p) const { return RotateInverse(p - position); }
};

inline constexpr double kNoHit = std::numeric_limits<double>::infinity();

// Smallest t >= 0 with |o + t d - c| = r (d unit); 0 when o is inside.
inline double RaySphere(D3 o, D3 d, D3 c, double r) {
  const D3 m = o - c;
  const double b = Dot(m, d), cc = Dot(m, m) - r * r;
  if (cc <= 0) return 0;
  const double disc = b * b - cc;
  if (b > 0 || disc < 0) return kNoHit;
  return -b - std::sqrt(disc);
}

// Capsule along local Y, segment y in [-h, h], radius r.
inline double RayCapsule(D3 o, D3 d, double h, double r) {
  double best = std::fmin(RaySphere(o, d, {0, h, 0}, r), RaySphere(o, d, {0, -h, 0}, r));
  // The infinite cylinder x^2 + z^2 = r^2, kept where |y| <= h.
  const double a = d.x * d.x + d.z * d.z;
  const double b = o.x * d.x + o.z * d.z, c = o.x * o.x + o.z * o.z - r * r;
  if (a > 1e-12) {
    const double disc = b * b - a * c;
    if (disc >= 0) {
      const double t = c <= 0 ? 0 : (-b - std::sqrt(disc)) / a;
      const double y = o.y + t * d.y;
      if (t >= 0 && std::fabs(y) <= h) best = std::fmin(best, t);
    }
  }
  return best;
}

// Axis-aligned box of half extents `half` centred at the origin (slabs).
inline double RayBox(D3 o, D3 d, D3 half) {
  double enter = 0, leave = kNoHit;
  const double os[3] = {o.x, o.y, o.z}, ds[3] = {d.x, d.y, d.z}, hs[3] = {half.x, half.y, half.z};
  for (int a = 0; a < 3; ++a) {
    if (std::fabs(ds[a]) < 1e-12) {
      if (std::fabs(os[a]) > hs[a]) return kNoHit;
      continue;
    }
    double t0 = (-hs[a] - os[a]) / ds[a], t1 = (hs[a] - os[a]) / ds[a];
    if (t0 > t1) std::swap(t0, t1);
    enter = std::fmax(enter, t0);
    leave = std::fmin(leave, t1);
  }
  return enter <= leave ? enter : kNoHit;
}

}  // namespace voxcol::testing
