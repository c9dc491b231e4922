// Ray-triangle intersection after Moller and Trumbore, "Fast, Minimum Storage Ray/Triangle
// Intersection" (JGT 1997): solves origin + t dir = (1-u-v) a + u b + v c by Cramer's rule.
#pragma once

#include <cmath>

#include "core/geometry/vec3.h"

static_assert(sizeof(voxcol::Vec3) == 3 * sizeof(float), "Vec3 is three packed floats");

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

// Watertight form (Woop, Benthin & Wald, "Watertight Ray/Triangle Intersection", JCGT 2013) for
// the kD-tree: the ray becomes a shear transform once; 2D edge functions have exact signs for
// shared vertices, so rays through shared edges of a closed mesh never slip between triangles,
// which Moller-Trumbore cannot promise. Zero edge functions are recomputed in double.
// A ray prepared for watertight triangle tests. Direction need not be unit length; t is measured in
// multiples of it.
struct WatertightRay {
  Vec3 origin;
  int kx = 0, ky = 1, kz = 2;  // permuted axes: kz is the dominant direction axis
  float sx = 0, sy = 0, sz = 1;

  WatertightRay() = default;
  // Precondition: direction is finite and non-zero.
  WatertightRay(const Vec3& o, const Vec3& d) : origin(o) {
    // Branch-free (the axes are random per ray): kz = x if |x| is largest, else y if |y| is
    // larger than |z| and not below |x|, else z. A negative d[kz] swaps kx and ky, which keeps
    // the winding of the 2D edge functions.
    const float ax = std::fabs(d.x), ay = std::fabs(d.y), az = std::fabs(d.z);
    const int x_max = (ax > ay) & (ax > az), y_max = (ax <= ay) & (ay > az);
    kz = 2 - 2 * x_max - y_max;
    const int negative = Component(d, kz) < 0;
    kx = (kz + 1 + negative) % 3;
    ky = (kz + 2 - negative) % 3;
    const float dz = Component(d, kz);
    sx = Component(d, kx) / dz;
    sy = Component(d, ky) / dz;
    sz = 1.0f / dz;
  }
};

// The watertight test on corners already moved to the ray's frame: (ax, ay, az) = components
// (kx, ky, kz) of a - r.origin, likewise b and c. Returns true and sets *t when the ray hits the
// triangle (either side) at t in [0, t_max]. IntersectRayTriangle calls this and the kD-tree's
// MeshRayFrame::IntersectLeaf repeats it lane by lane in SSE2 (same operations in the same order):
// change both together, so that tree and brute force keep giving bit-identical answers.
inline bool IntersectRayTriangleRelative(const WatertightRay& r, float Ax, float Ay, float az,
                                         float Bx, float By, float bz, float Cx, float Cy, float cz,
                                         float t_max, float* t) {
  const float ax = Ax - r.sx * az, ay = Ay - r.sy * az;
  const float bx = Bx - r.sx * bz, by = By - r.sy * bz;
  const float cx = Cx - r.sx * cz, cy = Cy - r.sy * cz;
  float u = cx * by - cy * bx, v = ax * cy - ay * cx, w = bx * ay - by * ax;
  if ((u == 0.0f) | (v == 0.0f) | (w == 0.0f)) {
    u = float(double(cx) * double(by) - double(cy) * double(bx));
    v = float(double(ax) * double(cy) - double(ay) * double(cx));
    w = float(double(bx) * double(ay) - double(by) * double(ax));
  }
  // Mixed signs: outside. Evaluated without short-circuit branches (they mispredict).
  if (((u < 0) | (v < 0) | (w < 0)) & ((u > 0) | (v > 0) | (w > 0))) return false;
  const float det = u + v + w;
  if (det == 0.0f) return false;  // ray in the triangle's plane: treated as a miss
  const float tz = u * (r.sz * az) + v * (r.sz * bz) + w * (r.sz * cz);
  // t = tz / det must lie in [0, t_max]; compare without dividing, sign-adjusted.
  const float s = det < 0 ? -1.0f : 1.0f;
  if ((tz * s < 0.0f) | (tz * s > t_max * det * s)) return false;
  *t = tz / det;
  return true;
}

// Returns true and sets *t when the ray hits triangle (a, b, c) (either side) at t in [0, t_max].
inline bool IntersectRayTriangle(const WatertightRay& r, const Vec3& a, const Vec3& b,
                                 const Vec3& c, float t_max, float* t) {
  const Vec3 A = a - r.origin, B = b - r.origin, C = c - r.origin;
  return IntersectRayTriangleRelative(r, Component(A, r.kx), Component(A, r.ky), Component(A, r.kz),
                                      Component(B, r.kx), Component(B, r.ky), Component(B, r.kz),
                                      Component(C, r.kx), Component(C, r.ky), Component(C, r.kz),
                                      t_max, t);
}

}  // namespace voxcol
