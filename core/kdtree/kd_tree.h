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
#include <array>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/geometry/ray_aabb.h"
#include "core/geometry/ray_triangle.h"
#include "core/geometry/vec3.h"
#include "core/kdtree/collectors.h"
#include "core/mesh/chunk_mesh.h"

namespace voxcol {

// 12 bytes. Branch: a, b = bits of split[0], split[1]; meta = axis | child << 2.
// Leaf: a = triangle 0 | triangle 1 << 16; b = the leaf box's low corner as bytes x | y << 8 |
// z << 16; meta = 3 | count << 2 (count 1..2) | high corner bytes x << 8 | y << 16 | z << 24.
// The leaf box bounds the 16-bit vertex coordinates of the leaf's triangles on the tree's
// KdLeafGrid (see there); traversal skips a leaf whose box the ray misses.
struct KdNode {
  uint32_t a = 0, b = 0;
  uint32_t meta = 3;

  static constexpr uint32_t kLeafAxis = 3;
  uint32_t axis() const { return meta & 3; }
  bool is_leaf() const { return axis() == kLeafAxis; }
  uint32_t child() const { return meta >> 2; }                                   // branch
  uint32_t count() const { return (meta >> 2) & 3; }                             // leaf
  uint32_t triangle(uint32_t i) const { return i == 0 ? a & 0xffff : a >> 16; }  // leaf
  uint32_t box_lo(int axis) const { return (b >> (8 * axis)) & 0xff; }           // leaf
  uint32_t box_hi(int axis) const { return (meta >> (8 + 8 * axis)) & 0xff; }    // leaf
  float split(int i) const {
    float f;
    std::memcpy(&f, &a + i, sizeof(f));  // a and b are adjacent
    return f;
  }
};
static_assert(sizeof(KdNode) == 12, "nodes are 12 bytes");

// The grid of the leaf boxes, one per tree: box byte k on axis a covers the 16-bit vertex
// coordinates q[a] in [base[a] + (k << shift), base[a] + ((k + 1) << shift) - 1]. base is the
// tree's lowest vertex coordinate and shift the least that fits its extent in 256 cells (a chunk's
// vertices span 8 voxels = 32768 steps, so cells are 1/32 or 1/16 voxel).
struct KdLeafGrid {
  uint16_t base[3] = {0, 0, 0};
  uint8_t shift = 0;
};

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
#if defined(__SSE2__)
    v_base_ = _mm_setr_epi32(mesh.origin.x * kVertexScale, mesh.origin.y * kVertexScale,
                             mesh.origin.z * kVertexScale, 0);
    v_scale_ = _mm_set1_ps(scale_);
    v_origin_ = _mm_setr_ps(r.origin.x, r.origin.y, r.origin.z, 0.0f);
#endif
  }

  bool Intersect(const ChunkMesh& mesh, uint32_t tri, float t_max, float* t) const {
    const uint16_t* idx = &mesh.indices[3 * size_t(tri)];
    const uint16_t* a = mesh.vertices[idx[0]].data();
    const uint16_t* b = mesh.vertices[idx[1]].data();
    const uint16_t* c = mesh.vertices[idx[2]].data();
#if defined(__SSE2__)
    // The same integer add, conversion, multiply and subtract, three lanes at a time.
    float A[4], B[4], C[4];
    Rel4(a, A), Rel4(b, B), Rel4(c, C);
    const int x = axis_[0], y = axis_[1], z = axis_[2];
    return IntersectRayTriangleRelative(r_, A[x], A[y], A[z], B[x], B[y], B[z], C[x], C[y], C[z],
                                        t_max, t);
#else
    return IntersectRayTriangleRelative(r_, Rel(a, 0), Rel(a, 1), Rel(a, 2), Rel(b, 0), Rel(b, 1),
                                        Rel(b, 2), Rel(c, 0), Rel(c, 1), Rel(c, 2), t_max, t);
#endif
  }

 private:
  static constexpr int32_t kVertexScale = 4096;  // 1 / kVertexQuantum
  float Rel(const uint16_t* q, int i) const {
    return float(base_[i] + int32_t(q[axis_[i]])) * scale_ - origin_[i];
  }
