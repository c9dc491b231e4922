#include "core/cache/chunk_collision_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/barrier.h"
#include "core/mesh/marching_cubes.h"
#include "core/voxel/edit.h"
#include "tests/core/test_meshes.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

std::vector<ChunkKey> AllMeshedKeys(const World& world) {
  std::vector<ChunkKey> keys;
  IntBox r = MeshedChunkRange(world);
  for (int y = r.min.y; y < r.max.y; ++y)
    for (int z = r.min.z; z < r.max.z; ++z)
      for (int x = r.min.x; x < r.max.x; ++x) keys.push_back({x, y, z});
  return keys;
}

// The cache's mesh is marching cubes' output with its triangles in the tree's leaf order
// (KdTree::Build permutes them): the same vertices and normals, the same triangles (corners in
// the same rotation, same material), in any order. Its indices take one byte each when every
// vertex index fits in one (ChunkMesh::NarrowIndices).
bool SameMesh(const ChunkMesh& cached, const ChunkMesh& meshed) {
  const bool narrow = !cached.empty() && cached.vertex_count() <= 256;
  return cached.narrow() == narrow && cached.vertices == meshed.vertices &&
         cached.normals == meshed.normals && cached.triangle_count() == meshed.triangle_count() &&
         testing::SortedTriangles(cached) == testing::SortedTriangles(meshed);
}

// What an entry keeps of its corner chunks matches `world` (ChunkCollision::corner_chunks): the
// chunk itself and every neighbour it keeps are the world's current chunks (never an old version,
// never a part), and every voxel CornerVoxel answers reads as the world reads it. Returns how many
// neighbours were not kept.
int ExpectCornersOfWorld(const ChunkCollision& c, const World& world) {
  int dropped = 0;
  for (int n = 0; n < 8; ++n) {
    const Int3 d{n & 1, (n >> 1) & 1, n >> 2};
    const ChunkPtr& kept = c.corner_chunks[n];
    const ChunkPtr current = world.GetChunk(c.key + d);
    if (n == 0 || kept != nullptr) {
      EXPECT_EQ(kept, current) << c.key.x << "," << c.key.y << "," << c.key.z << " corner " << n;
    }
    dropped += kept == nullptr;
  }
  const Int3 o = ChunkOrigin(c.key);
  for (int y = 0; y <= kChunkSize; ++y)
    for (int z = 0; z <= kChunkSize; ++z)
      for (int x = 0; x <= kChunkSize; ++x) {
        const Int3 v = o + Int3{x, y, z};
        if (const Voxel* read = c.CornerVoxel(v)) {
          EXPECT_EQ(*read, world.GetVoxel(v)) << v.x << "," << v.y << "," << v.z;
        }
      }
  return dropped;
}

