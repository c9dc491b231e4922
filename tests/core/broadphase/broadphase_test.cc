#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "core/broadphase/broadphase_index.h"
#include "core/broadphase/probe.h"
#include "core/query/raycast.h"
#include "core/query/validate.h"
#include "core/voxel/edit.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

// Independent answer: the dilated occupancy of the whole world as a dense grid of class bits,
// computed voxel by voxel from the 27 neighbours (no bit tricks, no chunk logic).
class DilatedGrid {
 public:
  explicit DilatedGrid(const World& world)
      : bounds_(world.voxel_bounds()), size_(bounds_.max - bounds_.min) {
    std::vector<uint8_t> raw(Count());
    for (int y = 0; y < size_.y; ++y)
      for (int z = 0; z < size_.z; ++z)
        for (int x = 0; x < size_.x; ++x) {
          Voxel v = world.GetVoxel(bounds_.min + Int3{x, y, z});
          raw[Index(x, y, z)] =
              uint8_t(CountsAsSolid(v) * kClassSolid | CountsAsWater(v) * kClassWater);
        }
    dilated_.assign(Count(), 0);
    for (int y = 0; y < size_.y; ++y)
      for (int z = 0; z < size_.z; ++z)
        for (int x = 0; x < size_.x; ++x) {
          uint8_t c = 0;
          for (int dy = -1; dy <= 1; ++dy)
            for (int dz = -1; dz <= 1; ++dz)
              for (int dx = -1; dx <= 1; ++dx) {
                int nx = x + dx, ny = y + dy, nz = z + dz;
                if (nx < 0 || ny < 0 || nz < 0 || nx >= size_.x || ny >= size_.y || nz >= size_.z)
                  continue;
                c |= raw[Index(nx, ny, nz)];
              }
          dilated_[Index(x, y, z)] = c;
        }
  }

  // Classes at a world voxel (inside the world).
  uint8_t At(const Int3& v) const {
    Int3 l = v - bounds_.min;
    return dilated_[Index(l.x, l.y, l.z)];
  }

  // Classes over the voxels a box covers at broadphase precision: the voxels whose closed cells
  // meet the box, grown by one voxel, clipped to the world. Computed in double precision.
  uint8_t ScanBox(const Aabb& box, float voxel_size) const {
    Int3 lo, hi;
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::max(int(std::floor(double(box.min[a]) / voxel_size)) - 1, bounds_.min[a]);
      hi[a] = std::min(int(std::floor(double(box.max[a]) / voxel_size)) + 1, bounds_.max[a] - 1);
    }
    uint8_t c = 0;
    for (int y = lo.y; y <= hi.y; ++y)
      for (int z = lo.z; z <= hi.z; ++z)
        for (int x = lo.x; x <= hi.x && c != kClassAny; ++x) c |= At({x, y, z});
    return c;
  }

 private:
  size_t Count() const { return size_t(size_.x) * size_.y * size_.z; }
  size_t Index(int x, int y, int z) const { return (size_t(y) * size_.z + z) * size_.x + x; }

  IntBox bounds_;
  Int3 size_;
  std::vector<uint8_t> dilated_;
};

// A box inside the world with each side uniform in [1, 40] voxels (world units here).
Aabb RandomBox(std::mt19937& rng, const World& world) {
  Aabb b = world.world_bounds();
  std::uniform_real_distribution<float> side(1.0f, 40.0f);
  Vec3 size{side(rng), side(rng), side(rng)}, lo;
  for (int a = 0; a < 3; ++a) {
    std::uniform_real_distribution<float> u(b.min[a], b.max[a] - size[a]);
    lo[a] = u(rng);
  }
  return {lo, lo + size};
}

