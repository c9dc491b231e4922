#include "core/mesh/mesh_array.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "core/kdtree/kd_node.h"
#include "core/mesh/chunk_mesh.h"

namespace voxcol {
namespace {

// Random operations on a MeshArray and a std::vector side by side: the same elements after each,
// and storage the array borrowed never changes.
TEST(MeshArrayTest, BehavesAsAVectorUnderRandomOperations) {
  std::mt19937 rng(5);
  MeshArray<uint16_t> a;
  std::vector<uint16_t> v;
  std::vector<uint16_t> block;         // storage that `a` may borrow, one word longer
  std::vector<uint16_t> block_before;  // what it held when lent
  for (int step = 0; step < 40000; ++step) {
    const uint16_t x = uint16_t(rng());
    const size_t at = v.empty() ? 0 : rng() % (v.size() + 1);
    switch (rng() % 13) {
      case 0:
      case 1:
        a.push_back(x);
        v.push_back(x);
        break;
      case 2:
        if (!v.empty()) {  // an argument naming an element, as std::vector allows
          a.push_back(a[at % v.size()]);
          v.push_back(v[at % v.size()]);
        }
        break;
      case 3:
        a.insert(a.begin() + at, {x, uint16_t(x + 1), uint16_t(x + 2)});
        v.insert(v.begin() + long(at), {x, uint16_t(x + 1), uint16_t(x + 2)});
        break;
      case 4: {
        const size_t n = rng() % 40;
        a.resize(n, x);
        v.resize(n, x);
        break;
      }
      case 5:
        if (rng() % 8 == 0) {
          a.clear();
          v.clear();
        }
        break;
      case 6: {  // borrow a copy of the elements, as the cache's block does
        block.assign(v.begin(), v.end());
        block.push_back(0xbeef);  // a borrowed array must not write past its elements
        block_before = block;
        a.Borrow(block.data(), uint32_t(v.size()));
        ASSERT_EQ(a.borrowed(), !v.empty());
        break;
      }
      case 7: {
        MeshArray<uint16_t> copy = a;  // exact-size, owned
        ASSERT_FALSE(copy.borrowed());
        ASSERT_EQ(copy, a);
        a = std::move(copy);
        break;
      }
      case 8:
        a.shrink_to_fit();
        break;
      case 9:
        if (!v.empty()) {  // a write through non-const access
          a[at % v.size()] = x;
          v[at % v.size()] = x;
          ASSERT_FALSE(a.borrowed());
        }
        break;
      case 10: {
        const size_t n = rng() % 12;
        a.assign(n, x);
        v.assign(n, x);
        break;
      }
      case 11: {
        MeshArray<uint16_t> other = {x};
        a.swap(other);
        other.swap(a);
        const MeshArray<uint16_t>& self = a;
        a = self;  // self-assignment keeps the elements
        break;
      }
      case 12:
        if (!v.empty()) {
          a.emplace_back(a.back());
          v.emplace_back(v.back());
        }
        break;
    }
    ASSERT_EQ(a.size(), v.size()) << "step " << step;
    ASSERT_TRUE(std::equal(v.begin(), v.end(), std::as_const(a).begin())) << "step " << step;
    ASSERT_EQ(block, block_before) << "step " << step << ": the array wrote to what it borrowed";
  }
}

TEST(MeshArrayTest, ComparesSizesAndElements) {
  const MeshArray<uint8_t> a = {1, 2, 3};
  EXPECT_EQ(a, (MeshArray<uint8_t>{1, 2, 3}));
  EXPECT_NE(a, (MeshArray<uint8_t>{1, 2}));
  EXPECT_NE(a, (MeshArray<uint8_t>{1, 2, 4}));
  EXPECT_NE(a, MeshArray<uint8_t>());
}

TEST(MeshArrayTest, OverAlignedElementsAreAligned) {
  MeshArray<KdNode> nodes;
  for (int i = 0; i < 100; ++i) {
    nodes.emplace_back();
    ASSERT_EQ(reinterpret_cast<uintptr_t>(nodes.data()) % alignof(KdNode), 0u);
    ASSERT_EQ(nodes.back().child[0], KdNode::kEmpty);  // constructed with its initializers
  }
  const MeshArray<KdNode> copy = nodes;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % alignof(KdNode), 0u);
  EXPECT_EQ(copy.size(), 100u);
}

TEST(MeshArrayTest, BorrowCopyOfKeepsTheElementsThere) {
  const MeshArray<uint16_t> source = {1, 2, 3, 4, 5};
  MeshArray<uint16_t> a = {9};
  std::vector<uint16_t> block(5);
  char* to = reinterpret_cast<char*>(block.data());
  EXPECT_EQ(a.BorrowCopyOf(source, to), to + 5 * sizeof(uint16_t));  // the end of the copy
  EXPECT_TRUE(a.borrowed());
  EXPECT_EQ(std::as_const(a).data(), block.data());
  EXPECT_EQ(block, (std::vector<uint16_t>{1, 2, 3, 4, 5}));
  a.push_back(6);  // a change copies out first: the block stays as it was
  EXPECT_FALSE(a.borrowed());
  EXPECT_EQ(block, (std::vector<uint16_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(a, (MeshArray<uint16_t>{1, 2, 3, 4, 5, 6}));

  MeshArray<uint16_t> none = {8};  // copying an empty array borrows nothing
  EXPECT_EQ(none.BorrowCopyOf(MeshArray<uint16_t>(), to), to);
  EXPECT_FALSE(none.borrowed());
  EXPECT_EQ(std::as_const(none).data(), nullptr);
  none.resize(0);
  none.push_back(7);
  EXPECT_EQ(none, (MeshArray<uint16_t>{7}));
}

// The cache's layout: a copy of a mesh with its arrays packed back to back reads the same, in
// place.
TEST(MeshArrayTest, CopyPackedKeepsTheMeshAndReadsTheBlock) {
  ChunkMesh mesh;
  mesh.origin = {16, 0, -32};
  for (uint16_t i = 0; i < 7; ++i) {
    mesh.vertices.push_back({uint16_t(i * 300), uint16_t(i * 7), uint16_t(1000 - i)});
    mesh.normals.push_back({uint16_t(i), uint16_t(i + 1), uint16_t(i + 2)});
  }
  for (uint16_t t = 0; t < 5; ++t) {
    mesh.AddTriangle(t, uint16_t(t + 1), uint16_t(t + 2));
    mesh.materials.push_back(uint8_t(3 + t));  // odd byte count: materials go last
  }
  mesh.NarrowIndices();
  const ChunkMesh before = mesh;
  std::vector<char> storage(mesh.ArrayBytes() + 2);
  char* block = storage.data() + (reinterpret_cast<uintptr_t>(storage.data()) & 1);  // 2-aligned
  ChunkMesh packed;
  packed.CopyPacked(before, block);
  mesh = std::move(packed);
  EXPECT_EQ(mesh.origin, before.origin);
  EXPECT_EQ(reinterpret_cast<const char*>(std::as_const(mesh).vertices.data()), block);
  EXPECT_EQ(reinterpret_cast<const char*>(std::as_const(mesh).materials.data()),
            block + mesh.ArrayBytes() - 5);
  EXPECT_EQ(mesh.vertices, before.vertices);
  EXPECT_EQ(mesh.normals, before.normals);
  EXPECT_EQ(mesh.materials, before.materials);
  ASSERT_EQ(mesh.triangle_count(), before.triangle_count());
  EXPECT_TRUE(mesh.narrow());
  for (uint32_t t = 0; t < mesh.triangle_count(); ++t)
    EXPECT_EQ(mesh.TriangleIndices(t), before.TriangleIndices(t)) << "triangle " << t;
}

}  // namespace
}  // namespace voxcol
