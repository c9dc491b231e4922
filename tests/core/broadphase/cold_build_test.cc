// Cold builds that skip generation (ChunkGenerator::ProvenUniform: proven-uniform chunks, the
// broadphase's neighbourhood proofs; neighbours read only in the part a build uses,
// World::GeneratePart) against full generation: a world whose
// generator proves nothing is the oracle. Edited and stored chunks must never be classified from
// the generator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/query/raycast.h"
#include "core/voxel/edit.h"
#include "core/worldgen/cave_generator.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

// The cave generator without its ProvenUniform: every chunk is generated voxel by voxel.
class FullGeneration : public ChunkGenerator {
 public:
  FullGeneration(uint64_t seed, const IntBox& bounds) : gen_(seed, bounds) {}
  void Generate(const ChunkKey& key, Chunk* out) const override { gen_.Generate(key, out); }
  uint32_t Version() const override { return gen_.Version(); }

 private:
  CaveGenerator gen_;
};

// Stored chunks: a rock chunk high in the sky and an air chunk in deep rock.
class TwoStoredChunks : public ChunkLoader {
 public:
  absl::StatusOr<ChunkPtr> Load(const ChunkKey& key) const override {
    if (key == ChunkKey{2, 4, 1}) return UniformChunk(Voxel{kMaterialRock, 200});
    if (key == ChunkKey{-3, -5, 2}) return UniformChunk(Voxel{});
    return ChunkPtr();
  }
};

struct Queries {
  std::unique_ptr<World> world;
  std::unique_ptr<BroadphaseIndex> index;
  std::unique_ptr<ChunkCollisionCache> cache;
};

Queries MakeQueries(const WorldConfig& config, bool full_generation, const ChunkLoader* loader) {
  Queries q;
  const IntBox bounds = WorldVoxelBounds(config);
  std::unique_ptr<ChunkGenerator> gen;
  if (full_generation) {
    gen = std::make_unique<FullGeneration>(config.seed, bounds);
  } else {
    gen = std::make_unique<CaveGenerator>(config.seed, bounds);
  }
  q.world = std::make_unique<World>(config, std::move(gen));
  if (loader != nullptr) q.world->SetLoader(loader);
  q.index = std::make_unique<BroadphaseIndex>(*q.world);
  q.cache = std::make_unique<ChunkCollisionCache>(*q.world, size_t(256) << 20);
  q.world->AddObserver(q.index.get());
  q.world->AddObserver(q.cache.get());
  return q;
}

// Edits in places the generator would otherwise prove: a rock ball in open sky, a cavity in deep
// rock, a ball against the world's top face.
void ApplyEdits(World& world) {
  const FillBallParams balls[] = {
      {Vec3(10.5f, 40.2f, -7.3f), 3.2f, kMaterialRock, EditMode::kAdd},
      {Vec3(-20.1f, -38.6f, 15.4f), 4.1f, kMaterialAir, EditMode::kSubtract},
      {Vec3(30.2f, 46.5f, 30.7f), 2.5f, kMaterialDirt, EditMode::kAdd},
  };
  for (const FillBallParams& b : balls)
    ASSERT_TRUE(world.Edit([&](ChunkEdit& e) { return FillBall(e, b, EditLimits{}); }).ok());
}

// The same edited world twice, on the stored chunks of `loader`: `cold` proves what it can,
// `oracle` generates everything.
const WorldConfig kEditedConfig{{128, 96, 128}, 1.0f, 11};
struct EditedPair {
  explicit EditedPair(const ChunkLoader* loader)
      : cold(MakeQueries(kEditedConfig, false, loader)),
        oracle(MakeQueries(kEditedConfig, true, loader)) {
    ApplyEdits(*cold.world);
    ApplyEdits(*oracle.world);
  }
  Queries cold, oracle;
};