// Runs `count` random boxes; returns the number of mismatches and counts the classes seen.
int CompareRandomBoxes(const BroadphaseIndex& index, const DilatedGrid& grid, std::mt19937& rng,
                       int count, int* solid_hits, int* water_hits, int* misses) {
  ProbeResult result;
  int mismatches = 0;
  for (int i = 0; i < count; ++i) {
    Aabb box = RandomBox(rng, index.world());
    ProbeAabb(index, box, ProbeSettings{}, &result);
    uint8_t want = grid.ScanBox(box, index.world().voxel_size());
    uint8_t got =
        uint8_t(result.may_touch_solid * kClassSolid | result.may_touch_water * kClassWater);
    mismatches += got != want;
    *solid_hits += (want & kClassSolid) != 0;
    *water_hits += (want & kClassWater) != 0;
    *misses += want == 0;
  }
  return mismatches;
}

// Compares every chunk's record with the dense dilated grid.
int CompareAllChunks(const BroadphaseIndex& index, const DilatedGrid& grid) {
  BroadphaseIndex::ReadScope scope(index);
  IntBox chunks = index.world().chunk_bounds();
  int mismatches = 0;
  for (int cy = chunks.min.y; cy < chunks.max.y; ++cy)
    for (int cz = chunks.min.z; cz < chunks.max.z; ++cz)
      for (int cx = chunks.min.x; cx < chunks.max.x; ++cx) {
        const MaskRecord& r = index.Get({cx, cy, cz}, scope);
        Int3 origin = ChunkOrigin({cx, cy, cz});
        for (int i = 0; i < kChunkVoxels; ++i) {
          int x = i & 7, z = i >> 3 & 7, y = i >> 6;
          uint8_t got = uint8_t((r.solid()[y] >> (i & 63) & 1) * kClassSolid |
                                (r.water()[y] >> (i & 63) & 1) * kClassWater);
          mismatches += got != grid.At(origin + Int3{x, y, z});
        }
      }
  return mismatches;
}

// Done-means 1: 10,000 random boxes before and after 200 random edits, zero mismatches.
TEST(Broadphase, RandomBoxesMatchBruteForceBeforeAndAfterEdits) {
  auto world = testing::MakeCaveWorld(1);
  BroadphaseIndex index(*world);
  world->AddObserver(&index);
  std::mt19937 rng(2024);
  int solid = 0, water = 0, none = 0;
  EXPECT_EQ(CompareRandomBoxes(index, DilatedGrid(*world), rng, 10000, &solid, &water, &none), 0);

  const uint8_t materials[] = {kMaterialAir, kMaterialWater, kMaterialRock, kMaterialDirt,
                               kMaterialSand};
  const EditMode modes[] = {EditMode::kAdd, EditMode::kSubtract, EditMode::kSet};
  Aabb b = world->world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x, b.max.x), uy(b.min.y, b.max.y),
      uz(b.min.z, b.max.z), ur(1.0f, 8.0f);
  for (int i = 0; i < 200; ++i) {
    FillBallParams ball{
        {ux(rng), uy(rng), uz(rng)}, ur(rng), materials[rng() % 5], modes[rng() % 3]};
    ASSERT_TRUE(world->Edit([&](ChunkEdit& e) { return FillBall(e, ball, EditLimits{}); }).ok());
  }
  DilatedGrid after(*world);
  EXPECT_EQ(CompareRandomBoxes(index, after, rng, 10000, &solid, &water, &none), 0);
  EXPECT_EQ(CompareAllChunks(index, after), 0);
  // The random boxes must exercise every answer, or the comparison proves little.
  EXPECT_GT(solid, 1000);
  EXPECT_GT(water, 200);
  EXPECT_GT(none, 200);
}

TEST(Broadphase, MasksMatchPerVoxelDilationOnCaveWorld) {
  auto world = testing::MakeCaveWorld(3, {64, 64, 64});
  BroadphaseIndex index(*world);
  BroadphaseIndex::ReadScope scope(index);
  IntBox chunks = world->chunk_bounds();
  for (int cy = chunks.min.y; cy < chunks.max.y; ++cy)
    for (int cz = chunks.min.z; cz < chunks.max.z; ++cz)
      for (int cx = chunks.min.x; cx < chunks.max.x; ++cx) {
        absl::Status s = ValidateMaskRecord(*world, {cx, cy, cz}, index.Get({cx, cy, cz}, scope));
        ASSERT_TRUE(s.ok()) << s;
      }
}

