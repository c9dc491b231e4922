#include <gtest/gtest.h>

#include <random>

#include "core/store/chunk_codec.h"
#include "core/store/keys.h"

namespace voxcol::store {
namespace {

TEST(StoreKeys, EncodedOrderIsCoordinateOrderIncludingNegatives) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> coord(-70000, 70000);
  for (int i = 0; i < 20000; ++i) {
    Int3 a{coord(rng), coord(rng), coord(rng)}, b{coord(rng) % 3, coord(rng), coord(rng)};
    if (i % 2) b.x = a.x;  // exercise the later components too
    bool bytewise = EncodeKey(kChunkPrefix, a) < EncodeKey(kChunkPrefix, b);
    bool coords = std::tie(a.x, a.y, a.z) < std::tie(b.x, b.y, b.z);
    ASSERT_EQ(bytewise, coords) << i;
    Int3 back;
    ASSERT_TRUE(DecodeKey(EncodeKey(kChunkPrefix, a), kChunkPrefix, &back));
    ASSERT_EQ(back, a);
  }
  Int3 unused;
  EXPECT_FALSE(DecodeKey(EncodeKey(kRegionPrefix, {1, 2, 3}), kChunkPrefix, &unused));
}

TEST(StoreKeys, RegionOfFloorsNegativeChunks) {
  EXPECT_EQ(RegionOf({-1, 0, 3}), (Int3{-1, 0, 0}));
  EXPECT_EQ(RegionOf({-4, 4, -5}), (Int3{-1, 1, -2}));
}

TEST(ChunkCodec, RoundTripsRandomAndUniformChunks) {
  std::mt19937 rng(3);
  Chunk chunk;
  for (Voxel& v : chunk.voxels) v = Canonical(Voxel{uint8_t(rng()), uint8_t(rng())});
  absl::StatusOr<ChunkPtr> back = DecodeChunk(EncodeChunk(chunk), "test");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->voxels, chunk.voxels);
  Chunk rock;
  rock.voxels.fill(Voxel{kMaterialRock, 255});
  std::string encoded = EncodeChunk(rock);
  EXPECT_EQ(encoded.size(), 7u);  // header + one voxel
  EXPECT_EQ(*DecodeChunk(encoded, "test"), UniformChunk(Voxel{kMaterialRock, 255}));
}

TEST(ChunkCodec, EveryDamagedByteIsDataLossNeverGarbage) {
  Chunk chunk;
  for (int i = 0; i < kChunkVoxels; ++i)
    chunk.voxels[i] = Voxel{uint8_t(2 + i % 7), uint8_t(1 + i % 250)};
  const std::string good = EncodeChunk(chunk);
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x5A;
    absl::StatusOr<ChunkPtr> decoded = DecodeChunk(bad, "chunk (1, 2, 3)");
    ASSERT_FALSE(decoded.ok()) << "byte " << i;
    ASSERT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
  }
  EXPECT_EQ(DecodeChunk(good.substr(0, 100), "x").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeChunk("", "x").status().code(), absl::StatusCode::kDataLoss);
}

TEST(ChunkCodec, Crc32MatchesTheStandardCheckValue) { EXPECT_EQ(Crc32("123456789"), 0xCBF43926u); }

}  // namespace
}  // namespace voxcol::store
