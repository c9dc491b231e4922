// Interval bounds of the generator's fields (noise_bounds.cc, cave_bounds.cc) against the fields
// themselves: every value the noise or the generator produces must lie within its bound, and every
// box the generator proves uniform must generate uniform.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/worldgen/cave_generator.h"
#include "core/worldgen/perlin_noise.h"

namespace voxcol {
namespace {

// Random boxes of noise space, small to a few cells wide, at small, negative (a fraction of
// -0.0...01 rounds up to 1) and large coordinates; every sampled At (corners included) lies in
// RangeOver.
TEST(NoiseBounds, RangeOverContainsEverySampledValue) {
  std::mt19937 rng(77);
  std::uniform_real_distribution<double> unit(0, 1);
  const double centres[] = {0.0, -1e-6, 3.5, -17.25, 1000.0, -40000.0};
  int tight = 0, boxes = 0;
  for (uint64_t seed : {1ull, 42ull, 0xA5A5A5A5A5A5A5A5ull}) {
    PerlinNoise noise(seed);
    for (int b = 0; b < 400; ++b, ++boxes) {
      const double size = std::pow(10.0, -3 + 3.5 * unit(rng));  // 0.001 .. ~3
      double lo[3], hi[3];
      for (int a = 0; a < 3; ++a) {
        lo[a] = float(centres[b % 6] + 4 * (unit(rng) - 0.5));
        hi[a] = float(lo[a] + size * unit(rng));
      }
      const PerlinNoise::Range r = noise.RangeOver(lo, hi);
      ASSERT_LE(r.lo, r.hi);
      tight += r.hi - r.lo < 0.5;
      for (int s = 0; s < 300; ++s) {
        float p[3];
        for (int a = 0; a < 3; ++a) {
          const double t = s < 8 ? double((s >> a) & 1) : unit(rng);
          p[a] = std::clamp(float(lo[a] + t * (hi[a] - lo[a])), float(lo[a]), float(hi[a]));
        }
        const float v = noise.At(p[0], p[1], p[2]);
        ASSERT_GE(v, r.lo) << "box " << b << " at (" << p[0] << ", " << p[1] << ", " << p[2] << ")";
        ASSERT_LE(v, r.hi) << "box " << b << " at (" << p[0] << ", " << p[1] << ", " << p[2] << ")";
      }
    }
  }
  // Not the trivial bound: most small boxes get a narrow interval.
  EXPECT_GT(tight, boxes / 3);
}

struct GenSetup {
  const char* name;
  uint64_t seed;
  IntBox bounds;
  CaveParams params;
};

std::vector<GenSetup> Setups() {
  CaveParams high_sea;
  high_sea.sea_level = 12;
  CaveParams wide_tunnels;
  wide_tunnels.tunnel_radius = 0.45f;
  wide_tunnels.continent_amplitude = 60;
  CaveParams flat;
  flat.continent_amplitude = 4;
  flat.base_height = -20;
  return {
      {"default", 1, {{-128, -96, -128}, {128, 96, 128}}, {}},
      // Bounds off the chunk grid (a world of 200 x 116 x 200 voxels): chunks straddle the faces.
      {"straddling", 7, {{-100, -58, -100}, {100, 58, 100}}, {}},
      {"high_sea", 42, {{-96, -64, -96}, {96, 64, 96}}, high_sea},
      {"wide_tunnels", 1234, {{-96, -96, -96}, {96, 96, 96}}, wide_tunnels},
      {"flat_below_sea", 5, {{-64, -48, -64}, {64, 48, 64}}, flat},
  };
}

// Every chunk of each world (and one ring outside it) that ProvenUniform proves: the generated
// chunk is that voxel throughout. Each setup must prove air, water (where it has sea) and rock.
TEST(CaveBounds, ProvenUniformChunksGenerateUniform) {
  int water_total = 0;
  for (const GenSetup& s : Setups()) {
    CaveGenerator gen(s.seed, s.bounds, s.params);
    const ChunkKey lo = ChunkOf(s.bounds.min) - Int3{1, 1, 1};
    const ChunkKey hi = ChunkOf(s.bounds.max - Int3{1, 1, 1}) + Int3{1, 1, 1};
    int air = 0, water = 0, rock = 0, chunks = 0;
    for (int y = lo.y; y <= hi.y; ++y)
      for (int z = lo.z; z <= hi.z; ++z)
        for (int x = lo.x; x <= hi.x; ++x, ++chunks) {
          const Int3 origin = ChunkOrigin({x, y, z});
          Voxel fill;
          if (!gen.ProvenUniform({origin, origin + Int3{8, 8, 8}}, &fill)) continue;
          air += fill == Voxel{};
          water += fill.material == kMaterialWater;
          rock += fill.material == kMaterialRock;
          Chunk chunk;
          gen.Generate({x, y, z}, &chunk);
          for (int i = 0; i < kChunkVoxels; ++i)
            ASSERT_EQ(chunk.voxels[i], fill)
                << s.name << " chunk (" << x << ", " << y << ", " << z << ") voxel " << i;
        }
    EXPECT_GT(air, chunks / 10) << s.name;
    EXPECT_GT(rock, 0) << s.name;
    water_total += water;
  }
  // Whole chunks of open sea are proven where the ground lies well below the sea (flat_below_sea);
  // over hilly ground the continent bound of a chunk (~30 voxels wide) rarely proves them.
  EXPECT_GT(water_total, 0);
}

// Boxes of other shapes, as the broadphase asks them (10^3 neighbourhoods, one-voxel slabs, rows
// and corners of neighbours), at random places concentrated around the ground and the sea level,
// crossing chunk rows and the world's faces: every voxel of a proven box (VoxelAt, which is
// Generate voxel for voxel) is the fill.
TEST(CaveBounds, ProvenUniformBoxesGenerateUniform) {
  std::mt19937 rng(2024);
  int water = 0;
  for (const GenSetup& s : Setups()) {
    CaveGenerator gen(s.seed, s.bounds, s.params);
    const Int3 extent = s.bounds.max - s.bounds.min;
    int proven = 0;
    for (int b = 0; b < 4000; ++b) {
      Int3 size{1 + int(rng() % 10), 1 + int(rng() % 10), 1 + int(rng() % 10)};
      if (b % 4 == 0) size = {10, 10, 10};
      if (b % 4 == 1) size[int(rng() % 3)] = 1;
      Int3 min;
      for (int a = 0; a < 3; ++a)
        min[a] = s.bounds.min[a] - 6 + int(rng() % uint32_t(extent[a] + 12 - size[a]));
      if (b % 2 == 0) min.y = s.params.sea_level - 12 + int(rng() % 24);  // sea level and ground
      const IntBox box{min, min + size};
      Voxel fill;
      if (!gen.ProvenUniform(box, &fill)) continue;
      ++proven;
      water += fill.material == kMaterialWater;
      for (int y = box.min.y; y < box.max.y; ++y)
        for (int z = box.min.z; z < box.max.z; ++z)
          for (int x = box.min.x; x < box.max.x; ++x)
            ASSERT_EQ(gen.VoxelAt({x, y, z}), fill)
                << s.name << " box from (" << min.x << ", " << min.y << ", " << min.z << ") size ("
                << size.x << ", " << size.y << ", " << size.z << ") at (" << x << ", " << y << ", "
                << z << ")";
    }
    EXPECT_GT(proven, 400) << s.name;
  }
  EXPECT_GT(water, 0);  // open sea proven somewhere
}

// ProvenSide over boxes of every shape up to 10 voxels, around the ground, the sea level and the
// world's faces: every voxel of a box proven on one side (VoxelAt, Generate voxel for voxel) is
// IsSolid as claimed. Each setup proves both sides; and ProvenSide proves at least what
// ProvenUniform proves, and boxes it does not (the weaker claim holds nearer the surface).
TEST(CaveBounds, ProvenSideBoxesGenerateOneSide) {
  std::mt19937 rng(4242);
  for (const GenSetup& s : Setups()) {
    CaveGenerator gen(s.seed, s.bounds, s.params);
    const Int3 extent = s.bounds.max - s.bounds.min;
    int solid = 0, open = 0, beyond_uniform = 0;
    for (int b = 0; b < 4000; ++b) {
      const Int3 size{1 + int(rng() % 10), 1 + int(rng() % 10), 1 + int(rng() % 10)};
      Int3 min;
      for (int a = 0; a < 3; ++a)
        min[a] = s.bounds.min[a] - 6 + int(rng() % uint32_t(extent[a] + 12 - size[a]));
      if (b % 2 == 0) min.y = s.params.sea_level - 24 + int(rng() % 36);  // ground and sea
      const IntBox box{min, min + size};
      bool is_solid;
      Voxel fill;
      const bool uniform = gen.ProvenUniform(box, &fill);
      if (!gen.ProvenSide(box, &is_solid)) {
        ASSERT_FALSE(uniform) << s.name << " box " << b;
        continue;
      }
      if (uniform) ASSERT_EQ(IsSolid(fill), is_solid) << s.name << " box " << b;
      beyond_uniform += !uniform;
      (is_solid ? solid : open)++;
      for (int y = box.min.y; y < box.max.y; ++y)
        for (int z = box.min.z; z < box.max.z; ++z)
          for (int x = box.min.x; x < box.max.x; ++x)
            ASSERT_EQ(IsSolid(gen.VoxelAt({x, y, z})), is_solid)
                << s.name << " box from (" << min.x << ", " << min.y << ", " << min.z << ") size ("
                << size.x << ", " << size.y << ", " << size.z << ") at (" << x << ", " << y << ", "
                << z << ")";
    }
    EXPECT_GT(solid, 100) << s.name;
    EXPECT_GT(open, 100) << s.name;
    EXPECT_GT(beyond_uniform, 100) << s.name;
  }
}

// The field bounds themselves, over chunks and seeds: every voxel centre's continent and density
// (the generator's own scalar functions) lie inside BoundFields.
TEST(CaveBounds, FieldBoundsContainTheFields) {
  for (const GenSetup& s : Setups()) {
    CaveGenerator gen(s.seed, s.bounds, s.params);
    std::mt19937 rng(uint32_t(s.seed));
    for (int c = 0; c < 60; ++c) {
      const Int3 first{int(rng() % 64) * 3 - 96, int(rng() % 48) * 3 - 72,
                       int(rng() % 64) * 3 - 96};
      const Int3 last = first + Int3{7, 7, 7};
      const CaveGenerator::FieldBounds f = gen.BoundFields(first, last, true);
      for (int y = first.y; y <= last.y; ++y)
        for (int z = first.z; z <= last.z; ++z)
          for (int x = first.x; x <= last.x; ++x) {
            const float d = gen.Density(x + 0.5f, y + 0.5f, z + 0.5f);
            ASSERT_GE(d, f.density.lo) << s.name << " (" << x << ", " << y << ", " << z << ")";
            ASSERT_LE(d, f.density.hi) << s.name << " (" << x << ", " << y << ", " << z << ")";
          }
    }
  }
}

}  // namespace
}  // namespace voxcol
