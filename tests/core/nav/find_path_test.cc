// FindPath on the analytic maze (nav_scenes.h) against the grid oracle (grid_oracle.h), and the
// statuses, invalidation and validation of NavWorld. Each test prints what it measures.
#include "core/nav/find_path.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "tests/core/nav/nav_scenes.h"

namespace voxcol {
namespace {

using testing::MazeCellCentre;
using testing::MazeScene;

// Start and goal of the serpentine, on grid points of the oracle.
Vec3 MazeStart(const testing::GridOracle& o) {
  const Vec3 c = MazeCellCentre(1, 1);
  const auto [x, z] = o.Snap(c.x, c.z);
  return Vec3(x, 0, z);
}
Vec3 MazeGoal(const testing::GridOracle& o) {
  const Vec3 c = MazeCellCentre(12, 1);
  const auto [x, z] = o.Snap(c.x, c.z);
  return Vec3(x, 0, z);
}

// The smallest clearance (to the walls of the current map) along the path's segments.
float PathClearance(const testing::GridOracle& o, const FindPathResult& r) {
  float best = 1e9f;
  for (size_t i = 1; i < r.waypoints.size(); ++i) {
    const Vec3 a = r.waypoints[i - 1].position, b = r.waypoints[i].position;
    best = std::min(best, o.SegmentClearance(a.x, a.z, b.x, b.z));
  }
  return best;
}

// Checks one path against the oracle: within 1.05x of the oracle's shortest path, not shorter
// than 0.98x (the oracle is at most ~0.7% above the true shortest path, so a shorter path would
// cut through the clearance), ends at start and goal, and keeps the agent's radius to the walls.
void ExpectNearOracle(const testing::NavScene& s, const Vec3& start, const Vec3& goal,
                      const FindPathResult& r, const char* what) {
  const testing::GridOracle oracle = s.Oracle();
  const float best = oracle.ShortestPath(start.x, start.z, goal.x, goal.z);
  ASSERT_GT(best, 0) << what;
  ASSERT_EQ(r.status, PathStatus::kOk) << what;
  ASSERT_GE(r.waypoints.size(), 2u);
  const float clearance = PathClearance(oracle, r);
  std::printf("%s: navmesh %.3f, oracle %.3f, ratio %.4f, %zu waypoints, min clearance %.3f\n",
              what, r.length, best, r.length / best, r.waypoints.size(), clearance);
  EXPECT_LE(r.length, 1.05f * best) << what;
  EXPECT_GE(r.length, 0.98f * best) << what;
  EXPECT_LT(Length(r.waypoints.front().position - start), 0.5f);
  EXPECT_LT(Length(r.waypoints.back().position - goal), 0.5f);
  EXPECT_GE(clearance, testing::kAgentRadius - 0.02f) << what;
}

TEST(FindPathTest, MazePathIsWithinFivePercentOfGridOracle) {
  auto s = MazeScene();
  const testing::GridOracle o = s->Oracle();
  const Vec3 start = MazeStart(o), goal = MazeGoal(o);
  absl::StatusOr<FindPathResult> r = s->Path(start, goal);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->version, s->world->version());
  EXPECT_GT(r->tiles_built, 0);
  ExpectNearOracle(*s, start, goal, *r, "serpentine");
  for (const Waypoint& w : r->waypoints) EXPECT_EQ(w.action, WaypointAction::kWalk);
}

TEST(FindPathTest, ClosedMazeHasNoPath) {
  auto s = MazeScene();
  // Close the last corridor between the goal and the rest of the maze (both rows of it).
  s->SetWall(11, 4, true);
  s->SetWall(12, 4, true);
  const testing::GridOracle o = s->Oracle();
  ASSERT_LT(o.ShortestPath(MazeStart(o).x, MazeStart(o).z, MazeGoal(o).x, MazeGoal(o).z), 0);
  absl::StatusOr<FindPathResult> r = s->Path(MazeStart(o), MazeGoal(o));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, PathStatus::kNoPath) << PathStatusName(r->status);
  EXPECT_TRUE(r->waypoints.empty());
}

