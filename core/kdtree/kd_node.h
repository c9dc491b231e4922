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

}  // namespace voxcol
