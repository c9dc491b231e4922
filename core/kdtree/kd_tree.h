// Loose kD-tree over one chunk mesh, as described in "Voxel terrain: physics" (Kapoulkine, Roblox;
// shared/seeds/roblox-voxel-terrain-physics): 12-byte nodes with two split planes per branch,
// leaves of at most two triangles, bounded depth, iterative traversal with a fixed-size stack, and
// a stored tree AABB for early rejection.
//
// A branch on axis a has children child and child + 1: every triangle of the left child has
// max[a] <= split[0], every triangle of the right child has min[a] >= split[1]. The planes are
// loose: split[0] may exceed split[1] (the halves overlap) or be below it (a gap).
#pragma once

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/geometry/ray_aabb.h"
#include "core/geometry/ray_triangle.h"
#include "core/geometry/vec3.h"
#include "core/kdtree/collectors.h"
#include "core/mesh/chunk_mesh.h"

namespace voxcol {

// 12 bytes. Branch: a, b = bits of split[0], split[1]; meta = axis | child << 2.
// Leaf: a, b = triangle indices; meta = 3 | count << 2 (count 0..2).
struct KdNode {
  uint32_t a = 0, b = 0;
  uint32_t meta = 3;

  static constexpr uint32_t kLeafAxis = 3;
  uint32_t axis() const { return meta & 3; }
  bool is_leaf() const { return axis() == kLeafAxis; }
  uint32_t child() const { return meta >> 2; }  // branch
  uint32_t count() const { return meta >> 2; }  // leaf
  float split(int i) const {
    float f;
    std::memcpy(&f, &a + i, sizeof(f));  // a and b are adjacent
    return f;
  }
};
static_assert(sizeof(KdNode) == 12, "nodes are 12 bytes");

// What a tree query cost.
struct KdStats {
  uint32_t nodes_visited = 0;
  uint32_t triangles_tested = 0;
};

// A ray prepared once and reused for every chunk tree it visits (no per-query allocation).
struct KdRay {
  Vec3 origin;     // world units
  Vec3 direction;  // need not be unit length; t is in multiples of it
  Vec3 inv_direction;
  WatertightRay watertight;
  float t_min = 0;  // hits before t_min are ignored

  KdRay() = default;
  // Precondition: direction finite and non-zero. Components below 1e-20 of the largest become 0 so
  // that plane crossings never compute 0 * infinity.
  KdRay(const Vec3& o, const Vec3& d, float tmin = 0)
      : origin(o), direction(Flush(d)), t_min(tmin) {
    inv_direction = Vec3(1.0f / direction.x, 1.0f / direction.y, 1.0f / direction.z);
    watertight = WatertightRay(o, direction);
  }

 private:
  static Vec3 Flush(Vec3 d) {
    float m = std::max(std::fabs(d.x), std::max(std::fabs(d.y), std::fabs(d.z))) * 1e-20f;
    for (int a = 0; a < 3; ++a) {
      if (std::fabs(d[a]) < m) d[a] = 0.0f;
    }
    return d;
  }
};

// The watertight ray test against triangles of one mesh, decoding each corner straight from its
// 16-bit fixed-point value into the ray's permuted frame. Bit-identical to
// IntersectRayTriangle(r, mesh.Corner(tri, 0..2)): Vertex(i)[a] = fl(fl(origin[a] + q[a] / 4096) *
// voxel_size), and since origin[a] * 4096 + q[a] is an integer and scaling by 4096 commutes with
// rounding, that equals fl(float(origin[a] * 4096 + q[a]) * (voxel_size / 4096)).
class MeshRayFrame {
 public:
  MeshRayFrame(const ChunkMesh& mesh, const WatertightRay& r)
      : r_(r), scale_(mesh.voxel_size * kVertexQuantum) {
    const int k[3] = {r.kx, r.ky, r.kz};
    for (int i = 0; i < 3; ++i) {
      axis_[i] = k[i];
      base_[i] = mesh.origin[k[i]] * kVertexScale;
      origin_[i] = Component(r.origin, k[i]);
    }
  }

