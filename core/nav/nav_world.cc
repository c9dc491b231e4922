#include "core/nav/nav_world.h"

#include <DetourAlloc.h>
#include <DetourNavMesh.h>
#include <DetourNavMeshQuery.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace voxcol {

namespace {

struct TileState {
  bool built = false;
  uint64_t version = 0;  // snapshot version the tile was built from
  int32_t bytes = 0;     // its Detour data (0: no walkable polygon, nothing held)
};

// See the header: current at `version` when built from it, or untouched since both.
bool Current(const TileState& t, uint64_t dirty, uint64_t version) {
  return t.built && (t.version == version || dirty <= std::min(t.version, version));
}

int Log2Ceil(int n) {
  int bits = 0;
  while ((1 << bits) < n) ++bits;
  return bits;
}

}  // namespace

// A Detour query object and its buffers; pooled per mesh so a search allocates nothing.
struct NavWorld::QuerySlot {
  dtNavMeshQuery* query = dtAllocNavMeshQuery();
  nav_internal::PathScratch scratch;
  ~QuerySlot() { dtFreeNavMeshQuery(query); }
};

struct NavWorld::Mesh {
  ~Mesh() { dtFreeNavMesh(nav); }
  NavBuildParams params;  // immutable
  mutable absl::Mutex mu;
  dtNavMesh* nav ABSL_PT_GUARDED_BY(mu) = nullptr;  // the pointer itself never changes
  std::vector<TileState> tiles ABSL_GUARDED_BY(mu);
  int64_t bytes ABSL_GUARDED_BY(mu) = 0;  // sum of tiles[i].bytes
  // Per tile, NavWorld::search_clock_ when a search last needed it; written under a shared lock.
  std::unique_ptr<std::atomic<uint64_t>[]> last_search;
  absl::Mutex pool_mu;
  std::vector<std::unique_ptr<QuerySlot>> pool ABSL_GUARDED_BY(pool_mu);
};

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
  if (missing.empty()) return 0;
  absl::StatusOr<std::vector<BuiltTile>> built = Build(mesh, missing, interrupt);
  if (!built.ok()) return built.status();
  absl::MutexLock lock(&mesh.mu);
  Install(mesh, &*built, version, keep_from);
  return int(missing.size());
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

void NavWorld::DropTiles() {
  absl::MutexLock lock(&meshes_mu_);
  for (auto& [key, mesh] : meshes_) {
    absl::MutexLock mesh_lock(&mesh->mu);
    for (size_t i = 0; i < mesh->tiles.size(); ++i) DropTile(*mesh, int(i));
  }
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