// Every chunk's record, built in a random order (so neighbourhoods are met partly generated,
// partly not), equals the masks recomputed voxel by voxel from the fully generated world, with
// edits and stored chunks.
TEST(ColdBuild, RecordsEqualFullGenerationWithEditsAndStoredChunks) {
  TwoStoredChunks loader;
  EditedPair worlds(&loader);
  Queries& cold = worlds.cold;
  Queries& oracle = worlds.oracle;
  std::vector<ChunkKey> keys;
  const IntBox range = cold.world->chunk_bounds();
  for (int y = range.min.y; y < range.max.y; ++y)
    for (int z = range.min.z; z < range.max.z; ++z)
      for (int x = range.min.x; x < range.max.x; ++x) keys.push_back({x, y, z});
  std::shuffle(keys.begin(), keys.end(), std::mt19937(5));
  BroadphaseIndex::ReadScope scope(*cold.index);
  int shared = 0;
  for (const ChunkKey& key : keys) {
    const MaskRecord& record = cold.index->Get(key, scope);
    shared += record.kind() != MaskKind::kPartial;
    const absl::Status s = ValidateMaskRecord(*oracle.world, key, record);
    ASSERT_TRUE(s.ok()) << "chunk (" << key.x << ", " << key.y << ", " << key.z
                        << "): " << s.message();
  }
  EXPECT_GT(shared, int(keys.size()) / 3);
  // The edited and stored chunks are read, not classified from the generator.
  EXPECT_EQ(cold.index->Get({2, 4, 1}, scope).kind(), MaskKind::kPartial);  // sky around it
  EXPECT_EQ(cold.index->Get(ChunkOf({10, 40, -7}), scope).kind(), MaskKind::kPartial);
}

// The same record after an edit published later: the slot is rebuilt from the edited chunk.
TEST(ColdBuild, EditAfterColdBuildRebuildsFromTheEdit) {
  const WorldConfig config{{128, 96, 128}, 1.0f, 3};
  Queries cold = MakeQueries(config, false, nullptr);
  const ChunkKey sky{1, 5, 1};
  {
    BroadphaseIndex::ReadScope scope(*cold.index);
    ASSERT_EQ(cold.index->Get(sky, scope).kind(), MaskKind::kEmpty);
  }
  const Vec3 centre(ChunkOrigin(sky).x + 4.0f, ChunkOrigin(sky).y + 4.0f,
                    ChunkOrigin(sky).z + 4.0f);
  const FillBallParams ball{centre, 1.5f, kMaterialRock, EditMode::kAdd};
  ASSERT_TRUE(cold.world->Edit([&](ChunkEdit& e) { return FillBall(e, ball, EditLimits{}); }).ok());
  BroadphaseIndex::ReadScope scope(*cold.index);
  EXPECT_EQ(cold.index->Get(sky, scope).kind(), MaskKind::kPartial);
}

