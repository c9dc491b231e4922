#include "core/worldgen/cave_generator.h"

#include <gtest/gtest.h>

#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

const IntBox kBounds{{-64, -48, -64}, {64, 48, 64}};

TEST(CaveGenerator, SameSeedGivesIdenticalChunks) {
  CaveGenerator a(42, kBounds), b(42, kBounds);
  for (int cy = -6; cy < 6; ++cy)
    for (int cx = -3; cx < 3; ++cx) {
      Chunk ca, cb;
      a.Generate({cx, cy, cx + 1}, &ca);
      b.Generate({cx, cy, cx + 1}, &cb);
      ASSERT_TRUE(ca.voxels == cb.voxels) << cx << "," << cy;
    }
}

TEST(CaveGenerator, DifferentSeedsGiveDifferentTerrain) {
  CaveGenerator a(1, kBounds), b(2, kBounds);
  int differing = 0;
  for (int z = -64; z < 64; z += 4)
    for (int y = -48; y < 48; y += 4)
      for (int x = -64; x < 64; x += 4) differing += a.VoxelAt({x, y, z}) != b.VoxelAt({x, y, z});
  EXPECT_GT(differing, 500);
}

TEST(CaveGenerator, ChunksAgreeWithThePerVoxelFunction) {
  CaveGenerator gen(7, kBounds);
  for (ChunkKey key :
       {ChunkKey{0, 0, 0}, ChunkKey{-1, -1, -1}, ChunkKey{3, -4, -8}, ChunkKey{-8, 5, 7}}) {
    Chunk chunk;
    gen.Generate(key, &chunk);
    for (int y = 0; y < kChunkSize; ++y)
      for (int z = 0; z < kChunkSize; ++z)
        for (int x = 0; x < kChunkSize; ++x) {
          ASSERT_EQ(chunk.At(x, y, z), gen.VoxelAt(ChunkOrigin(key) + Int3{x, y, z}));
        }
  }
}

TEST(CaveGenerator, WorldHasSkyGroundCavesAndWater) {
  CaveParams params;
  CaveGenerator gen(3, kBounds, params);
  int solid = 0, underground_air = 0, water = 0, sky = 0, partial = 0;
  for (int z = -64; z < 64; ++z)
    for (int x = -64; x < 64; ++x) {
      bool below_ground = false;
      for (int y = 47; y >= -48; --y) {
        Voxel v = gen.VoxelAt({x, y, z});
        ASSERT_EQ(v, Canonical(v));
        if (IsSolidMaterial(v.material)) {
          ++solid;
          below_ground = true;
          partial += v.occupancy > 0 && v.occupancy < 255;
        } else if (v.material == kMaterialWater) {
          ++water;
          EXPECT_LT(y, params.sea_level);
        } else if (below_ground) {
          ++underground_air;
        } else {
          ++sky;
        }
      }
    }
  const int total = 128 * 128 * 96;
  EXPECT_GT(solid, total / 5);
  EXPECT_GT(sky, total / 10);
  EXPECT_GT(underground_air, total / 200) << "no caves carved";
  EXPECT_GT(partial, 128 * 128 / 2) << "surface is not smooth";
  EXPECT_GT(water, 0);
}

TEST(CaveGenerator, OutsideTheBoundsIsAir) {
  CaveGenerator gen(3, kBounds);
  EXPECT_EQ(gen.VoxelAt({0, -49, 0}), Voxel{});
  EXPECT_EQ(gen.VoxelAt({64, -40, 0}), Voxel{});
}

TEST(CaveGenerator, LazyWorldGeneratesOnlyTouchedChunks) {
  auto world = testing::MakeCaveWorld(5);
  EXPECT_EQ(world->resident_chunks(), 0u);
  world->GetVoxel({0, 0, 0});
  world->GetVoxel({1, 1, 1});
  EXPECT_EQ(world->resident_chunks(), 1u);
  world->GetVoxel({-1, 0, 0});
  EXPECT_EQ(world->resident_chunks(), 2u);
}

}  // namespace
}  // namespace voxcol
