// Loose kD-tree over one chunk mesh, after "Voxel terrain: physics" (Kapoulkine, Roblox;
// shared/seeds/roblox-voxel-terrain-physics): splits on the longest axis at the mean of the
// triangle midpoints with the 25% skew fallback to the median, leaves of at most two triangles,
// bounded depth, iterative traversal with a fixed-size stack, and a stored tree AABB for early
// rejection.
//
// Storage goes beyond the seed. The seed's binary node keeps the two children's bounds on the
// split axis only (two planes). Here up to three of those splits (two levels) make one 4-wide node
// that keeps every child's bounds on all three axes, 8 bits per coordinate on a per-tree grid, and
// references leaves inline. A ray tests the four child boxes of a node at once (SSE2) and culls on
// all axes, so it visits ~9 nodes and leaves instead of ~22 binary nodes, and the tree takes
// fewer bytes per triangle than 12-byte binary nodes did (see the README's design part).
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

#include "absl/numeric/bits.h"
#include "core/geometry/ray_aabb.h"
#include "core/geometry/ray_triangle.h"
#include "core/geometry/vec3.h"
#include "core/kdtree/collectors.h"
#include "core/mesh/chunk_mesh.h"

namespace voxcol {

// The grid of the node boxes, one per tree: box byte k on axis a covers the 16-bit vertex
// coordinates q[a] in [base[a] + (k << shift), base[a] + ((k + 1) << shift) - 1]. base is the
// tree's lowest vertex coordinate and shift the least that fits its extent in 256 cells (a chunk's
// vertices span 8 voxels = 32768 steps, so cells are 1/32 or 1/16 voxel).
struct KdGrid {
  uint16_t base[3] = {0, 0, 0};
  uint8_t shift = 0;
};

// 40 bytes: up to four children, each a box on the tree's KdGrid (structure of arrays: box[axis]
// holds the four children's low bytes, then their high bytes, so one 8-byte load feeds the SIMD
// lanes of an axis) and a reference:
//   an inner node: its index;
//   a leaf: kLeaf | (two triangles ? kPair : 0) | triangle 0 | triangle 1 << 15;
//   no child: kEmpty (its box bytes are zero).
// A child's box contains the 16-bit corners of every triangle below it.
struct KdNode {
  static constexpr uint32_t kLeaf = 1u << 31, kPair = 1u << 30, kEmpty = 0x7fffffffu;
  uint8_t box[3][8] = {};
  uint32_t child[4] = {kEmpty, kEmpty, kEmpty, kEmpty};

  uint32_t lo(int axis, int slot) const { return box[axis][slot]; }
  uint32_t hi(int axis, int slot) const { return box[axis][4 + slot]; }

  static bool IsLeaf(uint32_t ref) { return (ref & kLeaf) != 0; }
  // Bit i set when child[i] is a leaf.
  uint32_t LeafMask() const {
    return child[0] >> 31 | (child[1] >> 31) << 1 | (child[2] >> 31) << 2 | (child[3] >> 31) << 3;
  }
  static uint32_t LeafCount(uint32_t ref) { return 1 + ((ref >> 30) & 1); }
  static uint32_t LeafTriangle(uint32_t ref, uint32_t i) { return (ref >> (15 * i)) & 0x7fff; }
  static uint32_t MakeLeaf(const uint32_t* tris, uint32_t n) {
    assert(tris[0] < (1u << 15) && (n < 2 || tris[1] < (1u << 15)));
    return kLeaf | (n == 2 ? kPair | tris[1] << 15 : 0) | tris[0];
  }
};
static_assert(sizeof(KdNode) == 40, "nodes are 40 bytes");

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
      base_[i] = mesh.FixedOrigin(k[i]);
      origin_[i] = Component(r.origin, k[i]);
    }
