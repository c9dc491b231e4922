#include "core/query/triangle_contacts.h"

#include <algorithm>
#include <cmath>

#include "core/geometry/closest_point.h"
#include "core/narrowphase/collide_vs_triangle.h"
#include "core/query/active_edges.h"

namespace voxcol::terrain {

namespace {

// Face contact generation, as in Jolt's ManifoldBetweenTwoFaces: a box lying on a triangle touches
// it along a face, not at one closest point. The shape's incident feature (box face or capsule
// segment, lowered by the convex radius) is clipped to the prism over the triangle; every clipped
// point within `margin` of the face becomes a contact with its own depth. Appends nothing (and
// returns false) when the clip leaves no point, e.g. for a contact on the triangle's rim.
bool AddFacePoints(const PosedShape& s, const Tri& t, uint32_t tri_index, float margin,
                   std::vector<RawContact>* out) {
  Vec3 poly[8], next[8];
  int count = IncidentFeature(s, t.normal, poly);
  if (count == 0) return false;
  for (int k = 0; k < count; ++k) poly[k] -= t.normal * s.Radius();
  // Sutherland-Hodgman against the three inward edge planes (a segment is a two-point polygon).
  for (int e = 0; e < 3 && count > 0; ++e) {
    const Vec3& a = t.v[e];
    const Vec3 inward = Cross(t.normal, t.v[(e + 1) % 3] - a);
    int n = 0;
    const int edges = count == 2 ? 1 : count;
    if (count == 2) {
      const float d0 = Dot(inward, poly[0] - a), d1 = Dot(inward, poly[1] - a);
      if (d0 >= 0) next[n++] = poly[0];
      if ((d0 < 0) != (d1 < 0)) next[n++] = poly[0] + (poly[1] - poly[0]) * (d0 / (d0 - d1));
      if (d1 >= 0) next[n++] = poly[1];
    } else {
      for (int k = 0; k < edges; ++k) {
        const Vec3 &p = poly[k], &q = poly[(k + 1) % count];
        const float dp = Dot(inward, p - a), dq = Dot(inward, q - a);
        if (dp >= 0) next[n++] = p;
        if ((dp < 0) != (dq < 0)) next[n++] = p + (q - p) * (dp / (dp - dq));
      }
    }
    count = n;
    for (int k = 0; k < count; ++k) poly[k] = next[k];
  }
  bool added = false;
  const float plane = Dot(t.normal, t.v[0]);
  for (int k = 0; k < count; ++k) {
    const float depth = plane - Dot(t.normal, poly[k]);
    if (depth < -margin) continue;
    out->push_back({poly[k] + t.normal * depth, t.normal, depth, tri_index});
    added = true;
  }
  return added;
}

// Whether a sphere or capsule lies wholly on one side of the triangle's plane, farther from it than
// margin: then it is farther than that from the triangle (a point is at least its plane distance
// away), and there is no contact. PlaneSlack leaves the borderline pairs to the exact test.
bool FarFromPlane(const RoundCore& core, const Tri& t, float margin) {
  if (!core.round) return false;
  float lo, hi;
  core.Along(t.normal, &lo, &hi);
  const float plane = Dot(t.normal, t.v[0]);
  const float limit = margin + PlaneSlack(core.radius + margin, core.magnitude);
  return lo - plane > limit || plane - hi > limit;
}

// ContactWithTriangle for a sphere, in one pass. It is SphereVsTriangle (core/geometry/
// triangle_contact.h) with its normal rule (d / |d|, the face normal at distance 0), specialized
// for terrain's hot path: the closest point decides whether the sphere is within margin squared,
// before any root, and a centre behind the face takes the face normal and the plane depth (the
// way out through the surface), where the general form would push it out through the back.
bool SphereContact(const RoundCore& core, const Tri& t, float margin, RawContact* out) {
  const Vec3& centre = core.p[0];
  const Vec3 point = ClosestPointOnTriangle(centre, t.v[0], t.v[1], t.v[2]);
  const Vec3 d = centre - point;
  const float dd = LengthSq(d), reach = core.radius + margin;
  if (!(dd <= reach * reach)) return false;
  const float ahead = Dot(d, t.normal);
  if (ahead < 0) {
    // Behind the face: the way out is through the front, by the plane depth.
    *out = {point, t.normal, core.radius - Dot(t.normal, centre - t.v[0]), 0};
    return true;
  }
  const float dist = std::sqrt(dd);
  *out = {point, dist > 0 ? d * (1 / dist) : t.normal, core.radius - dist, 0};
  return true;
}

}  // namespace

bool ContactWithTriangle(const PosedShape& s, const RoundCore& core, const Tri& t, float margin,
                         RawContact* out) {
  if (FarFromPlane(core, t, margin)) return false;
  TriangleCollision c;
  switch (s.shape->type) {
    case ShapeType::kSphere:
      return SphereContact(core, t, margin, out);
    case ShapeType::kCapsule:
      c = CollideCapsuleVsTriangle(core.p[0], core.p[1], core.radius, t.v[0], t.v[1], t.v[2]);
      break;
    case ShapeType::kBox:
      if (s.Radius() == 0) {
        // The 13-axis SAT; its separation is a lower bound, so only pairs separated by at most
        // the margin need GJK's exact distance.
        c = CollideBoxVsTriangle(s, t.v[0], t.v[1], t.v[2]);
        if (c.overlapping || -c.contact.depth > margin) break;
      }
      [[fallthrough]];
    default:
      c = CollideConvexVsTriangle(s, t.v[0], t.v[1], t.v[2]);
      break;
  }
  float distance = -c.contact.depth;
  const Vec3 point = c.contact.position;
  Vec3 normal = c.contact.normal;
  if (!(distance <= margin)) return false;
  if (Dot(normal, t.normal) < 0) {
    // Behind the face: the way out is through the front.
    normal = t.normal;
    distance = -PlaneDepth(s, t);
  }
  *out = {point, normal, -distance, 0};
  return true;
}

int IncidentFeature(const PosedShape& s, const Vec3& n, Vec3 out[4]) {
  const ConvexShape& shape = *s.shape;
  if (out == nullptr) {  // just the count
    return shape.type == ShapeType::kBox
               ? 4
               : (shape.type == ShapeType::kCapsule && shape.half_height > 0 ? 2 : 0);
  }
  if (shape.type == ShapeType::kCapsule) {
    s.CapsuleSegment(&out[0], &out[1]);
    return shape.half_height > 0 ? 2 : 0;
  }
  if (shape.type != ShapeType::kBox) return 0;
  const Vec3 local = InverseRotate(s.pose.rotation, -n);  // the face normal we look for, local
  int axis = 0;
  for (int a = 1; a < 3; ++a) {
    if (std::fabs(local[a]) > std::fabs(local[axis])) axis = a;
  }
  const float side = local[axis] < 0 ? -1.0f : 1.0f;
  const int u = (axis + 1) % 3, v = (axis + 2) % 3;
  const Vec3& e = shape.half_extents;
  const float su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};  // a loop around the face
  for (int k = 0; k < 4; ++k) {
    Vec3 p;
    p[axis] = side * e[axis];
    p[u] = su[k] * e[u];
    p[v] = sv[k] * e[v];
    out[k] = s.pose.Apply(p);
  }
  return 4;
}

void CollectContacts(const PosedShape& s, Gathered& g, float margin, bool face_points,
                     std::vector<RawContact>* out) {
  out->clear();
  EdgeTable edges(g.tris);
  const RoundCore core(s);
  for (uint32_t i = 0; i < g.tris.size(); ++i) {
    if (i % kInterruptStride == 0 && g.Interrupted()) return;
    RawContact c;
    ++g.tests;
    if (!ContactWithTriangle(s, core, g.tris[i], margin, &c)) continue;
    c.tri = i;
    const bool fixed = FixInternalEdge(s, g.tris[i], i, edges, true, &c);
    if (c.depth < -margin) continue;
    if (face_points && Dot(c.normal, g.tris[i].normal) >= 0.99995f) {
      if (AddFacePoints(s, g.tris[i], i, margin, out)) continue;
      // The shape only reaches over this triangle's inner edge: the triangles it lies on report
      // that contact, with depths measured where the shape is (the plane depth here would not be).
      if (fixed && IncidentFeature(s, c.normal, nullptr) > 0) continue;
    }
    out->push_back(c);
  }
}

}  // namespace voxcol::terrain
