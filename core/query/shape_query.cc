// Terrain sweeps, exact overlaps and contacts for convex shapes; see shape_query.h.
#include "core/query/shape_query.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/mesh/marching_cubes.h"
#include "core/narrowphase/cast_vs_triangle.h"
#include "core/narrowphase/collide_vs_triangle.h"
#include "core/narrowphase/gjk_raycast.h"

namespace voxcol {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// An edge whose two faces bend by less than this (cosine of ~5 degrees) is flat for contacts.
constexpr float kActiveEdgeCos = 0.996f;
// Barycentric weight below which a contact point counts as on an edge or vertex.
constexpr float kFeatureEpsilon = 1e-3f;
// Columns per axis of the water integration (12 x 12 vertical lines through the shape).
constexpr int kWaterColumns = 12;

std::string Num(float v) { return absl::StrCat(v); }

absl::Status CheckSize(const std::string& field, float v, float max, bool allow_zero) {
  if (!std::isfinite(v)) return absl::InvalidArgumentError(field + " must be finite");
  if (allow_zero ? v < 0 : v <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, allow_zero ? " must be >= 0" : " must be > 0", ", got ", Num(v)));
  }
  if (v > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " ", Num(v), " exceeds the configured maximum extent ", Num(max)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePosedShape(const World& world, const PosedShape& posed,
                                const ShapeQueryLimits& limits, const std::string& prefix) {
  const ConvexShape& s = *posed.shape;
  const std::string kind = prefix + "shape.";
  const float max = limits.max_extent;
  switch (s.type) {
    case ShapeType::kSphere:
      if (auto st = CheckSize(kind + "sphere.radius", s.convex_radius, max, false); !st.ok())
        return st;
      break;
    case ShapeType::kCapsule:
      if (auto st = CheckSize(kind + "capsule.radius", s.convex_radius, max, false); !st.ok())
        return st;
      if (auto st = CheckSize(kind + "capsule.half_height", s.half_height, max, true); !st.ok())
        return st;
      if (s.half_height + s.convex_radius > max) {
        return absl::InvalidArgumentError(absl::StrCat(
            kind, "capsule.half_height + radius exceeds the configured maximum extent ", Num(max)));
      }
      break;
    case ShapeType::kBox: {
      const Vec3 outer = s.half_extents + Vec3(s.convex_radius, s.convex_radius, s.convex_radius);
      for (int a = 0; a < 3; ++a) {
        if (auto st = CheckSize(kind + "box.half_extents", outer[a], max, false); !st.ok())
          return st;
      }
      if (!std::isfinite(s.convex_radius) || s.convex_radius < 0 ||
          std::min(s.half_extents.x, std::min(s.half_extents.y, s.half_extents.z)) < 0) {
        return absl::InvalidArgumentError(
            kind + "box.convex_radius must be >= 0 and at most the smallest half extent");
      }
      break;
    }
    case ShapeType::kConvexHull: {
      if (s.num_points < 1 || s.num_points > kMaxHullPoints || s.points == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            kind, "hull.points must hold 1..", kMaxHullPoints, " points, got ", s.num_points));
      }
      for (int i = 0; i < s.num_points; ++i) {
        const Vec3& p = s.points[i];
        if (!IsFinite(p)) {
          return absl::InvalidArgumentError(
              absl::StrCat(kind, "hull.points[", i, "] must be finite"));
        }
        for (int a = 0; a < 3; ++a) {
          if (std::fabs(p[a]) + std::max(s.convex_radius, 0.0f) > max) {
            return absl::InvalidArgumentError(absl::StrCat(
                kind, "hull.points[", i, "] lies farther than the configured maximum extent ",
                Num(max), " from the shape's origin"));
          }
        }
      }
      if (!std::isfinite(s.convex_radius) || s.convex_radius < 0) {
        return absl::InvalidArgumentError(kind + "hull.convex_radius must be finite and >= 0");
      }
      if (s.num_points < 4 && s.convex_radius == 0) {
        // A point, segment or triangle without rounding has no volume to collide with.
        return absl::InvalidArgumentError(
            kind + "hull.points: fewer than 4 points need convex_radius > 0");
      }
      break;
    }
    case ShapeType::kTriangle:
      return absl::InvalidArgumentError(kind + "kind: triangles are not a query shape");
  }
  if (!IsFinite(posed.pose.translation)) {
    return absl::InvalidArgumentError(prefix + "position must be finite (no NaN or infinity)");
  }
  if (!world.ContainsPoint(posed.pose.translation)) {
    const Vec3& p = posed.pose.translation;
    return absl::InvalidArgumentError(absl::StrCat(prefix, "position (", p.x, ", ", p.y, ", ", p.z,
                                                   ") is outside the world bounds"));
  }
  const Quat& q = posed.pose.rotation;
  const float norm = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
  if (!std::isfinite(norm) || std::fabs(norm - 1.0f) > 2e-3f) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, "rotation must be a unit quaternion, |q|^2 = ", Num(norm)));
  }
  return absl::OkStatus();
}

void ShapeSweepResult::Clear() {
  hit = initial_overlap = hits_truncated = false;
  depth = 0;
  first = {};
  hits.clear();
  load_status = absl::OkStatus();
}

void ContactResult::Clear() {
  manifolds.clear();
  buried = false;
  buried_depth = 0;
  buried_normal = {};
  water = {};
  load_status = absl::OkStatus();
}

int ContactResult::total_points() const {
  int n = 0;
  for (const ChunkManifold& m : manifolds) n += m.count;
  return n;
}

