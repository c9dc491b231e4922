#include "core/narrowphase/cast_vs_triangle.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/geometry/closest_point.h"
#include "core/geometry/triangle_contact.h"

namespace voxcol {
namespace {

// Smallest t in [0, 1] with |m + t d|^2 = r^2 when entering (m.d < 0), or -1; dd = |d|^2.
// Expanding: |d|^2 t^2 + 2 (m.d) t + |m|^2 - r^2 = 0, smaller root.
float EnterTime(const Vec3& m, const Vec3& d, float dd, float r) {
  const float b = Dot(m, d);
  if (b >= 0 || dd == 0) return -1;
  const float disc = b * b - dd * (LengthSq(m) - r * r);
  if (disc < 0) return -1;
  const float t = (-b - std::sqrt(disc)) / dd;
  return t >= 0 && t <= 1 ? t : -1;
}

struct Candidate {
  float t = 2;
  Vec3 point;  // on the triangle
};

void Consider(Candidate* best, float t, const Vec3& point) {
  if (t >= 0 && t < best->t) *best = {t, point};
}

// A segment p + e s (s in [0, 1]) and a motion d: the motion's part across the segment, which
// every point cast against the segment's cylinder shares.
struct Cylinder {
  Cylinder() = default;
  Cylinder(const Vec3& start, const Vec3& along, const Vec3& d)
      : p(start), e(along), inv_ee(1 / LengthSq(along)) {
    d_perp = d - e * (Dot(d, e) * inv_ee);
    dd_perp = LengthSq(d_perp);
  }
  // When `point`, moving by d, enters the cylinder of radius r around the segment at an axial
  // parameter *s within it: t in [0, 1], or -1.
  float Enter(const Vec3& point, float r, const Vec3& d, float* s) const {
    const Vec3 m = point - p;
    const Vec3 m_perp = m - e * (Dot(m, e) * inv_ee);
    const float t = EnterTime(m_perp, d_perp, dd_perp, r);
    if (t < 0) return -1;
    *s = Dot(m + d * t, e) * inv_ee;
    return *s >= 0 && *s <= 1 ? t : -1;
  }

  Vec3 p, e;
  float inv_ee = 0;
  Vec3 d_perp;
  float dd_perp = 0;
};

// What the spheres cast against one triangle by one motion d share: the triangle's corners, unit
// normal (either way round) and edge cylinders, and |d|^2.
struct TriangleFrame {
  TriangleFrame(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& unit_normal,
                const Vec3& d_)
      : v{a, b, c}, n(unit_normal), d(d_), dd(LengthSq(d_)) {
    for (int i = 0; i < 3; ++i) edge[i] = Cylinder(v[i], v[(i + 1) % 3] - v[i], d);
  }

