// Loose kD-tree over one chunk mesh, after "Voxel terrain: physics" (Kapoulkine, Roblox;
// shared/seeds/roblox-voxel-terrain-physics): splits on the longest axis at the mean of the
// triangle midpoints with the 25% skew fallback to the median, small leaves (here up to four
// triangles), bounded depth, iterative traversal with a fixed-size stack, and a stored tree AABB
// for early rejection.
//
// Storage goes beyond the seed. The seed's binary node keeps the two children's bounds on the
// split axis only (two planes). Here up to three of those splits (two levels) make one 4-wide node
// that keeps every child's bounds on all three axes, 8 bits per coordinate on a per-tree grid, and
// references leaves inline. A leaf is a range of up to four consecutive mesh triangles: Build
// reorders the mesh's triangles into leaf order, so a leaf needs no index list and fills one 4-wide
// triangle test. A ray tests the four child boxes of a node at once (SSE2) and culls on all axes,
// and the tree takes ~1 node (32 bytes) per ~9 triangles, about 3.5 bytes per triangle (see
// docs/design.md).
//
// This header is the tree's API. The node format is in kd_node.h; the SIMD node tests
// (kd_tree_simd.h) and the bodies of the query templates (kd_tree_traversal.h, included at the end)
// are internal.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/geometry/ray_aabb.h"
#include "core/geometry/ray_triangle.h"
#include "core/geometry/vec3.h"
#include "core/kdtree/collectors.h"
#include "core/kdtree/kd_node.h"
#include "core/mesh/chunk_mesh.h"

namespace voxcol {

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
  // Precondition: direction finite and non-zero. Components below 1e-20 of the largest become 0:
  // the traversal treats them as parallel to their axis (infinite 1 / direction), as it does any
  // component whose reciprocal overflows.
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

struct KdBuildScratch;

class KdTree {
 public:
  // Deepest tree Build can produce for meshes up to kMaxTriangles, counted in binary splits (each
  // leaves >= 25% of the triangles on each side: depth <= log_{4/3}(n / 2) + 1); a 4-wide node
  // holds at least one split, so this bounds the node depth too.
  static constexpr int kMaxDepth = 48;
  static constexpr uint32_t kMaxTriangles = KdNode::kFirstLimit;  // leaves: 13-bit first triangle

  // Builds the tree over every triangle of `mesh` (empty mesh -> empty tree) and permutes the
  // mesh's triangles (their corner indices and materials together; vertices and normals stay) into
  // the tree's leaf order, so every leaf is a range of consecutive triangles. The triangle set is
  // unchanged; triangle indices refer to the reordered mesh. `scratch` may be null; pass one to
  // reuse its buffers across builds. Precondition: triangle_count() <= kMaxTriangles (a chunk mesh
  // has at most 8^3 cells x 5 = 2560).
  void Build(ChunkMesh* mesh, KdBuildScratch* scratch = nullptr);

  bool empty() const { return nodes_.empty(); }
  // The exact box of the triangles' corners, decoded as `mesh` (the mesh the tree was built from)
  // decodes its vertices; Aabb{} for an empty tree. Kept in fixed point: the low corner is the
  // grid's base. Like the queries below, it reads the mesh's origin and voxel size, so pass the
  // tree's own mesh (or a copy of it).
  Aabb bounds(const ChunkMesh& mesh) const {
    if (nodes_.empty()) return {};
    return {mesh.Decode({grid_.base[0], grid_.base[1], grid_.base[2]}), mesh.Decode(hi_)};
  }
  int depth() const { return depth_; }  // inner-node levels below the root (a root-only tree: 0)
  const MeshArray<KdNode>& nodes() const { return nodes_; }
  // Makes this tree a copy of `from` whose nodes lie at `to` (aligned for KdNode,
  // from.nodes().bytes() long), which must outlive this tree's reads (MeshArray::Borrow).
  void CopyPacked(const KdTree& from, char* to) {
    nodes_.BorrowCopyOf(from.nodes_, to);
    grid_ = from.grid_;
    depth_ = from.depth_;
    hi_ = from.hi_;
  }
  const KdGrid& grid() const { return grid_; }
  size_t DataBytes() const { return nodes_.size() * sizeof(KdNode) + sizeof(KdGrid) + sizeof(hi_); }

  // Reports to `collector` every triangle of `mesh` (the mesh the tree was built from) whose
  // vertex AABB overlaps `box` (closed boxes). Collector: done(), AddTriangle(uint32_t).
  template <typename Collector>
  void CollideAabb(const ChunkMesh& mesh, const Aabb& box, Collector& collector,
                   KdStats* stats) const;

  // Reports ray hits with t in [ray.t_min, collector.early_out()], visiting nodes and leaves about
  // front to back (nearest child first, a leaf's triangles in one 4-wide test) and skipping
  // everything beyond the early-out distance. Collector: early_out(), AddHit().
  template <typename Collector>
  void CastRay(const ChunkMesh& mesh, const KdRay& ray, Collector& collector, KdStats* stats) const;

  // Checks the tree invariants against the mesh (every triangle in exactly one leaf, every child
  // box contains the corners of the triangles below it, the root box is the tree AABB, depth
  // bound). For tests and VOXCOL_VALIDATE builds; O(n log n).
  bool Validate(const ChunkMesh& mesh) const;

 private:
  // Waiting children: a ray pushes at most three per node (it descends into the fourth), a box
  // query and the build at most four; the slack of four covers the latter.
  static constexpr int kStackSize = 3 * kMaxDepth + 4;

  MeshArray<KdNode> nodes_;  // nodes_[0] is the root
  KdGrid grid_;
  uint8_t depth_ = 0;
  QuantizedVertex hi_{};  // the highest corner coordinate on each axis (the lowest: grid_.base)
};

// Reusable build buffers.
struct KdBuildScratch {
  std::vector<uint32_t> order;
  std::vector<std::array<uint16_t, 6>> qboxes;  // fixed-point min xyz, max xyz per triangle
  std::vector<uint16_t> indices;                // the mesh's triangles before the reorder
  std::vector<uint8_t> materials;
};

// Closed AABB of triangle `tri` of `mesh`.
inline Aabb TriangleBounds(const ChunkMesh& mesh, uint32_t tri) {
  const std::array<uint32_t, 3> ix = mesh.TriangleIndices(tri);
  const Vec3 a = mesh.Vertex(ix[0]), b = mesh.Vertex(ix[1]), c = mesh.Vertex(ix[2]);
  return {Min(a, Min(b, c)), Max(a, Max(b, c))};
}

}  // namespace voxcol

// The query templates' bodies and the SIMD node tests they use (internal).
#include "core/kdtree/kd_tree_traversal.h"  // IWYU pragma: export
