// NavWorld: the navigation meshes of one world, one tiled Detour navmesh per agent profile shape
// (NavMeshKey), built lazily and kept current with the world's edits.
//
// Laziness: no tile exists until a FindPath needs it. A FindPath builds the tiles of the box around
// its start and goal (grown by a margin) that are missing or stale at its version, searches, and
// when the search could not reach the goal grows the box (doubling the margin) up to every tile a
// path of at most max_distance could cross, before it answers kNoPath.
//
// Invalidation: the NavWorld observes the world's edits. AfterPublish only records, per tile whose
// reach (NavTileReach) overlaps a changed voxel box, the edit's version (`dirty`); it never builds,
// so an edit's acknowledgement waits for no navmesh work. A tile built from snapshot version B is
// current at version V when B == V, or when no edit after min(B, V) touched it (dirty <= min(B,
// V)). A query at V rebuilds the tiles it needs that are not current at V, reading the voxels under
// its snapshot; RebuildStale() does the same for every built stale tile at the current version (for
// a background thread of the service).
//
// Threads: FindPath, RebuildStale and edits may run concurrently. Tiles are built outside every
// lock (under the caller's ReadSnapshot); a per-mesh reader/writer mutex guards the Detour mesh:
// searches share it, installing built tiles takes it exclusively for the dtNavMesh::addTile calls.
// The edit path takes only dirty_mu_, held for a few stores; walks of many tiles take it one row
// (or slice) of tiles at a time.
//
// Memory: each profile's mesh holds at most NavSettings::max_tile_bytes_per_mesh of tile data
// (least recently searched tiles are dropped first; a dropped tile is built again on demand).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/nav/find_path.h"
#include "core/nav/nav_tile_build.h"
#include "core/voxel/world.h"

namespace voxcol {

struct NavSettings {
  NavTileConfig tiles;
  int max_search_nodes = 8192;  // Detour A* node pool per query object
  // Tile data one profile's mesh holds, bytes; 0: no bound. Past it, installing tiles drops the
  // least recently searched ones (down to 7/8 of the bound) until a query needs them again. The
  // tiles a query needs are never dropped for it, so one query whose region alone is larger still
  // gets its answer (the mesh then holds that region until the next one).
  int64_t max_tile_bytes_per_mesh = int64_t{256} << 20;
};

struct NavStats {
  uint64_t tiles_built = 0;    // tile builds (first builds and rebuilds)
  uint64_t tile_build_us = 0;  // wall time spent in them, microseconds
  uint64_t paths = 0;          // FindPath calls answered
  size_t meshes = 0;           // profile meshes
  size_t tiles_resident = 0;   // built tiles over all meshes
  size_t stale_tiles = 0;      // built tiles an edit made stale (not yet rebuilt)
  uint64_t tile_bytes = 0;     // tile data held over all meshes
  uint64_t tiles_evicted = 0;  // tiles dropped for max_tile_bytes_per_mesh
};

// Navmesh polygons for drawing (NavWorld::PolygonsIn).
struct NavPolygon {
  std::vector<Vec3> vertices;  // world units, in Detour's order (a convex polygon)
  uint8_t area = 0;            // area id: kNavAreaWater, or the surface's material
};
struct NavPolygons {
  std::vector<NavPolygon> polygons;
  uint64_t version = 0;  // the version the polygons are current at
  bool truncated = false;
};

class NavWorld : public EditObserver {
 public:
  // Registers itself as an edit observer of `world`: construct it before the world serves edits.
  // Precondition: ValidateNavTileConfig(settings.tiles, world.config()) is OK.
  explicit NavWorld(World& world, const NavSettings& settings = {});
  ~NavWorld() override;
  NavWorld(const NavWorld&) = delete;
  NavWorld& operator=(const NavWorld&) = delete;

  // The shortest path for input.profile at the calling thread's snapshot version (a fresh snapshot
  // of the newest version without one). INVALID_ARGUMENT naming the field for a bad input
  // (ValidateFindPath, or a radius the tile border cannot hold); a chunk load error or INTERNAL
  // from a tile build; otherwise OK with the status inside the result. Thread-safe.
  absl::StatusOr<FindPathResult> FindPath(const FindPathInput& input);