#if defined(__SSE2__)
    v_scale_ = _mm_set1_ps(scale_);
    for (int i = 0; i < 3; ++i) {
      v_axis_base_[i] = _mm_set1_epi32(base_[i]);
      v_axis_origin_[i] = _mm_set1_ps(origin_[i]);
    }
#endif
  }

  // Tests triangles tris[0..count) (count <= 4) at once with the same t_max. Returns the mask of
  // hits (bit i: tris[i]) and their distances in t[]. Each lane computes exactly what Intersect
  // does; a lane with a zero edge function takes Intersect's double-precision path.
  uint32_t Intersect4(const ChunkMesh& mesh, const uint32_t* tris, uint32_t count, float t_max,
                      float t[4]) const {
#if defined(__SSE2__)
    // Gather the 16-bit coordinates into one 32-bit lane per triangle, then decode each ray-frame
    // axis for all four triangles at once (Rel's integer add, conversion, multiply, subtract).
    const uint16_t* idx[4];
    for (uint32_t i = 0; i < 4; ++i) idx[i] = &mesh.indices[3 * size_t(tris[i < count ? i : 0])];
    __m128 corner[3][3];  // [corner][ray frame axis], one triangle per lane
    for (int k = 0; k < 3; ++k) {
      const uint16_t* v0 = mesh.vertices[idx[0][k]].data();
      const uint16_t* v1 = mesh.vertices[idx[1][k]].data();
      const uint16_t* v2 = mesh.vertices[idx[2][k]].data();
      const uint16_t* v3 = mesh.vertices[idx[3][k]].data();
      for (int a = 0; a < 3; ++a) {
        const int c = axis_[a];
        __m128i q = _mm_cvtsi32_si128(v0[c]);
        q = _mm_insert_epi16(q, v1[c], 2);
        q = _mm_insert_epi16(q, v2[c], 4);
        q = _mm_insert_epi16(q, v3[c], 6);
        q = _mm_add_epi32(q, v_axis_base_[a]);
        corner[k][a] = _mm_sub_ps(_mm_mul_ps(_mm_cvtepi32_ps(q), v_scale_), v_axis_origin_[a]);
      }
    }
    const __m128 sx = _mm_set1_ps(r_.sx), sy = _mm_set1_ps(r_.sy), sz = _mm_set1_ps(r_.sz);
    const __m128 ax = _mm_sub_ps(corner[0][0], _mm_mul_ps(sx, corner[0][2]));
    const __m128 ay = _mm_sub_ps(corner[0][1], _mm_mul_ps(sy, corner[0][2]));
    const __m128 bx = _mm_sub_ps(corner[1][0], _mm_mul_ps(sx, corner[1][2]));
    const __m128 by = _mm_sub_ps(corner[1][1], _mm_mul_ps(sy, corner[1][2]));
    const __m128 cx = _mm_sub_ps(corner[2][0], _mm_mul_ps(sx, corner[2][2]));
    const __m128 cy = _mm_sub_ps(corner[2][1], _mm_mul_ps(sy, corner[2][2]));
    const __m128 u = _mm_sub_ps(_mm_mul_ps(cx, by), _mm_mul_ps(cy, bx));
    const __m128 v = _mm_sub_ps(_mm_mul_ps(ax, cy), _mm_mul_ps(ay, cx));
    const __m128 w = _mm_sub_ps(_mm_mul_ps(bx, ay), _mm_mul_ps(by, ax));
    const __m128 zero = _mm_setzero_ps();
    const uint32_t lanes = (1u << count) - 1;
    const uint32_t zero_edge =
        uint32_t(_mm_movemask_ps(_mm_or_ps(_mm_or_ps(_mm_cmpeq_ps(u, zero), _mm_cmpeq_ps(v, zero)),
                                           _mm_cmpeq_ps(w, zero)))) &
        lanes;
    const __m128 negative =
        _mm_or_ps(_mm_or_ps(_mm_cmplt_ps(u, zero), _mm_cmplt_ps(v, zero)), _mm_cmplt_ps(w, zero));
    const __m128 positive =
        _mm_or_ps(_mm_or_ps(_mm_cmpgt_ps(u, zero), _mm_cmpgt_ps(v, zero)), _mm_cmpgt_ps(w, zero));
    const __m128 det = _mm_add_ps(_mm_add_ps(u, v), w);
    const __m128 tz = _mm_add_ps(_mm_add_ps(_mm_mul_ps(u, _mm_mul_ps(sz, corner[0][2])),
                                            _mm_mul_ps(v, _mm_mul_ps(sz, corner[1][2]))),
                                 _mm_mul_ps(w, _mm_mul_ps(sz, corner[2][2])));
    // Multiplying by s = +-1 (the sign of det) is exact: flip the sign bit instead.
    const __m128 sign = _mm_and_ps(det, _mm_castsi128_ps(_mm_set1_epi32(int(0x80000000u))));
    const __m128 tzs = _mm_xor_ps(tz, sign);
    const __m128 limit = _mm_xor_ps(_mm_mul_ps(_mm_set1_ps(t_max), det), sign);
    const __m128 miss =
        _mm_or_ps(_mm_or_ps(_mm_and_ps(negative, positive), _mm_cmpeq_ps(det, zero)),
                  _mm_or_ps(_mm_cmplt_ps(tzs, zero), _mm_cmpgt_ps(tzs, limit)));
    uint32_t hits = uint32_t(_mm_movemask_ps(miss)) ^ 0xf;
    _mm_storeu_ps(t, _mm_div_ps(tz, det));
    hits &= lanes & ~zero_edge;
    for (uint32_t m = zero_edge; m != 0; m &= m - 1) {
      const uint32_t i = absl::countr_zero(m);
      if (Intersect(mesh, tris[i], t_max, &t[i])) hits |= 1u << i;
    }
    return hits;
#else
    uint32_t hits = 0;
    for (uint32_t i = 0; i < count; ++i) {
      if (Intersect(mesh, tris[i], t_max, &t[i])) hits |= 1u << i;
    }
    return hits;
#endif
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
  float Rel(const uint16_t* q, int i) const {
    return float(base_[i] + int32_t(q[axis_[i]])) * scale_ - origin_[i];
  }
#if defined(__SSE2__)
  __m128i v_axis_base_[3];  // base_ and origin_ broadcast, by ray frame axis
  __m128 v_scale_, v_axis_origin_[3];
#endif

  const WatertightRay& r_;
  float scale_;
  int axis_[3];
  int32_t base_[3];
  float origin_[3];
};