  bool Intersect(const ChunkMesh& mesh, uint32_t tri, float t_max, float* t) const {
    const uint16_t* idx = &mesh.indices[3 * size_t(tri)];
    const uint16_t* a = mesh.vertices[idx[0]].data();
    const uint16_t* b = mesh.vertices[idx[1]].data();
    const uint16_t* c = mesh.vertices[idx[2]].data();
    return IntersectRayTriangleRelative(r_, Rel(a, 0), Rel(a, 1), Rel(a, 2), Rel(b, 0), Rel(b, 1),
                                        Rel(b, 2), Rel(c, 0), Rel(c, 1), Rel(c, 2), t_max, t);
  }

 private:
  static constexpr int32_t kVertexScale = 4096;  // 1 / kVertexQuantum
  float Rel(const uint16_t* q, int i) const {
    return float(base_[i] + int32_t(q[axis_[i]])) * scale_ - origin_[i];
  }

  const WatertightRay& r_;
  float scale_;
  int axis_[3];
  int32_t base_[3];
  float origin_[3];
};
static_assert(1.0f / kVertexQuantum == 4096.0f, "MeshRayFrame assumes 4096 steps per voxel");

struct KdBuildScratch;

class KdTree {
 public:
  // Deepest tree Build can produce for meshes up to kMaxTriangles (each split leaves >= 25% of the
  // triangles on each side: depth <= log_{4/3}(n / 2) + 1).
  static constexpr int kMaxDepth = 48;
  static constexpr uint32_t kMaxTriangles = 1u << 20;

  // Builds the tree over every triangle of `mesh` (empty mesh -> empty tree). `scratch` may be
  // null; pass one to reuse its buffers across builds. Precondition: triangle_count() <=
  // kMaxTriangles.
  void Build(const ChunkMesh& mesh, KdBuildScratch* scratch = nullptr);

  bool empty() const { return nodes_.empty(); }
  const Aabb& bounds() const { return bounds_; }
  int depth() const { return depth_; }
  const std::vector<KdNode>& nodes() const { return nodes_; }
  size_t DataBytes() const { return nodes_.size() * sizeof(KdNode) + sizeof(Aabb); }

  // Reports to `collector` every triangle of `mesh` (the mesh the tree was built from) whose
  // vertex AABB overlaps `box` (closed boxes). Collector: done(), AddTriangle(uint32_t).
  template <typename Collector>
  void CollideAabb(const ChunkMesh& mesh, const Aabb& box, Collector& collector,
                   KdStats* stats) const;

  // Reports ray hits with t in [ray.t_min, collector.early_out()], visiting nodes front to back and
  // skipping everything beyond the early-out distance. Collector: early_out(), AddHit().
  template <typename Collector>
  void CastRay(const ChunkMesh& mesh, const KdRay& ray, Collector& collector, KdStats* stats) const;

  // Checks the tree invariants against the mesh (every triangle in exactly one leaf, planes bound
  // their subtrees, depth bound). For tests and VOXCOL_VALIDATE builds; O(n log n).
  bool Validate(const ChunkMesh& mesh) const;