TEST(FindPathTest, DiggingAWallOpensAShorterPathAndBuildingClosesIt) {
  auto s = MazeScene();
  const testing::GridOracle o = s->Oracle();
  const Vec3 start = MazeStart(o), goal = MazeGoal(o);
  absl::StatusOr<FindPathResult> before = s->Path(start, goal);
  ASSERT_TRUE(before.ok() && before->status == PathStatus::kOk);
  // Dig through the wall below the start corridor (row 2, column 1): a shortcut.
  const uint64_t dug = s->SetWall(2, 1, false);
  EXPECT_GT(s->nav->stats().stale_tiles, 0u);
  absl::StatusOr<FindPathResult> open = s->Path(start, goal);
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_EQ(open->version, dug);
  EXPECT_GT(open->tiles_built, 0) << "the edit must make its tiles stale";
  ExpectNearOracle(*s, start, goal, *open, "after digging");
  EXPECT_LT(open->length, before->length - 20);
  // Build it again: the shortcut closes at the next version.
  const uint64_t built = s->SetWall(2, 1, true);
  absl::StatusOr<FindPathResult> closed = s->Path(start, goal);
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->version, built);
  ExpectNearOracle(*s, start, goal, *closed, "after building");
  EXPECT_NEAR(closed->length, before->length, 0.01f);
  std::printf("lengths: before %.3f, dug %.3f, built %.3f\n", before->length, open->length,
              closed->length);
}

TEST(FindPathTest, AnEditFarAwayLeavesTilesCurrent) {
  auto s = MazeScene();
  const testing::GridOracle o = s->Oracle();
  ASSERT_TRUE(s->Path(MazeStart(o), MazeCellCentre(1, 3)).ok());
  // An edit in the far corner (x, z >= 20) touches no tile of the first tile column's reach.
  s->Region({{24, 0, 24}, {26, 2, 26}}, kMaterialRock);
  absl::StatusOr<FindPathResult> r = s->Path(MazeStart(o), MazeCellCentre(1, 3));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kOk);
  EXPECT_EQ(r->tiles_built, 0);
}

// Path watching's filter: an edit beside the path's corridor tiles leaves it alone, one that cuts
// it (a wall across the start corridor) is reported, and the new path differs.
TEST(FindPathTest, ChangedSinceReportsOnlyEditsNearTheCorridor) {
  auto s = MazeScene();
  const Vec3 start = MazeCellCentre(1, 1), goal = MazeCellCentre(1, 6);  // the top corridor
  absl::StatusOr<FindPathResult> r = s->Path(start, goal);
  ASSERT_TRUE(r.ok() && r->status == PathStatus::kOk);
  ASSERT_FALSE(r->corridor_tiles.empty());
  for (const NavTileCoord& t : r->corridor_tiles) EXPECT_EQ(t.z, 0) << "the top row of tiles";
  EXPECT_FALSE(s->nav->ChangedSince(r->corridor_tiles, r->version));
  s->Region({{20, 0, 20}, {22, 2, 22}}, kMaterialRock);  // far corner: tile row 2
  EXPECT_FALSE(s->nav->ChangedSince(r->corridor_tiles, r->version));
  s->SetWall(1, 4, true);  // across the corridor between start and goal
  EXPECT_TRUE(s->nav->ChangedSince(r->corridor_tiles, r->version));
  absl::StatusOr<FindPathResult> after = s->Path(start, goal);
  ASSERT_TRUE(after.ok());
  EXPECT_NE(after->status == PathStatus::kOk ? after->length : -1, r->length);
}

// The edit path does no navigation work: 40 edits across built tiles build nothing, they only
// mark tiles stale (the next query or RebuildStale rebuilds them).
TEST(FindPathTest, EditsOnlyMarkTilesStale) {
  auto s = MazeScene();
  ASSERT_TRUE(s->Path(MazeCellCentre(1, 1), MazeCellCentre(12, 1)).ok());
  const NavStats before = s->nav->stats();
  EXPECT_EQ(before.stale_tiles, 0u);
  for (int i = 0; i < 40; ++i) s->SetWall(2, 1 + i % 8, i % 2 == 1);
  const NavStats after = s->nav->stats();
  std::printf("tiles built %llu -> %llu, stale %zu of %zu\n",
              (unsigned long long)before.tiles_built, (unsigned long long)after.tiles_built,
              after.stale_tiles, after.tiles_resident);
  EXPECT_EQ(after.tiles_built, before.tiles_built);
  EXPECT_GT(after.stale_tiles, 0u);
}

TEST(FindPathTest, RebuildStaleRebuildsOffTheQueryPath) {
  auto s = MazeScene();
  const testing::GridOracle o = s->Oracle();
  ASSERT_TRUE(s->Path(MazeStart(o), MazeGoal(o)).ok());
  s->SetWall(2, 1, false);
  const size_t stale = s->nav->stats().stale_tiles;
  EXPECT_GT(stale, 0u);
  EXPECT_TRUE(s->nav->MayHaveStaleTiles());
  absl::StatusOr<int> rebuilt = s->nav->RebuildStale();
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_EQ(size_t(*rebuilt), stale);
  EXPECT_EQ(s->nav->stats().stale_tiles, 0u);
  EXPECT_FALSE(s->nav->MayHaveStaleTiles());  // the background thread's gate closes again
  absl::StatusOr<FindPathResult> r = s->Path(MazeStart(o), MazeGoal(o));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tiles_built, 0);
  ExpectNearOracle(*s, MazeStart(o), MazeGoal(o), *r, "after RebuildStale");
}

