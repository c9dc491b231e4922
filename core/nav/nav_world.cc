#include "core/nav/nav_world.h"

#include <DetourAlloc.h>
#include <DetourNavMesh.h>
#include <DetourNavMeshQuery.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/time/clock.h"
#include "core/nav/nav_world_internal.h"

namespace voxcol {

namespace {

int Log2Ceil(int n) {
  int bits = 0;
  while ((1 << bits) < n) ++bits;
  return bits;
}

}  // namespace

using nav_internal::Current;
using nav_internal::TileState;

NavWorld::NavWorld(World& world, const NavSettings& settings) : world_(world), settings_(settings) {
  const Int3 size = world.voxel_bounds().max - world.voxel_bounds().min;
  const int t = settings.tiles.tile_voxels;
  tiles_x_ = (size.x + t - 1) / t;
  tiles_z_ = (size.z + t - 1) / t;
  {
    absl::MutexLock lock(&dirty_mu_);
    dirty_.assign(size_t(tiles_x_) * size_t(tiles_z_), 0);
  }
  world.AddObserver(this);
}

NavWorld::~NavWorld() = default;

absl::StatusOr<NavWorld::Mesh*> NavWorld::MeshFor(const AgentProfile& profile) {
  absl::StatusOr<NavBuildParams> params =
      MakeNavBuildParams(profile, settings_.tiles, world_.voxel_size());
  if (!params.ok()) return params.status();
  absl::MutexLock lock(&meshes_mu_);
  std::unique_ptr<Mesh>& slot = meshes_[params->key()];
  if (slot != nullptr) return slot.get();
  // Polygon refs are 32 bits: at least 10 salt bits, the tile index, the polygon index.
  const int tile_bits = Log2Ceil(tiles_x_ * tiles_z_);
  const int poly_bits = std::min(16, 22 - tile_bits);
  if (poly_bits < 10) {
    meshes_.erase(params->key());
    return absl::InvalidArgumentError("world too large for 32-bit navmesh polygon refs");
  }
  auto mesh = std::make_unique<Mesh>();
  mesh->params = *params;
  const float h = world_.voxel_size();
  const Int3 min = world_.voxel_bounds().min;
  dtNavMeshParams np = {};
  np.orig[0] = float(min.x) * h;
  np.orig[1] = float(min.y) * h;
  np.orig[2] = float(min.z) * h;
  np.tileWidth = np.tileHeight = float(settings_.tiles.tile_voxels) * h;
  np.maxTiles = 1 << tile_bits;
  np.maxPolys = 1 << poly_bits;
  absl::MutexLock mesh_lock(&mesh->mu);
  mesh->nav = dtAllocNavMesh();
  if (mesh->nav == nullptr || dtStatusFailed(mesh->nav->init(&np))) {
    meshes_.erase(params->key());
    return absl::InternalError("dtNavMesh::init failed");
  }
  mesh->tiles.assign(size_t(tiles_x_) * size_t(tiles_z_), TileState{});
  mesh->last_search = std::make_unique<std::atomic<uint64_t>[]>(mesh->tiles.size());
  slot = std::move(mesh);
  return slot.get();
}

NavWorld::Region NavWorld::TilesIn(const Vec3& min, const Vec3& max) const {
  const float edge = float(settings_.tiles.tile_voxels) * world_.voxel_size();
  const Vec3 o = world_.world_bounds().min;
  auto tile = [&](float v, float origin, int count) {
    return std::clamp(int(std::floor((v - origin) / edge)), 0, count - 1);
  };
  return {tile(min.x, o.x, tiles_x_), tile(min.z, o.z, tiles_z_), tile(max.x, o.x, tiles_x_) + 1,
          tile(max.z, o.z, tiles_z_) + 1};
}

std::vector<int> NavWorld::NotCurrent(const Mesh& mesh, const Region& r, uint64_t version) const {
  mesh.mu.AssertReaderHeld();
  std::vector<int> out;
  for (int z = r.z0; z < r.z1; ++z) {
    absl::MutexLock lock(&dirty_mu_);  // per row: an edit never waits for a whole world's walk
    for (int x = r.x0; x < r.x1; ++x) {
      const int i = z * tiles_x_ + x;
      if (!Current(mesh.tiles[size_t(i)], dirty_[size_t(i)], version)) out.push_back(i);
    }
  }
  return out;
}

uint64_t NavWorld::Touch(const Mesh& mesh, const Region& r) {
  const uint64_t now = search_clock_.fetch_add(1, std::memory_order_relaxed) + 1;
  for (int z = r.z0; z < r.z1; ++z)
    for (int x = r.x0; x < r.x1; ++x) {
      mesh.last_search[size_t(z) * size_t(tiles_x_) + size_t(x)].store(now,
                                                                       std::memory_order_relaxed);
    }
  return now;
}

uint64_t NavWorld::Touch(const Mesh& mesh, const std::vector<int>& tiles) {
  const uint64_t now = search_clock_.fetch_add(1, std::memory_order_relaxed) + 1;
  for (int i : tiles) mesh.last_search[size_t(i)].store(now, std::memory_order_relaxed);
  return now;
}

void NavWorld::DropTile(Mesh& mesh, int index) {
  mesh.mu.AssertHeld();
  const NavTileCoord c = CoordOf(index);
  if (const dtTileRef ref = mesh.nav->getTileRefAt(c.x, c.z, 0); ref != 0) {
    mesh.nav->removeTile(ref, nullptr, nullptr);  // frees its data (DT_TILE_FREE_DATA)
  }
  mesh.bytes -= mesh.tiles[size_t(index)].bytes;
  mesh.tiles[size_t(index)] = TileState{};
}

void NavWorld::Evict(Mesh& mesh, uint64_t keep_from) {
  mesh.mu.AssertHeld();
  const int64_t bound = settings_.max_tile_bytes_per_mesh;
  if (bound <= 0 || mesh.bytes <= bound) return;
  std::vector<std::pair<uint64_t, int>> held;  // (last search, tile), tiles holding data
  for (size_t i = 0; i < mesh.tiles.size(); ++i) {
    if (mesh.tiles[i].bytes == 0) continue;
    const uint64_t stamp = mesh.last_search[i].load(std::memory_order_relaxed);
    if (stamp < keep_from) held.emplace_back(stamp, int(i));
  }
  std::sort(held.begin(), held.end());
  const int64_t target = bound - bound / 8;  // some room, so evictions come in rounds
  for (const auto& [stamp, i] : held) {
    if (mesh.bytes <= target) break;
    DropTile(mesh, i);
    tiles_evicted_.fetch_add(1, std::memory_order_relaxed);
  }
}

std::vector<int> NavWorld::NotCurrent(const Mesh& mesh, const std::vector<int>& tiles,
                                      uint64_t version) const {
  mesh.mu.AssertReaderHeld();
  std::vector<int> out;
  absl::MutexLock lock(&dirty_mu_);
  for (int i : tiles) {
    if (!Current(mesh.tiles[size_t(i)], dirty_[size_t(i)], version)) out.push_back(i);
  }
  return out;
}

absl::StatusOr<std::vector<NavWorld::BuiltTile>> NavWorld::Build(const Mesh& mesh,
                                                                 const std::vector<int>& tiles,
                                                                 const QueryInterrupt* interrupt) {
  std::vector<BuiltTile> out;
  out.reserve(tiles.size());
  for (int i : tiles) {
    if (interrupt != nullptr) {
      if (absl::Status s = interrupt->Check(); !s.ok()) return s;
    }
    const absl::Time begin = absl::Now();
    absl::StatusOr<NavTileData> data = BuildNavTile(world_, mesh.params, CoordOf(i));
    if (!data.ok()) return data.status();
    out.push_back({i, *std::move(data)});
    tiles_built_.fetch_add(1, std::memory_order_relaxed);
    tile_build_us_.fetch_add(uint64_t(absl::ToInt64Microseconds(absl::Now() - begin)),
                             std::memory_order_relaxed);
  }
  return out;
}

void NavWorld::Install(Mesh& mesh, std::vector<BuiltTile>* built, uint64_t version,
                       uint64_t keep_from) {
  mesh.mu.AssertHeld();
  for (BuiltTile& b : *built) {
    uint64_t dirty;
    {
      absl::MutexLock lock(&dirty_mu_);
      dirty = dirty_[size_t(b.index)];
    }
    if (Current(mesh.tiles[size_t(b.index)], dirty, version)) continue;  // installed meanwhile
    DropTile(mesh, b.index);
    int32_t bytes = 0;
    if (b.data.data != nullptr) {
      const int size = b.data.size;
      unsigned char* data = b.data.Release();
      if (dtStatusFailed(mesh.nav->addTile(data, size, DT_TILE_FREE_DATA, 0, nullptr))) {
        dtFree(data);  // left out: the tile reads as unwalkable
      } else {
        bytes = size;
      }
    }
    mesh.tiles[size_t(b.index)] = {true, version, bytes};
    mesh.bytes += bytes;
  }
  Evict(mesh, keep_from);
}

absl::StatusOr<int> NavWorld::Refresh(Mesh& mesh, const Region& region, uint64_t version,
                                      uint64_t keep_from, const QueryInterrupt* interrupt) {
  std::vector<int> missing;
  {
    absl::ReaderMutexLock lock(&mesh.mu);
    missing = NotCurrent(mesh, region, version);
  }
  return BuildAndInstall(mesh, missing, version, keep_from, interrupt);
}

absl::StatusOr<int> NavWorld::BuildAndInstall(Mesh& mesh, const std::vector<int>& missing,
                                              uint64_t version, uint64_t keep_from,
                                              const QueryInterrupt* interrupt) {
  if (missing.empty()) return 0;
  absl::StatusOr<std::vector<BuiltTile>> built = Build(mesh, missing, interrupt);
  if (!built.ok()) return built.status();
  absl::MutexLock lock(&mesh.mu);
  Install(mesh, &*built, version, keep_from);
  return int(missing.size());
}

std::unique_ptr<NavWorld::QuerySlot> NavWorld::TakeSlot(Mesh& mesh) {
  mesh.mu.AssertReaderHeld();
  std::unique_ptr<QuerySlot> slot;
  {
    absl::MutexLock lock(&mesh.pool_mu);
    if (!mesh.pool.empty()) {
      slot = std::move(mesh.pool.back());
      mesh.pool.pop_back();
    }
  }
  if (slot == nullptr) {
    slot = std::make_unique<QuerySlot>();
    slot->query->init(mesh.nav, settings_.max_search_nodes);
  }
  return slot;
}

void NavWorld::ReturnSlot(Mesh& mesh, std::unique_ptr<QuerySlot> slot) {
  absl::MutexLock lock(&mesh.pool_mu);
  mesh.pool.push_back(std::move(slot));
}

absl::StatusOr<int> NavWorld::Refresh(Mesh& mesh, const std::vector<int>& tiles, uint64_t version,
                                      uint64_t keep_from, const QueryInterrupt* interrupt) {
  std::vector<int> missing;
  {
    absl::ReaderMutexLock lock(&mesh.mu);
    missing = NotCurrent(mesh, tiles, version);
  }
  return BuildAndInstall(mesh, missing, version, keep_from, interrupt);
}

nav_internal::PathSearch NavWorld::Search(Mesh& mesh, const FindPathInput& input) {
  std::unique_ptr<QuerySlot> slot = TakeSlot(mesh);
  nav_internal::PathSearch out =
      nav_internal::SearchPath(*slot->query, input, mesh.params.cell_size, &slot->scratch);
  ReturnSlot(mesh, std::move(slot));
  return out;
}

absl::StatusOr<nav_internal::PathSearch> NavWorld::SearchIn(Mesh& mesh, const Region& region,
                                                            const FindPathInput& input,
                                                            uint64_t version, int* tiles_built) {
  // Usually one refresh, then the search under the shared lock. A query at another version may
  // swap a tile in between; after a few such races, build and search under the exclusive lock.
  const uint64_t stamp = Touch(mesh, region);
  for (int attempt = 0; attempt < 3; ++attempt) {
    {
      absl::ReaderMutexLock lock(&mesh.mu);
      if (NotCurrent(mesh, region, version).empty()) return Search(mesh, input);
    }
    absl::StatusOr<int> built = Refresh(mesh, region, version, stamp, input.interrupt);
    if (!built.ok()) return built.status();
    *tiles_built += *built;
  }
  absl::MutexLock lock(&mesh.mu);
  const std::vector<int> missing = NotCurrent(mesh, region, version);
  absl::StatusOr<std::vector<BuiltTile>> built = Build(mesh, missing, input.interrupt);
  if (!built.ok()) return built.status();
  Install(mesh, &*built, version, stamp);
  *tiles_built += int(missing.size());
  return Search(mesh, input);
}

absl::StatusOr<FindPathResult> NavWorld::FindPath(const FindPathInput& input) {
  if (absl::Status s = ValidateFindPath(input); !s.ok()) return s;
  absl::StatusOr<Mesh*> mesh = MeshFor(input.profile);
  if (!mesh.ok()) return mesh.status();
  if (input.interrupt != nullptr) {
    if (absl::Status s = input.interrupt->Check(); !s.ok()) return s;
  }
  World::ReadSnapshot snapshot(world_);
  FindPathResult result;
  result.version = snapshot.version();
  paths_.fetch_add(1, std::memory_order_relaxed);
  const float straight = Length(input.goal - input.start);
  if (straight > input.max_distance) {
    result.status = PathStatus::kTooFar;
    return result;
  }
  // Every path of at most max_distance lies in the ellipse with foci start and goal, inside
  // their box grown by (max_distance - straight) / 2: the largest area searched.
  const float reach = 0.5f * (input.max_distance - straight) + input.profile.radius;
  float margin =
      std::max(0.5f * float(settings_.tiles.tile_voxels) * world_.voxel_size(), 0.25f * straight);
  const Vec3 lo = Min(input.start, input.goal), hi = Max(input.start, input.goal);
  nav_internal::PathSearch search;
  Region searched{-1, -1, -1, -1};
  for (;;) {
    const float m = std::min(margin, reach);
    const Region region = TilesIn(lo - Vec3(m, 0, m), hi + Vec3(m, 0, m));
    absl::StatusOr<nav_internal::PathSearch> s =
        SearchIn(**mesh, region, input, result.version, &result.tiles_built);
    if (!s.ok()) return s.status();
    search = *std::move(s);
    if (!search.partial || m >= reach || region == searched) break;
    searched = region;
    margin *= 2;
  }
  if (snapshot.expired()) return absl::AbortedError("snapshot expired during FindPath");
  result.status = search.status;
  result.corridor_polygons = search.corridor_polygons;
  result.corridor_tiles = std::move(search.corridor_tiles);
  result.length = search.length;
  if (search.status == PathStatus::kOk && search.length > input.max_distance) {
    result.status = PathStatus::kTooFar;
  } else {
    result.waypoints = std::move(search.waypoints);
  }
  return result;
}

absl::StatusOr<int> NavWorld::BuildTilesIn(const AgentProfile& profile, const Vec3& min,
                                           const Vec3& max) {
  if (absl::Status s = ValidateAgentProfile(profile); !s.ok()) return s;
  absl::StatusOr<Mesh*> mesh = MeshFor(profile);
  if (!mesh.ok()) return mesh.status();
  World::ReadSnapshot snapshot(world_);
  const Region region = TilesIn(min, max);
  const uint64_t stamp = Touch(**mesh, region);
  return Refresh(**mesh, region, snapshot.version(), stamp);
}

absl::StatusOr<int> NavWorld::RebuildStale() {
  World::ReadSnapshot snapshot(world_);
  const uint64_t version = snapshot.version();
  std::vector<Mesh*> meshes;
  {
    absl::MutexLock lock(&meshes_mu_);
    for (auto& [key, mesh] : meshes_) meshes.push_back(mesh.get());
  }
  int rebuilt = 0;
  for (Mesh* mesh : meshes) {
    std::vector<int> stale;
    {
      absl::ReaderMutexLock lock(&mesh->mu);
      for (int i : NotCurrent(*mesh, Region{0, 0, tiles_x_, tiles_z_}, version)) {
        if (mesh->tiles[size_t(i)].built) stale.push_back(i);
      }
    }
    absl::StatusOr<std::vector<BuiltTile>> built = Build(*mesh, stale);
    if (!built.ok()) return built.status();
    absl::MutexLock lock(&mesh->mu);
    Install(*mesh, &*built, version, UINT64_MAX);  // keeps nothing
    rebuilt += int(stale.size());
  }
  // Every tile an edit up to `version` made stale is current now (a mesh created meanwhile is
  // built at or after it).
  uint64_t seen = rebuilt_version_.load(std::memory_order_relaxed);
  while (seen < version && !rebuilt_version_.compare_exchange_weak(seen, version)) {
  }
  return rebuilt;
}

void NavWorld::DropTiles() {
  absl::MutexLock lock(&meshes_mu_);
  for (auto& [key, mesh] : meshes_) {
    absl::MutexLock mesh_lock(&mesh->mu);
    for (size_t i = 0; i < mesh->tiles.size(); ++i) DropTile(*mesh, int(i));
  }
}

NavStats NavWorld::stats() const {
  NavStats s;
  s.tiles_built = tiles_built_.load(std::memory_order_relaxed);
  s.tile_build_us = tile_build_us_.load(std::memory_order_relaxed);
  s.paths = paths_.load(std::memory_order_relaxed);
  s.tiles_evicted = tiles_evicted_.load(std::memory_order_relaxed);
  absl::MutexLock lock(&meshes_mu_);
  s.meshes = meshes_.size();
  // dirty_mu_ is the lock edits take: hold it for one slice of tiles at a time, so a scrape of a
  // large world never keeps an edit waiting for more than a slice's compares.
  constexpr size_t kSlice = 1024;
  for (const auto& [key, mesh] : meshes_) {
    absl::ReaderMutexLock mesh_lock(&mesh->mu);
    s.tile_bytes += uint64_t(mesh->bytes);
    for (size_t begin = 0; begin < mesh->tiles.size(); begin += kSlice) {
      const size_t end = std::min(begin + kSlice, mesh->tiles.size());
      absl::MutexLock dirty_lock(&dirty_mu_);
      for (size_t i = begin; i < end; ++i) {
        const TileState& t = mesh->tiles[i];
        if (!t.built) continue;
        ++s.tiles_resident;
        s.stale_tiles += dirty_[i] > t.version;
      }
    }
  }
  return s;
}

void NavWorld::AfterPublish(const CommittedEdit& edit) {
  // Tiles holding a voxel within border_voxels + 1 of a change (NavTileReach), in X and Z.
  const int t = settings_.tiles.tile_voxels, g = settings_.tiles.border_voxels + 1;
  const Int3 min = world_.voxel_bounds().min;
  absl::MutexLock lock(&dirty_mu_);
  for (const ChunkChange& change : edit.result.changes) {
    const IntBox& b = change.changed_voxels;
    const int x0 = std::max(FloorDiv(b.min.x - g - min.x, t), 0);
    const int x1 = std::min(FloorDiv(b.max.x - 1 + g - min.x, t), tiles_x_ - 1);
    const int z0 = std::max(FloorDiv(b.min.z - g - min.z, t), 0);
    const int z1 = std::min(FloorDiv(b.max.z - 1 + g - min.z, t), tiles_z_ - 1);
    for (int z = z0; z <= z1; ++z)
      for (int x = x0; x <= x1; ++x) dirty_[size_t(z * tiles_x_ + x)] = edit.result.version;
  }
  if (!edit.result.changes.empty()) {
    dirty_version_.store(edit.result.version, std::memory_order_release);
  }
}

bool NavWorld::MayHaveStaleTiles() const {
  return dirty_version_.load(std::memory_order_acquire) >
         rebuilt_version_.load(std::memory_order_acquire);
}

}  // namespace voxcol
