// Independent double-precision oracles for the terrain queries. They share no intersection code
// with production (no WatertightRay, IntersectRayTriangle, RayTriangle, CastSphereVsTriangle, GJK
// or EPA): rays by signed volumes (Pluecker edge tests) and the plane equation, sweeps by
// conservative advancement on the exact point-triangle distance, contacts by sampled signed
// distances. Only the triangles themselves come from production (the chunk meshes).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "core/mesh/marching_cubes.h"
#include "core/voxel/world.h"
#include "tests/core/geometry/geometry_oracles.h"

namespace voxcol::testing {

struct OracleTriangle {
  D3 a, b, c;
  D3 n;       // unit normal, (b - a) x (c - a) (outward for marching-cubes meshes)
  D3 lo, hi;  // bounds
  uint8_t material;
};

// Every triangle of every meshed chunk of `world`, in double.
inline std::vector<OracleTriangle> AllTriangles(const World& world) {
  std::vector<OracleTriangle> out;
  const IntBox range = MeshedChunkRange(world);
  for (int32_t y = range.min.y; y < range.max.y; ++y)
    for (int32_t z = range.min.z; z < range.max.z; ++z)
      for (int32_t x = range.min.x; x < range.max.x; ++x) {
        ChunkMesh m = MeshChunk(world, {x, y, z});
        for (uint32_t t = 0; t < m.triangle_count(); ++t) {
          OracleTriangle tri;
          tri.a = ToD(m.Corner(t, 0));
          tri.b = ToD(m.Corner(t, 1));
          tri.c = ToD(m.Corner(t, 2));
          D3 n = CrossD(tri.b - tri.a, tri.c - tri.a);
          const double len = LenD(n);
          if (len == 0) continue;
          tri.n = n * (1 / len);
          tri.lo = {std::min({tri.a.x, tri.b.x, tri.c.x}), std::min({tri.a.y, tri.b.y, tri.c.y}),
                    std::min({tri.a.z, tri.b.z, tri.c.z})};
          tri.hi = {std::max({tri.a.x, tri.b.x, tri.c.x}), std::max({tri.a.y, tri.b.y, tri.c.y}),
                    std::max({tri.a.z, tri.b.z, tri.c.z})};
          tri.material = m.Material(t);
          out.push_back(tri);
        }
      }
  return out;
}

inline bool BoxesOverlap(const D3& lo0, const D3& hi0, const D3& lo1, const D3& hi1) {
  return lo0.x <= hi1.x && lo1.x <= hi0.x && lo0.y <= hi1.y && lo1.y <= hi0.y && lo0.z <= hi1.z &&
         lo1.z <= hi0.z;
}

struct OracleRayHit {
  bool hit = false;
  double t = 0;          // along the unit direction
  double clearance = 0;  // distance of the hit point from the triangle's nearest edge
  bool front = false;    // the ray enters through the triangle's front face
};

// Ray o + t d (d unit) against one triangle, t in [0, t_max]: the signs of the three signed
// volumes d . ((p - o) x (q - o)) over the edges decide inside (all one sign), the plane equation
// gives t. Two-sided.
inline OracleRayHit OracleRayTriangle(const D3& o, const D3& d, const OracleTriangle& tri,
                                      double t_max) {
  OracleRayHit h;
  const D3 pa = tri.a - o, pb = tri.b - o, pc = tri.c - o;
  const double e0 = DotD(d, CrossD(pa, pb)), e1 = DotD(d, CrossD(pb, pc)),
               e2 = DotD(d, CrossD(pc, pa));
  const bool neg = e0 < 0 || e1 < 0 || e2<0, pos = e0> 0 || e1 > 0 || e2 > 0;
  if (neg && pos) return h;
  const double dn = DotD(d, tri.n);
  if (dn == 0) return h;
  const double t = DotD(pa, tri.n) / dn;
  if (t < 0 || t > t_max) return h;
  h.hit = true;
  h.t = t;
  h.front = dn < 0;
  // Distance from the hit point to each edge line, for reporting how close to an edge it was.
  const D3 p = o + d * t;
  const D3 corners[3] = {tri.a, tri.b, tri.c};
  h.clearance = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 3; ++k) {
    const D3 e = corners[(k + 1) % 3] - corners[k];
    h.clearance = std::min(h.clearance, LenD(CrossD(p - corners[k], e)) / LenD(e));
  }
  return h;
}

// The nearest crossing of the segment o + t d, t in [0, t_max], over `tris` (d unit).
inline OracleRayHit OracleClosestRay(const std::vector<OracleTriangle>& tris, const D3& o,
                                     const D3& d, double t_max) {
  const D3 end = o + d * t_max;
  const D3 lo{std::min(o.x, end.x), std::min(o.y, end.y), std::min(o.z, end.z)};
  const D3 hi{std::max(o.x, end.x), std::max(o.y, end.y), std::max(o.z, end.z)};
  OracleRayHit best;
  for (const OracleTriangle& tri : tris) {
    if (!BoxesOverlap(lo, hi, tri.lo, tri.hi)) continue;
    OracleRayHit h = OracleRayTriangle(o, d, tri, t_max);
    if (h.hit && (!best.hit || h.t < best.t)) best = h;
  }
  return best;
}