#if defined(__SSE2__)
  void Rel4(const uint16_t* q, float out[4]) const {
    int32_t xy;
    std::memcpy(&xy, q, sizeof(xy));
    __m128i v = _mm_insert_epi16(_mm_cvtsi32_si128(xy), q[2], 2);
    v = _mm_add_epi32(_mm_unpacklo_epi16(v, _mm_setzero_si128()), v_base_);
    _mm_storeu_ps(out, _mm_sub_ps(_mm_mul_ps(_mm_cvtepi32_ps(v), v_scale_), v_origin_));
  }
  __m128i v_base_;
  __m128 v_scale_, v_origin_;
#endif

  const WatertightRay& r_;
  float scale_;
  int axis_[3];
  int32_t base_[3];
  float origin_[3];
};
static_assert(1.0f / kVertexQuantum == 4096.0f, "MeshRayFrame assumes 4096 steps per voxel");

// The ray against leaf boxes of one tree. A box corner decodes like a vertex (integer 16-bit
// coordinate -> float, times voxel_size / 4096), and rounding is monotonic, so the decoded box
// contains the decoded corners of the leaf's triangles exactly; the slab distances are then
// widened like the split-plane crossings. Rays parallel to an axis skip the test (every leaf
// overlaps), which keeps the slab arithmetic free of 0 * infinity.
class KdLeafBoxClip {
 public:
  KdLeafBoxClip(const ChunkMesh& mesh, const KdLeafGrid& grid, const KdRay& ray) {
    float o[4] = {0, 0, 0, 0}, inv[4] = {0, 0, 0, 0};
    enabled_ = true;
    for (int a = 0; a < 3; ++a) {
      const int32_t lo = mesh.origin[a] * 4096 + int32_t(grid.base[a]);
      base_lo_[a] = lo;
      base_hi_[a] = lo + (int32_t(1) << grid.shift) - 1;
      o[a] = Component(ray.origin, a);
      inv[a] = Component(ray.inv_direction, a);
      enabled_ = enabled_ && std::isfinite(inv[a]);
    }
    shift_ = grid.shift;
    scale_ = mesh.voxel_size * kVertexQuantum;
#if defined(__SSE2__)
    v_base_lo_ = _mm_setr_epi32(base_lo_[0], base_lo_[1], base_lo_[2], 0);
    v_base_hi_ = _mm_setr_epi32(base_hi_[0], base_hi_[1], base_hi_[2], 0);
    v_shift_ = _mm_cvtsi32_si128(shift_);
    v_scale_ = _mm_set1_ps(scale_);
    v_o_ = _mm_loadu_ps(o);
    v_inv_ = _mm_loadu_ps(inv);
#else
    for (int a = 0; a < 3; ++a) o_[a] = o[a], inv_[a] = inv[a];
#endif
  }