// Decodes the boxes of a node's four children on one axis to world coordinates. A box corner
// decodes like a vertex (integer 16-bit coordinate -> float, times voxel_size / 4096) and rounding
// is monotonic, so a decoded box contains the decoded corners of its triangles exactly.
class KdBoxDecoder {
 public:
  KdBoxDecoder(const ChunkMesh& mesh, const KdGrid& grid) {
    shift_ = grid.shift;
    scale_ = mesh.voxel_size * kVertexQuantum;
    for (int a = 0; a < 3; ++a) {
      base_lo_[a] = mesh.FixedOrigin(a) + int32_t(grid.base[a]);
      base_hi_[a] = base_lo_[a] + (int32_t(1) << grid.shift) - 1;
    }
#if defined(__SSE2__)
    v_shift_ = _mm_cvtsi32_si128(shift_);
    v_scale_ = _mm_set1_ps(scale_);
    for (int a = 0; a < 3; ++a) {
      v_base_lo_[a] = _mm_set1_epi32(base_lo_[a]);
      v_base_hi_[a] = _mm_set1_epi32(base_hi_[a]);
    }
#endif
  }

  float Lo(const KdNode& n, int axis, int slot) const {
    return float(base_lo_[axis] + int32_t(n.lo(axis, slot) << shift_)) * scale_;
  }
  float Hi(const KdNode& n, int axis, int slot) const {
    return float(base_hi_[axis] + int32_t(n.hi(axis, slot) << shift_)) * scale_;
  }
#if defined(__SSE2__)
  // The four children's low and high coordinates on `axis`.
  void Decode4(const KdNode& n, int axis, __m128* lo, __m128* hi) const {
    // Shifted bytes fit 16-bit lanes (255 << 8 < 65536); widen to 32 bits for the add.
    const __m128i zero = _mm_setzero_si128();
    __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(n.box[axis]));
    q = _mm_sll_epi16(_mm_unpacklo_epi8(q, zero), v_shift_);
    const __m128i q_lo = _mm_add_epi32(_mm_unpacklo_epi16(q, zero), v_base_lo_[axis]);
    const __m128i q_hi = _mm_add_epi32(_mm_unpackhi_epi16(q, zero), v_base_hi_[axis]);
    *lo = _mm_mul_ps(_mm_cvtepi32_ps(q_lo), v_scale_);
    *hi = _mm_mul_ps(_mm_cvtepi32_ps(q_hi), v_scale_);
  }
