#include "core/worldgen/cave_generator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

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

// Determinism. The generated world must stay exactly what CaveGenerator::kVersion 1 produced:
// stored worlds record the generator version and keep only edited chunks, so any change of a
// generated voxel would silently alter every stored world. The fast chunk path
// (PerlinNoise::AtGrid) is checked three ways: against golden hashes recorded from the original
// per-voxel code, against the per-voxel function VoxelAt, and noise value by noise value against
// PerlinNoise::At.

// FNV-1a over every voxel (material | occupancy << 8) of the chunks in `keys`, Y then Z then X.
uint64_t HashChunks(const CaveGenerator& gen, const IntBox& keys) {
  uint64_t hash = 1469598103934665603ull;
  Chunk chunk;
  for (int y = keys.min.y; y < keys.max.y; ++y)
    for (int z = keys.min.z; z < keys.max.z; ++z)
      for (int x = keys.min.x; x < keys.max.x; ++x) {
        gen.Generate({x, y, z}, &chunk);
        for (const Voxel& v : chunk.voxels)
          hash = (hash ^ uint64_t(v.material | v.occupancy << 8)) * 1099511628211ull;
      }
  return hash;
}

// Parameters whose lattice cells are a few voxels wide (several cells per chunk row).
CaveParams FineParams() {
  CaveParams p;
  p.continent_wavelength = 23.0f;
  p.continent_amplitude = 12.0f;
  p.tunnel_scale = 0.37f;
  p.tunnel_radius = 0.3f;
  p.blend = 1.5f;
  p.sea_level = 2;
  p.base_height = 3.5f;
  return p;
}

const IntBox kDefaultWorld{{-256, -96, -256}, {256, 96, 256}};  // 512x192x512, the service default
const IntBox kFineBounds{{-40, -20, -36}, {36, 28, 44}};

// Recorded with the per-voxel generator before the grid path existed (kVersion 1). A mismatch
// means generated voxels changed: that needs a new kVersion, never a new constant here.
TEST(GeneratorDeterminism, GoldenHashesOfVersion1) {
  static_assert(CaveGenerator::kVersion == 1, "re-record the hashes for a new generator version");
  EXPECT_EQ(HashChunks(CaveGenerator(1, kDefaultWorld), {{-6, -12, -6}, {6, 12, 6}}),
            0x1168d98254840805ull);
  EXPECT_EQ(HashChunks(CaveGenerator(1, kDefaultWorld), {{24, -12, -32}, {32, 12, -26}}),
            0x56d01382270fa204ull);
  EXPECT_EQ(HashChunks(CaveGenerator(12345, kFineBounds, FineParams()), {{-6, -4, -6}, {6, 5, 7}}),
            0x54695e5aefccfaeeull);
  EXPECT_EQ(
      HashChunks(CaveGenerator(99, {{-64, -48, -64}, {64, 48, 64}}), {{-9, -7, -9}, {9, 7, 9}}),
      0xd6afb0cc1dcfdd53ull);
}

TEST(GeneratorDeterminism, ChunksEqualThePerVoxelFunction) {
  struct Case {
    uint64_t seed;
    IntBox bounds;
    CaveParams params;
    IntBox keys;
  } cases[] = {
      {1, kDefaultWorld, CaveParams{}, {{-33, -13, 29}, {-29, 7, 33}}},  // crosses the world edge
      {12345, kFineBounds, FineParams(), {{-6, -4, -6}, {6, 5, 7}}},
      {7, {{-1000, -64, -1000}, {1000, 64, 1000}}, CaveParams{}, {{100, -8, -120}, {104, 6, -116}}},
  };
  for (const Case& c : cases) {
    CaveGenerator gen(c.seed, c.bounds, c.params);
    Chunk chunk;
    for (int cy = c.keys.min.y; cy < c.keys.max.y; ++cy)
      for (int cz = c.keys.min.z; cz < c.keys.max.z; ++cz)
        for (int cx = c.keys.min.x; cx < c.keys.max.x; ++cx) {
          const ChunkKey key{cx, cy, cz};
          gen.Generate(key, &chunk);
          for (int i = 0; i < kChunkVoxels; ++i) {
            const Int3 local{i & 7, i >> 6, (i >> 3) & 7};
            ASSERT_EQ(chunk.voxels[i], gen.VoxelAt(ChunkOrigin(key) + local))
                << "seed " << c.seed << " chunk " << cx << "," << cy << "," << cz << " voxel " << i;
          }
        }
  }
}

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