  // False when the ray provably misses the leaf's box within [t0, t1] (widened by `widen`).
  template <typename Widen>
  bool Overlaps(const KdNode& leaf, float t0, float t1, const Widen& widen) const {
    if (!enabled_) return true;
    float entry, exit;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    __m128i lo = _mm_cvtsi32_si128(int(leaf.b)), hi = _mm_cvtsi32_si128(int(leaf.meta >> 8));
    lo = _mm_unpacklo_epi16(_mm_unpacklo_epi8(lo, zero), zero);
    hi = _mm_unpacklo_epi16(_mm_unpacklo_epi8(hi, zero), zero);
    lo = _mm_add_epi32(_mm_sll_epi32(lo, v_shift_), v_base_lo_);
    hi = _mm_add_epi32(_mm_sll_epi32(hi, v_shift_), v_base_hi_);
    const __m128 xl = _mm_mul_ps(_mm_cvtepi32_ps(lo), v_scale_);
    const __m128 xh = _mm_mul_ps(_mm_cvtepi32_ps(hi), v_scale_);
    const __m128 tl = _mm_mul_ps(_mm_sub_ps(xl, v_o_), v_inv_);
    const __m128 th = _mm_mul_ps(_mm_sub_ps(xh, v_o_), v_inv_);
    const __m128 tn = _mm_min_ps(tl, th), tf = _mm_max_ps(tl, th);
    entry =
        _mm_cvtss_f32(_mm_max_ss(tn, _mm_max_ss(_mm_shuffle_ps(tn, tn, _MM_SHUFFLE(1, 1, 1, 1)),
                                                _mm_shuffle_ps(tn, tn, _MM_SHUFFLE(2, 2, 2, 2)))));
    exit =
        _mm_cvtss_f32(_mm_min_ss(tf, _mm_min_ss(_mm_shuffle_ps(tf, tf, _MM_SHUFFLE(1, 1, 1, 1)),
                                                _mm_shuffle_ps(tf, tf, _MM_SHUFFLE(2, 2, 2, 2)))));
#else
    entry = -std::numeric_limits<float>::infinity();
    exit = std::numeric_limits<float>::infinity();
    for (int a = 0; a < 3; ++a) {
      const float xl = float(base_lo_[a] + int32_t(leaf.box_lo(a) << shift_)) * scale_;
      const float xh = float(base_hi_[a] + int32_t(leaf.box_hi(a) << shift_)) * scale_;
      const float ta = (xl - o_[a]) * inv_[a], tb = (xh - o_[a]) * inv_[a];
      entry = std::max(entry, std::min(ta, tb));
      exit = std::min(exit, std::max(ta, tb));
    }
#endif
    return entry - widen(entry) <= t1 && exit + widen(exit) >= t0 &&
           entry - widen(entry) <= exit + widen(exit);
  }

 private:
  bool enabled_;
  int shift_;
  float scale_;
  int32_t base_lo_[3], base_hi_[3];
#if defined(__SSE2__)
  __m128i v_base_lo_, v_base_hi_, v_shift_;
  __m128 v_scale_, v_o_, v_inv_;
#else
  float o_[3], inv_[3];
#endif
};

struct KdBuildScratch;

class KdTree {
 public:
  // Deepest tree Build can produce for meshes up to kMaxTriangles (each split leaves >= 25% of the
  // triangles on each side: depth <= log_{4/3}(n / 2) + 1).
  static constexpr int kMaxDepth = 48;
  static constexpr uint32_t kMaxTriangles = 1u << 16;  // leaves store 16-bit triangle indices

  // Builds the tree over every triangle of `mesh` (empty mesh -> empty tree). `scratch` may be
  // null; pass one to reuse its buffers across builds. Precondition: triangle_count() <=
  // kMaxTriangles.
  void Build(const ChunkMesh& mesh, KdBuildScratch* scratch = nullptr);

  bool empty() const { return nodes_.empty(); }
  const Aabb& bounds() const { return bounds_; }
  int depth() const { return depth_; }
  const std::vector<KdNode>& nodes() const { return nodes_; }
  const KdLeafGrid& leaf_grid() const { return grid_; }
  size_t DataBytes() const {
    return nodes_.size() * sizeof(KdNode) + sizeof(Aabb) + sizeof(KdLeafGrid);
  }

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
  // their subtrees, leaf boxes bound their triangles, depth bound). For tests and VOXCOL_VALIDATE
  // builds; O(n log n).
  bool Validate(const ChunkMesh& mesh) const;

 private:
  std::vector<KdNode> nodes_;
  Aabb bounds_;
  KdLeafGrid grid_;
  int depth_ = 0;
};

