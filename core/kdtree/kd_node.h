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

// 40 bytes: up to four children, each a box on the tree's KdGrid (structure of arrays: box[axis]
// holds the four children's low bytes, then their high bytes, so one 8-byte load feeds the SIMD
// lanes of an axis) and a reference:
//   an inner node: its index;
//   a leaf: kLeaf | (count - 1) << 15 | first, the range of `count` (1..kLeafMax) consecutive mesh
//     triangles from `first` (KdTree::Build reorders the mesh's triangles into leaf order);
//   no child: kEmpty (its box bytes are zero).
// A child's box contains the 16-bit corners of every triangle below it.
struct KdNode {
  static constexpr uint32_t kLeaf = 1u << 31, kEmpty = 0x7fffffffu;
  static constexpr uint32_t kLeafMax = 4;  // triangles per leaf: one 4-wide ray test
  uint8_t box[3][8] = {};
  uint32_t child[4] = {kEmpty, kEmpty, kEmpty, kEmpty};

  uint32_t lo(int axis, int slot) const { return box[axis][slot]; }
  uint32_t hi(int axis, int slot) const { return box[axis][4 + slot]; }

  static bool IsLeaf(uint32_t ref) { return (ref & kLeaf) != 0; }
  // Bit i set when child[i] is a leaf.
  uint32_t LeafMask() const {
    return child[0] >> 31 | (child[1] >> 31) << 1 | (child[2] >> 31) << 2 | (child[3] >> 31) << 3;
  }
  static uint32_t LeafCount(uint32_t ref) { return 1 + ((ref >> 15) & 3); }
  static uint32_t LeafFirst(uint32_t ref) { return ref & 0x7fff; }
  // Bits 17..30 of a leaf are zero.
  static bool LeafIsCanonical(uint32_t ref) { return (ref & 0x7ffe0000u) == 0; }
  static uint32_t MakeLeaf(uint32_t first, uint32_t count) {
    assert(first < (1u << 15) && count >= 1 && count <= kLeafMax);
    return kLeaf | (count - 1) << 15 | first;
  }
};
static_assert(sizeof(KdNode) == 40, "nodes are 40 bytes");
static_assert(KdNode::kLeafMax >= 1 && KdNode::kLeafMax <= 4, "a leaf count has two bits");

}  // namespace voxcol