  // Rebuilds, at the current version, every built tile of every mesh that an edit made stale.
  // Returns the number rebuilt. Thread-safe; meant for a background thread.
  absl::StatusOr<int> RebuildStale();

  // Builds (or rebuilds) now every tile of `profile`'s mesh overlapping the world-space box
  // [min, max] in X and Z that is not current at the calling thread's version; returns the number
  // built. For warming and benchmarks.
  absl::StatusOr<int> BuildTilesIn(const AgentProfile& profile, const Vec3& min, const Vec3& max);
  // The navmesh polygons of `profile`'s mesh in the tiles overlapping the world-space XZ box
  // [min, max], current at the calling thread's version (tiles missing or stale are built first),
  // each with its area id (NavAreaOfMaterial); at most `max_polygons` (then `truncated`). For
  // drawing the navmesh. INVALID_ARGUMENT for a bad profile; a tile build's error.
  absl::StatusOr<NavPolygons> PolygonsIn(const AgentProfile& profile, const Vec3& min,
                                         const Vec3& max, size_t max_polygons);

  // Drops every tile of every mesh (the next queries build them again). For benchmarks.
  void DropTiles();

  // True when an edit published after `version` changed a voxel within the reach of one of
  // `tiles` (NavTileReach): the only edits that can change paths across them. For path watching:
  // with a path's FindPathResult::corridor_tiles and version, false means the path still holds.
  // Cheap (one mutex, one load per tile). Thread-safe.
  bool ChangedSince(const std::vector<NavTileCoord>& tiles, uint64_t version) const;

  // The ones of `tiles` that an edit published after `version` touched (as ChangedSince), in
  // order. One mutex, one load per tile. Thread-safe.
  std::vector<NavTileCoord> ChangedTiles(const std::vector<NavTileCoord>& tiles,
                                         uint64_t version) const;

  // Walks `waypoints` (world units, the agent's feet) leg by leg on input.profile's mesh at the
  // calling thread's snapshot version (a fresh one without), building the tiles along them that
  // are not current (TilesAlong). Uses input's profile, material filter and interrupt; start and
  // goal are ignored. INVALID_ARGUMENT for a bad profile; a tile build's error. Thread-safe.
  absl::StatusOr<PathCheck> CheckPath(const FindPathInput& input,
                                      const std::vector<Vec3>& waypoints);

  // The tiles a polyline in X and Z, widened by `margin` world units, overlaps (clipped to the
  // world), sorted by (z, x), unique: the tiles whose edits can block it.
  std::vector<NavTileCoord> TilesAlong(const std::vector<Vec3>& points, float margin) const;
  // The tiles overlapping the world-space XZ box [min, max], clipped to the world, by (z, x).
  std::vector<NavTileCoord> TilesOverlapping(const Vec3& min, const Vec3& max) const;

  // False when no edit since the last RebuildStale touched a tile: the background thread's cheap
  // check before RebuildStale (stats() walks every tile). True may still find nothing to
  // rebuild (an edit of tiles never built).
  bool MayHaveStaleTiles() const;

  const NavSettings& settings() const { return settings_; }
  NavStats stats() const;

  void AfterPublish(const CommittedEdit& edit) override;

 private:
  struct Mesh;
  struct QuerySlot;
  struct BuiltTile {
    int index = 0;
    NavTileData data;
  };
  struct Region {
    int x0 = 0, z0 = 0, x1 = 0, z1 = 0;  // tile coordinates, max exclusive
    bool operator==(const Region& o) const {
      return x0 == o.x0 && z0 == o.z0 && x1 == o.x1 && z1 == o.z1;
    }
  };