void ExpectAtGridEqualsAt() {
  std::mt19937 rng(3);
  PerlinNoise noise(77);
  for (int trial = 0; trial < 400; ++trial) {
    // Spacing from far below to above one lattice cell per point, origins on both sides of 0 and
    // beyond the 256-cell period.
    std::uniform_real_distribution<float> origin(-700.0f, 700.0f);
    const float spacing = std::ldexp(1.0f, int(rng() % 12) - 9) * (1.0f + float(rng() % 7) / 8.0f);
    float p[3][PerlinNoise::kGrid];
    for (auto& axis : p) {
      const float o =
          trial % 5 == 0 ? float(int(origin(rng))) : origin(rng);  // some on the lattice
      for (int i = 0; i < PerlinNoise::kGrid; ++i) axis[i] = o + spacing * float(i);
    }
    float grid[512];
    noise.AtGrid(p[0], p[1], p[2], grid);
    for (int i = 0; i < 512; ++i) {
      const float expected = noise.At(p[0][i & 7], p[1][i >> 6], p[2][(i >> 3) & 7]);
      ASSERT_EQ(Bits(grid[i]), Bits(expected)) << "trial " << trial << " point " << i;
    }
  }
}

// Both code paths: AVX2 (where the CPU has it) and SSE2.
TEST(GeneratorDeterminism, AtGridIsBitIdenticalToAt) { ExpectAtGridEqualsAt(); }

TEST(GeneratorDeterminism, AtGridSse2IsBitIdenticalToAt) {
  PerlinNoise::AllowAvx2ForTesting(false);
  ExpectAtGridEqualsAt();
  PerlinNoise::AllowAvx2ForTesting(true);
}

// PerlinNoise::AtLine (eight points along one axis, the other two fixed) against At, bit for
// bit, along each axis; it declines without AVX2.
TEST(GeneratorDeterminism, AtLineIsBitIdenticalToAt) {
  PerlinNoise noise(77);
  const float zeros[8] = {}, origin3[3] = {};
  float out[8];
  if (!noise.AtLine(0, zeros, origin3, out)) GTEST_SKIP() << "this CPU has no AVX2";
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> origin(-700.0f, 700.0f);
  // First rows whose lanes cross the lattice's wrap (cell 255 to 0) and zero, then random ones.
  const float wraps[] = {-3.7f, 253.5f, 511.5f, -256.6f, 16777200.0f};
  for (int trial = 0; trial < 900; ++trial) {
    const int axis = trial % 3;
    const bool wrap = trial < 3 * 5;
    const float spacing =
        wrap ? 0.9f : std::ldexp(1.0f, int(rng() % 12) - 9) * (1.0f + float(rng() % 7) / 8.0f);
    float fixed[3], coords[8];
    for (float& f : fixed) f = trial % 5 == 0 ? float(int(origin(rng))) : origin(rng);
    const float o = wrap             ? wraps[trial / 3]
                    : trial % 7 == 0 ? float(int(origin(rng)))
                                     : origin(rng);
    for (int i = 0; i < 8; ++i) coords[i] = o + spacing * float(i);
    ASSERT_TRUE(noise.AtLine(axis, coords, fixed, out));
    for (int i = 0; i < 8; ++i) {
      float p[3] = {fixed[0], fixed[1], fixed[2]};
      p[axis] = coords[i];
      ASSERT_EQ(Bits(out[i]), Bits(noise.At(p[0], p[1], p[2])))
          << "trial " << trial << " axis " << axis << " lane " << i;
    }
  }
  PerlinNoise::AllowAvx2ForTesting(false);
  EXPECT_FALSE(noise.AtLine(0, zeros, origin3, out));
  PerlinNoise::AllowAvx2ForTesting(true);
}