// Reusable build buffers.
struct KdBuildScratch {
  std::vector<uint32_t> order;
  std::vector<Aabb> boxes;
  std::vector<float> centers;                   // 3 per triangle
  std::vector<std::array<uint16_t, 6>> qboxes;  // fixed-point min xyz, max xyz per triangle
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
  // Leaf boxes decode like vertices (integer coordinate -> float, times voxel_size / 4096), so a
  // decoded leaf box contains its triangles' decoded corners exactly: a leaf whose box misses the
  // query box has no triangle that overlaps it.
  const float scale = mesh.voxel_size * kVertexQuantum;
  int32_t base[3];
  for (int a = 0; a < 3; ++a) base[a] = mesh.origin[a] * 4096 + int32_t(grid_.base[a]);
  auto leaf_misses = [&](const KdNode& leaf) {
    for (int a = 0; a < 3; ++a) {
      const float lo = float(base[a] + int32_t(leaf.box_lo(a) << grid_.shift)) * scale;
      const float hi = float(base[a] + int32_t((leaf.box_hi(a) + 1) << grid_.shift) - 1) * scale;
      if (lo > Component(box.max, a) || hi < Component(box.min, a)) return true;
    }
    return false;
  };
  uint32_t stack[kMaxDepth + 2];
  int sp = 0;
  stack[sp++] = 0;
  uint32_t visited = 0, tested = 0;
  while (sp > 0 && !collector.done()) {
    const KdNode& node = nodes_[stack[--sp]];
    ++visited;
    if (node.is_leaf()) {
      if (leaf_misses(node)) continue;
      for (uint32_t i = 0; i < node.count(); ++i) {
        uint32_t tri = node.triangle(i);
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
  const KdLeafBoxClip boxes(mesh, grid_, ray);
  // Per axis: origin, 1 / direction, whether the ray is parallel to the planes, and which child it
  // meets first (flip = 1: moving -, the right child is near; its exit plane is split[1]).
  float org[3], inv[3];
  uint32_t flip[3];
  bool parallel[3];
  for (int a = 0; a < 3; ++a) {
    org[a] = Component(ray.origin, a);
    inv[a] = Component(ray.inv_direction, a);
    flip[a] = Component(ray.direction, a) < 0;
    parallel[a] = Component(ray.direction, a) == 0;
  }
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
    const KdNode& node = nodes_[index];
    ++visited;
    const uint32_t axis = node.axis();
    if (axis != KdNode::kLeafAxis) {
      const uint32_t f = flip[axis];
      const uint32_t near = node.child() + f, far = node.child() + (f ^ 1);
      const float s_near = node.split(int(f)), s_far = node.split(int(f ^ 1));
      float near_t1, far_t0;
      if (!parallel[axis]) {
        // The near child is left at its exit plane, the far one entered at its entry plane.
        const float exit = (s_near - org[axis]) * inv[axis];
        const float entry = (s_far - org[axis]) * inv[axis];
        near_t1 = std::min(e1, exit + widen(exit));
        far_t0 = std::max(e0, entry - widen(entry));
      } else {
        // Parallel to the planes: each side keeps the whole interval if the origin is inside it
        // (flip = 0: near is the left child).
        constexpr float kInf = std::numeric_limits<float>::infinity();
        near_t1 = org[axis] <= s_near ? e1 : -kInf;
        far_t0 = org[axis] >= s_far ? e0 : kInf;
      }
      // Push the far child if the ray reaches it (popped at once when the near one is missed).
      stack[sp] = {far, far_t0, e1};
      sp += far_t0 <= e1;
      if (near_t1 >= e0) {
        index = near;
        e1 = near_t1;
        continue;
      }
    } else {
      const float limit = std::min(e1, collector.early_out());
      const uint32_t count = boxes.Overlaps(node, e0, limit, widen) ? node.count() : 0;
      for (uint32_t i = 0; i < count; ++i) {
        uint32_t tri = node.triangle(i);
        ++tested;
        float t;
        if (frame.Intersect(mesh, tri, collector.early_out(), &t) && t >= ray.t_min) {
          collector.AddHit({t, tri});
        }
      }
    }
    // Next: the nearest waiting subtree that starts before the early-out distance.
    while (sp > 0 && stack[sp - 1].t0 > collector.early_out()) --sp;
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
