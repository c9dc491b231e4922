#include "core/narrowphase/penetration.h"

#include <cmath>

namespace voxcol {
namespace {

// Shallow case: cores at distance d > 0 with d < ra + rb; the rounded parts overlap along the
// core closest-point direction, so depth = ra + rb - d exactly.
PenetrationResult FromCores(const MinkowskiDifference& cso, const JohnsonSimplex& simplex,
                            const Vec3& v, float core_dist) {
  const PosedShape &a = cso.a(), &b = cso.b();
  PenetrationResult r;
  float radii = a.Radius() + b.Radius();
  Vec3 n = v * (-1.0f / core_dist), pa, pb;  // v = a - b points from B to A
  simplex.ClosestPoints(&pa, &pb);
  r.normal = cso.ToWorldDir(n);
  r.point_a = cso.ToWorldPoint(pa + n * a.Radius());
  r.point_b = cso.ToWorldPoint(pb - n * b.Radius());
  r.overlapping = core_dist < radii;
  r.depth = r.overlapping ? radii - core_dist : 0;
  r.separation = r.overlapping ? 0 : core_dist - radii;
  return r;
}

// Deep case on a solid core CSO: the penetration depth of the origin in K + ball(r) is its depth
// in K plus r (the support function of the sum is h_K(n) + r, and the depth is min over unit n of
// the support), along the same normal. So EPA runs on the cores, a polytope for every shape but a
// hull's rounding, and the radii are added to the answer.
PenetrationResult FromCoreEpa(const PosedShape& a, const PosedShape& b, const EpaResult& epa) {
  PenetrationResult r;
  r.overlapping = true;
  r.used_epa = true;
  r.depth = epa.depth + a.Radius() + b.Radius();
  r.normal = epa.normal;
  r.point_a = epa.point_a + epa.normal * a.Radius();
  r.point_b = epa.point_b - epa.normal * b.Radius();
  return r;
}

}  // namespace

PenetrationResult ComputePenetration(const PosedShape& a, const PosedShape& b,
                                     const PenetrationSettings& settings) {
  // 1. GJK on the cores.
  MinkowskiDifference cores(a, b, /*rounded=*/false);
  JohnsonSimplex simplex;
  Vec3 v;
  bool overlapping;
  int iterations;
  Vec3 start = cores.CentreOffset();
  float dist_sq = GjkClosest(cores, start, settings.gjk, &simplex, &v, &overlapping, &iterations);
  if (!overlapping) return FromCores(cores, simplex, v, std::sqrt(dist_sq));
  SupportPoint points[4];
  // 2. The origin inside a proper (not flat) tetrahedron of core points: the core CSO is solid
  //    around it, EPA on the cores, radii added (FromCoreEpa).
  if (simplex.Full()) {
    simplex.Points(points);
    EpaResult epa = Epa(cores, points, 4, settings.epa);
    if (epa.ok) return FromCoreEpa(a, b, epa);
  }
  // 3. Cores touching or flat around the origin (two spheres' centres, a capsule's segment across
  //    another's, a point on a triangle): GJK on the full shapes for a simplex around the origin,
  //    then EPA on them.
  MinkowskiDifference full(a, b, /*rounded=*/true);
  GjkClosest(full, start, settings.gjk, &simplex, &v, &overlapping, &iterations);
  int count = simplex.Points(points);
  EpaResult epa = Epa(full, points, count, settings.epa);
  PenetrationResult r;
  r.overlapping = true;
  r.used_epa = true;
  if (!epa.ok) {
    // Touching within tolerance (a one-point simplex) or a flat CSO: no measurable depth.
    r.epa_failed = true;
    r.normal = full.ToWorldDir(LengthSq(start) > 0 ? -Normalize(start) : Vec3{0, 1, 0});
    Vec3 pa, pb;
    simplex.ClosestPoints(&pa, &pb);
    r.point_a = full.ToWorldPoint(pa);
    r.point_b = full.ToWorldPoint(pb);
    return r;
  }
  r.depth = epa.depth;
  r.normal = epa.normal;
  r.point_a = epa.point_a;
  r.point_b = epa.point_b;
  return r;
}

}  // namespace voxcol