TEST(ChunkMasks, ValidationCatchesAFlippedBit) {
  auto world = testing::MakeCaveWorld(3, {64, 64, 64});
  std::array<ChunkPtr, 27> owners;
  ChunkNeighbourhood hood;
  for (int i = 0; i < 27; ++i) {
    owners[i] = world->GetChunk(Int3{i % 3 - 1, i / 9 - 1, i / 3 % 3 - 1});  // around chunk (0,0,0)
    hood[i] = owners[i].get();
  }
  ChunkMasks masks = BuildChunkMasks(hood);
  ASSERT_EQ(masks.kind, MaskKind::kPartial);
  EXPECT_TRUE(ValidateChunkMasks(hood, masks).ok());
  for (int bit : {0, 9, 63}) {
    ChunkMasks broken = masks;
    broken.solid[bit % 8] ^= 1ull << bit;
    EXPECT_FALSE(ValidateChunkMasks(hood, broken).ok()) << bit;
    broken = masks;
    broken.water[7 - bit % 8] ^= 1ull << bit;
    EXPECT_FALSE(ValidateChunkMasks(hood, broken).ok()) << bit;
  }
}

TEST(Broadphase, AirChunksAreEmptyAndFullChunksAnswerInside) {
  // Rock below y = 0, water in [0, 32), air above.
  auto world = testing::MakeFunctionWorld(
      [](const Int3& v) {
        if (v.y < 0) return Voxel{kMaterialRock, 255};
        return v.y < 32 ? Voxel{kMaterialWater, 255} : Voxel{};
      },
      {64, 96, 64});
  BroadphaseIndex index(*world);
  {
    BroadphaseIndex::ReadScope scope(index);
    EXPECT_EQ(index.Get({0, -3, 0}, scope).kind(), MaskKind::kFullSolid);
    EXPECT_EQ(index.Get({0, 1, 0}, scope).kind(), MaskKind::kFullWater);
    EXPECT_EQ(index.Get({0, 5, 0}, scope).kind(), MaskKind::kEmpty);
    EXPECT_EQ(index.Get({0, 0, 0}, scope).kind(), MaskKind::kPartial);  // solid below, water inside
  }
  BroadphaseMemory m = index.Memory();
  EXPECT_EQ(m.built_chunks, 4u);
  EXPECT_EQ(m.partial_chunks, 1u);
  EXPECT_EQ(m.mask_bytes, 2 * 64u);  // the partial chunk needs both masks
  ProbeResult r;
  ProbeAabb(index, {{0.2f, -10, 0.2f}, {0.8f, -9, 0.8f}}, ProbeSettings{}, &r);  // deep in rock
  EXPECT_TRUE(r.may_touch_solid);
  EXPECT_FALSE(r.may_touch_water);
  ProbeAabb(index, {{0.2f, 12, 0.2f}, {0.8f, 13, 0.8f}}, ProbeSettings{}, &r);  // submerged
  EXPECT_FALSE(r.may_touch_solid);
  EXPECT_TRUE(r.may_touch_water);
  ProbeAabb(index, {{0.2f, 45, 0.2f}, {0.8f, 46, 0.8f}}, ProbeSettings{}, &r);  // open air
  EXPECT_FALSE(r.may_touch_solid || r.may_touch_water);
}