// World::GeneratePart (how the broadphase and the mesher read the layer, row or corner of a
// neighbour that PeekChunk finds to be the generator's, without generating the chunk) and
// World::ProvenUniform give, for every chunk of the world and a ring outside it, in random order,
// and the parts those callers read, the voxels GetChunk gives on a world that generates
// everything: proven parts their one value, generated parts voxel for voxel, cleared outside the
// world. Edited and stored chunks
// are PeekChunk's, as they are.
TEST(ColdBuild, GeneratorPartsEqualFullGeneration) {
  TwoStoredChunks loader;
  EditedPair worlds(&loader);
  Queries& cold = worlds.cold;
  Queries& oracle = worlds.oracle;
  std::vector<ChunkKey> keys;
  const IntBox range = cold.world->chunk_bounds();
  for (int y = range.min.y - 1; y <= range.max.y; ++y)
    for (int z = range.min.z - 1; z <= range.max.z; ++z)
      for (int x = range.min.x - 1; x <= range.max.x; ++x) keys.push_back({x, y, z});
  std::mt19937 rng(7);
  std::shuffle(keys.begin(), keys.end(), rng);
  int proven = 0, generated = 0, peeked = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const ChunkKey& key = keys[i];
    const ChunkPtr want = oracle.world->GetChunk(key);
    // Every third chunk made resident first, so that parts are asked of both kinds.
    if (i % 3 == 0) cold.world->GetChunk(key);
    const absl::StatusOr<ChunkPtr> peek = cold.world->PeekChunk(key);
    ASSERT_TRUE(peek.ok());
    if (*peek != nullptr) {
      ++peeked;
      ASSERT_TRUE((*peek)->voxels == want->voxels)
          << "chunk (" << key.x << ", " << key.y << ", " << key.z << ")";
      continue;
    }
    // A face layer (one or two thick), a row and a corner, on random sides.
    const Int3 o = ChunkOrigin(key);
    for (int shape = 0; shape < 3; ++shape) {
      IntBox part;
      for (int a = 0; a < 3; ++a) {
        const bool whole = (shape == 0 && a != int(i % 3)) || (shape == 1 && a == int(i % 3));
        const int thick = 1 + int(rng() % 2), lo = rng() % 2 ? 0 : kChunkSize - thick;
        part.min[a] = o[a] + (whole ? 0 : lo);
        part.max[a] = o[a] + (whole ? kChunkSize : lo + thick);
      }
      Chunk scratch;
      scratch.voxels.fill(Voxel{kMaterialSand, 99});
      Voxel fill;
      const bool uniform = cold.world->ProvenUniform(part, &fill);
      if (!uniform) cold.world->GeneratePart(key, part, &scratch);
      (uniform ? proven : generated)++;
      for (int32_t y = part.min.y; y < part.max.y; ++y)
        for (int32_t z = part.min.z; z < part.max.z; ++z)
          for (int32_t x = part.min.x; x < part.max.x; ++x) {
            const Int3 local = Int3{x, y, z} - o;
            ASSERT_EQ(uniform ? fill : scratch.At(local), want->At(local))
                << "chunk (" << key.x << ", " << key.y << ", " << key.z << ") shape " << shape
                << " voxel (" << x << ", " << y << ", " << z << ")";
          }
    }
  }
  // Both answers were exercised, and the edited and stored chunks are never the generator's.
  EXPECT_GT(proven, 100);
  EXPECT_GT(generated, 100);
  EXPECT_GT(peeked, int(keys.size()) / 4);
  EXPECT_EQ(cold.world->PeekChunk({2, 4, 1}).value(), loader.Load({2, 4, 1}).value());
  EXPECT_NE(cold.world->PeekChunk(ChunkOf({10, 40, -7})).value(), nullptr);
}

// A record built in a fresh world reads its neighbours in parts: none of the 26 becomes resident
// (only the chunk itself is loaded), for every chunk of a column through the ground.
TEST(ColdBuild, RecordsLeaveTheirNeighboursUngenerated) {
  int partial = 0;
  for (int y = -6; y < 6; ++y) {
    Queries cold = MakeQueries(kEditedConfig, false, nullptr);
    const ChunkKey key{1, y, -2};
    BroadphaseIndex::ReadScope scope(*cold.index);
    partial += cold.index->Get(key, scope).kind() == MaskKind::kPartial;
    for (int i = 0; i < 27; ++i) {
      const Int3 d{i % 3 - 1, i / 3 % 3 - 1, i / 9 - 1};
      if (i == 13 || !cold.world->chunk_bounds().Contains(key + d)) continue;
      ASSERT_EQ(cold.world->PeekChunk(key + d).value(), nullptr)
          << "chunk " << y << " neighbour " << d.x << "," << d.y << "," << d.z;
    }
  }
  EXPECT_GT(partial, 0);
}