TEST(NarrowphaseCacheTest, EachChunkIsBuiltOnceUnderConcurrency) {
  auto world = testing::MakeCaveWorld(31, {32, 32, 32});
  ChunkCollisionCache cache(*world, size_t(1) << 30);
  std::vector<ChunkKey> keys = AllMeshedKeys(*world);
  constexpr int kThreads = 8;
  absl::Barrier* start = new absl::Barrier(kThreads);
  std::vector<std::vector<const ChunkCollision*>> seen(kThreads);
  std::atomic<int> built_here{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<ChunkKey> order = keys;
      std::shuffle(order.begin(), order.end(), std::mt19937(t));
      if (start->Block()) delete start;
      for (int round = 0; round < 3; ++round) {
        for (const ChunkKey& key : keys) {
          bool built = false;
          seen[t].push_back(cache.Get(key, &built).get());
          built_here += built;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  ChunkCollisionCacheStats s = cache.stats();
  EXPECT_EQ(s.builds, keys.size());
  EXPECT_EQ(built_here.load(), int(keys.size()));
  for (int t = 1; t < kThreads; ++t)
    EXPECT_EQ(seen[t], seen[0]) << "every thread saw the same entries";
}

// Contact queries on several threads ask for a chunk's edge flags at once: each may compute them,
// but every thread gets the one published array, equal to a fresh computation.
TEST(NarrowphaseCacheTest, ConcurrentCallersShareOneEdgeFlagsArray) {
  auto world = testing::MakeCaveWorld(32, {32, 32, 32});
  ChunkCollisionCache cache(*world, size_t(1) << 30);
  std::vector<ChunkCollisionPtr> entries;
  for (const ChunkKey& key : AllMeshedKeys(*world)) {
    if (ChunkCollisionPtr c = cache.Get(key); !c->mesh.empty()) entries.push_back(c);
  }
  ASSERT_GT(entries.size(), 4u);
  constexpr int kThreads = 4;
  absl::Barrier* start = new absl::Barrier(kThreads);
  std::vector<std::vector<const uint16_t*>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (start->Block()) delete start;
      for (const ChunkCollisionPtr& c : entries) seen[t].push_back(c->EdgeFlags());
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]) << "thread " << t;
  for (size_t i = 0; i < entries.size(); ++i) {
    std::vector<uint16_t> fresh;
    ComputeEdgeFlags(entries[i]->mesh, &fresh);
    ASSERT_EQ(fresh.size(), entries[i]->mesh.triangle_count());
    ASSERT_TRUE(std::equal(fresh.begin(), fresh.end(), seen[0][i])) << i;
    EXPECT_EQ(entries[i]->EdgeFlags(), seen[0][i]) << "computed once more after publishing";
  }
}

TEST(NarrowphaseCacheTest, CachedBytesStayWithinTheBudget) {
  auto world = testing::MakeCaveWorld(32, {64, 64, 64});
  const size_t budget = 64 * 1024;
  ChunkCollisionCache cache(*world, budget);
  std::vector<ChunkKey> keys = AllMeshedKeys(*world);
  size_t total = 0;
  for (const ChunkKey& key : keys) {
    ChunkCollisionPtr c = cache.Get(key);
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(SameMesh(c->mesh, MeshChunk(*world, key)));
    total += c->bytes;
    EXPECT_LE(cache.stats().bytes, budget);
  }
  ChunkCollisionCacheStats s = cache.stats();
  EXPECT_GT(total, 4 * budget) << "the test must overflow the budget";
  EXPECT_GT(s.evictions, 0u);
  EXPECT_GT(s.bytes, budget / 4) << "the budget is used, not just respected";
}

// A voxel edit rebuilds exactly the chunks whose meshes read it.
TEST(NarrowphaseCacheTest, EditInvalidatesTheChunksThatReadTheVoxel) {
  auto world = testing::MakeCaveWorld(33, {32, 32, 32});
  ChunkCollisionCache cache(*world, size_t(1) << 30);
  std::vector<ChunkKey> keys = AllMeshedKeys(*world);
  std::vector<ChunkCollisionPtr> before;
  for (const ChunkKey& key : keys) before.push_back(cache.Get(key));
  const Int3 voxel{8, 0, 3};  // low X face of chunk (1, 0, 0): chunk (0, 0, 0) reads it too
  ASSERT_TRUE(world
                  ->Edit([&](ChunkEdit& e) {
                    e.Set(voxel, Voxel{kMaterialRock, uint8_t(255 - e.Get(voxel).occupancy)});
                    return absl::OkStatus();
                  })
                  .ok());
  uint64_t readers = 0, dropped = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const ChunkKey& key = keys[i];
    // A mesh reads its chunk's voxels, one layer below and two above; an entry also pins the
    // chunk itself and those of the seven above it that were resident (corner_chunks), which must
    // never be old versions.
    Int3 o = ChunkOrigin(key);
    bool reads = voxel.x >= o.x - 1 && voxel.x <= o.x + 9 && voxel.y >= o.y - 1 &&
                 voxel.y <= o.y + 9 && voxel.z >= o.z - 1 && voxel.z <= o.z + 9;
    const Int3 d = ChunkOf(voxel) - key;
    bool pins = d.x >= 0 && d.x <= 1 && d.y >= 0 && d.y <= 1 && d.z >= 0 && d.z <= 1;
    readers += reads;
    dropped += reads || pins;
    ChunkCollisionPtr after = cache.Get(key);
    // Chunks without a triangle share one record (ChunkCollisionCache::MeshlessRecord), before
    // and after: their drops show only in the invalidation count below, and they pin nothing.
    if (!after->mesh.empty() || !before[i]->mesh.empty()) {
      EXPECT_EQ(after != before[i], reads || pins) << key.x << "," << key.y << "," << key.z;
    }
    EXPECT_TRUE(SameMesh(after->mesh, MeshChunk(*world, key)));
    if (after->mesh.empty()) continue;
    ExpectCornersOfWorld(*after, *world);
  }
  // x = 8 is a chunk face and y = 0 too: chunks (0|1, -1|0, 0) read the voxel, and chunks
  // (0|1, -1|0, -1|0) pin its chunk (1, 0, 0).
  EXPECT_EQ(readers, 4u);
  EXPECT_EQ(dropped, 8u);
  EXPECT_EQ(cache.stats().invalidations, dropped);
}