  Vec3 v[3];
  Vec3 n;
  Vec3 d;
  float dd;
  Cylinder edge[3];
};

// Face: the centre reaches the plane offset by r on its own side, landing inside the triangle.
void FaceCandidate(const TriangleFrame& f, const Vec3& center, float r, Candidate* best) {
  Vec3 n = f.n;
  float h = Dot(center - f.v[0], n);
  if (h < 0) n = -n, h = -h;
  const float speed = -Dot(f.d, n);
  if (speed <= 0) return;
  const float t = (h - r) / speed;
  if (t < 0 || t > 1) return;
  const Vec3 q = center + f.d * t - n * r;
  if (ProjectsIntoTriangle(q, f.v[0], f.v[1], f.v[2], n)) Consider(best, t, q);
}

// Every feature of a sphere moving by the frame's d: the face, the three edges (cylinders) and
// the three vertices (spheres).
void SphereCandidates(const TriangleFrame& f, const Vec3& center, float r, Candidate* best) {
  FaceCandidate(f, center, r, best);
  for (int i = 0; i < 3; ++i) {
    float s;
    const float t = f.edge[i].Enter(center, r, f.d, &s);
    if (t >= 0) Consider(best, t, f.v[i] + f.edge[i].e * s);
    Consider(best, EnterTime(center - f.v[i], f.d, f.dd, r), f.v[i]);
  }
}

// The inside of a capsule's segment (p0 + u s) against the inside of a triangle edge (a + e w):
// the two lines come within r of each other along their common normal, where both closest points
// lie inside their segments. Pairs already within r at the start, or parallel, meet first at an
// end of one of the segments, which the end spheres and vertices cover.
void SegmentEdgeCandidate(const Vec3& p0, const Vec3& u, float r, const Vec3& d, const Vec3& a,
                          const Vec3& e, Candidate* best) {
  Vec3 n = Cross(u, e);
  const float uu = LengthSq(u), ee = LengthSq(e), nn = LengthSq(n);
  if (!(nn > 1e-12f * uu * ee)) return;
  n = n * (1 / std::sqrt(nn));
  float h = Dot(p0 - a, n);
  if (h < 0) n = -n, h = -h;
  const float speed = -Dot(d, n);
  if (speed <= 0 || h < r) return;
  const float t = (h - r) / speed;
  if (t > 1) return;
  // The closest points of the two lines at time t.
  const Vec3 w0 = p0 + d * t - a;
  const float ue = Dot(u, e), uw = Dot(u, w0), ew = Dot(e, w0);
  const float denom = uu * ee - ue * ue;
  const float s = (ue * ew - ee * uw) / denom, w = (uu * ew - ue * uw) / denom;
  if (s >= 0 && s <= 1 && w >= 0 && w <= 1) Consider(best, t, a + e * w);
}

// The hit's normal runs from the contact point to the nearest point of the shape's core, a radius
// away. Below a radius of about 1e-15 (a fuzzed request's 1.4e-45) that distance squared nears or
// leaves the normal floats and gives no reliable direction: the face normal `n`, turned against
// the motion, stands in.
CastResult FromCandidate(const Candidate& best, const Vec3& core_point, const Vec3& n,
                         const Vec3& translation) {
  if (best.t > 1) return {};
  CastResult r;
  r.hit = true;
  r.fraction = best.t;
  r.point = best.point;
  const Vec3 out = core_point - best.point;
  if (LengthSq(out) >= 1e-30f) {
    r.normal = Normalize(out);
  } else {
    r.normal = Dot(n, translation) <= 0 ? n : -n;
  }
  return r;
}

}  // namespace

CastResult CastSphereVsTriangle(const Vec3& center, float radius, const Vec3& translation,
                                const Vec3& a, const Vec3& b, const Vec3& c) {
  assert(radius > 0);
  if (SphereVsTriangle(center, radius, a, b, c).distance <= 0) {
    CastResult r;
    r.hit = r.initially_overlapping = true;
    return r;
  }
  // The swept volume of the triangle inflated by r is the union of a face slab, three edge
  // cylinders and three vertex spheres; the earliest entry over all of them is the impact.
  const TriangleFrame frame(a, b, c, Normalize(Cross(b - a, c - a)), translation);
  Candidate best;
  SphereCandidates(frame, center, radius, &best);
  return FromCandidate(best, center + translation * best.t, frame.n, translation);
}

CastResult CastCapsuleVsTriangle(const Vec3& p0, const Vec3& p1, float radius,
                                 const Vec3& translation, const Vec3& a, const Vec3& b,
                                 const Vec3& c) {
  assert(radius > 0);
  const Vec3 u = p1 - p0;
  if (LengthSq(u) == 0) return CastSphereVsTriangle(p0, radius, translation, a, b, c);
  Vec3 n = Normalize(Cross(b - a, c - a));
  float h0 = Dot(p0 - a, n), h1 = Dot(p1 - a, n);
  if ((h0 > radius && h1 > radius) || (h0 < -radius && h1 < -radius)) {
    // Off the plane, farther than the radius: nothing touches before the segment's nearer end
    // comes within the radius of the plane, at t_plane. If its sphere lands inside the face
    // then, that is the contact.
    if (h0 < 0) n = -n, h0 = -h0, h1 = -h1;
    const float speed = -Dot(translation, n);
    if (speed <= 0) return {};
    const Vec3& lead = h0 <= h1 ? p0 : p1;
    const float t_plane = (std::min(h0, h1) - radius) / speed;
    if (t_plane > 1) return {};
    const Vec3 q = lead + translation * t_plane - n * radius;
    if (ProjectsIntoTriangle(q, a, b, c, n)) {
      CastResult r;
      r.hit = true;
      r.fraction = t_plane;
      r.point = q;
      r.normal = n;
      return r;
    }
  } else if (CapsuleVsTriangle(p0, p1, radius, a, b, c).distance <= 0) {
    CastResult r;
    r.hit = r.initially_overlapping = true;
    return r;
  }
  // The first contact is between a pair of features: an end sphere and the triangle's face, an
  // edge or a vertex; the inside of the segment and a vertex (the vertex, moving the other way,
  // enters the segment's cylinder); or the inside of the segment and the inside of an edge. The
  // segment's inside meets the face's inside first only when parallel to it, and then it meets an
  // edge at the same time.
  const TriangleFrame frame(a, b, c, n, translation);
  const Cylinder axis(p0, u, -translation);  // the vertices move the other way
  Candidate best;
  SphereCandidates(frame, p0, radius, &best);
  SphereCandidates(frame, p1, radius, &best);
  for (int i = 0; i < 3; ++i) {
    float s;
    Consider(&best, axis.Enter(frame.v[i], radius, -translation, &s), frame.v[i]);
    SegmentEdgeCandidate(p0, u, radius, translation, frame.v[i], frame.edge[i].e, &best);
  }
  // The normal runs from the contact point to the nearest point of the moved segment.
  const Vec3 shift = translation * best.t;
  return FromCandidate(best, ClosestPointOnSegment(best.point, p0 + shift, p1 + shift), frame.n,
                       translation);
}

CastResult CastConvexVsTriangle(const PosedShape& shape, const Vec3& translation, const Vec3& a,
                                const Vec3& b, const Vec3& c, const CastSettings& settings) {
  ConvexShape triangle = MakeTriangle(a, b, c);
  return GjkRaycast(shape, translation, {&triangle, {}}, settings);
}

}  // namespace voxcol