TEST(Broadphase, TouchedVoxelsAreTheDilatedVoxelsInRangeAndRespectTheLimit) {
  auto world = testing::MakeFunctionWorld([](const Int3& v) {
    return v == Int3{5, 5, 5} ? Voxel{kMaterialRock, 40} : Voxel{};
  });
  BroadphaseIndex index(*world);
  ProbeResult r;
  ProbeSettings settings{true, 1000};
  // The box covers voxel (7, 5, 5) only; grown by one voxel it reaches x = 6, next to the dilation.
  ProbeAabb(index, {{7.25f, 5.25f, 5.25f}, {7.75f, 5.75f, 5.75f}}, settings, &r);
  EXPECT_TRUE(r.may_touch_solid);
  ASSERT_EQ(r.voxels.size(), 9u);  // x = 6, y and z in [4, 6]
  for (const TouchedVoxel& v : r.voxels) {
    EXPECT_EQ(v.voxel.x, 6);
    EXPECT_LE(std::abs(v.voxel.y - 5), 1);
    EXPECT_LE(std::abs(v.voxel.z - 5), 1);
    EXPECT_EQ(v.classes, kClassSolid);
  }
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].key, (ChunkKey{0, 0, 0}));
  EXPECT_FALSE(r.voxels_truncated);
  settings.max_voxels = 4;
  ProbeAabb(index, {{7.25f, 5.25f, 5.25f}, {7.75f, 5.75f, 5.75f}}, settings, &r);
  EXPECT_EQ(r.voxels.size(), 4u);
  EXPECT_TRUE(r.voxels_truncated);
  // One voxel farther the dilated voxel is out of reach.
  ProbeAabb(index, {{8.25f, 5.25f, 5.25f}, {8.75f, 5.75f, 5.75f}}, settings, &r);
  EXPECT_FALSE(r.may_touch_solid);
}

TEST(Broadphase, EditRebuildsExactlyTheDirtyChunks) {
  auto world = testing::MakeEmptyWorld();
  BroadphaseIndex index(*world);
  world->AddObserver(&index);
  index.BuildAll();
  // A voxel on the corner of chunk (0,0,0) dirties the 8 chunks around that corner.
  auto result = world->Edit([](ChunkEdit& e) {
    e.Set({7, 7, 7}, Voxel{kMaterialRock, 255});
    return absl::OkStatus();
  });
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->dirty_chunks.size(), 8u);
  BroadphaseMemory m = index.Memory();
  EXPECT_EQ(m.partial_chunks, 8u);
  BroadphaseIndex::ReadScope scope(index);
  for (const ChunkKey& key : result->dirty_chunks) {
    EXPECT_TRUE(ValidateMaskRecord(*world, key, index.Get(key, scope)).ok());
  }
  EXPECT_EQ(index.Get({-1, 0, 0}, scope).kind(), MaskKind::kEmpty);  // two voxels away: untouched
}

TEST(Broadphase, BoxesFarOutsideTheWorldTouchNothing) {
  auto world = testing::MakeFunctionWorld([](const Int3&) { return Voxel{kMaterialRock, 255}; });
  BroadphaseIndex index(*world);
  ProbeResult r;
  ProbeAabb(index, {{1e20f, 0, 0}, {2e20f, 1, 1}}, ProbeSettings{}, &r);
  EXPECT_FALSE(r.may_touch_solid);
  ProbeAabb(index, {{-2e20f, -1, -1}, {-1e20f, 1, 1}}, ProbeSettings{}, &r);
  EXPECT_FALSE(r.may_touch_solid);
  // A box ending just outside still reaches the world's last voxel through the one-voxel growth.
  ProbeAabb(index, {{32.5f, 0, 0}, {33.5f, 1, 1}}, ProbeSettings{}, &r);
  EXPECT_TRUE(r.may_touch_solid);
}