// GeneratePart writes Generate's voxels inside the part and leaves the rest alone, for the parts
// the broadphase and the mesher read of a neighbour (one or two layers, rows, corners) and random
// boxes, in chunks around the ground and across the world's faces.
void ExpectPartsEqualGenerate(uint64_t seed, const IntBox& bounds, const CaveParams& params,
                              const IntBox& keys) {
  const CaveGenerator gen(seed, bounds, params);
  std::mt19937 rng(uint32_t(seed) + 11);
  const Voxel sentinel{200, 77};
  for (int trial = 0; trial < 400; ++trial) {
    ChunkKey key;
    for (int a = 0; a < 3; ++a)
      key[a] = keys.min[a] + int(rng() % uint32_t(keys.max[a] - keys.min[a]));
    Chunk whole;
    gen.Generate(key, &whole);
    const Int3 o = ChunkOrigin(key);
    IntBox part;
    for (int a = 0; a < 3; ++a) {
      int lo = 0, hi = kChunkSize;
      switch (rng() % 5) {
        case 0:
          break;
        case 1:
          hi = 1;
          break;
        case 2:
          lo = kChunkSize - 1;
          break;
        case 3:
          hi = 2;
          break;
        default:
          lo = int(rng() % kChunkSize);
          hi = lo + 1 + int(rng() % uint32_t(kChunkSize - lo));
      }
      part.min[a] = o[a] + lo;
      part.max[a] = o[a] + hi;
    }
    Chunk got;
    got.voxels.fill(sentinel);
    gen.GeneratePart(key, part, &got);
    for (int i = 0; i < kChunkVoxels; ++i) {
      const Int3 v = o + Int3{i & 7, i >> 6, (i >> 3) & 7};
      ASSERT_EQ(got.voxels[i], part.Contains(v) ? whole.voxels[i] : sentinel)
          << "seed " << seed << " trial " << trial << " chunk " << key.x << "," << key.y << ","
          << key.z << " voxel " << i;
    }
  }
}

void ExpectAllPartsEqualGenerate() {
  ExpectPartsEqualGenerate(1, kDefaultWorld, CaveParams{}, {{-34, -8, -34}, {34, 8, 34}});
  ExpectPartsEqualGenerate(12345, kFineBounds, FineParams(), {{-6, -4, -6}, {6, 5, 7}});
}

// Eight lanes (AVX2, where the CPU has it), then voxel by voxel.
TEST(GeneratorDeterminism, PartsEqualGenerate) { ExpectAllPartsEqualGenerate(); }

TEST(GeneratorDeterminism, PartsWithoutAvx2EqualGenerate) {
  PerlinNoise::AllowAvx2ForTesting(false);
  ExpectAllPartsEqualGenerate();
  PerlinNoise::AllowAvx2ForTesting(true);
}

TEST(GeneratorDeterminism, Sse2ChunksMatchGoldenHashes) {
  PerlinNoise::AllowAvx2ForTesting(false);
  EXPECT_EQ(HashChunks(CaveGenerator(1, kDefaultWorld), {{-6, -12, -6}, {6, 12, 6}}),
            0x1168d98254840805ull);
  EXPECT_EQ(HashChunks(CaveGenerator(12345, kFineBounds, FineParams()), {{-6, -4, -6}, {6, 5, 7}}),
            0x54695e5aefccfaeeull);
  PerlinNoise::AllowAvx2ForTesting(true);
}

}  // namespace
}  // namespace voxcol