TEST(FindPathTest, StartOrGoalInsideRockIsOffMesh) {
  auto s = MazeScene();
  const testing::GridOracle o = s->Oracle();
  const Vec3 buried(MazeStart(o).x, -2.5f, MazeStart(o).z);  // 2.5 below the ground's surface
  const Vec3 in_wall = MazeCellCentre(2, 5, 1.5f);           // inside a wall's rock
  absl::StatusOr<FindPathResult> r = s->Path(buried, MazeGoal(o));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kStartOffMesh) << PathStatusName(r->status);
  r = s->Path(in_wall, MazeGoal(o));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kStartOffMesh) << PathStatusName(r->status);
  r = s->Path(MazeStart(o), Vec3(MazeGoal(o).x, -2.5f, MazeGoal(o).z));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kGoalOffMesh) << PathStatusName(r->status);
  // The same points on the surface are on the mesh.
  r = s->Path(Vec3(buried.x, 0, buried.z), MazeGoal(o));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kOk);
}

TEST(FindPathTest, MaxDistanceGivesTooFar) {
  auto s = MazeScene();
  const testing::GridOracle o = s->Oracle();
  const Vec3 start = MazeStart(o), goal = MazeGoal(o);
  absl::StatusOr<FindPathResult> full = s->Path(start, goal);
  ASSERT_TRUE(full.ok() && full->status == PathStatus::kOk);
  // Longer than the straight line (44 units) but shorter than the serpentine.
  absl::StatusOr<FindPathResult> r = s->Path(start, goal, 0.5f * full->length);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kTooFar) << PathStatusName(r->status);
  EXPECT_TRUE(r->waypoints.empty());
  r = s->Path(start, goal, 10);  // shorter than the straight line
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kTooFar);
  r = s->Path(start, goal, full->length + 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, PathStatus::kOk);
}

// A passed deadline stops a cold FindPath before it builds a tile; a cancelled one likewise; with
// no deadline the same call builds and answers.
TEST(FindPathTest, DeadlineAndCancellationStopTileBuilds) {
  auto s = MazeScene();
  FindPathInput in;
  in.profile = testing::MazeAgent();
  in.start = MazeCellCentre(1, 1);
  in.goal = MazeCellCentre(12, 1);
  QueryInterrupt late;
  late.deadline = absl::Now() - absl::Seconds(1);
  in.interrupt = &late;
  absl::StatusOr<FindPathResult> r = s->nav->FindPath(in);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  std::atomic<bool> cancelled{true};
  QueryInterrupt cancel;
  cancel.cancelled = &cancelled;
  in.interrupt = &cancel;
  r = s->nav->FindPath(in);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << r.status();
  EXPECT_EQ(s->nav->stats().tiles_built, 0u);
  in.interrupt = nullptr;
  r = s->nav->FindPath(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, PathStatus::kOk);
}

TEST(FindPathTest, BadInputsAreInvalidArgumentNamingTheField) {
  auto s = MazeScene();
  struct Case {
    const char* field;
    std::function<void(FindPathInput&)> spoil;
  };
  const Case cases[] = {
      {"profile.radius", [](FindPathInput& in) { in.profile.radius = -1; }},
      {"profile.radius", [](FindPathInput& in) { in.profile.radius = 5; }},  // past the border
      {"profile.height", [](FindPathInput& in) { in.profile.height = 0; }},
      {"profile.max_climb", [](FindPathInput& in) { in.profile.max_climb = NAN; }},
      {"profile.max_slope_degrees", [](FindPathInput& in) { in.profile.max_slope_degrees = 90; }},
      {"profile.jump_height",
       [](FindPathInput& in) {
         in.profile.can_jump = true;
         in.profile.jump_height = 0.1f;
       }},
      {"max_distance", [](FindPathInput& in) { in.max_distance = 0; }},
      {"material_costs",
       [](FindPathInput& in) {
         in.material_costs = {{kMaterialSand, -2}};
       }},
      {"start", [](FindPathInput& in) { in.start.x = INFINITY; }},
  };
  for (const Case& c : cases) {
    FindPathInput in;
    in.profile = testing::MazeAgent();
    in.start = MazeCellCentre(1, 1);
    in.goal = MazeCellCentre(1, 3);
    c.spoil(in);
    absl::StatusOr<FindPathResult> r = s->nav->FindPath(in);
    ASSERT_FALSE(r.ok()) << c.field;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(absl::StartsWith(r.status().message(), c.field)) << r.status();
  }
}

}  // namespace
}  // namespace voxcol