// Every chunk without a triangle is answered by one of two shared records, all-open or all-solid
// cells as its own mesh has them, which cost no budget; an edit that gives one triangles gets it
// a record of its own again.
TEST(NarrowphaseCacheTest, ChunksWithoutTrianglesShareTwoRecords) {
  auto world = testing::MakeCaveWorld(36, {48, 48, 48});
  ChunkCollisionCache cache(*world, size_t(1) << 30);
  std::vector<ChunkKey> keys = AllMeshedKeys(*world);
  std::set<const ChunkCollision*> shared;
  size_t meshless = 0, solid = 0, bytes = 0;
  ChunkKey open_key{};
  for (const ChunkKey& key : keys) {
    ChunkCollisionPtr c = cache.Get(key);
    SolidCells fresh_cells;
    const ChunkMesh fresh = MeshChunk(*world, key, &fresh_cells);
    ASSERT_TRUE(SameMesh(c->mesh, fresh));
    ChunkCollisionCache::ReadScope scope(cache);
    const ChunkCells cells = cache.FindCells(key, scope);
    ASSERT_TRUE(cells.solid_cells != nullptr && *cells.solid_cells == fresh_cells);
    if (!c->mesh.empty()) {
      EXPECT_TRUE(c->key == key);
      bytes += c->bytes;
      continue;
    }
    ++meshless;
    shared.insert(c.get());
    EXPECT_EQ(c->bytes, 0u);
    if ((*cells.solid_cells)[0] != 0) {
      ++solid;
    } else if (ChunkOrigin(key).y > 8) {
      open_key = key;  // open air well above the ground
    }
  }
  std::printf("%zu chunks, %zu without triangles (%zu solid) in %zu shared records\n", keys.size(),
              meshless, solid, shared.size());
  EXPECT_GT(meshless, keys.size() / 4);
  EXPECT_GT(solid, 0u);
  EXPECT_LT(solid, meshless);
  EXPECT_EQ(shared.size(), 2u);
  EXPECT_EQ(cache.stats().bytes, bytes);  // the shared records cost no budget
  // Rock in the open chunk: its own record, with triangles and its key.
  ASSERT_FALSE(open_key == ChunkKey{});
  const Int3 o = ChunkOrigin(open_key);
  const Vec3 centre = Vec3(float(o.x) + 4, float(o.y) + 4, float(o.z) + 4) * world->voxel_size();
  FillBallParams p{centre, 2.5f * world->voxel_size(), kMaterialRock, EditMode::kAdd};
  ASSERT_TRUE(world->Edit([&](ChunkEdit& e) { return FillBall(e, p, EditLimits{}); }).ok());
  ChunkCollisionPtr filled = cache.Get(open_key);
  EXPECT_FALSE(filled->mesh.empty());
  EXPECT_TRUE(filled->key == open_key);
  EXPECT_TRUE(SameMesh(filled->mesh, MeshChunk(*world, open_key)));
  EXPECT_EQ(shared.count(filled.get()), 0u);
}

