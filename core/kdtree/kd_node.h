// The kD-tree's storage format: 4-wide nodes whose child boxes are bytes on a per-tree grid
// (core/kdtree/kd_tree.h describes the tree). Shared by the build, the traversal and its SIMD
// tests.
#pragma once

#include <cassert>
#include <cstdint>

namespace voxcol {

// The grid of the node boxes, one per tree: box byte k on axis a covers the 16-bit vertex
// coordinates q[a] in [base[a] + (k << shift), base[a] + ((k + 1) << shift) - 1]. base is the
// tree's lowest vertex coordinate and shift the least that fits its extent in 256 cells (a chunk's
// vertices span 8 voxels = 32768 steps, so cells are 1/32 or 1/16 voxel).
struct KdGrid {
  uint16_t base[3] = {0, 0, 0};
  uint8_t shift = 0;
};

// 32 bytes (half a cache line): up to four children, each a box on the tree's KdGrid (structure
// of arrays: box[axis] holds the four children's low bytes, then their high bytes, so one 8-byte
// load feeds the SIMD lanes of an axis) and a 16-bit reference:
//   an inner node: its index (< kEmpty);
//   a leaf: kLeaf | (count - 1) << 13 | first, the range of `count` (1..kLeafMax) consecutive mesh
//     triangles from `first` (KdTree::Build reorders the mesh's triangles into leaf order);
//   no child: kEmpty (its box bytes are zero).
// A child's box contains the 16-bit corners of every triangle below it.
struct alignas(32) KdNode {
  static constexpr uint16_t kLeaf = 1u << 15, kEmpty = 0x7fff;
  static constexpr uint32_t kLeafMax = 4;            // triangles per leaf: one 4-wide ray test
  static constexpr uint32_t kFirstLimit = 1u << 13;  // leaf ranges start below this
  uint8_t box[3][8] = {};
  uint16_t child[4] = {kEmpty, kEmpty, kEmpty, kEmpty};

  uint32_t lo(int axis, int slot) const { return box[axis][slot]; }
  uint32_t hi(int axis, int slot) const { return box[axis][4 + slot]; }

  static bool IsLeaf(uint32_t ref) { return (ref & kLeaf) != 0; }
  static uint32_t LeafCount(uint32_t ref) { return 1 + ((ref >> 13) & 3); }
  static uint32_t LeafFirst(uint32_t ref) { return ref & (kFirstLimit - 1); }
  static uint16_t MakeLeaf(uint32_t first, uint32_t count) {
    assert(first < kFirstLimit && count >= 1 && count <= kLeafMax);
    return uint16_t(kLeaf | (count - 1) << 13 | first);
  }
};
static_assert(sizeof(KdNode) == 32, "nodes are 32 bytes");
static_assert(KdNode::kLeafMax >= 1 && KdNode::kLeafMax <= 4, "a leaf count has two bits");

}  // namespace voxcol