// World::ProvenUntouched and ProvenUntouchedSide (how cold rays step over chunks and answer
// origins without a record) claim only what the fully generated world reads: over random boxes of
// every size from 2 to 10 voxels, in and around the world, every voxel of a proven box equals its
// fill (or lies on the proven side of the surface; that weaker claim holds in more boxes). Boxes
// that reach an edited, stored or resident chunk, or reach out of the world over anything but air,
// are not proven.
TEST(ColdBuild, ProvenUntouchedBoxesReadAsTheirFill) {
  TwoStoredChunks loader;
  EditedPair worlds(&loader);
  const World& cold = *worlds.cold.world;
  const World& oracle = *worlds.oracle.world;
  const IntBox world = cold.voxel_bounds();
  std::mt19937 rng(17);
  auto coordinate = [&rng](int32_t lo, int32_t hi) { return lo + int32_t(rng() % (hi - lo)); };
  int proven = 0, proven_rock = 0, proven_outside = 0, proven_side = 0;
  for (int i = 0; i < 4000; ++i) {
    IntBox box;
    for (int a = 0; a < 3; ++a) {
      box.min[a] = coordinate(world.min[a] - 6, world.max[a] + 2);
      box.max[a] = box.min[a] + 2 + int32_t(rng() % 9);
    }
    bool solid;
    if (cold.ProvenUntouchedSide(box, &solid)) {
      ++proven_side;
      for (int32_t y = box.min.y; y < box.max.y; ++y)
        for (int32_t z = box.min.z; z < box.max.z; ++z)
          for (int32_t x = box.min.x; x < box.max.x; ++x)
            ASSERT_EQ(IsSolid(oracle.GetVoxel({x, y, z})), solid)
                << "box " << i << " voxel " << x << ", " << y << ", " << z;
    }
    Voxel fill;
    if (!cold.ProvenUntouched(box, &fill)) continue;
    ASSERT_TRUE(cold.ProvenUntouchedSide(box, &solid));  // the weaker claim
    ASSERT_EQ(solid, IsSolid(fill));
    ++proven;
    proven_rock += IsSolid(fill);
    proven_outside += !world.ContainsBox(box);
    for (int32_t y = box.min.y; y < box.max.y; ++y)
      for (int32_t z = box.min.z; z < box.max.z; ++z)
        for (int32_t x = box.min.x; x < box.max.x; ++x)
          ASSERT_EQ(oracle.GetVoxel({x, y, z}), fill)
              << "box " << i << " voxel " << x << ", " << y << ", " << z;
  }
  EXPECT_GT(proven, 800);
  EXPECT_GT(proven_rock, 100);
  EXPECT_GT(proven_outside, 100);
  EXPECT_GT(proven_side, proven + 30);  // most random boxes lie far from the surface

  // Deep rock at the bottom face (the first box along it proven rock) is proven inside the world,
  // not across the face (air below).
  Voxel fill;
  IntBox bottom;
  bool found = false;
  for (int32_t x = world.min.x; x < world.max.x && !found; x += 4) {
    bottom = {{x, world.min.y, 0}, {x + 4, world.min.y + 3, 4}};
    found = cold.ProvenUntouched(bottom, &fill) && IsSolid(fill);
  }
  ASSERT_TRUE(found);
  EXPECT_FALSE(cold.ProvenUntouched({bottom.min - Int3{0, 1, 0}, bottom.max}, &fill));
  bool solid;
  ASSERT_TRUE(cold.ProvenUntouchedSide(bottom, &solid));
  ASSERT_TRUE(solid);
  EXPECT_FALSE(cold.ProvenUntouchedSide({bottom.min - Int3{0, 1, 0}, bottom.max}, &solid));
  // A box wholly outside is air.
  ASSERT_TRUE(cold.ProvenUntouched({world.max, world.max + Int3{3, 3, 3}}, &fill));
  EXPECT_EQ(fill, Voxel{});
  // The sky beside the stored chunk and the edited ball is proven; boxes reaching into them not.
  const Int3 stored = ChunkOrigin({2, 4, 1});
  ASSERT_TRUE(cold.ProvenUntouched({stored + Int3{0, 0, -3}, stored + Int3{8, 8, -1}}, &fill));
  EXPECT_EQ(fill, Voxel{});
  EXPECT_FALSE(cold.ProvenUntouched({stored + Int3{0, 0, -3}, stored + Int3{8, 8, 1}}, &fill));
  ASSERT_TRUE(cold.ProvenUntouched({{24, 38, -12}, {28, 42, -8}}, &fill));
  EXPECT_FALSE(cold.ProvenUntouched({{12, 38, -12}, {28, 42, -8}}, &fill));
  // Nor is a chunk once it is resident, though it holds the generator's voxels.
  const IntBox sky{{-30, 40, 30}, {-26, 44, 34}};
  ASSERT_TRUE(cold.ProvenUntouched(sky, &fill));
  cold.GetChunk(ChunkOf(sky.min));
  EXPECT_FALSE(cold.ProvenUntouched(sky, &fill));
}