TEST(NarrowphaseCacheTest, CacheMatchesFreshMeshesAfterRandomEdits) {
  auto world = testing::MakeCaveWorld(34, {48, 48, 48});
  ChunkCollisionCache cache(*world, size_t(1) << 30);
  std::vector<ChunkKey> keys = AllMeshedKeys(*world);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-22, 22), ur(1.5f, 5.0f);
  for (int i = 0; i < 20; ++i) {
    for (const ChunkKey& key : keys) cache.Get(key);
    FillBallParams p{{u(rng), u(rng), u(rng)},
                     ur(rng),
                     kMaterialRock,
                     i % 2 ? EditMode::kAdd : EditMode::kSubtract};
    ASSERT_TRUE(world->Edit([&](ChunkEdit& e) { return FillBall(e, p, EditLimits{}); }).ok());
  }
  for (const ChunkKey& key : keys)
    EXPECT_TRUE(SameMesh(cache.Get(key)->mesh, MeshChunk(*world, key)));
}

// A chunk meshed before its neighbours were generated reads only the part it needs of each
// (GatherMeshSources: proven or generated alone, none made resident): its mesh is the one built
// after they were generated whole, and the corner voxels it keeps read as the world's.
TEST(NarrowphaseCacheTest, ColdMeshesEqualWarmOnes) {
  const Int3 size{48, 48, 48};
  std::vector<ChunkKey> keys = AllMeshedKeys(*testing::MakeCaveWorld(36, size));
  int compared = 0, dropped_corners = 0;
  for (const ChunkKey& key : keys) {
    auto cold_world = testing::MakeCaveWorld(36, size),
         warm_world = testing::MakeCaveWorld(36, size);
    for (int i = 0; i < 27; ++i)
      warm_world->GetChunk(key + Int3{i % 3 - 1, i / 3 % 3 - 1, i / 9 - 1});
    ChunkCollisionCache cold(*cold_world, size_t(1) << 30), warm(*warm_world, size_t(1) << 30);
    const ChunkCollisionPtr c = cold.Get(key), w = warm.Get(key);
    // The neighbours were read in parts: none of them became resident.
    for (int i = 0; i < 27; ++i) {
      const Int3 d{i % 3 - 1, i / 3 % 3 - 1, i / 9 - 1};
      if (d != Int3{0, 0, 0} && cold_world->chunk_bounds().Contains(key + d))
        ASSERT_EQ(cold_world->PeekChunk(key + d).value(), nullptr)
            << d.x << "," << d.y << "," << d.z;
    }
    if (w->mesh.empty()) continue;
    ++compared;
    ASSERT_TRUE(SameMesh(c->mesh, w->mesh)) << key.x << "," << key.y << "," << key.z;
    EXPECT_EQ(ExpectCornersOfWorld(*w, *warm_world), 0);  // every neighbour resident: all kept
    dropped_corners += ExpectCornersOfWorld(*c, *cold_world);
  }
  EXPECT_GT(compared, 20);
  EXPECT_GT(dropped_corners, 20);  // the generated parts were not kept
}