TEST(ValidateProbe, RejectsBadInputNamingTheField) {
  auto world = testing::MakeEmptyWorld();
  const float nan = std::nanf(""), inf = INFINITY;
  QueryLimits limits;
  limits.max_shape_extent = 10.0f;
  limits.max_probe_voxels = 100;
  struct Case {
    ProbeShape shape;
    uint32_t max_voxels;
    const char* field;  // nullptr: valid
  } cases[] = {
      {{false, {0, 0, 0}, {1, 1, 1}, 0}, 0, nullptr},
      {{true, {0, 0, 0}, {}, 10}, 100, nullptr},
      {{false, {nan, 0, 0}, {1, 1, 1}, 0}, 0, "box.center"},
      {{false, {0, 40, 0}, {1, 1, 1}, 0}, 0, "box.center"},
      {{false, {0, 0, 0}, {-1, 1, 1}, 0}, 0, "box.half_extents.x"},
      {{false, {0, 0, 0}, {1, inf, 1}, 0}, 0, "box.half_extents.y"},
      {{false, {0, 0, 0}, {1, 1, 10.5f}, 0}, 0, "box.half_extents.z"},
      {{true, {0, -inf, 0}, {}, 1}, 0, "sphere.center"},
      {{true, {0, 0, 0}, {}, nan}, 0, "sphere.radius"},
      {{true, {0, 0, 0}, {}, -0.5f}, 0, "sphere.radius"},
      {{true, {0, 0, 0}, {}, 11}, 0, "sphere.radius"},
      {{true, {0, 0, 0}, {}, 1}, 101, "max_voxels"},
  };
  for (const Case& c : cases) {
    ProbeSettings settings{true, c.max_voxels};
    absl::Status s = ValidateProbe(*world, c.shape, settings, limits);
    if (c.field == nullptr) {
      EXPECT_TRUE(s.ok()) << s;
      continue;
    }
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_NE(s.message().find(c.field), std::string::npos) << s;
  }
}

TEST(Broadphase, RayThroughEmptyChunksReadsNoVoxels) {
  auto world = testing::MakeFunctionWorld([](const Int3& v) {
    return v.x >= 24 ? Voxel{kMaterialRock, 255} : Voxel{};
  });
  BroadphaseIndex index(*world);
  QueryStats stats;
  RaycastInput ray{{-30.5f, 0.5f, 0.5f}, {1, 0, 0}, 100};
  RaycastHit hit = RaycastBlocky(index, ray, RaycastSettings{}, &stats);
  ASSERT_TRUE(hit.hit);
  EXPECT_FLOAT_EQ(hit.distance, 54.5f);
  EXPECT_EQ(stats.chunks_visited, 2u);  // the chunk holding x = 23 (dilated) and the rock chunk
}

TEST(Broadphase, ConcurrentReadersDuringEditsSeeConsistentMasks) {
  auto world = testing::MakeCaveWorld(9, {64, 64, 64});
  BroadphaseIndex index(*world);
  world->AddObserver(&index);
  std::atomic<bool> stop{false};
  std::atomic<int> queries{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 rng(t);
      ProbeResult r;
      while (!stop.load()) {
        ProbeAabb(index, RandomBox(rng, *world), ProbeSettings{true, 64}, &r);
        queries.fetch_add(1);
      }
    });
  }
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-30, 30);
  for (int i = 0; i < 100; ++i) {
    FillBallParams ball{
        {u(rng), u(rng), u(rng)}, 4, uint8_t(i % 3 == 0 ? kMaterialAir : kMaterialWater + i % 2)};
    ASSERT_TRUE(world->Edit([&](ChunkEdit& e) { return FillBall(e, ball, EditLimits{}); }).ok());
  }
  stop.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_GT(queries.load(), 0);
  EXPECT_EQ(CompareAllChunks(index, DilatedGrid(*world)), 0);
}

