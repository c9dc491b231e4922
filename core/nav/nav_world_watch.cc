// NavWorld: what path watchers and drawing ask (see nav_world.h): which tiles an edit changed
// since a version, which tiles a path or box covers, a walk along a given path at a version, and
// the polygons of an area.
#include <DetourAlloc.h>
#include <DetourNavMesh.h>
#include <DetourNavMeshQuery.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/nav/nav_world.h"
#include "core/nav/nav_world_internal.h"

namespace voxcol {

using nav_internal::Current;

absl::StatusOr<NavPolygons> NavWorld::PolygonsIn(const AgentProfile& profile, const Vec3& min,
                                                 const Vec3& max, size_t max_polygons) {
  if (absl::Status s = ValidateAgentProfile(profile); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("profile.", s.message()));
  }
  absl::StatusOr<Mesh*> mesh = MeshFor(profile);
  if (!mesh.ok()) return mesh.status();
  World::ReadSnapshot snapshot(world_);
  NavPolygons out;
  out.version = snapshot.version();
  const Region r = TilesIn(min, max);
  absl::StatusOr<int> built = Refresh(**mesh, r, out.version, Touch(**mesh, r));
  if (!built.ok()) return built.status();
  absl::ReaderMutexLock lock(&(*mesh)->mu);
  const dtNavMesh& nav = *(*mesh)->nav;
  for (int z = r.z0; z < r.z1; ++z)
    for (int x = r.x0; x < r.x1; ++x) {
      const dtMeshTile* tile = nav.getTileAt(x, z, 0);
      if (tile == nullptr || tile->header == nullptr) continue;
      for (int i = 0; i < tile->header->polyCount; ++i) {
        const dtPoly& poly = tile->polys[i];
        if (poly.getType() != DT_POLYTYPE_GROUND) continue;
        if (out.polygons.size() >= max_polygons) {
          out.truncated = true;
          return out;
        }
        NavPolygon p;
        p.area = poly.getArea();
        for (int k = 0; k < poly.vertCount; ++k) {
          const float* v = &tile->verts[3 * size_t(poly.verts[k])];
          p.vertices.emplace_back(v[0], v[1], v[2]);
        }
        out.polygons.push_back(std::move(p));
      }
    }
  return out;
}

bool NavWorld::ChangedSince(const std::vector<NavTileCoord>& tiles, uint64_t version) const {
  absl::MutexLock lock(&dirty_mu_);
  for (const NavTileCoord& t : tiles) {
    if (t.x < 0 || t.z < 0 || t.x >= tiles_x_ || t.z >= tiles_z_) continue;
    if (dirty_[size_t(t.z) * size_t(tiles_x_) + size_t(t.x)] > version) return true;
  }
  return false;
}

std::vector<NavTileCoord> NavWorld::ChangedTiles(const std::vector<NavTileCoord>& tiles,
                                                 uint64_t version) const {
  std::vector<NavTileCoord> out;
  absl::MutexLock lock(&dirty_mu_);
  for (const NavTileCoord& t : tiles) {
    if (t.x < 0 || t.z < 0 || t.x >= tiles_x_ || t.z >= tiles_z_) continue;
    if (dirty_[size_t(t.z) * size_t(tiles_x_) + size_t(t.x)] > version) out.push_back(t);
  }
  return out;
}

std::vector<NavTileCoord> NavWorld::TilesOverlapping(const Vec3& min, const Vec3& max) const {
  const Region r = TilesIn(min, max);
  std::vector<NavTileCoord> out;
  for (int z = r.z0; z < r.z1; ++z)
    for (int x = r.x0; x < r.x1; ++x) out.push_back({x, z});
  return out;
}

std::vector<NavTileCoord> NavWorld::TilesAlong(const std::vector<Vec3>& points,
                                               float margin) const {
  // Boxes of `margin` around points at most half a voxel apart along each leg: every tile the
  // widened line crosses (a tile is many voxels wide, so no crossing falls between two boxes).
  const float step = 0.5f * world_.voxel_size();
  const Vec3 m(margin, 0, margin);
  std::vector<NavTileCoord> out;
  auto add = [&](const Vec3& p) {
    const Region r = TilesIn(p - m, p + m);
    for (int z = r.z0; z < r.z1; ++z)
      for (int x = r.x0; x < r.x1; ++x) out.push_back({x, z});
  };
  for (size_t i = 0; i < points.size(); ++i) {
    add(points[i]);
    if (i == 0) continue;
    const Vec3 a = points[i - 1], d = points[i] - a;
    const int steps = int(std::ceil(std::hypot(d.x, d.z) / step));
    for (int k = 1; k < steps; ++k) add(a + d * (float(k) / float(steps)));
  }
  std::sort(out.begin(), out.end(), [](const NavTileCoord& a, const NavTileCoord& b) {
    return a.z != b.z ? a.z < b.z : a.x < b.x;
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

absl::StatusOr<PathCheck> NavWorld::CheckPath(const FindPathInput& input,
                                              const std::vector<Vec3>& waypoints) {
  if (absl::Status s = ValidateAgentProfile(input.profile); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("profile.", s.message()));
  }
  absl::StatusOr<Mesh*> mesh = MeshFor(input.profile);
  if (!mesh.ok()) return mesh.status();
  World::ReadSnapshot snapshot(world_);
  PathCheck out;
  out.version = snapshot.version();
  std::vector<int> tiles;
  for (const NavTileCoord& c : TilesAlong(waypoints, input.profile.radius)) {
    tiles.push_back(c.z * tiles_x_ + c.x);
  }
  // As SearchIn: refresh, then walk under the shared lock; after races, under the exclusive one.
  const uint64_t stamp = Touch(**mesh, tiles);
  for (int attempt = 0; attempt < 3; ++attempt) {
    {
      absl::ReaderMutexLock lock(&(*mesh)->mu);
      if (NotCurrent(**mesh, tiles, out.version).empty())
        return Walk(**mesh, input, waypoints, out);
    }
    absl::StatusOr<int> built = Refresh(**mesh, tiles, out.version, stamp, input.interrupt);
    if (!built.ok()) return built.status();
    out.tiles_built += *built;
  }
  absl::MutexLock lock(&(*mesh)->mu);
  const std::vector<int> missing = NotCurrent(**mesh, tiles, out.version);
  absl::StatusOr<std::vector<BuiltTile>> built = Build(**mesh, missing, input.interrupt);
  if (!built.ok()) return built.status();
  Install(**mesh, &*built, out.version, stamp);
  out.tiles_built += int(missing.size());
  return Walk(**mesh, input, waypoints, out);
}

PathCheck NavWorld::Walk(Mesh& mesh, const FindPathInput& input, const std::vector<Vec3>& points,
                         const PathCheck& so_far) {
  std::unique_ptr<QuerySlot> slot = TakeSlot(mesh);
  PathCheck out = nav_internal::WalkPath(*slot->query, input, mesh.params.cell_size, points);
  ReturnSlot(mesh, std::move(slot));
  out.version = so_far.version;
  out.tiles_built = so_far.tiles_built;
  return out;
}

}  // namespace voxcol