// Rays with origins uniform in a box and directions uniform on the sphere; deterministic per seed.
class RandomRays {
 public:
  RandomRays(const Aabb& bounds, uint32_t seed) : bounds_(bounds), rng_(seed) {}
  RaycastInput Next(float length) {
    const Vec3 origin(Uniform(bounds_.min.x, bounds_.max.x), Uniform(bounds_.min.y, bounds_.max.y),
                      Uniform(bounds_.min.z, bounds_.max.z));
    const float z = Uniform(-1, 1), phi = Uniform(0, 6.2831853f), r = std::sqrt(1 - z * z);
    return {origin, Vec3(r * std::cos(phi), r * std::sin(phi), z), length};
  }

 private:
  float Uniform(float lo, float hi) {
    return lo + (hi - lo) * float(double(rng_()) / 4294967296.0);
  }
  Aabb bounds_;
  std::mt19937 rng_;
};

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool SameBits(const Vec3& a, const Vec3& b) {
  return SameBits(a.x, b.x) && SameBits(a.y, b.y) && SameBits(a.z, b.z);
}

// Rays cast once each on a fresh world (cold) answer bit for bit what a fully generated world
// answers warm (every ray cast twice, the second answer kept): smooth, smooth stopping at water,
// and blocky, over the default world with edits and stored chunks.
TEST(ColdBuild, ColdRaysEqualWarmRaysOfFullGeneration) {
  const WorldConfig config{};  // the default world, 512 x 192 x 512
  TwoStoredChunks loader;
  Queries cold = MakeQueries(config, false, &loader);
  Queries warm = MakeQueries(config, true, &loader);
  ApplyEdits(*cold.world);
  ApplyEdits(*warm.world);
  std::mt19937 rng(99);
  const Aabb b = cold.world->world_bounds();
  auto uniform = [&rng](float lo, float hi) {
    return lo + (hi - lo) * float(double(rng()) / 4294967296.0);
  };
  std::vector<RaycastInput> rays;
  for (int i = 0; i < 3000; ++i) {
    // A fifth of them start near the edits.
    Vec3 origin = i % 5 == 0 ? Vec3(uniform(-40, 40), uniform(-50, 48), uniform(-40, 40))
                             : Vec3(uniform(b.min.x, b.max.x), uniform(b.min.y, b.max.y),
                                    uniform(b.min.z, b.max.z));
    const float z = uniform(-1, 1), phi = uniform(0, 6.2831853f), r = std::sqrt(1 - z * z);
    rays.push_back(
        {origin, Vec3(r * std::cos(phi), r * std::sin(phi), z), i % 7 == 0 ? 512.0f : 64.0f});
  }
  const RaycastSettings settings[3] = {{},
                                       {WaterMode::kStopAtSurface, RaycastMode::kSmooth},
                                       {WaterMode::kPassThrough, RaycastMode::kBlocky}};
  for (size_t i = 0; i < rays.size(); ++i)
    Raycast(*warm.index, *warm.cache, rays[i], settings[i % 3]);
  int hits = 0, inside = 0;
  for (size_t i = 0; i < rays.size(); ++i) {
    const RaycastHit c = Raycast(*cold.index, *cold.cache, rays[i], settings[i % 3]);
    const RaycastHit w = Raycast(*warm.index, *warm.cache, rays[i], settings[i % 3]);
    ASSERT_TRUE(c.load_status.ok() && w.load_status.ok());
    hits += c.hit;
    inside += c.started_inside;
    ASSERT_EQ(c.hit, w.hit) << "ray " << i;
    ASSERT_EQ(c.started_inside, w.started_inside) << "ray " << i;
    ASSERT_TRUE(SameBits(c.distance, w.distance))
        << "ray " << i << ": " << c.distance << " vs " << w.distance;
    ASSERT_TRUE(SameBits(c.position, w.position)) << "ray " << i;
    ASSERT_TRUE(SameBits(c.normal, w.normal)) << "ray " << i;
    ASSERT_EQ(c.front_face, w.front_face) << "ray " << i;
    ASSERT_EQ(c.voxel, w.voxel) << "ray " << i;
    ASSERT_EQ(c.value, w.value) << "ray " << i;
    ASSERT_EQ(c.chunk, w.chunk) << "ray " << i;
    ASSERT_EQ(c.triangle, w.triangle) << "ray " << i;
  }
  // Both kinds of answers are exercised.
  EXPECT_GT(hits - inside, 300);
  EXPECT_GT(inside, 300);
  EXPECT_GT(int(rays.size()) - hits, 300);
}