void ShapeOverlapResult::Clear() {
  touches_solid = touches_water = false;
  chunks.clear();
  depth = 0;
  normal = position = {};
  load_status = absl::OkStatus();
}

namespace {

// World-space bounding box of a posed shape (exact for its supports along the axes).
Aabb PosedBounds(const PosedShape& s) {
  Aabb box;
  for (int a = 0; a < 3; ++a) {
    Vec3 d;
    d[a] = 1;
    box.max[a] = s.Support(d)[a];
    d[a] = -1;
    box.min[a] = s.Support(d)[a];
  }
  return box;
}

Aabb Grow(const Aabb& b, float r) { return {b.min - Vec3(r, r, r), b.max + Vec3(r, r, r)}; }
Aabb Union(const Aabb& a, const Aabb& b) { return {Min(a.min, b.min), Max(a.max, b.max)}; }

// Integer key of a mesh vertex: its global fixed-point coordinates, equal for the same lattice
// edge in every chunk (see ChunkMesh::Vertex).
struct VertexKey {
  int32_t x, y, z;
  bool operator==(const VertexKey& o) const { return x == o.x && y == o.y && z == o.z; }
};

VertexKey KeyOf(const ChunkMesh& m, uint32_t tri, int k) {
  const QuantizedVertex& q = m.vertices[m.indices[3 * tri + k]];
  return {m.FixedOrigin(0) + q[0], m.FixedOrigin(1) + q[1], m.FixedOrigin(2) + q[2]};
}

// One terrain triangle near the query, decoded once.
struct Tri {
  const ChunkCollision* chunk;
  uint32_t index;
  Vec3 v[3];
  Vec3 normal;  // unit, toward empty space
  VertexKey key[3];
};

// Triangles gathered for one query, and the chunks they came from (kept alive).
struct Gathered {
  std::vector<ChunkCollisionPtr> chunks;
  std::vector<Tri> tris;
  absl::flat_hash_set<std::pair<const ChunkCollision*, uint32_t>> seen;  // sweeps only
  std::vector<uint32_t> scratch;
  uint32_t tests = 0;  // narrow tests, for stats

