// EPA after van den Bergen (GDC 2001) and SOLID 3's penDepth; see epa.h.
#include "core/narrowphase/epa.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

namespace voxcol {
namespace {

constexpr int kMaxVertices = 128;
constexpr int kMaxFaces = 512;
constexpr int kMaxHorizon = 128;

struct Face {
  int v[3];         // counter-clockwise seen from outside
  int adj[3];       // neighbour across edge v[i] -> v[i+1]
  int adj_edge[3];  // index of that edge in the neighbour
  Vec3 normal;      // unit, outward
  float dist;       // normal . vertex: distance of the plane from the origin
  bool obsolete;
};

struct Edge {
  int face, index;
};

// A convex polytope around the origin with face adjacency. Fixed capacity, no allocation.
class Polytope {
 public:
  Polytope() {}
  int AddVertex(const SupportPoint& p) {
    if (num_verts_ == kMaxVertices) return -1;
    verts_[num_verts_] = p;
    return num_verts_++;
  }
  // Adds face (a, b, c); returns its index or -1 when degenerate or full.
  int AddFace(int a, int b, int c);
  // Adds face (a, b, c) wound so that its normal points away from `inside`.
  int AddFaceAround(int a, int b, int c, const Vec3& inside);
  // Links the edges of faces [first, num_faces) to their reversed twins.
  bool LinkAll(int first);
  // Removes the faces visible from vertex w, starting at `face`, and closes the hole with a fan
  // of new faces on the silhouette edges. False on a topology or capacity failure.
  bool Expand(int face, int w);
  // The live face nearest the origin (the first on ties), -1 when none.
  int ClosestFace() const;
  bool AllFacesContainOrigin(float tolerance) const;
  const Face& face(int i) const { return faces_[i]; }
  const SupportPoint& vertex(int i) const { return verts_[i]; }
  int num_vertices() const { return num_verts_; }

 private:
  void Link(int f0, int e0, int f1, int e1) {
    faces_[f0].adj[e0] = f1, faces_[f0].adj_edge[e0] = e1;
    faces_[f1].adj[e1] = f0, faces_[f1].adj_edge[e1] = e0;
  }
  void Silhouette(int face, int edge, int w);
  void Retire(int f) {
    faces_[f].obsolete = true;
    live_dist_[f] = std::numeric_limits<float>::infinity();
  }