  absl::StatusOr<Mesh*> MeshFor(const AgentProfile& profile);
  // The tiles overlapping the world-space XZ box [min, max], clipped to the world.
  Region TilesIn(const Vec3& min, const Vec3& max) const;
  NavTileCoord CoordOf(int index) const { return {index % tiles_x_, index / tiles_x_}; }
  // Tiles of `region` that are missing or not current at `version`. Caller holds mesh.mu.
  std::vector<int> NotCurrent(const Mesh& mesh, const Region& region, uint64_t version) const;
  // Stamps the tiles of `region` (or the listed ones) as searched now, for the least recently
  // searched eviction, and returns the stamp: what the caller installs keeps them.
  uint64_t Touch(const Mesh& mesh, const Region& region);
  uint64_t Touch(const Mesh& mesh, const std::vector<int>& tiles);
  // Removes tile `index` from the mesh (a no-op when not built). Caller holds mesh.mu exclusively.
  void DropTile(Mesh& mesh, int index);
  // Drops the least recently searched tiles while the mesh holds more than its bound, never one
  // stamped `keep_from` or later (the caller's own tiles and those of searches begun since).
  // Caller holds mesh.mu exclusively.
  void Evict(Mesh& mesh, uint64_t keep_from);
  std::vector<int> NotCurrent(const Mesh& mesh, const std::vector<int>& tiles,
                              uint64_t version) const;
  // Builds the listed tiles from the calling thread's snapshot; no nav lock held. Stops with the
  // interrupt's error (null: never).
  absl::StatusOr<std::vector<BuiltTile>> Build(const Mesh& mesh, const std::vector<int>& tiles,
                                               const QueryInterrupt* interrupt = nullptr);
  // Swaps built tiles into the Detour mesh, skipping any that another thread made current at
  // `version` meanwhile, then evicts (Evict(keep_from)). Caller holds mesh.mu exclusively.
  void Install(Mesh& mesh, std::vector<BuiltTile>* built, uint64_t version, uint64_t keep_from);
  // Makes every tile of `region` current at `version` and runs the search on it.
  absl::StatusOr<nav_internal::PathSearch> SearchIn(Mesh& mesh, const Region& region,
                                                    const FindPathInput& input, uint64_t version,
                                                    int* tiles_built);
  // Builds the not-current tiles of `region` (or the listed ones) and installs them with
  // `keep_from` (Install); returns the number built.
  absl::StatusOr<int> Refresh(Mesh& mesh, const Region& region, uint64_t version,
                              uint64_t keep_from, const QueryInterrupt* interrupt = nullptr);
  absl::StatusOr<int> Refresh(Mesh& mesh, const std::vector<int>& tiles, uint64_t version,
                              uint64_t keep_from, const QueryInterrupt* interrupt = nullptr);
  // Builds the `missing` tiles (no lock held) and installs them (Install); returns their number.
  absl::StatusOr<int> BuildAndInstall(Mesh& mesh, const std::vector<int>& missing, uint64_t version,
                                      uint64_t keep_from, const QueryInterrupt* interrupt);
  // A pooled query object of `mesh` (made on first use) and its return to the pool.
  std::unique_ptr<QuerySlot> TakeSlot(Mesh& mesh);
  void ReturnSlot(Mesh& mesh, std::unique_ptr<QuerySlot> slot);
  // The search on `mesh` with a pooled query object. Caller holds mesh.mu (shared or exclusive).
  nav_internal::PathSearch Search(Mesh& mesh, const FindPathInput& input);
  // WalkPath on `mesh` with a pooled query object, keeping so_far's version and tiles_built.
  // Caller holds mesh.mu (shared or exclusive).
  PathCheck Walk(Mesh& mesh, const FindPathInput& input, const std::vector<Vec3>& points,
                 const PathCheck& so_far);

  World& world_;
  const NavSettings settings_;
  int tiles_x_ = 0, tiles_z_ = 0;

  mutable absl::Mutex meshes_mu_;  // before any Mesh::mu; never held while building
  absl::flat_hash_map<NavMeshKey, std::unique_ptr<Mesh>> meshes_ ABSL_GUARDED_BY(meshes_mu_);

  // Per tile index: the version of the last edit that touched the tile's reach (0: none).
  mutable absl::Mutex dirty_mu_;  // innermost lock
  std::vector<uint64_t> dirty_ ABSL_GUARDED_BY(dirty_mu_);

  std::atomic<uint64_t> tiles_built_{0}, tile_build_us_{0}, paths_{0}, tiles_evicted_{0};
  std::atomic<uint64_t> search_clock_{0};  // Touch's stamps
  // The newest edit version that marked a tile, and the version RebuildStale last made every
  // built tile current at (MayHaveStaleTiles).
  std::atomic<uint64_t> dirty_version_{0}, rebuilt_version_{0};
};

}  // namespace voxcol
