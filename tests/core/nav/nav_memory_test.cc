// The tile memory bound of NavWorld (NavSettings::max_tile_bytes_per_mesh): a bounded mesh holds
// at most its bound between queries, drops the least recently searched tiles first, and answers
// exactly as an unbounded one, also while two threads evict each other's tiles.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "core/nav/nav_world.h"
#include "tests/core/nav/nav_scenes.h"

namespace voxcol {
namespace {

constexpr int kHalf = 120;  // the world spans voxels -120..119 in X and Z: 10 x 10 tiles of 24

// Flat rock ground, surface at y = 0, over the whole 240 x 32 x 240 world.
std::unique_ptr<testing::NavScene> WideFlat(int64_t max_tile_bytes) {
  auto s = std::make_unique<testing::NavScene>();
  s->world = testing::MakeEmptyWorld({2 * kHalf, 32, 2 * kHalf});
  NavSettings settings;
  settings.max_tile_bytes_per_mesh = max_tile_bytes;
  s->nav = std::make_unique<NavWorld>(*s->world, settings);
  s->Region({{-kHalf, -4, -kHalf}, {kHalf, 0, kHalf}}, kMaterialRock);
  return s;
}

// A 4-unit path along X in the middle of tile (tx, tz). FindPath searches the box around it grown
// by half a tile: tiles tx - 1..tx + 1 and tz..tz + 1 (the box's far Z edge lies on a tile
// border, which counts to the tile after it).
FindPathResult ShortPath(testing::NavScene& s, int tx, int tz) {
  const float x = float(-kHalf + 24 * tx + 12), z = float(-kHalf + 24 * tz + 12);
  absl::StatusOr<FindPathResult> r = s.Path(Vec3(x - 2, 0, z), Vec3(x + 2, 0, z));
  EXPECT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r.ok() ? r->status : PathStatus::kNoPath, PathStatus::kOk);
  return r.ok() ? *r : FindPathResult{};
}

void ExpectSamePath(const FindPathResult& a, const FindPathResult& b) {
  ASSERT_EQ(a.status, b.status);
  EXPECT_EQ(a.length, b.length);
  ASSERT_EQ(a.waypoints.size(), b.waypoints.size());
  for (size_t i = 0; i < a.waypoints.size(); ++i) {
    EXPECT_EQ(a.waypoints[i].position.x, b.waypoints[i].position.x) << i;
    EXPECT_EQ(a.waypoints[i].position.y, b.waypoints[i].position.y) << i;
    EXPECT_EQ(a.waypoints[i].position.z, b.waypoints[i].position.z) << i;
    EXPECT_EQ(a.waypoints[i].action, b.waypoints[i].action) << i;
  }
}

TEST(NavMemoryTest, BoundedMeshStaysWithinItsBytesAndAnswersAsAnUnboundedOne) {
  auto free = WideFlat(0);  // no bound
  ASSERT_TRUE(free->nav
                  ->BuildTilesIn(testing::MazeAgent(), Vec3(-kHalf, 0, -kHalf),
                                 Vec3(kHalf - 1, 0, kHalf - 1))
                  .ok());
  const NavStats all = free->nav->stats();
  ASSERT_EQ(all.tiles_resident, 100u);
  const int64_t per_tile = int64_t(all.tile_bytes / all.tiles_resident);
  ASSERT_GT(per_tile, 0);
  // Room for 12 tiles: every query's region of 6 fits, three do not.
  const int64_t bound = 12 * per_tile;
  auto bounded = WideFlat(bound);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> tile(1, 8);
  for (int i = 0; i < 40; ++i) {
    const int tx = tile(rng), tz = tile(rng);
    const FindPathResult want = ShortPath(*free, tx, tz);
    const FindPathResult got = ShortPath(*bounded, tx, tz);
    ExpectSamePath(want, got);
    EXPECT_LE(int64_t(bounded->nav->stats().tile_bytes), bound) << "after query " << i;
  }
  const NavStats s = bounded->nav->stats();
  std::printf("%lld bytes per flat tile; bound %lld: %llu bytes held, %zu tiles, %llu evicted\n",
              (long long)per_tile, (long long)bound, (unsigned long long)s.tile_bytes,
              s.tiles_resident, (unsigned long long)s.tiles_evicted);
  EXPECT_GT(s.tiles_evicted, 0u);
  EXPECT_EQ(free->nav->stats().tiles_evicted, 0u);
}

TEST(NavMemoryTest, LeastRecentlySearchedTilesAreDroppedFirst) {
  // The bytes of two disjoint 3 x 3 regions, measured on an unbounded mesh.
  auto probe = WideFlat(0);
  const int region = ShortPath(*probe, 1, 1).tiles_built;
  ASSERT_EQ(region, 6);
  ShortPath(*probe, 8, 1);
  const int64_t two_regions = int64_t(probe->nav->stats().tile_bytes);
  ASSERT_EQ(probe->nav->stats().tiles_resident, 2u * region);

  auto s = WideFlat(two_regions);
  EXPECT_EQ(ShortPath(*s, 1, 1).tiles_built, region);  // A
  EXPECT_EQ(ShortPath(*s, 8, 1).tiles_built, region);  // B: exactly at the bound, nothing dropped
  EXPECT_EQ(s->nav->stats().tiles_evicted, 0u);
  EXPECT_EQ(ShortPath(*s, 1, 7).tiles_built, region);  // C: over the bound
  // Down to 7/8 of the bound: A's tiles (searched longest ago), then some of B's.
  const uint64_t evicted = s->nav->stats().tiles_evicted;
  std::printf("after the third region: %llu tiles evicted\n", (unsigned long long)evicted);
  EXPECT_GT(evicted, uint64_t(region));
  EXPECT_LT(evicted, 2u * region);
  EXPECT_EQ(ShortPath(*s, 1, 1).tiles_built, region) << "A's tiles must have gone first";
}

// Two threads search far apart, each alternating between two regions, under a bound of one region:
// every query builds its region again and drops older tiles, the other thread's included (under
// TSan too: this suite is in VOXCOL_CONCURRENCY_TESTS). Every answer equals the unbounded one.
TEST(NavMemoryTest, ConcurrentQueriesEvictingEachOtherKeepTheirAnswers) {
  auto free = WideFlat(0);
  const int regions[4][2] = {{2, 2}, {2, 7}, {7, 7}, {7, 2}};
  std::vector<FindPathResult> want;
  for (const auto& r : regions) want.push_back(ShortPath(*free, r[0], r[1]));
  const int64_t region = int64_t(free->nav->stats().tile_bytes / 4);
  auto s = WideFlat(region);
  auto run = [&](int first) {
    for (int i = 0; i < 24; ++i) {
      const int k = first + i % 2;
      ExpectSamePath(want[size_t(k)], ShortPath(*s, regions[k][0], regions[k][1]));
    }
  };
  std::thread a(run, 0), b(run, 2);
  a.join();
  b.join();
  const NavStats stats = s->nav->stats();
  std::printf("%llu tiles built, %llu evicted\n", (unsigned long long)stats.tiles_built,
              (unsigned long long)stats.tiles_evicted);
  EXPECT_GT(stats.tiles_evicted, 0u);
}

}  // namespace
}  // namespace voxcol