  // Unions with empty constructors: the arrays (~35 KB, SupportPoint and Face hold Vec3s with
  // default member initializers) are not zeroed on every call; only slots below the counts are
  // ever read.
  union {
    SupportPoint verts_[kMaxVertices];
  };
  union {
    Face faces_[kMaxFaces];
  };
  // live_dist_[f]: faces_[f].dist, or +infinity once the face is obsolete. ClosestFace scans
  // this dense array rather than the 56-byte faces (measured faster than a binary heap at EPA's
  // face counts).
  union {
    float live_dist_[kMaxFaces];
  };
  Edge horizon_[kMaxHorizon];
  int num_verts_ = 0, num_faces_ = 0, num_horizon_ = 0;
  bool overflow_ = false;
};

int Polytope::AddFace(int a, int b, int c) {
  if (num_faces_ == kMaxFaces) return -1;
  const Vec3& pa = verts_[a].w;
  Vec3 n = Cross(verts_[b].w - pa, verts_[c].w - pa);
  float len = Length(n);
  if (!(len > 0)) return -1;
  Face& f = faces_[num_faces_];
  f.v[0] = a, f.v[1] = b, f.v[2] = c;
  f.normal = n * (1.0f / len);
  f.dist = Dot(f.normal, pa);
  f.obsolete = false;
  live_dist_[num_faces_] = f.dist;
  return num_faces_++;
}

int Polytope::AddFaceAround(int a, int b, int c, const Vec3& inside) {
  Vec3 n = Cross(verts_[b].w - verts_[a].w, verts_[c].w - verts_[a].w);
  return Dot(n, verts_[a].w - inside) >= 0 ? AddFace(a, b, c) : AddFace(a, c, b);
}

bool Polytope::LinkAll(int first) {
  for (int f = first; f < num_faces_; ++f) {
    for (int e = 0; e < 3; ++e) {
      int s = faces_[f].v[e], t = faces_[f].v[(e + 1) % 3];
      bool found = false;
      for (int g = first; g < num_faces_ && !found; ++g) {
        for (int k = 0; k < 3 && !found; ++k) {
          if (faces_[g].v[k] == t && faces_[g].v[(k + 1) % 3] == s) Link(f, e, g, k), found = true;
        }
      }
      if (!found) return false;
    }
  }
  return true;
}

// van den Bergen's silhouette walk: crossing edge `edge` into `face`, either the face is not
// visible from w (the edge is on the horizon) or it is removed and the walk continues over its
// two other edges, in order, so horizon edges come out as a closed loop.
void Polytope::Silhouette(int face, int edge, int w) {
  Face& f = faces_[face];
  if (f.obsolete) return;
  if (Dot(f.normal, verts_[w].w) - f.dist <= 0) {
    if (num_horizon_ == kMaxHorizon) {
      overflow_ = true;
    } else {
      horizon_[num_horizon_++] = {face, edge};
    }
    return;
  }
  Retire(face);
  Silhouette(f.adj[(edge + 1) % 3], f.adj_edge[(edge + 1) % 3], w);
  Silhouette(f.adj[(edge + 2) % 3], f.adj_edge[(edge + 2) % 3], w);
}

bool Polytope::Expand(int face, int w) {
  num_horizon_ = 0;
  overflow_ = false;
  Retire(face);
  for (int e = 0; e < 3; ++e) Silhouette(faces_[face].adj[e], faces_[face].adj_edge[e], w);
  if (overflow_ || num_horizon_ < 3) return false;
  // New face i = (t_i, s_i, w) on horizon edge s_i -> t_i of a kept face: edge 0 is that edge
  // reversed, edge 1 (s_i -> w) is the twin of edge 2 (w -> t_j) of the face j with t_j == s_i.
  int first = num_faces_;
  for (int h = 0; h < num_horizon_; ++h) {
    const Face& g = faces_[horizon_[h].face];
    int k = horizon_[h].index;
    int nf = AddFace(g.v[(k + 1) % 3], g.v[k], w);
    if (nf < 0) return false;
    Link(nf, 0, horizon_[h].face, k);
  }
  for (int i = first; i < num_faces_; ++i) {
    int j = first;
    while (j < num_faces_ && faces_[j].v[0] != faces_[i].v[1]) ++j;
    if (j == num_faces_) return false;
    Link(i, 1, j, 2);
  }
  return true;
}

int Polytope::ClosestFace() const {
  int best = -1;
  float best_dist = std::numeric_limits<float>::infinity();
  for (int f = 0; f < num_faces_; ++f) {
    if (live_dist_[f] < best_dist) best_dist = live_dist_[f], best = f;
  }
  return best;
}

bool Polytope::AllFacesContainOrigin(float tolerance) const {
  for (int f = 0; f < num_faces_; ++f) {
    if (!faces_[f].obsolete && faces_[f].dist < -tolerance) return false;
  }
  return num_faces_ > 0;
}

// Index of the tetrahedron vertex whose opposite face separates it from the origin, or -1 when
// the origin is inside (or on) the tetrahedron.
int OutsideVertex(const Vec3 y[4]) {
  static constexpr int kFace[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
  for (int i = 0; i < 4; ++i) {
    const Vec3& a = y[kFace[i][0]];
    Vec3 n = Cross(y[kFace[i][1]] - a, y[kFace[i][2]] - a);
    float vertex_side = Dot(n, y[i] - a), origin_side = -Dot(n, a);
    if (vertex_side * origin_side < 0) return i;
  }
  return -1;
}

bool BuildTetrahedron(const int idx[4], Polytope* poly) {
  Vec3 inside;
  for (int i = 0; i < 4; ++i) inside += poly->vertex(idx[i]).w * 0.25f;
  static constexpr int kFace[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
  for (const auto& f : kFace) {
    if (poly->AddFaceAround(idx[f[0]], idx[f[1]], idx[f[2]], inside) < 0) return false;
  }
  return poly->LinkAll(0);
}

// What the initial polytope is: none (EPA cannot start), a polytope around the origin, or, for
// touching shapes, just the face of the CSO's boundary that holds the origin.
enum class Start { kFailed, kPolytope, kTouching };

// Triangle blow-up (SOLID): add the supports on both sides of the triangle's plane, giving a
// bipyramid whose interior contains the origin even when the origin lies on the triangle.
// When the origin lies in that plane and the CSO does not reach past it on one side, the plane is
// a face of the CSO: the shapes touch, and that half of the bipyramid would be flat, its faces
// without a trustworthy side. The triangle, facing the empty side, is then the answer
// (*touching_face).
Start BuildBipyramid(const MinkowskiDifference& cso, const int idx[3], Polytope* poly,
                     int* touching_face) {
  Vec3 y0 = poly->vertex(idx[0]).w, y1 = poly->vertex(idx[1]).w, y2 = poly->vertex(idx[2]).w;
  Vec3 n = Cross(y1 - y0, y2 - y0);
  if (!(LengthSq(n) > 0)) return Start::kFailed;
  int up = poly->AddVertex(cso.Support(n)), down = poly->AddVertex(cso.Support(-n));
  if (up < 0 || down < 0) return Start::kFailed;
  const Vec3 unit = Normalize(n);
  const Vec3 &top = poly->vertex(up).w, &bottom = poly->vertex(down).w;
  float scale_sq = 0;
  for (const Vec3& y : {y0, y1, y2, top, bottom}) scale_sq = std::fmax(scale_sq, LengthSq(y));
  const float flat = 1e-5f * std::sqrt(scale_sq);  // as EPA's origin-containment tolerance
  const float above = Dot(unit, top - y0), below = Dot(unit, y0 - bottom);
  if (std::fabs(Dot(unit, y0)) <= flat && (above > flat) != (below > flat)) {
    *touching_face = poly->AddFaceAround(idx[0], idx[1], idx[2], above > flat ? top : bottom);
    return *touching_face >= 0 ? Start::kTouching : Start::kFailed;
  }
  Vec3 inside = (y0 + y1 + y2) * (1.0f / 3.0f);
  for (int e = 0; e < 3; ++e) {
    int s = idx[e], t = idx[(e + 1) % 3];
    if (poly->AddFaceAround(s, t, up, inside) < 0) return Start::kFailed;
    if (poly->AddFaceAround(s, t, down, inside) < 0) return Start::kFailed;
  }
  return poly->LinkAll(0) ? Start::kPolytope : Start::kFailed;
}

// Segment blow-up (SOLID): supports along three directions 120 degrees apart around the segment;
// the origin then lies in one of the tetrahedra formed with either endpoint.
bool BuildFromSegment(const MinkowskiDifference& cso, Polytope* poly) {
  Vec3 dir = poly->vertex(1).w - poly->vertex(0).w;
  if (!(LengthSq(dir) > 0)) return false;
  dir = Normalize(dir);
  // Cross with the axis least aligned with dir for a well-conditioned perpendicular.
  Vec3 ad{std::fabs(dir.x), std::fabs(dir.y), std::fabs(dir.z)};
  Vec3 axis = ad.x <= ad.y && ad.x <= ad.z ? Vec3{1, 0, 0}
              : ad.y <= ad.z               ? Vec3{0, 1, 0}
                                           : Vec3{0, 0, 1};
  Quat rot = Quat::FromAxisAngle(dir, 2.0943951f);  // 120 degrees
  Vec3 aux = Cross(dir, axis);
  int side[3];
  for (int i = 0; i < 3; ++i, aux = rot.Rotate(aux)) side[i] = poly->AddVertex(cso.Support(aux));
  for (int end = 0; end < 2; ++end) {
    Vec3 y[4] = {poly->vertex(end).w, poly->vertex(side[0]).w, poly->vertex(side[1]).w,
                 poly->vertex(side[2]).w};
    if (OutsideVertex(y) < 0) {
      int idx[4] = {end, side[0], side[1], side[2]};
      return BuildTetrahedron(idx, poly);
    }
  }
  return false;
}

Start BuildInitialPolytope(const MinkowskiDifference& cso, const SupportPoint* simplex, int count,
                           Polytope* poly, int* touching_face) {
  const auto built = [](bool ok) { return ok ? Start::kPolytope : Start::kFailed; };
  for (int i = 0; i < count; ++i) poly->AddVertex(simplex[i]);
  if (count == 2) return built(BuildFromSegment(cso, poly));
  if (count == 3) {
    int idx[3] = {0, 1, 2};
    return BuildBipyramid(cso, idx, poly, touching_face);
  }
  if (count != 4) return Start::kFailed;
  Vec3 y[4] = {simplex[0].w, simplex[1].w, simplex[2].w, simplex[3].w};
  int outside = OutsideVertex(y);
  if (outside < 0) {
    int idx[4] = {0, 1, 2, 3};
    return built(BuildTetrahedron(idx, poly));
  }
  // Drop the vertex on the far side and blow up the remaining triangle.
  int idx[3], n = 0;
  for (int i = 0; i < 4; ++i) {
    if (i != outside) idx[n++] = i;
  }
  return BuildBipyramid(cso, idx, poly, touching_face);
}

// Weights of a, b, c for point p on a face whose corners are (nearly) collinear: p's clamped
// projection on the longest of the three edges (all weight on a when they coincide).
void DegenerateFaceWeights(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& p, float* u,
                           float* v, float* w) {
  const Vec3* corner[3] = {&a, &b, &c};
  float* weight[3] = {u, v, w};
  int from = 0;
  float longest = -1;
  for (int i = 0; i < 3; ++i) {
    const float l = LengthSq(*corner[(i + 1) % 3] - *corner[i]);
    if (l > longest) longest = l, from = i;
  }
  *u = *v = *w = 0;
  const int to = (from + 1) % 3;
  const Vec3 edge = *corner[to] - *corner[from];
  const float t = longest > 0 ? std::clamp(Dot(p - *corner[from], edge) / longest, 0.0f, 1.0f) : 0;
  *weight[from] = 1 - t;
  *weight[to] += t;
}

// Barycentric combination of the face's A and B points at the projection of the origin.
EpaResult ResultFromFace(const MinkowskiDifference& cso, const Polytope& poly, int f,
                         int iterations) {
  const Face& face = poly.face(f);
  const SupportPoint& p0 = poly.vertex(face.v[0]);
  const SupportPoint& p1 = poly.vertex(face.v[1]);
  const SupportPoint& p2 = poly.vertex(face.v[2]);
  Vec3 p = face.normal * face.dist;
  // Ericson 3.4: Cramer's rule on the 2x2 normal equations of p - p0 = v e1 + w e2.
  Vec3 e1 = p1.w - p0.w, e2 = p2.w - p0.w, ep = p - p0.w;
  float d11 = Dot(e1, e1), d12 = Dot(e1, e2), d22 = Dot(e2, e2);
  float dp1 = Dot(ep, e1), dp2 = Dot(ep, e2);
  const float det = d11 * d22 - d12 * d12;
  float u, v, w;
  if (det > 1e-12f * d11 * d22) {
    const float inv = 1.0f / det;
    v = (d22 * dp1 - d12 * dp2) * inv;
    w = (d11 * dp2 - d12 * dp1) * inv;
    u = 1 - v - w;
  } else {
    // A sliver face (its corners on a line, e.g. two support points of a hull 1e-5 apart): the
    // system is singular, so take p's clamped projection on the face's longest edge.
    DegenerateFaceWeights(p0.w, p1.w, p2.w, p, &u, &v, &w);
  }
  EpaResult r;
  r.ok = true;
  r.depth = face.dist > 0 ? face.dist : 0;
  r.normal = cso.ToWorldDir(face.normal);
  r.point_a = cso.ToWorldPoint(p0.a * u + p1.a * v + p2.a * w);
  r.point_b = cso.ToWorldPoint(p0.b * u + p1.b * v + p2.b * w);
  r.iterations = iterations;
  return r;
}

}  // namespace

EpaResult Epa(const MinkowskiDifference& cso, const SupportPoint* simplex, int count,
              const EpaSettings& settings) {
  Polytope poly;
  int touching_face = -1;
  switch (BuildInitialPolytope(cso, simplex, count, &poly, &touching_face)) {
    case Start::kFailed:
      return {};
    case Start::kTouching:
      return ResultFromFace(cso, poly, touching_face, 0);
    case Start::kPolytope:
      break;
  }
  float scale = 0;
  for (int i = 0; i < poly.num_vertices(); ++i) {
    scale = std::fmax(scale, LengthSq(poly.vertex(i).w));
  }
  scale = std::sqrt(scale);
  if (!poly.AllFacesContainOrigin(1e-5f * scale)) return {};
  float upper = std::numeric_limits<float>::infinity();
  int best = -1;
  int iter = 0;
  for (; iter < settings.max_iterations; ++iter) {
    best = poly.ClosestFace();
    const Face& face = poly.face(best);
    // The closest face's distance is a lower bound on the depth; the support distance along its
    // normal is an upper bound (the CSO's support plane in that direction). Stop on a small gap.
    SupportPoint p = cso.Support(face.normal);
    float support_dist = Dot(face.normal, p.w);
    upper = std::min(upper, support_dist);
    if (upper - face.dist <= settings.relative_tolerance * upper + 1e-7f * scale) break;
    const SupportPoint& v0 = poly.vertex(face.v[0]);
    if (p.w == v0.w || p.w == poly.vertex(face.v[1]).w || p.w == poly.vertex(face.v[2]).w) break;
    int w = poly.AddVertex(p);
    if (w < 0 || !poly.Expand(best, w)) break;
  }
  return ResultFromFace(cso, poly, best, iter);
}

}  // namespace voxcol
