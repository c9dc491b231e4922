// Navigation over water, materials and steps in small analytic worlds, and FindPath concurrent
// with edits.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "core/nav/nav_world.h"
#include "tests/core/nav/nav_scenes.h"

namespace voxcol {
namespace {

// Flat rock ground with its surface at y = 0 over the whole 64 x 32 x 64 world.
std::unique_ptr<testing::NavScene> FlatScene() {
  auto s = std::make_unique<testing::NavScene>();
  s->world = testing::MakeEmptyWorld({64, 32, 64});
  s->nav = std::make_unique<NavWorld>(*s->world);
  s->Region({{-32, -4, -32}, {32, 0, 32}}, kMaterialRock);
  return s;
}

FindPathInput Input(const Vec3& start, const Vec3& goal) {
  FindPathInput in;
  in.start = start;
  in.goal = goal;
  in.profile = testing::MazeAgent();
  return in;
}

TEST(NavTerrainTest, WaterIsSwumOnlyByProfilesThatSwim) {
  auto s = FlatScene();
  // A channel of water across the world (x -6..5, 3 deep), its surface level with the ground.
  s->Region({{-6, -3, -32}, {6, 0, 32}}, kMaterialRock, EditMode::kSubtract);
  s->Region({{-6, -3, -32}, {6, 0, 32}}, kMaterialWater);
  FindPathInput in = Input(Vec3(-16, 0, 0), Vec3(16, 0, 0));
  absl::StatusOr<FindPathResult> walker = s->nav->FindPath(in);
  ASSERT_TRUE(walker.ok()) << walker.status();
  EXPECT_EQ(walker->status, PathStatus::kNoPath) << PathStatusName(walker->status);
  in.profile.can_swim = true;
  absl::StatusOr<FindPathResult> swimmer = s->nav->FindPath(in);
  ASSERT_TRUE(swimmer.ok()) << swimmer.status();
  ASSERT_EQ(swimmer->status, PathStatus::kOk) << PathStatusName(swimmer->status);
  int swims = 0;
  for (const Waypoint& w : swimmer->waypoints) {
    swims += w.action == WaypointAction::kSwim;
    // A swim leg ends at the channel's far bank or inside it.
    if (w.action == WaypointAction::kSwim) {
      EXPECT_LE(w.position.x, 6.5f);
    }
  }
  std::printf("swimmer: %.2f units, %zu waypoints, %d swim legs\n", swimmer->length,
              swimmer->waypoints.size(), swims);
  EXPECT_GE(swims, 1);
  EXPECT_LT(swimmer->length, 33.0f);
}

TEST(NavTerrainTest, MaterialCostsSteerAroundExpensiveGround) {
  auto s = FlatScene();
  // A strip of sand (x -4..3, z -20..19) on the straight line between start and goal.
  s->Region({{-4, -1, -20}, {4, 0, 20}}, kMaterialSand, EditMode::kSet);
  FindPathInput in = Input(Vec3(-16, 0, 0), Vec3(16, 0, 0));
  absl::StatusOr<FindPathResult> plain = s->nav->FindPath(in);
  ASSERT_TRUE(plain.ok() && plain->status == PathStatus::kOk);
  in.material_costs = {{kMaterialSand, 20}};
  absl::StatusOr<FindPathResult> costly = s->nav->FindPath(in);
  ASSERT_TRUE(costly.ok() && costly->status == PathStatus::kOk);
  float widest = 0;
  for (const Waypoint& w : costly->waypoints) widest = std::max(widest, std::abs(w.position.z));
  std::printf("sand cost 1: %.2f units; cost 20: %.2f units, farthest |z| %.2f\n", plain->length,
              costly->length, widest);
  EXPECT_LT(plain->length, 32.5f);
  EXPECT_GT(costly->length, 45.0f);
  EXPECT_GE(widest, 20.0f);  // around the strip's end, not across it
}

TEST(NavTerrainTest, StepsAboveMaxClimbNeedAJump) {
  auto s = FlatScene();
  // A platform one voxel high (x, z -4..3): twice the profile's 0.5 climb.
  s->Region({{-4, 0, -4}, {4, 1, 4}}, kMaterialRock);
  FindPathInput in = Input(Vec3(-16, 0, 0), Vec3(0, 1, 0));
  absl::StatusOr<FindPathResult> walker = s->nav->FindPath(in);
  ASSERT_TRUE(walker.ok()) << walker.status();
  EXPECT_EQ(walker->status, PathStatus::kNoPath) << PathStatusName(walker->status);
  in.profile.can_jump = true;
  in.profile.jump_height = 1.5f;
  absl::StatusOr<FindPathResult> jumper = s->nav->FindPath(in);
  ASSERT_TRUE(jumper.ok()) << jumper.status();
  ASSERT_EQ(jumper->status, PathStatus::kOk) << PathStatusName(jumper->status);
  int jumps = 0;
  for (const Waypoint& w : jumper->waypoints) jumps += w.action == WaypointAction::kJump;
  EXPECT_EQ(jumps, 1);
  // On the platform's top (y = 1), within the mesh's height step (0.25) and a little.
  EXPECT_NEAR(jumper->waypoints.back().position.y, 1.0f, 0.3f);
}

// Paths at every version while another thread digs and rebuilds one wall of the serpentine and a
// third runs RebuildStale: a path answered at version v has the length of v's maze (the wall is
// open at odd offsets from the starting version).
TEST(NavConcurrencyTest, PathsMatchTheirVersionWhileEditsRun) {
  auto s = testing::MazeScene();
  const Vec3 start = testing::MazeCellCentre(1, 1), goal = testing::MazeCellCentre(12, 1);
  absl::StatusOr<FindPathResult> closed = s->Path(start, goal);
  ASSERT_TRUE(closed.ok() && closed->status == PathStatus::kOk);
  const uint64_t base = closed->version;
  s->SetWall(2, 1, false);
  absl::StatusOr<FindPathResult> open = s->Path(start, goal);
  ASSERT_TRUE(open.ok() && open->status == PathStatus::kOk);
  s->SetWall(2, 1, true);  // version base + 2: closed again
  std::atomic<bool> done{false};
  std::atomic<int> checked{0}, wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      while (!done.load()) {
        absl::StatusOr<FindPathResult> r = s->Path(start, goal);
        if (!r.ok() || r->status != PathStatus::kOk) {
          ++wrong;
          continue;
        }
        const float want = (r->version - base) % 2 == 1 ? open->length : closed->length;
        wrong += std::abs(r->length - want) > 0.01f;
        ++checked;
      }
    });
  }
  // And a background rebuilder, as the service would run one.
  std::atomic<int> rebuilt{0};
  readers.emplace_back([&] {
    while (!done.load()) {
      absl::StatusOr<int> n = s->nav->RebuildStale();
      if (n.ok()) rebuilt += *n;
    }
  });
  for (int i = 0; i < 20; ++i) {
    s->SetWall(2, 1, i % 2 == 1);  // opens at even i (odd offsets from base)
    // Let the readers answer a few paths at (or after) this version.
    const int target = checked.load() + 3;
    for (int spin = 0; spin < 2000 && checked.load() < target; ++spin) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  done = true;
  for (std::thread& t : readers) t.join();
  std::printf("%d paths checked against their version, %d wrong; %d tiles rebuilt in background\n",
              checked.load(), wrong.load(), rebuilt.load());
  EXPECT_GT(checked.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace voxcol