// A cache unregisters from its world when destroyed: the world's later edits reach only the live
// cache (under ASan, an edit that called the destroyed one would be a use after free).
TEST(NarrowphaseCacheTest, ACacheDestroyedBeforeItsWorldIsNoLongerCalled) {
  auto world = testing::MakeCaveWorld(36, {48, 48, 48});
  std::vector<ChunkKey> keys = AllMeshedKeys(*world);
  ChunkCollisionCache kept(*world, size_t(1) << 30);
  {
    ChunkCollisionCache gone(*world, size_t(1) << 30);
    for (const ChunkKey& key : keys) gone.Get(key);
  }
  for (const ChunkKey& key : keys) kept.Get(key);
  const FillBallParams dig{{0, 0, 0}, 6.0f, kMaterialAir, EditMode::kSubtract};
  ASSERT_TRUE(world->Edit([&](ChunkEdit& e) { return FillBall(e, dig, EditLimits{}); }).ok());
  EXPECT_GT(kept.stats().invalidations, 0u);
  for (const ChunkKey& key : keys)
    EXPECT_TRUE(SameMesh(kept.Get(key)->mesh, MeshChunk(*world, key)));
}

// Lock-free hits under churn: readers find entries while an editor invalidates them and a small
// budget evicts them; every entry a reader holds stays intact for its scope, and afterwards the
// cache still matches fresh meshes. One reader finds its entries through scopes nested in its
// round's scope, each ended before the entries are checked: the round's scope alone must keep
// them (under ASan, an entry freed too early is a use after free).
TEST(NarrowphaseCacheTest, ConcurrentReadersEditsAndEvictionsSeeConsistentEntries) {
  auto world = testing::MakeCaveWorld(35, {48, 48, 48});
  ChunkCollisionCache cache(*world, 96 * 1024);
  std::vector<ChunkKey> keys = AllMeshedKeys(*world);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::atomic<int> rounds{0};  // reader rounds finished; the editor paces itself on them
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 rng(t);
      while (!stop.load()) {
        ChunkCollisionCache::ReadScope round(cache);
        std::vector<const ChunkCollision*> held;
        for (int i = 0; i < 16; ++i) {
          std::optional<ChunkCollisionCache::ReadScope> nested;
          if (t == 1) nested.emplace(cache);
          const ChunkCollisionCache::ReadScope& scope = nested ? *nested : round;
          const ChunkKey& key = keys[rng() % keys.size()];
          absl::Status error;
          const ChunkCollision* c = cache.Find(key, scope, &error);
          // A chunk without a triangle may get a shared record: not its key, and no tree.
          if (c == nullptr ||
              (c->mesh.empty() ? !c->tree.empty()
                               : !(c->key == key) || !(c->mesh.origin == ChunkOrigin(key)))) {
            ++bad;
          }
          held.push_back(c);
          // The entry's copies (preview, solid cells, source chunk) match the data they came
          // with while the editor evicts and invalidates: never another chunk's.
          const ChunkCells cells = cache.FindCells(keys[rng() % keys.size()], scope);
          if (const ChunkCollision* d = cells.entry.collision; d != nullptr) {
            if (cells.entry.preview == nullptr || *cells.entry.preview != ChunkPreview(*d) ||
                cells.solid_cells == nullptr ||
                // a shared record (no triangles) stands for all-open or all-solid cells only
                (d->mesh.empty() && *cells.solid_cells != SolidCells{} &&
                 *cells.solid_cells !=
                     SolidCells{~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull}) ||
                cells.source != d->source()) {
              ++bad;
            }
            held.push_back(d);
          }
        }
        for (const ChunkCollision* c : held) {  // still intact while the scope lives
          if (c == nullptr ||
              c->mesh.IndexBytes() !=
                  size_t(c->mesh.triangle_count()) * (c->mesh.narrow() ? 3 : 6) ||
              !(c->mesh.materials.empty() ||
                c->mesh.materials.size() == c->mesh.triangle_count())) {
            ++bad;
          }
        }
        ++rounds;
      }
    });
  }
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-22, 22), ur(1.5f, 5.0f);
  for (int i = 0; i < 30; ++i) {
    // Readers must really run between edits, however the scheduler treats this thread: without the
    // pacing a loaded machine can finish all edits before any reader starts (no churn, no
    // eviction).
    while (rounds.load() < 8 * (i + 1)) std::this_thread::yield();
    FillBallParams p{{u(rng), u(rng), u(rng)},
                     ur(rng),
                     kMaterialRock,
                     i % 2 ? EditMode::kAdd : EditMode::kSubtract};
    ASSERT_TRUE(world->Edit([&](ChunkEdit& e) { return FillBall(e, p, EditLimits{}); }).ok());
  }
  stop = true;
  for (std::thread& th : readers) th.join();
  EXPECT_EQ(bad.load(), 0);
  ChunkCollisionCacheStats s = cache.stats();
  EXPECT_GT(s.evictions, 0u);
  EXPECT_LE(s.bytes, cache.budget_bytes());
  ChunkCollisionCache::ReadScope scope(cache);
  for (const ChunkKey& key : keys) {
    absl::Status error;
    const ChunkCollision* c = cache.Find(key, scope, &error);
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(SameMesh(c->mesh, MeshChunk(*world, key)));
  }
}