// Cold rays through open sky, each meeting chunks no other meets, build no broadphase record and
// no mesh: their origins and the stretches they cross are proven outside the surface (World::
// ProvenUntouchedSide). Cast again, they meet those chunks a second time and build their records
// (BroadphaseIndex::Unmet), so that later rays answer from the class table. Rays at the stored
// rock chunk and at the edited ball in that sky still hit them, as the fully generated world
// answers.
TEST(ColdBuild, ColdRaysProveOpenSkyAndHitWhatIsStoredOrEdited) {
  TwoStoredChunks loader;
  EditedPair worlds(&loader);
  Queries& cold = worlds.cold;
  Queries& oracle = worlds.oracle;
  const size_t edited = cold.index->Memory().built_chunks;  // the edits' records
  std::vector<RaycastInput> rays;
  for (int i = 0; i < 9; ++i) {  // 16 voxels apart, 3 long: no chunk met twice
    const float a = 0.7f * float(i);
    rays.push_back({Vec3(-58.0f + 16.0f * float(i % 3), 43.5f, -58.0f + 16.0f * float(i / 3)),
                    Vec3(std::cos(a), 0.05f, std::sin(a)), 3.0f});
  }
  QueryStats stats;
  for (const RaycastInput& ray : rays) {
    ASSERT_FALSE(Raycast(*cold.index, *cold.cache, ray, {}, &stats).hit);
    ASSERT_FALSE(Raycast(*oracle.index, *oracle.cache, ray, {}).hit);
  }
  EXPECT_EQ(cold.index->Memory().built_chunks, edited);
  EXPECT_EQ(stats.cache_builds, 0u);
  EXPECT_EQ(cold.world->PeekChunk(ChunkOf({-58, 43, -58})).value(), nullptr);
  for (const RaycastInput& ray : rays) ASSERT_FALSE(Raycast(*cold.index, *cold.cache, ray, {}).hit);
  EXPECT_GE(cold.index->Memory().built_chunks, edited + rays.size());

  const RaycastInput at_stored{Vec3(-40.0f, 36.2f, 12.3f), Vec3(1.0f, 0.01f, 0.02f), 64.0f};
  const RaycastInput at_ball{Vec3(10.2f, 40.1f, 40.0f), Vec3(0.01f, 0.0f, -1.0f), 64.0f};
  for (const RaycastInput& ray : {at_stored, at_ball}) {
    const RaycastHit c = Raycast(*cold.index, *cold.cache, ray, {});
    const RaycastHit w = Raycast(*oracle.index, *oracle.cache, ray, {});
    ASSERT_TRUE(c.hit && w.hit && !c.started_inside);
    EXPECT_TRUE(SameBits(c.distance, w.distance)) << c.distance << " vs " << w.distance;
    EXPECT_TRUE(SameBits(c.normal, w.normal));
    EXPECT_EQ(c.value, w.value);
  }
  // A short ray inside the stored chunk, its origin's cell in the sky chunk below it on x: no
  // crossing, so the origin voxel is read, in a chunk met first that is not the generator's.
  const RaycastInput inside{Vec3(16.2f, 36.5f, 12.5f), Vec3(1.0f, 0.0f, 0.0f), 2.0f};
  const RaycastHit c = Raycast(*cold.index, *cold.cache, inside, {});
  const RaycastHit w = Raycast(*oracle.index, *oracle.cache, inside, {});
  ASSERT_TRUE(c.started_inside && w.started_inside);
  EXPECT_EQ(c.value, (Voxel{kMaterialRock, 200}));
  EXPECT_EQ(c.value, w.value);
}

