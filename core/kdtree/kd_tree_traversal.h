// Internal to the kD-tree: the bodies of KdTree's query templates (declared and documented in
// core/kdtree/kd_tree.h, which includes this file at its end). They stay in a header so that each
// collector's AddHit / early_out and the SIMD node tests (kd_tree_simd.h) inline into the walk.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/numeric/bits.h"
#include "core/geometry/ray_aabb.h"
#include "core/geometry/vec3.h"
#include "core/kdtree/kd_node.h"
#include "core/kdtree/kd_tree.h"
#include "core/kdtree/kd_tree_simd.h"
#include "core/mesh/chunk_mesh.h"

namespace voxcol {

template <typename Collector>
void KdTree::CollideAabb(const ChunkMesh& mesh, const Aabb& box, Collector& collector,
                         KdStats* stats) const {
  if (nodes_.empty()) return;
  const Aabb bounds = this->bounds(mesh);
  if (!bounds.Overlaps(box)) return;
  // A box around the whole tree overlaps every child box and triangle box (all lie in the bounds,
  // the corners' exact AABB): take them untested, in the same order.
  const bool all = box.ContainsBox(bounds);
  const kdtree_internal::KdBoxDecoder decode(mesh, grid_);
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
    uint32_t mask = 0xf;
    if (!all) {
#if defined(__SSE2__)
      __m128 overlap = _mm_castsi128_ps(_mm_set1_epi32(-1));
      for (int a = 0; a < 3; ++a) {
        __m128 lo, hi;
        decode.Decode4(node, a, &lo, &hi);
        overlap = _mm_and_ps(
            overlap, _mm_and_ps(_mm_cmple_ps(lo, box_max[a]), _mm_cmpge_ps(hi, box_min[a])));
      }
      mask = uint32_t(_mm_movemask_ps(overlap));
#else
      mask = 0;
      for (int i = 0; i < 4; ++i) {
        bool overlaps = true;
        for (int a = 0; a < 3; ++a) {
          overlaps = overlaps && decode.Lo(node, a, i) <= Component(box.max, a) &&
                     decode.Hi(node, a, i) >= Component(box.min, a);
        }
        mask |= uint32_t(overlaps) << i;
      }
#endif
    }
    for (; mask != 0; mask &= mask - 1) {
      const uint32_t ref = node.child[absl::countr_zero(mask)];
      if (ref == KdNode::kEmpty) continue;
      if (!KdNode::IsLeaf(ref)) {
        stack[sp++] = ref;
        continue;
      }
      ++visited;
      const uint32_t first = KdNode::LeafFirst(ref);
      for (uint32_t i = 0; i < KdNode::LeafCount(ref) && !collector.done(); ++i) {
        const uint32_t tri = first + i;
        if (all) {
          collector.AddTriangle(tri);
          continue;
        }
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
  // The root is usually a cache miss (rays visit chunks scattered over the world): start loading
  // it before the clip, which reads other lines.
  const char* root = reinterpret_cast<const char*>(nodes_.data());
  __builtin_prefetch(root);
  __builtin_prefetch(root + sizeof(KdNode) - 1);
  // Float error of a crossing: relative to t (KdBoxClip::kRelEps), plus the rounding of
  // coordinates of this size: the origin's and the tree's. 1e-6 of their magnitude is several
  // ulps, so the grown box below is strictly larger than the bounds however far they are from 0.
  const Aabb bounds = this->bounds(mesh);
  float size = 1.0f;
  for (int a = 0; a < 3; ++a) {
    size += std::fabs(Component(ray.origin, a)) +
            std::max(std::fabs(Component(bounds.min, a)), std::fabs(Component(bounds.max, a)));
  }
  const float abs_eps = 1e-6f * size;
  float t0 = ray.t_min, t1 = collector.early_out();
  Aabb grown{bounds.min - Vec3(abs_eps, abs_eps, abs_eps),
             bounds.max + Vec3(abs_eps, abs_eps, abs_eps)};
  if (!ClipRayToAabb(ray.origin, ray.inv_direction, grown, &t0, &t1)) return;
  const kdtree_internal::MeshRayFrame frame(mesh, ray.watertight);
  const kdtree_internal::KdBoxClip clip(mesh, grid_, ray.origin, ray.inv_direction, abs_eps);
  const float t_lo = t0 - clip.Margin(t0, t0);
  uint32_t visited = 0, tested = 0;
  struct Entry {
    uint32_t ref;  // a node index or a leaf reference (KdNode::child)
    float t;       // widened entry distance
  };
  Entry stack[kStackSize];  // waiting children, nearest on top
  int sp = 0;
  uint32_t ref = 0;  // the root
  for (;;) {
    if (KdNode::IsLeaf(ref)) {
      // The leaf's triangles against one early-out distance; a hit beyond the distance another
      // lane just set is dropped, so collectors only see t <= early_out().
      const uint32_t first = KdNode::LeafFirst(ref), count = KdNode::LeafCount(ref);
      float t[4];
      for (uint32_t hits = frame.IntersectLeaf(mesh, first, count, collector.early_out(), t);
           hits != 0; hits &= hits - 1) {
        const uint32_t i = absl::countr_zero(hits);
        if (t[i] >= ray.t_min && t[i] <= collector.early_out()) collector.AddHit({t[i], first + i});
      }
      ++visited;
      tested += count;
    } else {
      const KdNode& node = nodes_[ref];
      ++visited;
      const float t_hi = std::min(t1, collector.early_out());
      float entry[4];
      uint32_t mask = clip.Test(node, t_lo, t_hi, clip.Margin(t_lo, t_hi), entry);
      if (mask != 0) {
        uint32_t i = absl::countr_zero(mask);
        mask &= mask - 1;
        if (mask == 0) {  // one child: descend
          ref = node.child[i];
          continue;
        }
        if ((mask & (mask - 1)) == 0) {  // two: push the farther, descend into the nearer
          const uint32_t j = absl::countr_zero(mask);
          const bool swap = entry[j] < entry[i];
          const uint32_t nearer = swap ? j : i, farther = swap ? i : j;
          stack[sp++] = {node.child[farther], entry[farther]};
          ref = node.child[nearer];
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
        ref = stack[--sp].ref;
        continue;
      }
    }
    // Next: the nearest waiting child that starts before the early-out distance.
    while (sp > 0 && stack[sp - 1].t > collector.early_out()) --sp;
    if (sp == 0) break;
    ref = stack[--sp].ref;
  }
  if (stats) {
    stats->nodes_visited += visited;
    stats->triangles_tested += tested;
  }
}

}  // namespace voxcol