// Find and GetChecked report a chunk that fails to load instead of meshing it as air, and cache
// nothing for it.
TEST(NarrowphaseCacheTest, FindGetCheckedAndFindOrBuildCellsReportLoadErrors) {
  class FailingLoader : public ChunkLoader {
   public:
    absl::StatusOr<ChunkPtr> Load(const ChunkKey& key) const override {
      if (key == ChunkKey{0, 0, 0}) return absl::DataLossError("corrupt");
      return ChunkPtr(nullptr);
    }
  };
  auto world = testing::MakeCaveWorld(36, {32, 32, 32});
  FailingLoader loader;
  world->SetLoader(&loader);
  ChunkCollisionCache cache(*world, size_t(1) << 30);
  ChunkCollisionCache::ReadScope scope(cache);
  for (int round = 0; round < 2; ++round) {
    absl::Status error;
    EXPECT_EQ(cache.Find({0, 0, 0}, scope, &error), nullptr);
    EXPECT_EQ(error.code(), absl::StatusCode::kDataLoss);
  }
  for (int round = 0; round < 2; ++round) {
    absl::Status error;
    EXPECT_EQ(cache.GetChecked({0, 0, 0}, &error), nullptr);
    EXPECT_EQ(error.code(), absl::StatusCode::kDataLoss);
  }
  for (int round = 0; round < 2; ++round) {
    absl::Status error;
    bool built = true;
    const ChunkCells cells = cache.FindOrBuildCells({0, 0, 0}, scope, &error, &built);
    EXPECT_TRUE(cells.solid_cells == nullptr && cells.entry.collision == nullptr);
    EXPECT_EQ(error.code(), absl::StatusCode::kDataLoss);
  }
  absl::Status error;
  EXPECT_NE(cache.Find({1, 0, 0}, scope, &error), nullptr);
  EXPECT_TRUE(error.ok());
  bool built = true;
  EXPECT_NE(cache.GetChecked({1, 0, 0}, &error, &built), nullptr);
  EXPECT_TRUE(error.ok());
  EXPECT_FALSE(built);  // the entry Find built
  EXPECT_NE(cache.GetChecked({2, 0, 0}, &error, &built), nullptr);
  EXPECT_TRUE(built);
  // FindOrBuildCells builds a missing entry and answers with its cells, as the mesher computes
  // them.
  SolidCells fresh;
  MeshChunk(*world, {1, 0, 1}, &fresh);
  ChunkCells cells = cache.FindOrBuildCells({1, 0, 1}, scope, &error, &built);
  EXPECT_TRUE(error.ok());
  EXPECT_TRUE(built);
  ASSERT_TRUE(cells.solid_cells != nullptr && cells.entry.collision != nullptr);
  EXPECT_EQ(*cells.solid_cells, fresh);
  cells = cache.FindOrBuildCells({1, 0, 1}, scope, &error, &built);
  EXPECT_FALSE(built);
  EXPECT_TRUE(cells.solid_cells != nullptr && *cells.solid_cells == fresh);
  EXPECT_EQ(cache.stats().builds, 3u);
}

}  // namespace
}  // namespace voxcol