#endif

 private:
#if defined(__SSE2__)
  __m128i v_shift_, v_base_lo_[3], v_base_hi_[3];
  __m128 v_scale_;
#endif
  int shift_;
  float scale_;
  int32_t base_lo_[3], base_hi_[3];
};

// The ray against the four child boxes of a node: a 4-wide copy of ClipRayToAabb's slab test,
// widened by Margin for float error. An axis the ray is parallel to (infinite 1 / direction) only
// tests whether the origin lies in the slab (on a face counts as inside), so no 0 * infinity
// arises.
class KdBoxClip {
 public:
  KdBoxClip(const ChunkMesh& mesh, const KdGrid& grid, const KdRay& ray, float abs_eps)
      : decode_(mesh, grid), abs_eps_(abs_eps) {
    for (int a = 0; a < 3; ++a) {
      o_[a] = Component(ray.origin, a);
      inv_[a] = Component(ray.inv_direction, a);
      parallel_[a] = !std::isfinite(inv_[a]);
    }
#if defined(__SSE2__)
    for (int a = 0; a < 3; ++a) v_o_[a] = _mm_set1_ps(o_[a]), v_inv_[a] = _mm_set1_ps(inv_[a]);
#endif
  }

  // Returns the mask of the children (bit i: child[i]) whose box the ray meets within
  // [t_lo, t_hi], their widened entry distances (at least t_lo) in entry[] and the node's leaf
  // mask (KdNode::LeafMask) in *leaves. Every crossing is
  // widened by one margin, Margin(t_lo, t_hi): a crossing that decides the answer lies in
  // [t_lo, t_hi] (or the box's interval covers it), so its float error is within the margin of
  // the larger end; crossings far outside the interval cannot flip a comparison.
  float Margin(float t_lo, float t_hi) const {
    return abs_eps_ + kRelEps * std::max(std::fabs(t_lo), std::fabs(t_hi));
  }
  uint32_t Test(const KdNode& n, float t_lo, float t_hi, float margin, float entry[4],
                uint32_t* leaves) const {
#if defined(__SSE2__)
    constexpr float kInf = std::numeric_limits<float>::infinity();
    __m128 t_near = _mm_set1_ps(-kInf), t_far = _mm_set1_ps(kInf);
    __m128 inside = _mm_castsi128_ps(_mm_set1_epi32(-1));
    for (int a = 0; a < 3; ++a) {
      __m128 lo, hi;
      decode_.Decode4(n, a, &lo, &hi);
      if (parallel_[a]) {
        inside =
            _mm_and_ps(inside, _mm_and_ps(_mm_cmple_ps(lo, v_o_[a]), _mm_cmple_ps(v_o_[a], hi)));
        continue;
      }
      const __m128 tl = _mm_mul_ps(_mm_sub_ps(lo, v_o_[a]), v_inv_[a]);
      const __m128 th = _mm_mul_ps(_mm_sub_ps(hi, v_o_[a]), v_inv_[a]);
      t_near = _mm_max_ps(t_near, _mm_min_ps(tl, th));
      t_far = _mm_min_ps(t_far, _mm_max_ps(tl, th));
    }
    const __m128 widen = _mm_set1_ps(margin);
    t_near = _mm_sub_ps(t_near, widen);
    t_far = _mm_add_ps(t_far, widen);
    t_near = _mm_max_ps(t_near, _mm_set1_ps(t_lo));
    t_far = _mm_min_ps(t_far, _mm_set1_ps(t_hi));
    const __m128i refs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(n.child));
    const __m128i empty = _mm_cmpeq_epi32(refs, _mm_set1_epi32(int(KdNode::kEmpty)));
    const __m128 hit =
        _mm_andnot_ps(_mm_castsi128_ps(empty), _mm_and_ps(inside, _mm_cmple_ps(t_near, t_far)));
    _mm_storeu_ps(entry, t_near);
    *leaves = uint32_t(_mm_movemask_ps(_mm_castsi128_ps(refs)));  // the leaf bit is the sign bit
    return uint32_t(_mm_movemask_ps(hit));
#else
    uint32_t mask = 0;
    for (int i = 0; i < 4; ++i) {
      if (n.child[i] == KdNode::kEmpty) continue;
      float t_near = -std::numeric_limits<float>::infinity(), t_far = -t_near;
      bool inside = true;
      for (int a = 0; a < 3; ++a) {
        const float lo = decode_.Lo(n, a, i), hi = decode_.Hi(n, a, i);
        if (parallel_[a]) {
          inside = inside && lo <= o_[a] && o_[a] <= hi;
          continue;
        }
        const float tl = (lo - o_[a]) * inv_[a], th = (hi - o_[a]) * inv_[a];
        t_near = std::max(t_near, std::min(tl, th));
        t_far = std::min(t_far, std::max(tl, th));
      }
      t_near = std::max(t_near - margin, t_lo);
      t_far = std::min(t_far + margin, t_hi);
      entry[i] = t_near;
      if (inside && t_near <= t_far) mask |= 1u << i;
    }
    *leaves = n.LeafMask();
    return mask;
#endif
  }

  static constexpr float kRelEps = 1e-5f;

 private:
  KdBoxDecoder decode_;
  float abs_eps_;
  float o_[3], inv_[3];
  bool parallel_[3];
