// ReadVoxels / WriteVoxels: layout, exact round trips, limits, snapshot consistency.
#include "core/voxel/voxel_io.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "core/voxel/edit_shapes.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

// Random canonical voxels: a third air, the rest any material 1..255 with occupancy 1..255.
VoxelArrays RandomVoxels(const IntBox& region, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(1, 255), kind(0, 2);
  VoxelArrays v{region, {}, {}};
  for (int64_t i = 0; i < region.Volume(); ++i) {
    bool air = kind(rng) == 0;
    v.materials.push_back(air ? 0 : uint8_t(byte(rng)));
    v.occupancies.push_back(air ? 0 : uint8_t(byte(rng)));
  }
  return v;
}

TEST(VoxelIo, ArraysAreXFastestThenZThenY) {
  auto world = testing::MakeFunctionWorld([](const Int3& v) {
    return Voxel{uint8_t(2 + (v.x & 7)), uint8_t(1 + (v.y & 15) * 16 + (v.z & 15))};
  });
  IntBox region{{-3, -2, -5}, {4, 1, 2}};
  uint64_t version = 99;
  absl::StatusOr<VoxelArrays> read = ReadVoxels(*world, region, EditLimits{}, &version);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(version, 0u);
  int64_t i = 0;
  for (int y = region.min.y; y < region.max.y; ++y)
    for (int z = region.min.z; z < region.max.z; ++z)
      for (int x = region.min.x; x < region.max.x; ++x, ++i) {
        Voxel expected = world->GetVoxel({x, y, z});
        ASSERT_EQ(read->materials[i], expected.material) << i;
        ASSERT_EQ(read->occupancies[i], expected.occupancy) << i;
        ASSERT_EQ(VoxelArrayIndex(region, {x, y, z}), i);
      }
}

TEST(VoxelIo, WriteThenReadRoundTripsExactlyAcrossChunkBorders) {
  auto world = testing::MakeCaveWorld(3, {64, 64, 64});
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> lo(-32, 10), len(1, 21);
    Int3 min{lo(rng), lo(rng), lo(rng)};
    IntBox region{min, min + Int3{len(rng), len(rng), len(rng)}};
    VoxelArrays written = RandomVoxels(region, seed);
    auto result = world->Edit([&](ChunkEdit& e) { return WriteVoxels(e, written, EditLimits{}); });
    ASSERT_TRUE(result.ok()) << result.status();
    uint64_t version = 0;
    absl::StatusOr<VoxelArrays> read = ReadVoxels(*world, region, EditLimits{}, &version);
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(version, result->version);
    EXPECT_EQ(read->materials, written.materials);
    EXPECT_EQ(read->occupancies, written.occupancies);
    // Voxels just outside the region are untouched: compare with a fresh world of the same seed.
    auto fresh = testing::MakeCaveWorld(3, {64, 64, 64});
    Int3 outside = region.max;
    if (world->voxel_bounds().Contains(outside)) {
      EXPECT_EQ(world->GetVoxel(outside), fresh->GetVoxel(outside));
    }
  }
}

TEST(VoxelIo, NonCanonicalInputIsStoredCanonically) {
  auto world = testing::MakeEmptyWorld();
  VoxelArrays v{{{0, 0, 0}, {2, 1, 1}}, {kMaterialAir, kMaterialRock}, {200, 0}};
  ASSERT_TRUE(world->Edit([&](ChunkEdit& e) { return WriteVoxels(e, v, EditLimits{}); }).ok());
  EXPECT_EQ(world->GetVoxel({0, 0, 0}), Voxel{});
  EXPECT_EQ(world->GetVoxel({1, 0, 0}), Voxel{});
}

TEST(VoxelIo, LimitsAndSizesAreCheckedBeforeAnythingIsWritten) {
  auto world = testing::MakeEmptyWorld();
  EditLimits limits;
  limits.max_region_voxels = 4096;
  IntBox big{{0, 0, 0}, {16, 16, 17}};
  EXPECT_EQ(ReadVoxels(*world, big, limits, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadVoxels(*world, {{0, 0, 0}, {16, 16, 16}}, limits, nullptr).status().code(),
            absl::StatusCode::kOk);
  EXPECT_EQ(ReadVoxels(*world, {{0, 0, 0}, {0, 1, 1}}, limits, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadVoxels(*world, {{0, 0, 30}, {1, 1, 33}}, limits, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  VoxelArrays short_arrays = RandomVoxels({{0, 0, 0}, {4, 4, 4}}, 5);
  short_arrays.occupancies.pop_back();
  auto result = world->Edit([&](ChunkEdit& e) { return WriteVoxels(e, short_arrays, limits); });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message().rfind("occupancies", 0), 0u) << result.status();
  VoxelArrays too_big = RandomVoxels(big, 6);
  result = world->Edit([&](ChunkEdit& e) { return WriteVoxels(e, too_big, limits); });
  EXPECT_EQ(result.status().message().rfind("region", 0), 0u) << result.status();
  EXPECT_EQ(world->version(), 0u);
  EXPECT_EQ(world->GetVoxel({0, 0, 0}), Voxel{});
}

// A writer flips a 24^3 box (27 chunks) between two uniform materials; every read must see one of
// them everywhere, never a mix, and the version it reports must match the material.
TEST(VoxelIo, ReadsAreSnapshotsWhileEditsPublish) {
  auto world = testing::MakeEmptyWorld();
  IntBox region{{-12, -12, -12}, {12, 12, 12}};
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop.load() && i < 2000; ++i) {
      uint8_t m = (i % 2 == 0) ? kMaterialRock : kMaterialDirt;  // version i+1 has material m
      ASSERT_TRUE(
          world->Edit([&](ChunkEdit& e) {
                 return FillRegion(e, {region, m, EditMode::kSet}, {});
               })
              .ok());
    }
  });
  for (int i = 0; i < 200; ++i) {
    uint64_t version = 0;
    absl::StatusOr<VoxelArrays> read = ReadVoxels(*world, region, EditLimits{}, &version);
    ASSERT_TRUE(read.ok());
    uint8_t expected =
        version == 0 ? kMaterialAir : (version % 2 == 1 ? kMaterialRock : kMaterialDirt);
    for (uint8_t m : read->materials) ASSERT_EQ(m, expected) << "version " << version;
  }
  stop = true;
  writer.join();
}

}  // namespace
}  // namespace voxcol
