#include "core/geometry/ray_triangle.h"

#include <cmath>

namespace voxcol {

RayTriangleHit RayTriangle(const Vec3& origin, const Vec3& dir, const Vec3& a, const Vec3& b,
                           const Vec3& c, float max_t) {
  // [-D E1 E2] (t u v)^T = T with E1 = b - a, E2 = c - a, T = origin - a. By Cramer and the
  // scalar triple product: det = P.E1 with P = D x E2, u = P.T / det, v = Q.D / det,
  // t = Q.E2 / det with Q = T x E1.
  Vec3 e1 = b - a, e2 = c - a;
  Vec3 p = Cross(dir, e2);
  float det = Dot(p, e1);
  // Relative parallelism test: det = |D||E1||E2| sin(...) sin(...).
  float scale = Length(dir) * Length(e1) * Length(e2);
  if (!(std::fabs(det) > 1e-7f * scale)) return {};
  float inv_det = 1.0f / det;
  Vec3 t_vec = origin - a;
  float u = Dot(p, t_vec) * inv_det;
  if (u < 0 || u > 1) return {};
  Vec3 q = Cross(t_vec, e1);
  float v = Dot(q, dir) * inv_det;
  if (v < 0 || u + v > 1) return {};
  float t = Dot(q, e2) * inv_det;
  if (t < 0 || t > max_t) return {};
  return {true, t, u, v};
}

}  // namespace voxcol
