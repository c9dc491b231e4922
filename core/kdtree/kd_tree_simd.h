// Internal to the kD-tree (core/kdtree/kd_tree.h): the SSE2 (and scalar fallback) node decoding
// and 4-wide ray tests its traversal runs per node and leaf. Everything here is inline so that the
// traversal templates in kd_tree_traversal.h compile into one hot loop.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/base/attributes.h"
#include "absl/numeric/bits.h"
#include "core/geometry/ray_triangle.h"
#include "core/geometry/vec3.h"
#include "core/kdtree/kd_node.h"
#include "core/mesh/chunk_mesh.h"

namespace voxcol {
namespace kdtree_internal {

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
    v_sx_ = _mm_set1_ps(r.sx), v_sy_ = _mm_set1_ps(r.sy), v_sz_ = _mm_set1_ps(r.sz);
#endif
  }

  // Tests the triangles of one leaf, first to first + count - 1 (count <= 4), at once with the
  // same t_max. Returns the mask of hits (bit i: triangle first + i) and their distances in t[].
  // Each lane computes exactly what Intersect does; a lane with a zero edge function takes
  // Intersect's double-precision path.
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t IntersectLeaf(const ChunkMesh& mesh, uint32_t first,
                                                      uint32_t count, float t_max,
                                                      float t[4]) const {
#if defined(__SSE2__)
    // Gather the 16-bit coordinates into one 32-bit lane per triangle, then decode each ray-frame
    // axis for all four triangles at once (Rel's integer add, conversion, multiply, subtract).
    const QuantizedVertex* corners[4][3];  // [lane][corner]
    mesh.WithIndices([&](const auto* indices) {
#pragma GCC unroll 4
      for (uint32_t i = 0; i < 4; ++i) {
        const auto* idx = indices + 3 * (size_t(first) + (i < count ? i : 0));
#pragma GCC unroll 3
        for (int k = 0; k < 3; ++k) corners[i][k] = &mesh.vertices[idx[k]];
      }
    });
    __m128 corner[3][3];  // [corner][ray frame axis], one triangle per lane
#pragma GCC unroll 3
    for (int k = 0; k < 3; ++k) {
      const uint16_t* v0 = corners[0][k]->data();
      const uint16_t* v1 = corners[1][k]->data();
      const uint16_t* v2 = corners[2][k]->data();
      const uint16_t* v3 = corners[3][k]->data();
#pragma GCC unroll 3
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
    const __m128 sx = v_sx_, sy = v_sy_, sz = v_sz_;
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
      if (Intersect(mesh, first + i, t_max, &t[i])) hits |= 1u << i;
    }
    return hits;
#else
    uint32_t hits = 0;
    for (uint32_t i = 0; i < count; ++i) {
      if (Intersect(mesh, first + i, t_max, &t[i])) hits |= 1u << i;
    }
    return hits;
#endif
  }

  bool Intersect(const ChunkMesh& mesh, uint32_t tri, float t_max, float* t) const {
    const uint16_t* a = mesh.vertices[mesh.Index(3 * size_t(tri))].data();
    const uint16_t* b = mesh.vertices[mesh.Index(3 * size_t(tri) + 1)].data();
    const uint16_t* c = mesh.vertices[mesh.Index(3 * size_t(tri) + 2)].data();
    return IntersectRayTriangleRelative(r_, Rel(a, 0), Rel(a, 1), Rel(a, 2), Rel(b, 0), Rel(b, 1),
                                        Rel(b, 2), Rel(c, 0), Rel(c, 1), Rel(c, 2), t_max, t);
  }

 private:
  float Rel(const uint16_t* q, int i) const {
    return float(base_[i] + int32_t(q[axis_[i]])) * scale_ - origin_[i];
  }
#if defined(__SSE2__)
  __m128i v_axis_base_[3];  // base_ and origin_ broadcast, by ray frame axis
  __m128 v_scale_, v_axis_origin_[3], v_sx_, v_sy_, v_sz_;
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
  // origin and inv_direction: those of the KdRay (1 / direction, infinite on a parallel axis).
  KdBoxClip(const ChunkMesh& mesh, const KdGrid& grid, const Vec3& origin,
            const Vec3& inv_direction, float abs_eps)
      : decode_(mesh, grid), abs_eps_(abs_eps) {
    for (int a = 0; a < 3; ++a) {
      o_[a] = Component(origin, a);
      inv_[a] = Component(inv_direction, a);
      parallel_[a] = !std::isfinite(inv_[a]);
    }
#if defined(__SSE2__)
    for (int a = 0; a < 3; ++a) v_o_[a] = _mm_set1_ps(o_[a]), v_inv_[a] = _mm_set1_ps(inv_[a]);
#endif
  }

  // Returns the mask of the children (bit i: child[i]) whose box the ray meets within
  // [t_lo, t_hi] and their widened entry distances (at least t_lo) in entry[]. Every crossing is
  // widened by one margin, Margin(t_lo, t_hi): a crossing that decides the answer lies in
  // [t_lo, t_hi] (or the box's interval covers it), so its float error is within the margin of
  // the larger end; crossings far outside the interval cannot flip a comparison.
  float Margin(float t_lo, float t_hi) const {
    return abs_eps_ + kRelEps * std::max(std::fabs(t_lo), std::fabs(t_hi));
  }
  uint32_t Test(const KdNode& n, float t_lo, float t_hi, float margin, float entry[4]) const {
#if defined(__SSE2__)
    constexpr float kInf = std::numeric_limits<float>::infinity();
    __m128 t_near = _mm_set1_ps(-kInf), t_far = _mm_set1_ps(kInf);
    __m128 inside = _mm_castsi128_ps(_mm_set1_epi32(-1));
#pragma GCC unroll 3
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
    // The four 16-bit references in the high halves of 32-bit lanes.
    const __m128i refs = _mm_unpacklo_epi16(
        _mm_setzero_si128(), _mm_loadl_epi64(reinterpret_cast<const __m128i*>(n.child)));
    const __m128i empty =
        _mm_cmpeq_epi32(refs, _mm_set1_epi32(int(uint32_t(KdNode::kEmpty) << 16)));
    const __m128 hit =
        _mm_andnot_ps(_mm_castsi128_ps(empty), _mm_and_ps(inside, _mm_cmple_ps(t_near, t_far)));
    _mm_storeu_ps(entry, t_near);
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

}  // namespace kdtree_internal
}  // namespace voxcol
