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

// Snapping a point to the mesh: the agent's width (and two cells) sideways; up and down the
// climb, or half the agent's height, so a point buried in rock or floating above the floor is
// off the mesh.
void SnapExtents(const FindPathInput& in, float cell_size, float extents[3]) {
  const float side = in.profile.radius + 2 * cell_size;
  extents[0] = extents[2] = side;
  extents[1] = std::max(NavClimb(in.profile), 0.5f * in.profile.height);
}

float DistanceXZ(const float* a, const float* b) {
  const float dx = b[0] - a[0], dz = b[2] - a[2];
  return std::sqrt(dx * dx + dz * dz);
}

}  // namespace

PathSearch SearchPath(const dtNavMeshQuery& query, const FindPathInput& in, float cell_size,
                      PathScratch* s) {
  PathSearch out;
  const dtQueryFilter filter = FilterFor(in);
  float extents[3];
  SnapExtents(in, cell_size, extents);
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

PathCheck WalkPath(const dtNavMeshQuery& query, const FindPathInput& in, float cell_size,
                   const std::vector<Vec3>& points) {
  PathCheck out;
  if (points.empty()) return out;
  const dtQueryFilter filter = FilterFor(in);
  float extents[3];
  SnapExtents(in, cell_size, extents);
  const float first[3] = {points[0].x, points[0].y, points[0].z};
  dtPolyRef ref = 0;
  float pos[3];
  query.findNearestPoly(first, extents, &filter, &ref, pos);
  if (ref == 0 || !Within(first, pos, extents)) {
    out.blocked = true;
    out.stopped_at = points[0];
    return out;
  }
  // moveAlongSurface searches a small node pool around each step: short steps keep it complete.
  const float max_step = 8 * cell_size, tolerance = cell_size;
  constexpr int kMaxVisited = 64;
  dtPolyRef visited[kMaxVisited];
  for (size_t i = 1; i < points.size(); ++i) {
    const Vec3 a = points[i - 1], b = points[i];
    const float leg = std::hypot(b.x - a.x, b.z - a.z);
    const int steps = std::max(1, int(std::ceil(leg / max_step)));
    for (int k = 1; k <= steps; ++k) {
      const Vec3 target = a + (b - a) * (float(k) / float(steps));
      const float end[3] = {target.x, target.y, target.z};
      float moved[3];
      int n = 0;
      const dtStatus status =
          query.moveAlongSurface(ref, pos, end, &filter, moved, visited, &n, kMaxVisited);
      const bool reached = dtStatusSucceed(status) && n > 0 && DistanceXZ(moved, end) <= tolerance;
      if (dtStatusSucceed(status) && n > 0) {
        ref = visited[n - 1];
        std::copy(moved, moved + 3, pos);
      }
      if (!reached) {
        out.blocked = true;
        out.waypoint = int(i);
        out.stopped_at = Vec3(pos[0], pos[1], pos[2]);
        return out;
      }
    }
  }
  return out;
}

}  // namespace nav_internal
}  // namespace voxcol
