// GJK-raycast after van den Bergen (2004); see gjk_raycast.h.
#include "core/narrowphase/gjk_raycast.h"

#include <cmath>

#include "core/narrowphase/johnson_simplex.h"

namespace voxcol {
namespace {

// Normal of B toward A at the hit. With rounded shapes v = x - k (k the closest core CSO point)
// has length ~ra + rb and gives it directly: -v / |v|. With sharp shapes v shrinks to ~0 and its
// direction is noise; a final triangle is then a CSO face and its plane normal is exact, else the
// v of the last advance (van den Bergen's n) is used.
Vec3 HitNormal(const JohnsonSimplex& simplex, const Vec3& v, const Vec3& last_v, float radii,
               const Vec3& translation) {
  if (radii > 0 && LengthSq(v) > 0) return Normalize(-v);
  SupportPoint pts[4];
  if (simplex.Points(pts) == 3) {
    Vec3 n = Cross(pts[1].w - pts[0].w, pts[2].w - pts[0].w);
    if (LengthSq(n) > 0) return Normalize(Dot(n, translation) > 0 ? -n : n);
  }
  return Normalize(-last_v);
}

// At the hit the simplex is within tolerance of the rounded surface but its closest point may still
// sit on an edge of a large CSO face, tilting -v. Plain GJK iterations at the fixed ray point
// converge v to the true closest direction (stop on the relative gap |v|^2 - v.w <= eps |v|^2).
void PolishClosest(const MinkowskiDifference& cso, const Vec3& x, JohnsonSimplex* simplex,
                   Vec3* v) {
  for (int i = 0; i < 16 && !simplex->Full(); ++i) {
    SupportPoint p = cso.Support(*v);
    Vec3 w = x - p.w;
    float vv = LengthSq(*v);
    if (vv - Dot(*v, w) <= 1e-6f * vv || simplex->Contains(w)) return;
    simplex->Add({w, p.a, p.b});
    if (!simplex->Closest(v)) simplex->BackupClosest(v);
  }
}

CastResult MakeHit(const MinkowskiDifference& cso, const JohnsonSimplex& simplex, const Vec3& v,
                   const Vec3& last_v, float radii, const Vec3& translation, float lambda,
                   int iterations) {
  CastResult r;
  r.hit = true;
  r.fraction = lambda;
  r.iterations = iterations;
  Vec3 n = HitNormal(simplex, v, last_v, radii, translation);
  Vec3 core_a, core_b;
  simplex.ClosestPoints(&core_a, &core_b);
  r.normal = cso.ToWorldDir(n);
  r.point = cso.ToWorldPoint(core_b + n * cso.b().Radius());
  return r;
}

}  // namespace

CastResult GjkRaycast(const PosedShape& a, const Vec3& world_translation, const PosedShape& b,
                      const CastSettings& settings) {
  MinkowskiDifference cso(a, b, /*rounded=*/false);
  const Vec3 translation = cso.ToLocalDir(world_translation);
  const Vec3 ray = -translation;  // x(lambda) = lambda * ray; hit when x enters A - B
  const float radii = a.Radius() + b.Radius();
  float lambda = 0;
  Vec3 x, normal;
  JohnsonSimplex simplex;
  SupportPoint p = cso.Support(translation);
  Vec3 v = x - p.w;
  int iter = 0;
  for (; iter < settings.max_iterations; ++iter) {
    float scale_sq = std::fmax(radii * radii, simplex.Empty() ? 0 : simplex.MaxVertexSq());
    float tol = settings.relative_tolerance * std::sqrt(scale_sq);
    float v_len = Length(v);
    if (v_len <= radii + tol) break;
    p = cso.Support(v);  // s_{A-B}(v); w = x - p is then the support of {x} - (A - B) along -v
    Vec3 w = x - p.w;
    // Support plane of the rounded CSO: every point y with v.(x - y) > radii |v| is outside.
    float vw = Dot(v, w) - radii * v_len;
    if (vw > 0) {
      float vr = Dot(v, ray);
      if (vr >= 0) return {};  // the ray leaves the support plane: miss
      float next = lambda - vw / vr;
      if (next > 1) return {};
      // A step lost to rounding (next == lambda) is not convergence: the simplex may still be
      // far from x, so fall through and let GJK refine it at this lambda.
      if (next > lambda) {
        lambda = next;
        x = ray * lambda;
        normal = v;
        simplex.Rebase(x);
        w = x - p.w;
      }
    }
    simplex.Remove(w);
    simplex.Add({w, p.a, p.b});
    // After a rebase the old v is stale, so the new point need not be part of the answer and
    // Johnson's search (which assumes it is) can come up empty; the backup procedure then finds
    // the closest point over all subsets.
    if (!simplex.Closest(&v)) simplex.BackupClosest(&v);
    if (simplex.Full()) break;  // x is inside the core CSO
  }
  if (lambda == 0) {
    CastResult r;
    r.hit = r.initially_overlapping = true;
    r.iterations = iter;
    return r;
  }
  if (radii > 0) PolishClosest(cso, x, &simplex, &v);
  return MakeHit(cso, simplex, v, normal, radii, translation, lambda, iter);
}

}  // namespace voxcol
