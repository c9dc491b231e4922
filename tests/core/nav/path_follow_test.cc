// Paths followed by the character controller (MoveCharacter, the function MoveCharacters runs per
// character) with a capsule of the agent's size: every tick's pose is checked with Overlap, and
// the walk must reach the goal.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "core/query/character.h"
#include "core/query/overlap.h"
#include "tests/core/nav/nav_scenes.h"

namespace voxcol {
namespace {

using testing::MazeCellCentre;

struct Walk {
  bool reached = false;
  int ticks = 0;
  int overlapping_ticks = 0;
  float goal_miss = 0;    // horizontal distance from the last pose to the goal
  float height_miss = 0;  // vertical distance from the last pose's feet to the goal
};

// Walks the capsule along the waypoints at `speed` per tick under gravity, steering to each
// waypoint in turn, and checks the pose after every tick.
Walk FollowPath(testing::NavScene& s, const AgentProfile& agent, const FindPathResult& path) {
  const float half_height = 0.5f * agent.height - agent.radius;
  const float foot = agent.radius + half_height;  // centre above the feet
  const ConvexShape capsule = MakeCapsule(half_height, agent.radius);
  CharacterMove move;
  move.radius = agent.radius;
  move.half_height = half_height;
  move.settings.step_offset = agent.max_climb;
  move.settings.slope_limit_degrees = agent.max_slope_degrees;
  move.settings.snap_distance = 0.5f;
  move.position = path.waypoints.front().position + Vec3(0, foot + 0.05f, 0);
  constexpr float kSpeed = 0.25f, kReach = 0.1f;
  Walk walk;
  size_t next = 1;
  for (; walk.ticks < 4000 && next < path.waypoints.size(); ++walk.ticks) {
    const Vec3 target = path.waypoints[next].position;
    Vec3 to(target.x - move.position.x, 0, target.z - move.position.z);
    const float d = Length(to);
    move.displacement = (d > 0 ? to * (std::min(kSpeed, d) / d) : Vec3()) + Vec3(0, -0.2f, 0);
    EXPECT_TRUE(ValidateCharacterMove(*s.world, move, QueryLimits{}).ok());
    CharacterResult r;
    MoveCharacter(*s.index, *s.cache, move, nullptr, &r);
    EXPECT_TRUE(r.status.ok()) << r.status;
    move.position = r.position;
    OverlapResult o;
    Overlap(*s.index, *s.cache, PosedShape{&capsule, RigidTransform{Quat(), move.position}}, {},
            &o);
    walk.overlapping_ticks += o.touches_solid;
    const Vec3 left(target.x - move.position.x, 0, target.z - move.position.z);
    if (Length(left) < kReach) ++next;
  }
  const Vec3 goal = path.waypoints.back().position;
  walk.goal_miss = Length(Vec3(goal.x - move.position.x, 0, goal.z - move.position.z));
  walk.height_miss = std::abs(move.position.y - foot - goal.y);
  walk.reached = next == path.waypoints.size() && walk.goal_miss < 0.3f && walk.height_miss < 1.0f;
  return walk;
}

TEST(PathFollowTest, CharacterFollowsMazePathsWithoutTouchingWalls) {
  auto s = testing::MazeScene(/*queries=*/true);
  const AgentProfile agent = testing::MazeAgent();
  // The serpentine, then 12 random pairs of free map cells (seeded).
  std::vector<std::pair<Vec3, Vec3>> pairs = {{MazeCellCentre(1, 1), MazeCellCentre(12, 1)}};
  std::mt19937 rng(41);
  auto free_cell = [&] {
    for (;;) {
      const int row = int(rng() % 14), col = int(rng() % 14);
      if (!s->IsWall(testing::kMazeOrigin + col * 4, testing::kMazeOrigin + row * 4)) {
        return MazeCellCentre(row, col);
      }
    }
  };
  for (int i = 0; i < 12; ++i) pairs.push_back({free_cell(), free_cell()});
  int followed = 0;
  for (const auto& [start, goal] : pairs) {
    absl::StatusOr<FindPathResult> path = s->Path(start, goal);
    ASSERT_TRUE(path.ok()) << path.status();
    ASSERT_EQ(path->status, PathStatus::kOk) << PathStatusName(path->status);
    const Walk w = FollowPath(*s, agent, *path);
    std::printf("path %.1f units, %zu waypoints: %s after %d ticks, miss %.3f, %d overlapping\n",
                path->length, path->waypoints.size(), w.reached ? "reached" : "NOT reached",
                w.ticks, w.goal_miss, w.overlapping_ticks);
    EXPECT_TRUE(w.reached);
    EXPECT_EQ(w.overlapping_ticks, 0);
    followed += w.reached;
  }
  EXPECT_EQ(followed, int(pairs.size()));
}

// The top of the highest solid voxel of column (x, z), or NaN when water covers it or it has none.
float DrySurface(const World& world, int x, int z) {
  const IntBox b = world.voxel_bounds();
  for (int y = b.max.y - 1; y >= b.min.y; --y) {
    const Voxel v = world.GetVoxel({x, y, z});
    if (IsWater(v)) return NAN;
    if (IsSolid(v)) return float(y + 1);
  }
  return NAN;
}

TEST(PathFollowTest, CharacterFollowsCaveWorldPaths) {
  testing::NavScene s;
  s.world = testing::MakeCaveWorld(1);  // 128 x 96 x 128
  s.nav = std::make_unique<NavWorld>(*s.world);
  s.cache = std::make_unique<ChunkCollisionCache>(*s.world, size_t(64) << 20);
  s.index = std::make_unique<BroadphaseIndex>(*s.world);
  s.world->AddObserver(s.index.get());
  const AgentProfile agent;  // the defaults: radius 0.5, height 2, climb 1, slope 45
  std::mt19937 rng(4142);
  int paths = 0, reached = 0, overlapping = 0;
  for (int attempt = 0; attempt < 400 && paths < 16; ++attempt) {
    const int x = int(rng() % 112) - 56, z = int(rng() % 112) - 56;
    const int gx = int(rng() % 112) - 56, gz = int(rng() % 112) - 56;
    const float y = DrySurface(*s.world, x, z), gy = DrySurface(*s.world, gx, gz);
    if (std::isnan(y) || std::isnan(gy)) continue;
    FindPathInput in;
    in.profile = agent;
    in.start = Vec3(float(x) + 0.5f, y, float(z) + 0.5f);
    in.goal = Vec3(float(gx) + 0.5f, gy, float(gz) + 0.5f);
    absl::StatusOr<FindPathResult> path = s.nav->FindPath(in);
    ASSERT_TRUE(path.ok()) << path.status();
    if (path->status != PathStatus::kOk) continue;
    ++paths;
    const Walk w = FollowPath(s, agent, *path);
    std::printf(
        "cave path %.1f units, %zu waypoints: %s after %d ticks, miss %.3f (height %.3f), %d "
        "overlapping\n",
        path->length, path->waypoints.size(), w.reached ? "reached" : "NOT reached", w.ticks,
        w.goal_miss, w.height_miss, w.overlapping_ticks);
    reached += w.reached;
    overlapping += w.overlapping_ticks;
  }
  EXPECT_GE(paths, 12);
  EXPECT_EQ(reached, paths);
  EXPECT_EQ(overlapping, 0);
}

}  // namespace
}  // namespace voxcol