#if defined(__SSE2__)
  __m128 v_o_[3], v_inv_[3];
#endif
};

struct KdBuildScratch;

class KdTree {
 public:
  // Deepest tree Build can produce for meshes up to kMaxTriangles, counted in binary splits (each
  // leaves >= 25% of the triangles on each side: depth <= log_{4/3}(n / 2) + 1); a 4-wide node
  // holds at least one split, so this bounds the node depth too.
  static constexpr int kMaxDepth = 48;
  static constexpr uint32_t kMaxTriangles = 1u << 15;  // leaves store 15-bit triangle indices

  // Builds the tree over every triangle of `mesh` (empty mesh -> empty tree). `scratch` may be
  // null; pass one to reuse its buffers across builds. Precondition: triangle_count() <=
  // kMaxTriangles (a chunk mesh has at most 8^3 cells x 5 = 2560).
  void Build(const ChunkMesh& mesh, KdBuildScratch* scratch = nullptr);

  bool empty() const { return nodes_.empty(); }
  const Aabb& bounds() const { return bounds_; }
  int depth() const { return depth_; }  // inner-node levels below the root (a root-only tree: 0)
  const std::vector<KdNode>& nodes() const { return nodes_; }
  const KdGrid& grid() const { return grid_; }
  size_t DataBytes() const {
    return nodes_.size() * sizeof(KdNode) + sizeof(Aabb) + sizeof(KdGrid);
  }