// Cold rays that end just past the surface they hit (the warm world's hit distance plus a
// fiftieth of a voxel) answer as warm ones, bit for bit: the last stretch a cold ray proves ends
// in the cell of the hit, so the proof must cover that cell's corners on the far side too.
TEST(ColdBuild, ColdRaysEndingJustPastTheSurfaceEqualWarmRays) {
  const WorldConfig config{};
  Queries cold = MakeQueries(config, false, nullptr);
  Queries warm = MakeQueries(config, true, nullptr);
  RandomRays rays(cold.world->world_bounds(), 5150);
  int checked = 0;
  for (int i = 0; i < 6000; ++i) {
    RaycastInput ray = rays.Next(48.0f);
    const RaycastHit probe = Raycast(*warm.index, *warm.cache, ray, {});
    if (!probe.hit || probe.started_inside) continue;
    ray.max_distance = probe.distance + 0.02f;
    const RaycastHit c = Raycast(*cold.index, *cold.cache, ray, {});
    const RaycastHit w = Raycast(*warm.index, *warm.cache, ray, {});
    ++checked;
    ASSERT_TRUE(w.hit) << "ray " << i;
    ASSERT_EQ(c.hit, w.hit) << "ray " << i;
    ASSERT_TRUE(SameBits(c.distance, w.distance))
        << "ray " << i << ": " << c.distance << " vs " << w.distance;
    ASSERT_TRUE(SameBits(c.normal, w.normal)) << "ray " << i;
    ASSERT_EQ(c.value, w.value) << "ray " << i;
  }
  EXPECT_GT(checked, 600);
}

// Every crossing along cold rays (RaycastSmoothAll, which walks the chunks as the closest hit
// does) equals the warm list of the fully generated world, over 400 /64 rays on a fresh world.
TEST(ColdBuild, ColdCrossingListsEqualWarmOnes) {
  const WorldConfig config{};
  Queries cold = MakeQueries(config, false, nullptr);
  Queries warm = MakeQueries(config, true, nullptr);
  RandomRays rays(cold.world->world_bounds(), 808);
  std::vector<RaycastHit> c, w;
  size_t crossings = 0;
  for (int i = 0; i < 400; ++i) {
    const RaycastInput ray = rays.Next(64.0f);
    RaycastSmoothAll(*cold.index, *cold.cache, ray, {}, &c);
    RaycastSmoothAll(*warm.index, *warm.cache, ray, {}, &w);
    ASSERT_EQ(c.size(), w.size()) << "ray " << i;
    for (size_t k = 0; k < c.size(); ++k) {
      ASSERT_TRUE(c[k].load_status.ok());
      ASSERT_TRUE(SameBits(c[k].distance, w[k].distance)) << "ray " << i << " crossing " << k;
      ASSERT_EQ(c[k].front_face, w[k].front_face) << "ray " << i << " crossing " << k;
      ASSERT_EQ(c[k].value, w[k].value) << "ray " << i << " crossing " << k;
    }
    crossings += c.size();
  }
  EXPECT_GT(crossings, 200u);
}

// A cold ray under a snapshot taken before an edit in never-touched sky answers as of the
// snapshot: the edited chunk is not the generator's for the proofs (its history holds the older
// chunk), and the ray misses; outside the snapshot it hits the edit.
TEST(ColdBuild, ColdRaysUnderASnapshotAnswerAsOfIt) {
  Queries cold = MakeQueries(kEditedConfig, false, nullptr);
  const RaycastInput ray{Vec3(-50.0f, 42.5f, -50.2f), Vec3(1.0f, 0.0f, 0.01f), 40.0f};
  const FillBallParams ball{Vec3(-30.0f, 42.5f, -50.0f), 2.5f, kMaterialRock, EditMode::kAdd};
  {
    World::ReadSnapshot snapshot(*cold.world);
    ASSERT_TRUE(
        cold.world->Edit([&](ChunkEdit& e) { return FillBall(e, ball, EditLimits{}); }).ok());
    EXPECT_FALSE(Raycast(*cold.index, *cold.cache, ray, {}).hit);
  }
  const RaycastHit hit = Raycast(*cold.index, *cold.cache, ray, {});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.distance, 17.5f, 0.5f);
}

}  // namespace
}  // namespace voxcol