  void Clear() {
    chunks.clear();
    tris.clear();
    seen.clear();
    tests = 0;
  }
};

// Adds every triangle of the mesh chunks near `box` whose bounds overlap it, chunk by chunk in
// Y, Z, X order. Chunks whose broadphase record has no solid within a voxel hold no triangles and
// are skipped unread. `dedupe` drops triangles gathered before (sweeps gather box after box).
absl::Status Gather(const BroadphaseIndex& index, NarrowphaseCache& cache, const Aabb& box,
                    bool dedupe, Gathered* g, QueryStats* stats) {
  const World& world = index.world();
  const float inv = 1.0f / world.voxel_size();
  // Mesh chunk K covers voxel coordinates [8K + 0.5, 8K + 8.5] per axis.
  IntBox keys;
  for (int a = 0; a < 3; ++a) {
    keys.min[a] = int32_t(std::ceil((box.min[a] * inv - 8.5f) / kChunkSize));
    keys.max[a] = int32_t(std::floor((box.max[a] * inv - 0.5f) / kChunkSize)) + 1;
  }
  const IntBox range = MeshedChunkRange(world);
  for (int a = 0; a < 3; ++a) {
    keys.min[a] = std::max(keys.min[a], range.min[a]);
    keys.max[a] = std::min(keys.max[a], range.max[a]);
  }
  BroadphaseIndex::ReadScope scope(index);
  KdStats kd;
  uint32_t visited = 0, builds = 0;
  for (int32_t y = keys.min.y; y < keys.max.y; ++y)
    for (int32_t z = keys.min.z; z < keys.max.z; ++z)
      for (int32_t x = keys.min.x; x < keys.max.x; ++x) {
        const ChunkKey key{x, y, z};
        if (world.chunk_bounds().Contains(key) && !index.Get(key, scope).MayTouch(kClassSolid)) {
          continue;
        }
        if (absl::StatusOr<ChunkPtr> loaded = world.LoadChunk(key); !loaded.ok()) {
          return loaded.status();
        }
        bool built = false;
        ChunkCollisionPtr c = cache.Get(key, &built);
        ++visited;
        builds += built;
        if (c->tree.empty()) continue;
        g->scratch.clear();
        AllTrianglesCollector collector(&g->scratch);
        c->tree.CollideAabb(c->mesh, box, collector, &kd);
        if (g->scratch.empty()) continue;
        bool used = false;
        for (uint32_t t : g->scratch) {
          if (dedupe && !g->seen.insert({c.get(), t}).second) continue;
          Tri tri{c.get(),
                  t,
                  {c->mesh.Corner(t, 0), c->mesh.Corner(t, 1), c->mesh.Corner(t, 2)},
                  {},
                  {KeyOf(c->mesh, t, 0), KeyOf(c->mesh, t, 1), KeyOf(c->mesh, t, 2)}};
          tri.normal = Normalize(Cross(tri.v[1] - tri.v[0], tri.v[2] - tri.v[0]));
          g->tris.push_back(tri);
          used = true;
        }
        if (used) g->chunks.push_back(std::move(c));
      }
  if (stats) {
    stats->chunks_visited += visited;
    stats->cache_builds += builds;
    stats->tree_nodes_visited += kd.nodes_visited;
  }
  return absl::OkStatus();
}

// How far the shape reaches behind the plane of `t` (> 0: below it by that much).
float PlaneDepth(const PosedShape& s, const Tri& t) {
  return Dot(t.normal, t.v[0]) - Dot(t.normal, s.Support(-t.normal));
}

struct RawContact {
  Vec3 position;  // on the triangle
  Vec3 normal;    // from the terrain toward the shape
  float depth;
  uint32_t tri;  // index in Gathered::tris
};

// Closest-feature contact of the shape with one triangle when they are within `margin`. Contacts
// from behind the triangle (the shape's core inside the solid) push out through the front face.
bool ContactWithTriangle(const PosedShape& s, const Tri& t, float margin, RawContact* out) {
  TriangleCollision c;
  switch (s.shape->type) {
    case ShapeType::kSphere:
      c = CollideSphereVsTriangle(s.pose.translation, s.Radius(), t.v[0], t.v[1], t.v[2]);
      break;
    case ShapeType::kCapsule:
      c = CollideCapsuleVsTriangle(s, t.v[0], t.v[1], t.v[2]);
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

// Which edges of the gathered triangles are real edges of the solid (convex, bent by more than
// ~5 degrees) and which only split a flat or concave surface into triangles. Neighbours are found
// by a scan over the gathered triangles' vertex keys: a query gathers tens of triangles and asks
// about a few edges, so a scan beats building a hash table.
class EdgeTable {
 public:
  explicit EdgeTable(const std::vector<Tri>& tris) : tris_(tris) {}

  // Edge k of triangle i runs from corner k to corner k + 1.
  bool Active(uint32_t i, int k) const {
    const Tri& t = tris_[i];
    const VertexKey &a = t.key[k], &b = t.key[(k + 1) % 3];
    bool any_neighbour = false;
    for (uint32_t j = 0; j < tris_.size(); ++j) {
      const Tri& u = tris_[j];
      if (j == i || !Has(u, a) || !Has(u, b)) continue;
      any_neighbour = true;
      if (Dot(t.normal, u.normal) >= kActiveEdgeCos) continue;  // flat
      // The neighbour lies behind this face for a convex edge, in front of it for a concave one.
      const Vec3 centroid = (u.v[0] + u.v[1] + u.v[2]) * (1.0f / 3.0f);
      if (Dot(centroid - t.v[k], t.normal) < 0) return true;  // convex
    }
    // No neighbour: the surface ends here (world border), which is a real edge.
    return !any_neighbour;
  }

  // A vertex is a real corner of the solid when any edge that meets there is: a triangle can
  // touch a crease with one corner only, its own two edges both lying in the flat part.
  bool VertexActive(uint32_t i, int k) const {
    const VertexKey& v = tris_[i].key[k];
    for (uint32_t j = 0; j < tris_.size(); ++j) {
      const Tri& u = tris_[j];
      for (int c = 0; c < 3; ++c) {
        if (u.key[c] == v && (Active(j, c) || Active(j, (c + 2) % 3))) return true;
      }
    }
    return false;
  }

 private:
  static bool Has(const Tri& t, const VertexKey& v) {
    return t.key[0] == v || t.key[1] == v || t.key[2] == v;
  }

  const std::vector<Tri>& tris_;
};

// Internal-edge handling: a normal off the face normal comes from an edge or vertex of the
// triangle; when that feature is not an active edge of the solid, the face normal replaces it
// (with the depth measured along it). Returns true when the contact changed.
bool FixInternalEdge(const PosedShape& s, const Tri& t, uint32_t tri_index, const EdgeTable& edges,
                     bool recompute_depth, RawContact* c) {
  if (Dot(c->normal, t.normal) >= 0.99995f) return false;  // already the face normal (~0.6 deg)
  // Barycentric coordinates of the contact point.
  const Vec3 e1 = t.v[1] - t.v[0], e2 = t.v[2] - t.v[0], p = c->position - t.v[0];
  const Vec3 n = Cross(e1, e2);
  const float inv = 1.0f / LengthSq(n);
  const float w1 = Dot(Cross(p, e2), n) * inv, w2 = Dot(Cross(e1, p), n) * inv;
  const float w[3] = {1.0f - w1 - w2, w1, w2};
  int small = 0, mask = 0;
  for (int k = 0; k < 3; ++k) {
    if (w[k] < kFeatureEpsilon) ++small, mask |= 1 << k;
  }
  bool active;
  if (small == 0) {
    active = false;  // a face point: its normal is the face normal
  } else if (small == 1) {
    // On the edge opposite the small corner: corners k+1, k+2, i.e. edge (k + 1) % 3.
    int opposite = mask == 1 ? 0 : (mask == 2 ? 1 : 2);
    active = edges.Active(tri_index, (opposite + 1) % 3);
  } else {
    // At a vertex: the corner whose weight is not small.
    int v = (mask & 1) == 0 ? 0 : ((mask & 2) == 0 ? 1 : 2);
    active = edges.VertexActive(tri_index, v);
  }
  if (active) return false;
  c->normal = t.normal;
  if (recompute_depth) c->depth = PlaneDepth(s, t);
  return true;
}

// Contacts of the shape with every gathered triangle within `margin`, internal edges fixed.
// The shape's feature facing the triangle, as core points: the box face (4 corners) whose outward
// normal is most opposed to `n`, or the capsule's segment (2 points). 0 for other shapes. With
// out == nullptr only the count.
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

// Contacts of the shape with every gathered triangle within `margin`, internal edges fixed. With
// `face_points`, a contact along a triangle's face normal is replaced by the clipped incident
// feature of boxes and capsules (AddFacePoints), so a box resting on the ground reports its
// corners and a lying capsule both ends.
void CollectContacts(const PosedShape& s, Gathered& g, float margin, bool face_points,
                     std::vector<RawContact>* out) {
  out->clear();
  EdgeTable edges(g.tris);
  for (uint32_t i = 0; i < g.tris.size(); ++i) {
    RawContact c;
    ++g.tests;
    if (!ContactWithTriangle(s, g.tris[i], margin, &c)) continue;
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

// The shape's centre is buried in solid: the nearest way out along the six axes (distance to the
// surface plus the shape's reach behind its centre). False when the centre is not inside.
bool BuriedEscape(const BroadphaseIndex& index, NarrowphaseCache& cache, const PosedShape& s,
                  float* depth, Vec3* normal, absl::Status* status, QueryStats* stats) {
  const World& world = index.world();
  const Vec3& centre = s.pose.translation;
  if (!IsSolid(world.GetVoxel(world.VoxelAt(centre)))) return false;
  const Aabb bounds = world.world_bounds();
  float best = kInf;
  Vec3 best_dir;
  bool inside = false;
  std::vector<RayHit> hits;
  for (int axis = 0; axis < 6; ++axis) {
    Vec3 d;
    d[axis / 2] = axis % 2 == 0 ? 1.0f : -1.0f;
    const float room = axis % 2 == 0 ? bounds.max[axis / 2] - centre[axis / 2]
                                     : centre[axis / 2] - bounds.min[axis / 2];
    if (room <= 0) continue;
    RayInput ray{centre, d, std::min(room, 64.0f * world.voxel_size())};
    RaycastSmoothAll(index, cache, ray, RaySettings{}, &hits, stats);
    if (!hits.empty() && !hits[0].load_status.ok()) {
      *status = hits[0].load_status;
      return false;
    }
    if (hits.empty() || hits[0].front_face) {
      if (hits.empty() && axis == 2) inside = true;  // solid all the way up: still inside
      continue;
    }
    inside = true;  // the first crossing leaves the solid
    const float reach = Dot(-d, s.Support(-d) - centre);
    if (hits[0].distance + reach < best) best = hits[0].distance + reach, best_dir = d;
  }
  if (!inside) return false;
  if (best == kInf) {
    // Solid beyond the reach of every probe: out through the top, at least that far.
    best_dir = {0, 1, 0};
    best = 64.0f * world.voxel_size() + Dot(-best_dir, s.Support(-best_dir) - centre);
  }
  *depth = best;
  *normal = best_dir;
  return true;
}

// ---- Water ---------------------------------------------------------------------------------

// The part of the vertical line through (x, z) inside the shape: [*lo, *hi]. False when it misses.
bool VerticalSpan(const PosedShape& s, float x, float z, float* lo, float* hi) {
  const Vec3& c = s.pose.translation;
  const float r = s.Radius();
  switch (s.shape->type) {
    case ShapeType::kSphere: {
      const float d2 = (x - c.x) * (x - c.x) + (z - c.z) * (z - c.z);
      if (d2 > r * r) return false;
      const float h = std::sqrt(r * r - d2);
      *lo = c.y - h, *hi = c.y + h;
      return true;
    }
    case ShapeType::kCapsule: {
      // Union of the two end spheres and the cylinder between them; convex, so take the hull.
      Vec3 p0, p1;
      s.CapsuleSegment(&p0, &p1);
      float a = kInf, b = -kInf;
      for (const Vec3& p : {p0, p1}) {
        const float d2 = (x - p.x) * (x - p.x) + (z - p.z) * (z - p.z);
        if (d2 <= r * r) {
          const float h = std::sqrt(r * r - d2);
          a = std::min(a, p.y - h), b = std::max(b, p.y + h);
        }
      }
      const Vec3 u = p1 - p0;
      const float len2 = LengthSq(u);
      if (len2 > 0) {
        // Points L(y) = (x, y, z) with distance to the axis line <= r: |w - (w.u/|u|^2) u|^2 <= r^2
        // for w = L(y) - p0 = w0 + y e_y, a quadratic in y; then the axis parameter in [0, 1].
        const Vec3 w0{x - p0.x, -p0.y, z - p0.z};
        const Vec3 ey{0, 1, 0};
        const Vec3 q0 = w0 - u * (Dot(w0, u) / len2), q1 = ey - u * (u.y / len2);
        const float A = LengthSq(q1), B = 2 * Dot(q0, q1), C = LengthSq(q0) - r * r;
        if (A > 1e-12f) {
          const float disc = B * B - 4 * A * C;
          if (disc >= 0) {
            const float sq = std::sqrt(disc);
            float y0 = (-B - sq) / (2 * A), y1 = (-B + sq) / (2 * A);
            // Axis parameter s(y) = (w0.u + y u.y) / |u|^2 must lie in [0, 1].
            if (u.y != 0) {
              float s0 = -Dot(w0, u) / u.y, s1 = (len2 - Dot(w0, u)) / u.y;
              if (s0 > s1) std::swap(s0, s1);
              y0 = std::max(y0, s0), y1 = std::min(y1, s1);
            } else {
              const float sp = Dot(w0, u) / len2;
              if (sp < 0 || sp > 1) y1 = y0 - 1;
            }
            if (y0 <= y1) a = std::min(a, y0), b = std::max(b, y1);
          }
        }
      }
      if (a > b) return false;
      *lo = a, *hi = b;
      return true;
    }
    case ShapeType::kBox:
      if (r == 0) {
        // Slabs in the box frame.
        const Vec3 o = s.pose.ApplyInverse({x, 0, z});
        const Vec3 d = InverseRotate(s.pose.rotation, {0, 1, 0});
        float t0 = -kInf, t1 = kInf;
        for (int a = 0; a < 3; ++a) {
          const float h = s.shape->half_extents[a];
          if (std::fabs(d[a]) < 1e-12f) {
            if (std::fabs(o[a]) > h) return false;
            continue;
          }
          float ta = (-h - o[a]) / d[a], tb = (h - o[a]) / d[a];
          if (ta > tb) std::swap(ta, tb);
          t0 = std::max(t0, ta), t1 = std::min(t1, tb);
        }
        if (t0 > t1) return false;
        *lo = t0, *hi = t1;
        return true;
      }
      [[fallthrough]];
    default: {
      // Rounded boxes and hulls: cast a point down and up through the shape.
      const Aabb b = PosedBounds(s);
      const float span = b.max.y - b.min.y + 2.0f;
      const Vec3 origin{0, 0, 0};
      const ConvexShape point = MakeConvexHull(&origin, 1);
      const CastResult down = GjkRaycast({&point, {{}, {x, b.max.y + 1.0f, z}}}, {0, -span, 0}, s);
      if (!down.hit) return false;
      const CastResult up = GjkRaycast({&point, {{}, {x, b.min.y - 1.0f, z}}}, {0, span, 0}, s);
      if (!up.hit) return false;
      *hi = b.max.y + 1.0f - down.fraction * span;
      *lo = b.min.y - 1.0f + up.fraction * span;
      return *lo <= *hi;
    }
  }
}

bool MayTouchWater(const BroadphaseIndex& index, const Aabb& box) {
  const World& world = index.world();
  const IntBox voxels = OverlapVoxelRange(world, box);
  if (voxels.Empty()) return false;
  const ChunkKey lo = ChunkOf(voxels.min), hi = ChunkOf(voxels.max - Int3{1, 1, 1});
  BroadphaseIndex::ReadScope scope(index);
  for (int32_t y = lo.y; y <= hi.y; ++y)
    for (int32_t z = lo.z; z <= hi.z; ++z)
      for (int32_t x = lo.x; x <= hi.x; ++x) {
        if (index.Get({x, y, z}, scope).MayTouch(kClassWater)) return true;
      }
  return false;
}

// Integrates the shape's volume under water over kWaterColumns^2 vertical lines: each line's span
// inside the shape is intersected with the water of its voxel column. `water_chunks`, if set,
// receives the chunks whose water the shape reaches.
absl::Status IntegrateWater(const BroadphaseIndex& index, const PosedShape& s, WaterContact* out,
                            std::vector<ChunkKey>* water_chunks) {
  *out = {};
  const World& world = index.world();
  const Aabb bounds = PosedBounds(s);
  if (!MayTouchWater(index, bounds)) return absl::OkStatus();
  // Load what the columns read first, so a corrupt record is an error rather than dry land, and
  // keep the chunks at hand: a voxel read is then an array lookup, not a world lookup under a lock.
  const IntBox voxels = OverlapVoxelRange(world, bounds);
  const ChunkKey lo_key = ChunkOf(voxels.min);
  const ChunkKey hi_key = ChunkOf(voxels.max - Int3{1, 1, 1}) + Int3{0, 1, 0};  // + the layer above
  const Int3 span = hi_key - lo_key + Int3{1, 1, 1};
  std::vector<ChunkPtr> window(size_t(span.x) * span.y * span.z);
  for (int32_t y = 0; y < span.y; ++y)
    for (int32_t z = 0; z < span.z; ++z)
      for (int32_t x = 0; x < span.x; ++x) {
        const ChunkKey key = lo_key + Int3{x, y, z};
        if (!world.chunk_bounds().Contains(key)) continue;
        absl::StatusOr<ChunkPtr> c = world.LoadChunk(key);
        if (!c.ok()) return c.status();
        window[(size_t(y) * span.z + z) * span.x + x] = *std::move(c);
      }
  const IntBox vb = world.voxel_bounds();
  auto voxel_at = [&](const Int3& v) -> Voxel {
    if (!vb.Contains(v)) return Voxel{};
    const Int3 c = ChunkOf(v) - lo_key;
    if (c.x < 0 || c.y < 0 || c.z < 0 || c.x >= span.x || c.y >= span.y || c.z >= span.z) {
      return world.GetVoxel(v);  // the walk up to a distant surface
    }
    return window[(size_t(c.y) * span.z + c.z) * span.x + c.x]->At(LocalOf(v));
  };
  const float h = world.voxel_size(), inv_h = 1.0f / h;
  const float dx = (bounds.max.x - bounds.min.x) / kWaterColumns;
  const float dz = (bounds.max.z - bounds.min.z) / kWaterColumns;
  double total = 0, wet = 0;
  double cx = 0, cy = 0, cz = 0;
  float surface = -kInf;
  auto water_top = [&](const Int3& v) -> float {  // top of the water in voxel v, or -inf
    const Voxel x = voxel_at(v);
    if (x.material != kMaterialWater || x.occupancy == 0) return -kInf;
    const Voxel above = voxel_at(v + Int3{0, 1, 0});
    const float fill = above.material == kMaterialWater ? 1.0f : x.occupancy / 255.0f;
    return (float(v.y) + fill) * h;
  };
  // Many sample lines share a voxel column (a character-sized shape spans a few): read each
  // column's water once, for the shape's height range, unless the shape is so large that the
  // cache would outgrow the reads it saves.
  const int32_t cx0 = int32_t(std::floor(bounds.min.x * inv_h)),
                cz0 = int32_t(std::floor(bounds.min.z * inv_h));
  const int32_t nx = int32_t(std::floor(bounds.max.x * inv_h)) - cx0 + 1;
  const int32_t nz = int32_t(std::floor(bounds.max.z * inv_h)) - cz0 + 1;
  const int32_t yb0 = std::max(vb.min.y, int32_t(std::floor(bounds.min.y * inv_h)));
  const int32_t yb1 = std::min(vb.max.y - 1, int32_t(std::floor(bounds.max.y * inv_h)));
  const int32_t ny = yb1 - yb0 + 1;
  const bool cached = ny > 0 && int64_t(nx) * nz * ny <= 4096;
  thread_local std::vector<float> tops;
  thread_local std::vector<uint8_t> ready;
  if (cached) {
    tops.resize(size_t(nx) * nz * ny);
    ready.assign(size_t(nx) * nz, 0);
  }
  auto top_at = [&](int32_t vx, int32_t vy, int32_t vz) -> float {
    const int32_t c = (vz - cz0) * nx + (vx - cx0);
    if (!cached || vy < yb0 || vy > yb1 || vx < cx0 || vx >= cx0 + nx || vz < cz0 ||
        vz >= cz0 + nz) {
      return water_top({vx, vy, vz});
    }
    if (!ready[c]) {
      for (int32_t y = yb0; y <= yb1; ++y)
        tops[size_t(c) * ny + (y - yb0)] = water_top({vx, y, vz});
      ready[c] = 1;
    }
    return tops[size_t(c) * ny + (vy - yb0)];
  };
  if (cached) {
    // Dry land (the common case next to lakes, where the masks said "maybe"): no water voxel in
    // the shape's box, no integration.
    bool any = false;
    for (int32_t vz = cz0; vz < cz0 + nz && !any; ++vz)
      for (int32_t vx = cx0; vx < cx0 + nx && !any; ++vx)
        for (int32_t vy = yb0; vy <= yb1 && !any; ++vy) any = top_at(vx, vy, vz) != -kInf;
    if (!any) return absl::OkStatus();
  }
  for (int i = 0; i < kWaterColumns; ++i)
    for (int k = 0; k < kWaterColumns; ++k) {
      const float x = bounds.min.x + (i + 0.5f) * dx, z = bounds.min.z + (k + 0.5f) * dz;
      float lo, hi;
      if (!VerticalSpan(s, x, z, &lo, &hi)) continue;
      total += hi - lo;
      const int32_t vx = int32_t(std::floor(x * inv_h)), vz = int32_t(std::floor(z * inv_h));
      if (vx < vb.min.x || vx >= vb.max.x || vz < vb.min.z || vz >= vb.max.z) continue;
      const int32_t y0 = std::max(vb.min.y, int32_t(std::floor(lo * inv_h)));
      const int32_t y1 = std::min(vb.max.y - 1, int32_t(std::floor(hi * inv_h)));
      for (int32_t vy = y0; vy <= y1; ++vy) {
        const Int3 v{vx, vy, vz};
        const float top = top_at(vx, vy, vz);
        if (top == -kInf) continue;
        const float a = std::max(lo, vy * h), b = std::min(hi, top);
        if (b <= a) continue;
        wet += b - a;
        cx += double(x) * (b - a), cy += double(a + b) * 0.5 * (b - a), cz += double(z) * (b - a);
        float column_top = top;
        if (vy == y1 && top >= (vy + 1) * h) {
          // Water goes on above the shape: follow it up to its surface (bounded walk).
          for (int32_t up = vy + 1; up < std::min(vb.max.y, vy + 257); ++up) {
            const float t = top_at(vx, up, vz);
            if (t == -kInf) break;
            column_top = t;
          }
        }
        surface = std::max(surface, column_top);
        if (water_chunks && (water_chunks->empty() || water_chunks->back() != ChunkOf(v))) {
          water_chunks->push_back(ChunkOf(v));
        }
      }
    }
  if (wet <= 0 || total <= 0) return absl::OkStatus();
  out->in_water = true;
  out->submerged_fraction = float(std::min(1.0, wet / total));
  out->submerged_volume = float(wet * dx * dz);
  out->surface_height = surface;
  out->center_of_buoyancy = Vec3(float(cx / wet), float(cy / wet), float(cz / wet));
  return absl::OkStatus();
}

bool ChunkOrder(const ChunkKey& a, const ChunkKey& b) {
  return a.y != b.y ? a.y < b.y : (a.z != b.z ? a.z < b.z : a.x < b.x);
}

// Thread-local buffers: queries run on worker threads and must not allocate in steady state.
struct Scratch {
  Gathered gathered;
  std::vector<RawContact> contacts;
  std::vector<ContactPoint> points;
};
Scratch& LocalScratch() {
  thread_local Scratch scratch;
  return scratch;
}

}  // namespace

void ShapeContacts(const BroadphaseIndex& index, NarrowphaseCache& cache, const PosedShape& shape,
                   const ContactSettings& settings, ContactResult* result, QueryStats* stats) {
  result->Clear();
  Scratch& sc = LocalScratch();
  Gathered& g = sc.gathered;
  g.Clear();
  const float h = index.world().voxel_size();
  const Aabb box = Grow(PosedBounds(shape), settings.margin + 1e-3f * h);
  if (absl::Status st = Gather(index, cache, box, false, &g, stats); !st.ok()) {
    result->load_status = st;
    return;
  }
  CollectContacts(shape, g, settings.margin, true, &sc.contacts);
  if (stats) stats->triangles_tested += g.tests;
  // Tris (and so contacts) come chunk by chunk in Y, Z, X order: reduce each run.
  for (size_t begin = 0; begin < sc.contacts.size();) {
    const ChunkCollision* chunk = g.tris[sc.contacts[begin].tri].chunk;
    size_t end = begin;
    size_t deepest = begin;
    sc.points.clear();
    for (; end < sc.contacts.size() && g.tris[sc.contacts[end].tri].chunk == chunk; ++end) {
      const RawContact& c = sc.contacts[end];
      sc.points.push_back({c.position, c.normal, c.depth});
      if (c.depth > sc.contacts[deepest].depth) deepest = end;
    }
    int kept[kMaxManifoldPoints];
    const int n = ReduceContactIndices(sc.points.data(), int(sc.points.size()),
                                       sc.contacts[deepest].normal, kept);
    ChunkManifold& m = result->manifolds.emplace_back();
    m.chunk = chunk->key;
    for (int i = 0; i < n; ++i) {
      const RawContact& c = sc.contacts[begin + size_t(kept[i])];
      const Tri& t = g.tris[c.tri];
      m.points[m.count++] = {c.position, c.normal, c.depth, t.chunk->mesh.materials[t.index],
                             int32_t(t.index)};
    }
    begin = end;
  }
  if (sc.contacts.empty()) {
    absl::Status st;
    result->buried = BuriedEscape(index, cache, shape, &result->buried_depth,
                                  &result->buried_normal, &st, stats);
    if (!st.ok()) {
      result->load_status = st;
      return;
    }
  }
  if (settings.water) {
    if (absl::Status st = IntegrateWater(index, shape, &result->water, nullptr); !st.ok()) {
      result->load_status = st;
    }
  }
}

void OverlapPosedShape(const BroadphaseIndex& index, NarrowphaseCache& cache,
                       const PosedShape& shape, bool want_penetration, ShapeOverlapResult* result,
                       QueryStats* stats) {
  result->Clear();
  Scratch& sc = LocalScratch();
  Gathered& g = sc.gathered;
  g.Clear();
  const float h = index.world().voxel_size();
  const Aabb box = Grow(PosedBounds(shape), 1e-3f * h);
  if (absl::Status st = Gather(index, cache, box, false, &g, stats); !st.ok()) {
    result->load_status = st;
    return;
  }
  CollectContacts(shape, g, 0.0f, false, &sc.contacts);
  if (stats) stats->triangles_tested += g.tests;
  const RawContact* deepest = nullptr;
  for (const RawContact& c : sc.contacts) {
    if (c.depth <= 0) continue;
    result->touches_solid = true;
    const ChunkKey key = g.tris[c.tri].chunk->key;
    if (result->chunks.empty() || result->chunks.back().key != key) {
      result->chunks.push_back({key, kClassSolid});
    }
    if (!deepest || c.depth > deepest->depth) deepest = &c;
  }
  if (deepest && want_penetration) {
    result->depth = deepest->depth;
    result->normal = deepest->normal;
    result->position = deepest->position;
  }
  if (!result->touches_solid) {
    float depth;
    Vec3 normal;
    absl::Status st;
    if (BuriedEscape(index, cache, shape, &depth, &normal, &st, stats)) {
      result->touches_solid = true;
      result->chunks.push_back(
          {ChunkOf(index.world().VoxelAt(shape.pose.translation)), kClassSolid});
      if (want_penetration) {
        result->depth = depth;
        result->normal = normal;
        result->position = shape.pose.translation;
      }
    }
    if (!st.ok()) {
      result->load_status = st;
      return;
    }
  }
  WaterContact water;
  std::vector<ChunkKey> water_chunks;
  if (absl::Status st = IntegrateWater(index, shape, &water, &water_chunks); !st.ok()) {
    result->load_status = st;
    return;
  }
  result->touches_water = water.in_water;
  for (const ChunkKey& key : water_chunks) {
    auto it = std::find_if(result->chunks.begin(), result->chunks.end(),
                           [&](const TouchedChunk& t) { return t.key == key; });
    if (it != result->chunks.end()) {
      it->classes |= kClassWater;
    } else {
      result->chunks.push_back({key, kClassWater});
    }
  }
  std::sort(result->chunks.begin(), result->chunks.end(),
            [](const TouchedChunk& a, const TouchedChunk& b) { return ChunkOrder(a.key, b.key); });
}

void SweepShape(const BroadphaseIndex& index, NarrowphaseCache& cache, const ShapeSweepInput& input,
                const ShapeSweepSettings& settings, ShapeSweepResult* result, QueryStats* stats) {
  result->Clear();
  const World& world = index.world();
  const float h = world.voxel_size();
  const PosedShape& s = input.shape;
  const Vec3 dir = Normalize(input.direction);
  const float length = input.distance;
  const Vec3 translation = dir * length;
  Scratch& sc = LocalScratch();
  Gathered& g = sc.gathered;
  g.Clear();

  // 1. The start pose: penetrating deeper than the tolerance is an initial overlap; touching
  //    triangles block only motion into them.
  const Aabb start_box = Grow(PosedBounds(s), 1e-3f * h);
  if (absl::Status st = Gather(index, cache, start_box, true, &g, stats); !st.ok()) {
    result->load_status = st;
    return;
  }
  CollectContacts(s, g, 1e-4f * h, false, &sc.contacts);
  const RawContact* deepest = nullptr;
  for (const RawContact& c : sc.contacts) {
    if (!deepest || c.depth > deepest->depth) deepest = &c;
  }
  auto make_hit = [&](const Tri& t, float distance, const Vec3& position, const Vec3& normal) {
    ShapeHit hit;
    hit.distance = distance;
    hit.position = position;
    hit.normal = normal;
    hit.material = t.chunk->mesh.materials[t.index];
    hit.chunk = t.chunk->key;
    hit.triangle = int32_t(t.index);
    return hit;
  };
  auto finish = [&]() {
    if (stats) stats->triangles_tested += g.tests;
  };
  if (deepest && deepest->depth > settings.overlap_tolerance) {
    result->hit = result->initial_overlap = true;
    result->depth = deepest->depth;
    result->first = make_hit(g.tris[deepest->tri], 0, deepest->position, deepest->normal);
    if (settings.collection == HitCollection::kAll) result->hits.push_back(result->first);
    return finish();
  }
  if (!deepest) {
    float depth;
    Vec3 normal;
    absl::Status st;
    if (BuriedEscape(index, cache, s, &depth, &normal, &st, stats)) {
      result->hit = result->initial_overlap = true;
      result->depth = depth;
      result->first.normal = normal;
      result->first.position = s.pose.translation;
      result->first.chunk = ChunkOf(world.VoxelAt(s.pose.translation));
      if (settings.collection == HitCollection::kAll) result->hits.push_back(result->first);
      return finish();
    }
    if (!st.ok()) {
      result->load_status = st;
      return finish();
    }
  }
  // Touching contacts the motion pushes into stop it at once.
  std::vector<ShapeHit>& hits = result->hits;
  float best = kInf;
  auto add = [&](const ShapeHit& hit) {
    if (settings.collection == HitCollection::kAll) {
      hits.push_back(hit);
    } else if (hit.distance < best) {
      best = hit.distance;
      result->first = hit;
    }
    result->hit = true;
  };
  absl::flat_hash_set<uint32_t> touching;  // gathered indices handled by the start contacts
  for (const RawContact& c : sc.contacts) {
    touching.insert(c.tri);
    if (Dot(c.normal, dir) < -1e-4f) {
      add(make_hit(g.tris[c.tri], 0, c.position, c.normal));
    }
  }
  if (result->hit && settings.collection != HitCollection::kAll) return finish();

  // 2. Cast against the triangles along the way, one box of at most a chunk's length at a time.
  EdgeTable edges(g.tris);
  const float step = kChunkSize * h;
  const int steps = std::max(1, int(std::ceil(length / step)));
  size_t next = 0;  // first gathered triangle not yet cast
  for (int k = 0; k < steps; ++k) {
    const float t0 = k * step, t1 = std::min(length, (k + 1) * step);
    if (k > 0) {
      PosedShape a = s, b = s;
      a.pose.translation = s.pose.translation + dir * t0;
      b.pose.translation = s.pose.translation + dir * t1;
      const Aabb box = Grow(Union(PosedBounds(a), PosedBounds(b)), 1e-3f * h);
      if (absl::Status st = Gather(index, cache, box, true, &g, stats); !st.ok()) {
        result->load_status = st;
        return finish();
      }
    } else {
      PosedShape b = s;
      b.pose.translation = s.pose.translation + dir * t1;
      const Aabb box = Grow(Union(PosedBounds(s), PosedBounds(b)), 1e-3f * h);
      if (absl::Status st = Gather(index, cache, box, true, &g, stats); !st.ok()) {
        result->load_status = st;
        return finish();
      }
    }
    for (; next < g.tris.size(); ++next) {
      const Tri& t = g.tris[next];
      // One-sided: only faces the motion runs into can stop it.
      if (Dot(dir, t.normal) >= 0 || touching.contains(uint32_t(next))) continue;
      ++g.tests;
      CastResult r = s.shape->type == ShapeType::kSphere
                         ? CastSphereVsTriangle(s.pose.translation, s.Radius(), translation, t.v[0],
                                                t.v[1], t.v[2])
                         : CastConvexVsTriangle(s, translation, t.v[0], t.v[1], t.v[2]);
      if (!r.hit) continue;
      if (r.initially_overlapping) {
        RawContact c;
        if (!ContactWithTriangle(s, t, 1e-4f * h, &c) || Dot(c.normal, dir) >= -1e-4f) continue;
        add(make_hit(t, 0, c.position, c.normal));
      } else {
        if (Dot(r.normal, t.normal) < 0) continue;  // reached from behind: leaving the solid
        RawContact c{r.point, r.normal, 0, uint32_t(next)};
        FixInternalEdge(s, t, uint32_t(next), edges, false, &c);
        add(make_hit(t, r.fraction * length, c.position, c.normal));
      }
      if (settings.collection == HitCollection::kAny) return finish();
    }
    // Everything that can be hit before t1 has been gathered by now.
    if (settings.collection == HitCollection::kClosest && best <= t1) break;
  }
  if (settings.collection == HitCollection::kAll && !hits.empty()) {
    std::sort(hits.begin(), hits.end(),
              [](const ShapeHit& a, const ShapeHit& b) { return a.distance < b.distance; });
    if (hits.size() > settings.max_hits) {
      hits.resize(settings.max_hits);
      result->hits_truncated = true;
    }
    result->first = hits.front();
  }
  finish();
}

}  // namespace voxcol