  // Reports to `collector` every triangle of `mesh` (the mesh the tree was built from) whose
  // vertex AABB overlaps `box` (closed boxes). Collector: done(), AddTriangle(uint32_t).
  template <typename Collector>
  void CollideAabb(const ChunkMesh& mesh, const Aabb& box, Collector& collector,
                   KdStats* stats) const;

  // Reports ray hits with t in [ray.t_min, collector.early_out()], visiting nodes about front to
  // back (nearest child first; leaf triangles wait to be tested four at a time) and skipping
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

  std::vector<KdNode> nodes_;  // nodes_[0] is the root
  Aabb bounds_;
  KdGrid grid_;
  int depth_ = 0;
};

// Reusable build buffers.
struct KdBuildScratch {
  std::vector<uint32_t> order;
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
  const KdBoxDecoder decode(mesh, grid_);
#if defined(__SSE2__)
  __m128 box_min[3], box_max[3];
  for (int a = 0; a < 3; ++a) {
    box_min[a] = _mm_set1_ps(Component(box.min, a));
    box_max[a] = _mm_set1_ps(Component(box.max, a));
  }
#endif
  uint32_t stack[kStackSize];
  int sp = 0;
  stack[sp++] = 0;
  uint32_t visited = 0, tested = 0;
  while (sp > 0 && !collector.done()) {
    const KdNode& node = nodes_[stack[--sp]];
    ++visited;
    // Children whose decoded box overlaps the query box (closed).
    uint32_t mask = 0;
#if defined(__SSE2__)
    __m128 overlap = _mm_castsi128_ps(_mm_set1_epi32(-1));
    for (int a = 0; a < 3; ++a) {
      __m128 lo, hi;
      decode.Decode4(node, a, &lo, &hi);
      overlap = _mm_and_ps(overlap,
                           _mm_and_ps(_mm_cmple_ps(lo, box_max[a]), _mm_cmpge_ps(hi, box_min[a])));
    }
    mask = uint32_t(_mm_movemask_ps(overlap));
#else
    for (int i = 0; i < 4; ++i) {
      bool overlaps = true;
      for (int a = 0; a < 3; ++a) {
        overlaps = overlaps && decode.Lo(node, a, i) <= Component(box.max, a) &&
                   decode.Hi(node, a, i) >= Component(box.min, a);
      }
      mask |= uint32_t(overlaps) << i;
    }
#endif
    for (; mask != 0; mask &= mask - 1) {
      const uint32_t ref = node.child[absl::countr_zero(mask)];
      if (ref == KdNode::kEmpty) continue;
      if (!KdNode::IsLeaf(ref)) {
        stack[sp++] = ref;
        continue;
      }
      ++visited;
      for (uint32_t i = 0; i < KdNode::LeafCount(ref) && !collector.done(); ++i) {
        const uint32_t tri = KdNode::LeafTriangle(ref, i);
        ++tested;
        if (TriangleBounds(mesh, tri).Overlaps(box)) collector.AddTriangle(tri);
      }
    }
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
  // Float error of a crossing: relative to t (KdBoxClip::kRelEps), plus the rounding of
  // coordinates of this size: the origin's and the tree's. 1e-6 of their magnitude is several
  // ulps, so the grown box below is strictly larger than the bounds however far they are from 0.
  float size = 1.0f;
  for (int a = 0; a < 3; ++a) {
    size += std::fabs(Component(ray.origin, a)) +
            std::max(std::fabs(Component(bounds_.min, a)), std::fabs(Component(bounds_.max, a)));
  }
  const float abs_eps = 1e-6f * size;
  float t0 = ray.t_min, t1 = collector.early_out();
  Aabb grown{bounds_.min - Vec3(abs_eps, abs_eps, abs_eps),
             bounds_.max + Vec3(abs_eps, abs_eps, abs_eps)};
  if (!ClipRayToAabb(ray.origin, ray.inv_direction, grown, &t0, &t1)) return;
  const MeshRayFrame frame(mesh, ray.watertight);
  const KdBoxClip clip(mesh, grid_, ray, abs_eps);
  const float t_lo = t0 - clip.Margin(t0, t0);
  uint32_t visited = 0, tested = 0;
  // Up to four triangles against one early-out distance; a hit beyond the distance another lane
  // of the batch just set is dropped, so collectors only see t <= early_out().
  auto test_triangles = [&](const uint32_t* tris, uint32_t n) {
    float t[4];
    tested += n;
    for (uint32_t hits = frame.Intersect4(mesh, tris, n, collector.early_out(), t); hits != 0;
         hits &= hits - 1) {
      const uint32_t i = absl::countr_zero(hits);
      if (t[i] >= ray.t_min && t[i] <= collector.early_out()) collector.AddHit({t[i], tris[i]});
    }
  };
  struct Entry {
    uint32_t node;
    float t;  // widened entry distance
  };
  Entry stack[kStackSize];  // waiting children, nearest on top
  int sp = 0;
  uint32_t index = 0;               // the root
  uint32_t pending[12], count = 0;  // < 4 left over + up to 8 from one node
  for (;;) {
    const KdNode& node = nodes_[index];
    ++visited;
    const float t_hi = std::min(t1, collector.early_out());
    float entry[4];
    uint32_t leaf_mask;
    uint32_t mask = clip.Test(node, t_lo, t_hi, clip.Margin(t_lo, t_hi), entry, &leaf_mask);
    // Leaves the ray meets: their triangles wait in `pending` and are tested four at a time; the
    // rest before the next pop, whose cut-off is the early-out distance.
    if (const uint32_t leaves = mask & leaf_mask) {
      for (uint32_t m = leaves; m != 0; m &= m - 1) {
        const uint32_t ref = node.child[absl::countr_zero(m)];
        pending[count] = KdNode::LeafTriangle(ref, 0);
        pending[count + 1] = KdNode::LeafTriangle(ref, 1);
        count += KdNode::LeafCount(ref);
        ++visited;
      }
      for (; count >= 4; count -= 4) test_triangles(pending + count - 4, 4);
      mask &= ~leaves;
    }
    if (mask != 0) {
      uint32_t i = absl::countr_zero(mask);
      mask &= mask - 1;
      if (mask == 0) {  // one inner child: descend
        index = node.child[i];
        continue;
      }
      if ((mask & (mask - 1)) == 0) {  // two: push the farther, descend into the nearer
        const uint32_t j = absl::countr_zero(mask);
        const bool swap = entry[j] < entry[i];
        const uint32_t nearer = swap ? j : i, farther = swap ? i : j;
        stack[sp++] = {node.child[farther], entry[farther]};
        index = node.child[nearer];
        continue;
      }
      // Three or four: push them sorted so that the nearest is on top, then take it.
      const int base = sp;
      for (;;) {
        const Entry e{node.child[i], entry[i]};
        int j = sp++;
        for (; j > base && stack[j - 1].t < e.t; --j) stack[j] = stack[j - 1];
        stack[j] = e;
        if (mask == 0) break;
        i = absl::countr_zero(mask);
        mask &= mask - 1;
      }
      index = stack[--sp].node;
      continue;
    }
    if (count > 0) test_triangles(pending, count), count = 0;
    // Next: the nearest waiting child that starts before the early-out distance.
    while (sp > 0 && stack[sp - 1].t > collector.early_out()) --sp;
    if (sp == 0) break;
    index = stack[--sp].node;
  }
  if (stats) {
    stats->nodes_visited += visited;
    stats->triangles_tested += tested;
  }
}

}  // namespace voxcol