// Triangles whose bounds come within `reach` of the segment from `p0` to `p1`'s bounds.
inline std::vector<const OracleTriangle*> NearSegment(const std::vector<OracleTriangle>& tris,
                                                      const D3& p0, const D3& p1, double reach) {
  const D3 lo{std::min(p0.x, p1.x) - reach, std::min(p0.y, p1.y) - reach,
              std::min(p0.z, p1.z) - reach};
  const D3 hi{std::max(p0.x, p1.x) + reach, std::max(p0.y, p1.y) + reach,
              std::max(p0.z, p1.z) + reach};
  std::vector<const OracleTriangle*> out;
  for (const OracleTriangle& tri : tris) {
    if (BoxesOverlap(lo, hi, tri.lo, tri.hi)) out.push_back(&tri);
  }
  return out;
}

struct OracleToi {
  bool hit = false;
  bool converged = true;  // false: conservative advancement crept (grazing); do not compare
  double s = 0;           // fraction of the translation
};

// First s in [0, 1] at which the sphere (centre c0 + s * delta, radius r) touches one of `tris`,
// by conservative advancement: the distance from the centre to the triangles changes by at most
// |delta| per unit of s, so advancing by (distance - r) / |delta| never passes a contact.
inline OracleToi SphereToi(const std::vector<const OracleTriangle*>& tris, const D3& c0,
                           const D3& delta, double r, double tolerance = 1e-7) {
  OracleToi toi;
  const double len = LenD(delta);
  double s = 0;
  for (int it = 0; it < 20000; ++it) {
    const D3 c = c0 + delta * s;
    double dist = std::numeric_limits<double>::infinity();
    for (const OracleTriangle* tri : tris)
      dist = std::min(dist, PointTriangleDist(c, tri->a, tri->b, tri->c));
    const double gap = dist - r;
    if (gap <= tolerance) {
      toi.hit = true;
      toi.s = s;
      return toi;
    }
    s += gap / len;
    if (s > 1) return toi;
  }
  toi.converged = false;
  return toi;
}

// Signed distances of the shapes, for sampling triangles against them (local frame).
inline double SphereSdf(const D3& p, double r) { return LenD(p) - r; }
inline double CapsuleSdf(const D3& p, double half_height, double r) {
  return PointSegmentDist(p, {0, -half_height, 0}, {0, half_height, 0}) - r;
}
inline double BoxSdf(const D3& p, const D3& half, double rounding) {
  const D3 inner = {half.x - rounding, half.y - rounding, half.z - rounding};
  const D3 q{std::fabs(p.x) - inner.x, std::fabs(p.y) - inner.y, std::fabs(p.z) - inner.z};
  const D3 outside{std::max(q.x, 0.0), std::max(q.y, 0.0), std::max(q.z, 0.0)};
  return LenD(outside) + std::min(std::max({q.x, q.y, q.z}), 0.0) - rounding;
}

// The smallest value of `sdf` over triangle (a, b, c), sampled on a barycentric grid with `n`
// steps per edge and refined around the best sample (an upper bound on the true minimum that
// converges to it; within h * |longest edge| / n for an sdf with gradient <= 1).
template <typename Sdf>
double MinSdfOverTriangle(const Sdf& sdf, const D3& a, const D3& b, const D3& c, int n) {
  double best = std::numeric_limits<double>::infinity();
  double bu = 0, bv = 0;
  auto at = [&](double u, double v) { return a + (b - a) * u + (c - a) * v; };
  for (int i = 0; i <= n; ++i)
    for (int j = 0; i + j <= n; ++j) {
      const double u = double(i) / n, v = double(j) / n;
      const double d = sdf(at(u, v));
      if (d < best) best = d, bu = u, bv = v;
    }
  // Refine: shrinking pattern search around the best sample, staying inside the triangle.
  for (double step = 1.0 / n; step > 1e-7; step *= 0.5) {
    bool moved = true;
    while (moved) {
      moved = false;
      const double cand[6][2] = {{step, 0},  {-step, 0},    {0, step},
                                 {0, -step}, {step, -step}, {-step, step}};
      for (const auto& dv : cand) {
        const double u = bu + dv[0], v = bv + dv[1];
        if (u < 0 || v < 0 || u + v > 1) continue;
        const double d = sdf(at(u, v));
        if (d < best) best = d, bu = u, bv = v, moved = true;
      }
    }
  }
  return best;
}

}  // namespace voxcol::testing
