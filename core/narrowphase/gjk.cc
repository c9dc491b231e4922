// GJK after van den Bergen (JGT 1999) and the SOLID 3 closest_points/intersect loops.
#include "core/narrowphase/gjk.h"

#include <cmath>
#include <limits>

namespace voxcol {

float GjkClosest(const MinkowskiDifference& cso, const Vec3& initial_dir,
                 const GjkSettings& settings, JohnsonSimplex* simplex, Vec3* v, bool* overlapping,
                 int* iterations) {
  const float rel = settings.relative_tolerance;
  simplex->Reset();
  // Seed with one support point so v always is the closest point of the current simplex.
  simplex->Add(cso.Support(LengthSq(initial_dir) > 0 ? -initial_dir : Vec3{1, 0, 0}));
  simplex->Closest(v);
  float dist_sq = LengthSq(*v);
  int iter = 0;
  while (!simplex->Full() && dist_sq > settings.zero_tolerance * simplex->MaxVertexSq() &&
         iter++ < settings.max_iterations) {
    SupportPoint p = cso.Support(-*v);
    // Lower bound v.w/|v| on the distance; stop when the gap to |v| is small relative to |v|:
    // |v|^2 - v.w <= eps |v|^2. A repeated support point means no more progress is possible.
    float delta = Dot(*v, p.w);
    if (simplex->Contains(p.w) || dist_sq - delta <= rel * dist_sq) break;
    simplex->Add(p);
    if (simplex->AffinelyDependent()) break;
    Vec3 next;
    if (!simplex->Closest(&next)) break;
    float prev_sq = dist_sq;
    *v = next;
    dist_sq = LengthSq(next);
    // |v| must decrease strictly; when rounding stalls it, the backup procedure picks the best
    // subset instead of trusting this v.
    if (prev_sq - dist_sq <= std::numeric_limits<float>::epsilon() * prev_sq) {
      simplex->BackupClosest(v);
      dist_sq = LengthSq(*v);
      break;
    }
  }
  *overlapping = simplex->Full() || dist_sq <= settings.zero_tolerance * simplex->MaxVertexSq();
  *iterations = iter;
  return dist_sq;
}

GjkResult GjkDistance(const PosedShape& a, const PosedShape& b, const GjkSettings& settings) {
  MinkowskiDifference cso(a, b, /*rounded=*/false);
  JohnsonSimplex simplex;
  Vec3 v;
  GjkResult r;
  float dist_sq =
      GjkClosest(cso, cso.CentreOffset(), settings, &simplex, &v, &r.overlapping, &r.iterations);
  if (r.overlapping) return r;
  float core_dist = std::sqrt(dist_sq);
  float radii = a.Radius() + b.Radius();
  if (core_dist <= radii) {
    r.overlapping = true;
    return r;
  }
  // v = a - b points from B to A; the radii move the core points toward each other.
  Vec3 n = v * (-1.0f / core_dist), pa, pb;
  simplex.ClosestPoints(&pa, &pb);
  r.normal = cso.ToWorldDir(n);
  r.point_a = cso.ToWorldPoint(pa + n * a.Radius());
  r.point_b = cso.ToWorldPoint(pb - n * b.Radius());
  r.distance = core_dist - radii;
  return r;
}

bool GjkIntersect(const PosedShape& a, const PosedShape& b, Vec3* axis,
                  const GjkSettings& settings) {
  MinkowskiDifference cso(a, b, /*rounded=*/true);
  JohnsonSimplex simplex;
  Vec3 v = axis && LengthSq(*axis) > 0 ? cso.ToLocalDir(*axis) : cso.CentreOffset();
  if (LengthSq(v) == 0) v = {1, 0, 0};
  for (int iter = 0; iter < settings.max_iterations; ++iter) {
    SupportPoint p = cso.Support(-v);
    if (Dot(v, p.w) > 0) {
      if (axis) *axis = cso.ToWorldDir(v);
      return false;  // the plane through w normal to v separates the origin from A - B
    }
    // A repeated support point with v.w <= 0 means |v|^2 <= v.w <= 0: touching.
    if (simplex.Contains(p.w)) return true;
    simplex.Add(p);
    if (!simplex.Closest(&v)) return true;
    if (simplex.Full() || LengthSq(v) <= settings.zero_tolerance * simplex.MaxVertexSq()) {
      return true;
    }
  }
  return true;
}

}  // namespace voxcol
