#include "core/nav/find_path.h"

#include <DetourNavMesh.h>
#include <DetourNavMeshQuery.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/nav/nav_tile_build.h"

namespace voxcol {

static_assert(std::is_same_v<dtPolyRef, uint32_t>, "PathScratch stores 32-bit polygon refs");

const char* PathStatusName(PathStatus s) {
  switch (s) {
    case PathStatus::kOk:
      return "ok";
    case PathStatus::kNoPath:
      return "no path";
    case PathStatus::kStartOffMesh:
      return "start off mesh";
    case PathStatus::kGoalOffMesh:
      return "goal off mesh";
    case PathStatus::kTooFar:
      return "too far";
  }
  return "unknown";
}

const char* WaypointActionName(WaypointAction a) {
  switch (a) {
    case WaypointAction::kWalk:
      return "walk";
    case WaypointAction::kJump:
      return "jump";
    case WaypointAction::kSwim:
      return "swim";
  }
  return "unknown";
}

absl::Status ValidateFindPath(const FindPathInput& in) {
  if (!IsFinite(in.start)) return absl::InvalidArgumentError("start must be finite");
  if (!IsFinite(in.goal)) return absl::InvalidArgumentError("goal must be finite");
  if (!std::isfinite(in.max_distance) || in.max_distance <= 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("max_distance must be > 0, got %g", in.max_distance));
  }
  for (const auto& [material, cost] : in.material_costs) {
    if (material == kMaterialAir) {
      return absl::InvalidArgumentError("material_costs: material 0 (air) has no surface");
    }
    if (!std::isfinite(cost) || cost <= 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "material_costs: cost of material %d must be > 0 and finite, got %g", material, cost));
    }
  }
  if (absl::Status s = ValidateAgentProfile(in.profile); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("profile.", s.message()));
  }
  return absl::OkStatus();
}

namespace nav_internal {

namespace {

dtQueryFilter FilterFor(const FindPathInput& in) {
  dtQueryFilter filter;
  filter.setIncludeFlags(kNavFlagWalk | (in.profile.can_swim ? kNavFlagSwim : 0));
  filter.setExcludeFlags(0);
  for (const auto& [material, cost] : in.material_costs) {
    filter.setAreaCost(NavAreaOfMaterial(material), cost);
  }
  return filter;
}

float Distance(const float* a, const float* b) {
  const float dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

// Whether the snapped point lies in the search box: findNearestPoly also answers polygons whose
// quantised bounds, not the polygon, reach into the box.
bool Within(const float* p, const float* snapped, const float* extents) {
  for (int a = 0; a < 3; ++a) {
    if (std::abs(snapped[a] - p[a]) > extents[a]) return false;
  }
  return true;
}

// Waypoints from Detour's straight path: point i is reached through polygon refs[i - 1].
void MakeWaypoints(const dtNavMeshQuery& query, const FindPathInput& in, float cell_size,
                   const PathScratch& s, int count, PathSearch* out) {
  const dtNavMesh* mesh = query.getAttachedNavMesh();
  for (int i = 0; i < count; ++i) {
    const float* p = &s.points[3 * size_t(i)];
    Waypoint w{Vec3(p[0], p[1], p[2]), WaypointAction::kWalk};
    if (i > 0) {
      const float* q = p - 3;
      const dtMeshTile* tile = nullptr;
      const dtPoly* poly = nullptr;
      mesh->getTileAndPolyByRef(s.point_polygons[size_t(i) - 1], &tile, &poly);
      if (poly != nullptr && poly->getArea() == kNavAreaWater) {
        w.action = WaypointAction::kSwim;
      } else if (p[1] - q[1] > in.profile.max_climb + 0.5f * cell_size) {
        w.action = WaypointAction::kJump;
      }
      out->length += Distance(q, p);
    }
    out->waypoints.push_back(w);
  }
}

// The tiles of the first n corridor polygons, sorted by (z, x), unique.
void CorridorTiles(const dtNavMeshQuery& query, const PathScratch& s, int n,
                   std::vector<NavTileCoord>* out) {
  const dtNavMesh* mesh = query.getAttachedNavMesh();
  for (int i = 0; i < n; ++i) {
    const dtMeshTile* tile = nullptr;
    const dtPoly* poly = nullptr;
    if (dtStatusFailed(mesh->getTileAndPolyByRef(s.polygons[size_t(i)], &tile, &poly))) continue;
    const NavTileCoord c{tile->header->x, tile->header->y};
    if (out->empty() || !(out->back() == c)) out->push_back(c);
  }
  std::sort(out->begin(), out->end(), [](const NavTileCoord& a, const NavTileCoord& b) {
    return a.z != b.z ? a.z < b.z : a.x < b.x;
  });
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

}  // namespace

PathSearch SearchPath(const dtNavMeshQuery& query, const FindPathInput& in, float cell_size,
                      PathScratch* s) {
  PathSearch out;
  const dtQueryFilter filter = FilterFor(in);
  // Snap start and goal: the agent's width (and two cells) sideways; up and down the climb, or
  // half the agent's height, so a point buried in rock or floating above the floor is off the mesh.
  const float side = in.profile.radius + 2 * cell_size;
  const float up = std::max(NavClimb(in.profile), 0.5f * in.profile.height);
  const float extents[3] = {side, up, side};
  const float start[3] = {in.start.x, in.start.y, in.start.z};
  const float goal[3] = {in.goal.x, in.goal.y, in.goal.z};
  dtPolyRef start_ref = 0, goal_ref = 0;
  float start_on[3], goal_on[3];
  query.findNearestPoly(start, extents, &filter, &start_ref, start_on);
  if (start_ref == 0 || !Within(start, start_on, extents)) {
    out.status = PathStatus::kStartOffMesh;
    return out;
  }
  query.findNearestPoly(goal, extents, &filter, &goal_ref, goal_on);
  if (goal_ref == 0 || !Within(goal, goal_on, extents)) {
    out.status = PathStatus::kGoalOffMesh;
    return out;
  }
  // A* over the polygons (Detour keeps the nearest reached polygon when the goal is unreachable).
  int n = 0;
  const dtStatus found = query.findPath(start_ref, goal_ref, start_on, goal_on, &filter,
                                        s->polygons.data(), &n, PathScratch::kMaxPolygons);
  out.corridor_polygons = n;
  if (dtStatusFailed(found) || n == 0 || s->polygons[size_t(n) - 1] != goal_ref) {
    out.partial = true;
    return out;
  }
  // String pulling, with a point where the area changes (walk to swim, material to material).
  int count = 0;
  const dtStatus pulled = query.findStraightPath(
      start_on, goal_on, s->polygons.data(), n, s->points.data(), s->point_flags.data(),
      s->point_polygons.data(), &count, PathScratch::kMaxPoints, DT_STRAIGHTPATH_AREA_CROSSINGS);
  if (dtStatusFailed(pulled) || count == 0) return out;
  MakeWaypoints(query, in, cell_size, *s, count, &out);
  CorridorTiles(query, *s, n, &out.corridor_tiles);
  out.status = PathStatus::kOk;
  return out;
}

}  // namespace nav_internal
}  // namespace voxcol
