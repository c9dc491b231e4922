// Navigation test scenes: an empty 64 x 32 x 64 world (voxels -32..31 in X and Z, -16..15 in Y)
// made a flat maze by edits: rock ground in y -4..-1 (surface at y = 0) and walls of rock
// columns in y 0..2 drawn from an ASCII map, each character 4 x 4 voxel columns.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/nav/nav_world.h"
#include "core/voxel/edit_shapes.h"
#include "tests/core/nav/grid_oracle.h"
#include "tests/core/test_worlds.h"

namespace voxcol::testing {

constexpr int kMazeCell = 4;      // voxels per map character
constexpr int kMazeOrigin = -28;  // voxel X and Z of the map's first character
constexpr int kWallHeight = 3;    // voxels above the ground
constexpr float kAgentRadius = 0.5f;

// A serpentine: the start is at the top left, the goal at the bottom left; the only way runs
// right, left, right, ... through the gaps at the ends of the long walls.
inline const std::vector<std::string>& MazeMap() {
  static const std::vector<std::string> map = {
      "##############",  //
      "#S...........#",  //
      "###########..#",  //
      "#............#",  //
      "#..###########",  //
      "#............#",  //
      "###########..#",  //
      "#............#",  //
      "#..###########",  //
      "#............#",  //
      "###########..#",  //
      "#............#",  //
      "#G...........#",  //
      "##############",  //
  };
  return map;
}

// Centre (world X, Z) of map character (row, col).
inline Vec3 MazeCellCentre(int row, int col, float y = 0) {
  return Vec3(float(kMazeOrigin + col * kMazeCell) + 0.5f * kMazeCell, y,
              float(kMazeOrigin + row * kMazeCell) + 0.5f * kMazeCell);
}

inline AgentProfile MazeAgent() {
  AgentProfile p;
  p.radius = kAgentRadius;
  p.height = 2.0f;
  p.max_climb = 0.5f;
  p.max_slope_degrees = 45;
  return p;
}

struct NavScene {
  std::unique_ptr<World> world;
  std::unique_ptr<NavWorld> nav;
  std::unique_ptr<ChunkCollisionCache> cache;
  std::unique_ptr<BroadphaseIndex> index;
  std::vector<std::string> walls;  // the map as edited now ('#' wall)

  uint64_t Region(const IntBox& box, uint8_t material, EditMode mode = EditMode::kAdd) {
    FillRegionParams p;
    p.region = box;
    p.material = material;
    p.mode = mode;
    absl::StatusOr<EditResult> r =
        world->Edit([&](ChunkEdit& e) { return FillRegion(e, p, EditLimits{}); });
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->version : 0;
  }
  IntBox CellBox(int row, int col) const {
    const Int3 lo{kMazeOrigin + col * kMazeCell, 0, kMazeOrigin + row * kMazeCell};
    return {lo, lo + Int3{kMazeCell, kWallHeight, kMazeCell}};
  }
  // Makes map character (row, col) a wall (or opens it), as one edit; returns its version.
  uint64_t SetWall(int row, int col, bool wall) {
    walls[size_t(row)][size_t(col)] = wall ? '#' : '.';
    return Region(CellBox(row, col), kMaterialRock, wall ? EditMode::kAdd : EditMode::kSubtract);
  }
  bool IsWall(int x, int z) const {
    const int col = FloorDiv(x - kMazeOrigin, kMazeCell),
              row = FloorDiv(z - kMazeOrigin, kMazeCell);
    if (row < 0 || col < 0 || row >= int(walls.size()) || col >= int(walls[0].size())) return false;
    return walls[size_t(row)][size_t(col)] == '#';
  }
  GridOracle Oracle(float radius = kAgentRadius) const {
    return GridOracle([this](int x, int z) { return IsWall(x, z); }, -32, -32, 64, radius, 0.25f);
  }
  absl::StatusOr<FindPathResult> Path(const Vec3& start, const Vec3& goal, float max = 3000) {
    FindPathInput in;
    in.start = start;
    in.goal = goal;
    in.profile = MazeAgent();
    in.max_distance = max;
    return nav->FindPath(in);
  }
};

// The maze world with its navigation (and, with `queries`, the collision structures the
// character controller needs), all registered as edit observers before the edits.
inline std::unique_ptr<NavScene> MazeScene(bool queries = false) {
  auto s = std::make_unique<NavScene>();
  s->world = MakeEmptyWorld({64, 32, 64});
  s->nav = std::make_unique<NavWorld>(*s->world);
  if (queries) {
    s->cache = std::make_unique<ChunkCollisionCache>(*s->world, size_t(64) << 20);
    s->index = std::make_unique<BroadphaseIndex>(*s->world);
    s->world->AddObserver(s->index.get());
  }
  s->Region({{-32, -4, -32}, {32, 0, 32}}, kMaterialRock);
  s->walls = MazeMap();
  for (size_t row = 0; row < s->walls.size(); ++row)
    for (size_t col = 0; col < s->walls[row].size(); ++col)
      if (s->walls[row][col] == '#') s->Region(s->CellBox(int(row), int(col)), kMaterialRock);
  return s;
}

}  // namespace voxcol::testing
