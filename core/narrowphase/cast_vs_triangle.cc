#include "core/narrowphase/cast_vs_triangle.h"

#include <cassert>
#include <cmath>

#include "core/geometry/triangle_contact.h"

namespace voxcol {
namespace {

// Smallest t in [0, 1] with |m + t d|^2 = r^2 when entering (m.d < 0), or -1. Expanding:
// |d|^2 t^2 + 2 (m.d) t + |m|^2 - r^2 = 0, smaller root.
float EnterTime(const Vec3& m, const Vec3& d, float r) {
  float a = LengthSq(d), b = Dot(m, d), k = LengthSq(m) - r * r;
  float disc = b * b - a * k;
  if (b >= 0 || disc < 0 || a == 0) return -1;
  float t = (-b - std::sqrt(disc)) / a;
  return t >= 0 && t <= 1 ? t : -1;
}

struct Candidate {
  float t = 2;
  Vec3 point;  // on the triangle
};

void Consider(Candidate* best, float t, const Vec3& point) {
  if (t >= 0 && t < best->t) *best = {t, point};
}

// Face: the centre reaches the plane offset by r on its own side, landing inside the triangle.
void FaceCandidate(const Vec3& center, float r, const Vec3& d, const Vec3 v[3], Candidate* best) {
  Vec3 n = Normalize(Cross(v[1] - v[0], v[2] - v[0]));
  float h = Dot(center - v[0], n);
  if (h < 0) n = -n, h = -h;
  float speed = -Dot(d, n);
  if (speed <= 0) return;
  float t = (h - r) / speed;
  if (t < 0 || t > 1) return;
  Vec3 q = center + d * t - n * r;
  for (int i = 0; i < 3; ++i) {
    Vec3 e = v[(i + 1) % 3] - v[i];
    if (Dot(Cross(e, q - v[i]), n) * Dot(Cross(e, v[(i + 2) % 3] - v[i]), n) < 0) return;
  }
  Consider(best, t, q);
}

// Edge: the centre enters the cylinder of radius r around the edge line (components orthogonal to
// the edge), at an axial parameter within the edge.
void EdgeCandidate(const Vec3& center, float r, const Vec3& d, const Vec3& p, const Vec3& q,
                   Candidate* best) {
  Vec3 e = q - p;
  float ee = LengthSq(e);
  Vec3 m = center - p;
  Vec3 m_perp = m - e * (Dot(m, e) / ee), d_perp = d - e * (Dot(d, e) / ee);
  float t = EnterTime(m_perp, d_perp, r);
  if (t < 0) return;
  float s = Dot(m + d * t, e) / ee;
  if (s >= 0 && s <= 1) Consider(best, t, p + e * s);
}

}  // namespace

CastResult CastSphereVsTriangle(const Vec3& center, float radius, const Vec3& translation,
                                const Vec3& a, const Vec3& b, const Vec3& c) {
  assert(radius > 0 && LengthSq(translation) > 0);
  if (SphereVsTriangle(center, radius, a, b, c).distance <= 0) {
    CastResult r;
    r.hit = r.initially_overlapping = true;
    return r;
  }
  // The swept volume of the triangle inflated by r is the union of a face slab, three edge
  // cylinders and three vertex spheres; the earliest entry over all of them is the impact.
  const Vec3 v[3] = {a, b, c};
  Candidate best;
  FaceCandidate(center, radius, translation, v, &best);
  for (int i = 0; i < 3; ++i) {
    EdgeCandidate(center, radius, translation, v[i], v[(i + 1) % 3], &best);
    Consider(&best, EnterTime(center - v[i], translation, radius), v[i]);
  }
  if (best.t > 1) return {};
  CastResult r;
  r.hit = true;
  r.fraction = best.t;
  r.point = best.point;
  r.normal = Normalize(center + translation * best.t - best.point);
  return r;
}

CastResult CastConvexVsTriangle(const PosedShape& shape, const Vec3& translation, const Vec3& a,
                                const Vec3& b, const Vec3& c, const CastSettings& settings) {
  ConvexShape triangle = MakeTriangle(a, b, c);
  return GjkRaycast(shape, translation, {&triangle, {}}, settings);
}

}  // namespace voxcol
