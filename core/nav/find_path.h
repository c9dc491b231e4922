// FindPath: the shortest walkable path between two points for an agent profile, on the navmesh of
// the world's version (Detour's A* over polygons, then string pulling).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/geometry/vec3.h"
#include "core/nav/agent_profile.h"
#include "core/nav/nav_tile_build.h"
#include "core/query/query_types.h"

class dtNavMeshQuery;

namespace voxcol {

enum class PathStatus : uint8_t {
  kOk,
  kNoPath,        // start and goal are on the mesh but not connected (within the searched area)
  kStartOffMesh,  // no walkable surface near the start (inside rock, in the air, too narrow)
  kGoalOffMesh,   // likewise for the goal
  kTooFar,        // the path (or the straight line) is longer than max_distance
};
const char* PathStatusName(PathStatus s);

enum class WaypointAction : uint8_t {
  kWalk,  // walk from the previous waypoint to this one
  kJump,  // jump: this waypoint lies more than max_climb above the previous one
  kSwim,  // swim on the water surface from the previous waypoint
};
const char* WaypointActionName(WaypointAction a);

struct Waypoint {
  Vec3 position;  // world units, on the walkable surface (the agent's feet)
  WaypointAction action = WaypointAction::kWalk;  // how to reach it (kWalk for the first)
};

struct FindPathInput {
  Vec3 start;  // world units, the agent's feet: on (or within max_climb above) the ground
  Vec3 goal;
  AgentProfile profile;
  // Cost per world unit travelled on a material's surface (water: kMaterialWater), default 1.
  // Each > 0 and finite; below 1 the A* heuristic overestimates and paths may be not shortest.
  std::vector<std::pair<uint8_t, float>> material_costs;
  float max_distance = 3000;  // world units, > 0: a longer path answers kTooFar
  // Optional: checked before the search and between tile builds; the call then fails with
  // DEADLINE_EXCEEDED or CANCELLED (tiles already built stay). The search itself is bounded by
  // its node pool (NavSettings::max_search_nodes) and corridor size.
  const QueryInterrupt* interrupt = nullptr;
};

struct FindPathResult {
  PathStatus status = PathStatus::kNoPath;
  std::vector<Waypoint> waypoints;  // kOk: start (snapped to the mesh) ... goal (snapped)
  float length = 0;                 // kOk: sum of the waypoint distances, world units
  uint64_t version = 0;             // the world version the answer is valid at
  // Cost of this call: tiles built or rebuilt for it, polygons on the corridor.
  int tiles_built = 0;
  int corridor_polygons = 0;
  // kOk: the tiles the path's corridor crosses, sorted by (z, x), unique. An edit after `version`
  // can cut the path only if NavWorld::ChangedSince(corridor_tiles, version) says so.
  std::vector<NavTileCoord> corridor_tiles;
};

// What walking a given path on the navmesh found (path watching, NavWorld::CheckPath).
struct PathCheck {
  bool blocked = false;
  // Blocked: waypoint `waypoint` cannot be reached from waypoint - 1 along the straight leg (0:
  // the first waypoint is off the mesh); `stopped_at` is where the walk stopped (world units).
  int waypoint = 0;
  Vec3 stopped_at;
  uint64_t version = 0;  // the world version walked
  int tiles_built = 0;   // tiles built or rebuilt for the check
};

// Checks the input; the message names the field (start, goal, max_distance, material_costs,
// profile.radius, ...).
absl::Status ValidateFindPath(const FindPathInput& input);

namespace nav_internal {

// What one path search found on a built mesh.
struct PathSearch {
  PathStatus status = PathStatus::kNoPath;
  bool partial = false;  // the search ended before the goal's polygon (maybe unbuilt tiles)
  std::vector<Waypoint> waypoints;
  float length = 0;
  int corridor_polygons = 0;
  std::vector<NavTileCoord> corridor_tiles;
};

// Buffers of one search, reused across calls (no allocation per query once grown).
struct PathScratch {
  static constexpr int kMaxPolygons = 4096;  // corridor length limit
  static constexpr int kMaxPoints = 1024;    // straight path limit
  std::vector<uint32_t> polygons = std::vector<uint32_t>(kMaxPolygons);
  std::vector<float> points = std::vector<float>(3 * kMaxPoints);
  std::vector<unsigned char> point_flags = std::vector<unsigned char>(kMaxPoints);
  std::vector<uint32_t> point_polygons = std::vector<uint32_t>(kMaxPoints);
};

// Runs the Detour part of FindPath on `query` (initialised on the mesh of input.profile, whose
// heightfield cells are `cell_size` wide): nearest polygons, A*, straight path and waypoint
// actions. Not thread-safe for one query object or scratch.
PathSearch SearchPath(const dtNavMeshQuery& query, const FindPathInput& input, float cell_size,
                      PathScratch* scratch);

// Walks `points` leg by leg on the mesh `query` is initialised on, as an agent of input.profile
// (its filter and snapping as SearchPath): each leg with Detour's moveAlongSurface in steps of at
// most 8 cells, blocked where a step ends more than one cell (in X and Z) from its target.
// Not thread-safe for one query object.
PathCheck WalkPath(const dtNavMeshQuery& query, const FindPathInput& input, float cell_size,
                   const std::vector<Vec3>& points);

}  // namespace nav_internal
}  // namespace voxcol