// The class table (4 bits per chunk) must always describe the record in the slot: lazy builders
// race with edits here, on a world small enough that they collide on the same table words. One
// reader gets its records through scopes nested in its round's scope and reads them after the
// nested one ended: the round's scope alone must keep them (under ASan, a record freed too early
// is a use after free).
TEST(Broadphase, ClassTableAgreesWithRecordsUnderConcurrentBuildsAndEdits) {
  auto world = testing::MakeCaveWorld(11, {64, 64, 64});
  BroadphaseIndex index(*world);
  world->AddObserver(&index);
  const IntBox chunks = world->chunk_bounds();
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      std::uniform_int_distribution<int> cx(chunks.min.x, chunks.max.x - 1),
          cy(chunks.min.y, chunks.max.y - 1), cz(chunks.min.z, chunks.max.z - 1);
      while (!stop.load()) {
        // Edits publish (and the index updates) while the snapshot is held, but both answers
        // describe the snapshot's version, so they must agree exactly, whoever built the record.
        World::ReadSnapshot snapshot(*world);
        BroadphaseIndex::ReadScope scope(index);
        for (int i = 0; i < 16; ++i) {
          const ChunkKey key{cx(rng), cy(rng), cz(rng)};
          const uint8_t c = uint8_t(1 + (i % 3));
          const bool table = index.MayTouch(key, c, scope);
          const MaskRecord* record = nullptr;
          if (t == 1) {
            BroadphaseIndex::ReadScope nested(index);
            record = &index.Get(key, nested);
          } else {
            record = &index.Get(key, scope);
          }
          bad.fetch_add(table != record->MayTouch(c));
        }
      }
    });
  }
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-30, 30);
  for (int i = 0; i < 60; ++i) {
    FillBallParams ball{{u(rng), u(rng), u(rng)},
                        5,
                        uint8_t(i % 3 == 0   ? kMaterialAir
                                : i % 3 == 1 ? kMaterialWater
                                             : kMaterialRock)};
    ASSERT_TRUE(world->Edit([&](ChunkEdit& e) { return FillBall(e, ball, EditLimits{}); }).ok());
  }
  stop.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  // Quiescent: every chunk's table answer equals its record's, and the records are exact.
  BroadphaseIndex::ReadScope scope(index);
  int disagreements = 0;
  for (int y = chunks.min.y; y < chunks.max.y; ++y)
    for (int z = chunks.min.z; z < chunks.max.z; ++z)
      for (int x = chunks.min.x; x < chunks.max.x; ++x)
        for (uint8_t c : {uint8_t(kClassSolid), uint8_t(kClassWater), uint8_t(kClassAny)})
          disagreements +=
              index.MayTouch({x, y, z}, c, scope) != index.Get({x, y, z}, scope).MayTouch(c);
  EXPECT_EQ(disagreements, 0);
  EXPECT_EQ(CompareAllChunks(index, DilatedGrid(*world)), 0);
  EXPECT_FALSE(index.MayTouch(chunks.max, kClassAny, scope));  // outside the world
}

// The class table's bounds: over a box one chunk larger than the world on every side, of a world
// of rock (every chunk's code known after BuildAll), TableKnows answers for exactly the world's
// chunks, KnownFull and Unmet are false outside them, and Get returns the empty record there.
TEST(Broadphase, ClassTableAnswersForExactlyTheWorldsChunks) {
  auto world = testing::MakeFunctionWorld(
      [](const Int3&) {
        return Voxel{kMaterialRock, 255};
      },
      {40, 24, 56});
  BroadphaseIndex index(*world);
  index.BuildAll();
  BroadphaseIndex::ReadScope scope(index);
  const IntBox chunks = world->chunk_bounds();
  int inside = 0, outside = 0;
  for (int32_t y = chunks.min.y - 1; y <= chunks.max.y; ++y)
    for (int32_t z = chunks.min.z - 1; z <= chunks.max.z; ++z)
      for (int32_t x = chunks.min.x - 1; x <= chunks.max.x; ++x) {
        const ChunkKey key{x, y, z};
        const bool in = chunks.Contains(key);
        bool touch = false;
        ASSERT_EQ(index.TableKnows(key, kClassSolid, &touch), in) << x << " " << y << " " << z;
        if (!in) ASSERT_FALSE(index.KnownFull(key, kClassSolid));
        ASSERT_FALSE(index.Unmet(key));
        ASSERT_EQ(&index.Get(key, scope) == &MaskRecord::Empty(), !in);
        if (in) EXPECT_TRUE(touch);
        inside += in;
        outside += !in;
      }
  // Centred: 20 voxels each side of 0 on x make chunks -3..2, partial at both faces.
  EXPECT_EQ(inside, 6 * 4 * 8);
  EXPECT_EQ(outside, 8 * 6 * 10 - 6 * 4 * 8);
}

}  // namespace
}  // namespace voxcol