 private:
  std::vector<KdNode> nodes_;
  Aabb bounds_;
  int depth_ = 0;
};

// Reusable build buffers.
struct KdBuildScratch {
  std::vector<uint32_t> order;
  std::vector<Aabb> boxes;
  std::vector<float> centers;  // 3 per triangle
};

// Closed AABB of triangle `tri` of `mesh`.
inline Aabb TriangleBounds(const ChunkMesh& mesh, uint32_t tri) {
  const Vec3 &a = mesh.Corner(tri, 0), &b = mesh.Corner(tri, 1), &c = mesh.Corner(tri, 2);
  return {Min(a, Min(b, c)), Max(a, Max(b, c))};
}

template <typename Collector>
void KdTree::CollideAabb(const ChunkMesh& mesh, const Aabb& box, Collector& collector,
                         KdStats* stats) const {
  if (nodes_.empty() || !bounds_.Overlaps(box)) return;
  uint32_t stack[kMaxDepth + 2];
  int sp = 0;
  stack[sp++] = 0;
  uint32_t visited = 0, tested = 0;
  while (sp > 0 && !collector.done()) {
    const KdNode& node = nodes_[stack[--sp]];
    ++visited;
    if (node.is_leaf()) {
      for (uint32_t i = 0; i < node.count(); ++i) {
        uint32_t tri = i == 0 ? node.a : node.b;
        ++tested;
        if (TriangleBounds(mesh, tri).Overlaps(box)) collector.AddTriangle(tri);
      }
      continue;
    }
    const int axis = int(node.axis());
    if (node.split(1) <= Component(box.max, axis)) stack[sp++] = node.child() + 1;
    if (node.split(0) >= Component(box.min, axis)) stack[sp++] = node.child();
  }
  if (stats) {
    stats->nodes_visited += visited;
    stats->triangles_tested += tested;
  }
}

template <typename Collector>
void KdTree::CastRay(const ChunkMesh& mesh, const KdRay& ray, Collector& collector,
                     KdStats* stats) const {
  if (nodes_.empty()) return;
  // Float error of a plane crossing: relative to t, plus the rounding of coordinates of this size.
  const float abs_eps = 1e-6f * (std::fabs(ray.origin.x) + std::fabs(ray.origin.y) +
                                 std::fabs(ray.origin.z) + bounds_.max.x - bounds_.min.x + 1.0f);
  auto widen = [abs_eps](float t) { return abs_eps + 1e-5f * std::fabs(t); };
  float t0 = ray.t_min, t1 = collector.early_out();
  Aabb grown{bounds_.min - Vec3(abs_eps, abs_eps, abs_eps),
             bounds_.max + Vec3(abs_eps, abs_eps, abs_eps)};
  if (!ClipRayToAabb(ray.origin, ray.inv_direction, grown, &t0, &t1)) return;
  const MeshRayFrame frame(mesh, ray.watertight);
  struct Entry {
    uint32_t node;
    float t0, t1;
  };
  Entry stack[kMaxDepth + 2];  // far children waiting; the near child is descended directly
  int sp = 0;
  uint32_t index = 0;
  float e0 = t0 - widen(t0), e1 = t1 + widen(t1);
  uint32_t visited = 0, tested = 0;
  for (;;) {
    if (e0 <= collector.early_out()) {
      const KdNode& node = nodes_[index];
      ++visited;
      if (!node.is_leaf()) {
        const int axis = int(node.axis());
        const float o = Component(ray.origin, axis), d = Component(ray.direction, axis);
        const float s0 = node.split(0), s1 = node.split(1);
        const uint32_t left = node.child(), right = left + 1;
        uint32_t near = left, far = right;
        float near_t1 = e1, far_t0 = e0;
        bool near_ok, far_ok;
        if (d == 0.0f) {
          // Parallel to the planes: each side keeps the whole interval if the origin is inside it.
          near_ok = o <= s0;
          far_ok = o >= s1;
        } else {
          const float inv = Component(ray.inv_direction, axis);
          const float tl = (s0 - o) * inv, tr = (s1 - o) * inv;  // crossings of the two planes
          // Moving +: the left half-space is left at tl, the right one entered at tr; - mirrored.
          const float near_exit = d > 0 ? tl : tr, far_entry = d > 0 ? tr : tl;
          if (d < 0) near = right, far = left;
          far_t0 = std::max(e0, far_entry - widen(far_entry));
          near_t1 = std::min(e1, near_exit + widen(near_exit));
          near_ok = near_t1 >= e0;
          far_ok = far_t0 <= e1;
        }
        if (near_ok) {
          if (far_ok) stack[sp++] = {far, far_t0, e1};
          index = near;
          e1 = near_t1;
          continue;
        }
        if (far_ok) {
          index = far;
          e0 = far_t0;
          continue;
        }
      } else {
        for (uint32_t i = 0; i < node.count(); ++i) {
          uint32_t tri = i == 0 ? node.a : node.b;
          ++tested;
          float t;
          if (frame.Intersect(mesh, tri, collector.early_out(), &t) && t >= ray.t_min) {
            collector.AddHit({t, tri});
          }
        }
      }
    }
    if (sp == 0) break;
    const Entry& e = stack[--sp];
    index = e.node;
    e0 = e.t0;
    e1 = e.t1;
  }
  if (stats) {
    stats->nodes_visited += visited;
    stats->triangles_tested += tested;
  }
}

}  // namespace voxcol
