// Raycasts against the smooth marching-cubes surface: a chunk walk (Amanatides & Woo over the mesh
// chunk grid) feeding each chunk's loose kD-tree, with the best distance so far as the early-out.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/mesh/marching_cubes.h"
#include "core/query/raycast.h"
#include "core/query/smooth_walk.h"

namespace voxcol {

namespace {

using smooth_walk::ChunkWalk;
using smooth_walk::FirstMeetings;
using Meeting = smooth_walk::FirstMeetings::Meeting;
using smooth_walk::StretchWithoutSurface;

// The ray origin's chunk as InSolidCell found it under the walk's cache scope: the walk uses its
// entry instead of looking the chunk up again.
struct KnownChunk {
  ChunkKey key;
  ChunkCells cells;  // cells.entry.collision null: none
};

// Visits the chunk trees along the ray up to t_end; `on_chunk(collision, t_exit)` returns true to
// stop. The collisions stay valid while `cache_scope` lives. A chunk whose stored record fails to
// load stops the walk with that error (meshing it would read it as air): the cache loads a chunk
// before building it, and an entry it holds was built from a chunk that loaded.
// World chunks whose broadphase record has no solid within one voxel cannot hold a triangle (every
// cell corner lies in that neighbourhood), so they are stepped over without touching the cache;
// a chunk met first (BroadphaseIndex::Unmet: no record yet, not met before) goes without its
// record: stepped over where the ray's stretch through it is proven to meet no triangle
// (StretchWithoutSurface), else meshed directly (the record, which costs about as much as the
// mesh, would seldom spare it there). Cold rays then generate no voxels where they cross open
// space, and build no record where they mesh; a chunk met again builds its record. The layer
// meshed just outside the world (it closes the surface at the world box) has no record and is
// always visited.
// A cached chunk whose triangles' box the ray misses (or that has none) is passed as a null
// collision, without reading its data: on_chunk only applies its stopping rule. The others' data
// starts loading as soon as their entry is found.
template <typename OnChunk>
absl::Status WalkChunks(const BroadphaseIndex& index, const BroadphaseIndex::ReadScope& scope,
                        ChunkCollisionCache& cache,
                        const ChunkCollisionCache::ReadScope& cache_scope, const KdRay& ray,
                        float t_end, const KnownChunk& known, FirstMeetings& meetings,
                        QueryStats* stats, OnChunk&& on_chunk) {
  const World& world = index.world();
  ChunkWalk walk(index, ray.origin, ray.direction);
  uint32_t chunks = 0, builds = 0;
  absl::Status status;
  for (; walk.InRange(); walk.Next()) {
    const ChunkKey key = walk.key();
    if (walk.InWorld()) {
      bool skip = false, touch = false;
      switch (meetings.Classify(index, walk.slot(), key, &touch)) {
        case Meeting::kKnown:
          skip = !touch;
          break;
        case Meeting::kFirst: {  // InSolidCell may have meshed it already
          const bool meshed = known.cells.entry.collision != nullptr && known.key == key;
          skip = !meshed && StretchWithoutSurface(world, ray, t_end, key);
          break;
        }
        case Meeting::kRecord:
          skip = !index.Get(key, scope).MayTouch(kClassSolid);
          break;
      }
      if (skip) {
        if (walk.t_exit() > t_end) break;
        continue;
      }
    }
    ChunkLookup found = known.cells.entry.collision != nullptr && known.key == key
                            ? known.cells.entry
                            : cache.Peek(key, cache_scope);
    bool built = false;
    if (found.collision == nullptr) {
      found.collision = cache.Find(key, cache_scope, &status, &built);
      if (found.collision == nullptr) break;  // load error
    } else if (found.preview->MayMeet(key, world.voxel_size(), ray.origin, ray.inv_direction,
                                      t_end)) {
      found.preview->Prefetch(found.collision);  // an entry's answer always has its preview
    } else {
      found.collision = nullptr;
    }
    ++chunks;
    builds += built;
    const ChunkCollision* c = found.collision;
    if (c != nullptr && c->tree.empty()) c = nullptr;
    if (on_chunk(c, walk.t_exit())) break;
    if (walk.t_exit() > t_end) break;
  }
  if (stats) {
    stats->chunks_visited += chunks;
    stats->cache_builds += builds;
  }
  return status;
}

// World::GetVoxel that keeps the last chunk it read: the voxels of one hit lie in one to eight
// chunks (usually one). A chunk near the surface has a partial broadphase record, which holds the
// chunk it was built from (the published one: edits rebuild records as they publish chunks), so
// the voxels are read from there without a world lookup (lock, hash, reference count). A uniform
// chunk is read from the world's uniform table; other chunks come from World::GetChunk (air if the
// chunk fails to load, as GetVoxel). A chunk met first (BroadphaseIndex::Unmet) gets no record
// built for a few voxels: when it is the generator's, the voxels are generated one by one
// (World::GeneratedVoxel) instead of the record's chunk and parts of 26 neighbours, which a cold
// hit on a chunk's upper face would otherwise pay. Voxels in the corner chunks of the last
// collision data hinted (ChunkCollision::corner_chunks: those a hit's cell corners lie in) are read
// from there first, and so are those of the hinted chunk itself (ChunkCollision::source(): a
// uniform one is its interned chunk, which reads the same voxels as the table).
class VoxelReader {
 public:
  VoxelReader(const BroadphaseIndex& index, const BroadphaseIndex::ReadScope& scope,
              FirstMeetings& meetings)
      : index_(index), scope_(scope), meetings_(meetings) {}
  Voxel Get(const Int3& voxel) {
    if (!index_.world().voxel_bounds().Contains(voxel)) return Voxel{};
    if (corners_ != nullptr) {
      if (const Voxel* v = corners_->CornerVoxel(voxel)) return *v;
    }
    const ChunkKey key = ChunkOf(voxel);
    if (!loaded_ || !(key == key_)) Load(key);
    if (generated_) return index_.world().GeneratedVoxel(key_, voxel);
    return chunk_ != nullptr ? chunk_->At(LocalOf(voxel)) : uniform_;
  }
  // Reads the voxels of chunk `key` from `source` (ChunkCollision::source(), null only in a shared
  // meshless record), when no other chunk is held.
  void Hint(const ChunkKey& key, const Chunk* source) {
    if (loaded_ || source == nullptr) return;
    key_ = key;
    chunk_ = source;
    loaded_ = true;
    generated_ = false;
  }
  void Hint(const ChunkCollision& c) {
    Hint(c.key, c.source());
    corners_ = &c;
  }
  // IsSolid(Get(voxel)), without reading the voxel when the class table knows that its chunk has
  // no solid within a voxel (a chunk met first builds no record for it: the voxel is read).
  bool IsSolidAt(const Int3& voxel) {
    const ChunkKey key = ChunkOf(voxel);
    bool touch = false;
    switch (meetings_.Classify(index_, key, &touch)) {
      case Meeting::kKnown:
        return touch && IsSolid(Get(voxel));
      case Meeting::kFirst:
        return IsSolid(Get(voxel));
      case Meeting::kRecord:
        break;
    }
    return index_.Get(key, scope_).MayTouch(kClassSolid) && IsSolid(Get(voxel));
  }

 private:
  void Load(const ChunkKey& key) {
    const World& world = index_.world();
    key_ = key;
    loaded_ = true;
    generated_ = false;
    owner_.reset();
    chunk_ = nullptr;
    bool touch = false;
    if (meetings_.Classify(index_, key, &touch) == Meeting::kFirst) {
      absl::StatusOr<ChunkPtr> peek = world.PeekChunk(key);
      generated_ = peek.ok() && *peek == nullptr;
      if (peek.ok()) owner_ = *std::move(peek);
    } else {
      chunk_ = index_.Get(key, scope_).chunk().get();
    }
    if (generated_ || chunk_ != nullptr || world.UniformVoxel(key, &uniform_)) return;
    if (owner_ == nullptr) owner_ = world.GetChunk(key);
    chunk_ = owner_.get();
  }

  const BroadphaseIndex& index_;
  const BroadphaseIndex::ReadScope& scope_;
  FirstMeetings& meetings_;
  bool loaded_ = false;
  bool generated_ = false;  // key_ is the generator's: World::GeneratedVoxel
  ChunkKey key_;
  const Chunk* chunk_ = nullptr;  // null: the chunk is uniform_
  Voxel uniform_;
  ChunkPtr owner_;                           // holds chunk_ when it came from the world
  const ChunkCollision* corners_ = nullptr;  // its corner_chunks are read first
};

// The low corner voxel of the marching-cubes cell around `p` (cells join voxel centres).
Int3 CellLow(const World& world, const Vec3& p) {
  const float h = world.voxel_size();
  return {FloorToInt(p.x / h - 0.5f), FloorToInt(p.y / h - 0.5f), FloorToInt(p.z / h - 0.5f)};
}

// The corner offsets of a marching-cubes cell in corner order (x, then y, then z offset).
Int3 CornerOffset(int k) { return {k & 1, (k >> 1) & 1, k >> 2}; }

// The eight corners of the cell with low corner `low`, in corner order. From c's own chunk as
// meshed with one lookup when they all lie in it (ChunkCollision::CellInSource) inside the world,
// else one at a time through `voxels`. Precondition: `voxels` was hinted with c
// (VoxelReader::Hint), so that Get reads c's chunk as meshed too and both ways read the same.
void ReadCellCorners(const World& world, const ChunkCollision& c, VoxelReader& voxels,
                     const Int3& low, Voxel corners[8]) {
  const IntBox& bounds = world.voxel_bounds();
  const Voxel* base = c.CellInSource(low);
  if (base != nullptr && bounds.Contains(low) && bounds.Contains(low + Int3{1, 1, 1})) {
    for (int k = 0; k < 8; ++k) {
      const Int3 d = CornerOffset(k);
      corners[k] = base[LocalIndex(d.x, d.y, d.z)];
    }
    return;
  }
  for (int k = 0; k < 8; ++k) corners[k] = voxels.Get(low + CornerOffset(k));
}

// The voxel a smooth hit reports and that voxel's occupancy, from the corners of the cell with low
// corner `low`: the solid one (solid material, occupancy above the iso level) of highest
// occupancy, the first in corner order on ties; `none` when no corner is solid. `none` is the
// voxel VoxelAt finds at the cell's point, one of the corners (floor(x) - floor(x - 0.5) is 0 or
// 1, also with VoxelAt's multiply by 1 / h against CellLow's divide by h, as long as coordinates
// stay far below 2^22 voxels: ValidateWorldConfig allows 2^20); reading it through `voxels` is
// only a guard.
void DominantSolidCorner(VoxelReader& voxels, const Int3& low, const Voxel corners[8],
                         const Int3& none, Int3* voxel, uint8_t* occupancy) {
  *voxel = none;
  int best = -1;
  for (int c = 0; c < 8; ++c) {
    const Voxel& x = corners[c];
    if (IsSolidMaterial(x.material) && x.occupancy > kIsoOccupancy && x.occupancy > best) {
      *voxel = low + CornerOffset(c);
      best = x.occupancy;
    }
  }
  if (best >= 0) {
    *occupancy = uint8_t(best);
    return;
  }
  const Int3 d = none - low;
  const bool corner = uint32_t(d.x) <= 1 && uint32_t(d.y) <= 1 && uint32_t(d.z) <= 1;
  *occupancy = corner ? corners[d.x | d.y << 1 | d.z << 2].occupancy : voxels.Get(none).occupancy;
}

// Accumulates area-weighted face normals at the three vertices of one triangle (meshes without
// stored vertex normals).
class VertexNormalCollector {
 public:
  VertexNormalCollector(const ChunkMesh& mesh, uint32_t tri) : mesh_(mesh) {
    for (int k = 0; k < 3; ++k) index_[k] = mesh.Index(3 * tri + k);
  }
  bool done() const { return false; }
  void AddTriangle(uint32_t t) {
    const Vec3& a = mesh_.Corner(t, 0);
    const Vec3 n = Cross(mesh_.Corner(t, 1) - a, mesh_.Corner(t, 2) - a);  // |n| = 2 area
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) {
        if (mesh_.Index(3 * t + j) == index_[k]) normal_[k] += n;
      }
  }
  const Vec3& normal(int k) const { return normal_[k]; }

 private:
  const ChunkMesh& mesh_;
  uint32_t index_[3];
  Vec3 normal_[3];
};

// Smooth normal at point p of triangle `tri`: the area-weighted vertex normals of the chunk mesh,
// interpolated with p's barycentric coordinates (Phong). Flat facets of marching cubes tilt by up
// to ~10 degrees on curved surfaces; the vertex average follows the underlying surface closely.
// The vertex sums come from the mesh (computed when it was built); a mesh without them gathers the
// triangles around the vertices through the tree.
Vec3 SmoothNormal(const ChunkCollision& c, uint32_t tri, const Vec3& p) {
  const ChunkMesh& m = c.mesh;
  Vec3 vn[3];
  if (m.has_normals()) {
    for (int k = 0; k < 3; ++k) vn[k] = m.VertexNormal(m.Index(3 * tri + k));
  } else {
    VertexNormalCollector normals(m, tri);
    c.tree.CollideAabb(m, TriangleBounds(m, tri), normals, nullptr);
    for (int k = 0; k < 3; ++k) vn[k] = normals.normal(k);
  }
  const Vec3 &a = m.Corner(tri, 0), &b = m.Corner(tri, 1), &d = m.Corner(tri, 2);
  const Vec3 n = Cross(b - a, d - a);
  const float inv = 1.0f / LengthSq(n);
  const float wb = Dot(Cross(p - a, d - a), n) * inv, wc = Dot(Cross(b - a, p - a), n) * inv;
  Vec3 smooth = vn[0] * (1.0f - wb - wc) + vn[1] * wb + vn[2] * wc;
  return LengthSq(smooth) > 0 ? Normalize(smooth) : Normalize(n);
}

// Starts loading the first lines of the arrays a hit on `m` reads besides the tree's (materials
// and vertex normals), when a ray is cast into the chunk: they then arrive with its nodes and
// triangles instead of after the closest hit is known.
void PrefetchSurfaceArrays(const ChunkMesh& m) {
  PrefetchLines(m.materials.data(), ChunkPreview::Lines(m.materials.size()));
  PrefetchLines(m.normals.data(), ChunkPreview::Lines(m.normals.size() * sizeof(PackedNormal)));
}

// Starts loading what MakeSmoothHit reads of a hit on triangle `tri` besides the triangle itself:
// its material, the three vertex normals and, when they lie in c's corner chunks, the corners of
// the hit cell (low corner `low`). They are independent lines, so asking for all of them first
// makes one wait, not several in turn.
void PrefetchHitData(const ChunkCollision& c, uint32_t tri, const Int3& low) {
  const ChunkMesh& m = c.mesh;
  if (!m.materials.empty()) PrefetchLine(&m.materials[tri]);
  if (m.has_normals()) {
    for (int k = 0; k < 3; ++k) PrefetchLine(&m.normals[m.Index(3 * tri + k)]);
  }
  if (const Voxel* base = c.CellInSource(low)) {  // the corners' rows: two per y layer
    for (int k = 0; k < 4; ++k) PrefetchLine(base + LocalIndex(0, k >> 1, k & 1));
    return;
  }
  for (int k = 0; k < 8; ++k) {
    if (const Voxel* v = c.CornerVoxel(low + CornerOffset(k))) PrefetchLine(v);
  }
}

RaycastHit MakeSmoothHit(const BroadphaseIndex& index, VoxelReader& voxels, const KdRay& ray,
                         const ChunkCollision& c, const TriangleRayHit& t) {
  const World& world = index.world();
  RaycastHit hit;
  hit.hit = true;
  hit.distance = t.t;
  hit.position = ray.origin + ray.direction * t.t;
  const Vec3 facet = c.mesh.Normal(t.triangle);
  // Step a hair into the solid so the hit cell is the one behind the surface.
  const Vec3 behind = hit.position - facet * (1e-3f * world.voxel_size());
  const Int3 low = CellLow(world, behind);
  PrefetchHitData(c, t.triangle, low);
  // The cell's corners come from the chunks the mesh was built from, except for a cell behind the
  // chunk's low faces (its low corner in the chunk below). StartedInside may follow (a back face),
  // and its origin voxel is often in c's chunk too.
  voxels.Hint(c);
  hit.normal = SmoothNormal(c, t.triangle, hit.position);
  hit.front_face = Dot(facet, ray.direction) < 0;
  Voxel corners[8];
  ReadCellCorners(world, c, voxels, low, corners);
  uint8_t occupancy = 0;
  DominantSolidCorner(voxels, low, corners, world.VoxelAt(behind), &hit.voxel, &occupancy);
  hit.value = {c.mesh.Material(t.triangle), occupancy};
  hit.chunk = c.key;
  hit.triangle = int32_t(t.triangle);
  return hit;
}

// What InSolidCell proved of the ray's origin voxel without reading it.
struct OriginProof {
  std::optional<bool> solid;   // IsSolid of the origin voxel
  std::optional<Voxel> voxel;  // the voxel itself, when proven solid and one value
};

RaycastHit StartedInside(const World& world, VoxelReader& voxels, const RaycastInput& ray,
                         const OriginProof& origin) {
  RaycastHit hit;
  hit.hit = hit.started_inside = true;
  hit.position = ray.origin;
  hit.voxel = world.VoxelAt(ray.origin);
  hit.value = origin.voxel ? *origin.voxel : voxels.Get(hit.voxel);
  hit.chunk = ChunkOf(hit.voxel);
  return hit;
}

// True when the eight corners of the cell with low corner `low` lie in resident uniform chunks of
// a voxel inside the surface (IsSolid).
bool CornersInUniformSolid(const World& world, const Int3& low) {
  const ChunkKey first = ChunkOf(low), last = ChunkOf(low + Int3{1, 1, 1});
  for (int32_t y = first.y; y <= last.y; ++y)
    for (int32_t z = first.z; z <= last.z; ++z)
      for (int32_t x = first.x; x <= last.x; ++x) {
        Voxel v;
        if (!world.UniformVoxel({x, y, z}, &v) || !IsSolid(v)) return false;
      }
  return true;
}

// True when all eight corners of the marching-cubes cell around `p` are inside the surface (the
// mesher's cube case 255). Such a cell has no triangles and lies inside the solid, so the first
// surface crossing of any ray from p leaves the solid: the walk would end in StartedInside. Deep
// rock is answered here without walking, from data the walk reads anyway: the class table (no
// solid within a voxel: not inside), the cell's bit in the mesh of the chunk that owns it
// (SolidCells, held by its cache entry), and for chunks the table knows as FULL solid, the uniform
// table (such chunks are often never meshed). A chunk that fails to load answers false; the walk
// reports it. *owner is the owning chunk's entry when this looked it up (else empty), for the walk.
// Where the table or record shows no solid within a voxel of the owner, *origin says the voxel at
// p (a corner of the cell) is not solid, so that a ray without a crossing need not read it.
// A chunk met first (BroadphaseIndex::Unmet) goes without its record: a cell whose corners are
// proven on one side of the surface (World::ProvenUntouchedSide) is answered with nothing built,
// *origin then saying whether the voxel at p (one of the corners) is solid and, when the corners
// are proven one value (World::ProvenUntouched), which voxel it is; other cells read the mesh.
bool InSolidCell(const BroadphaseIndex& index, const BroadphaseIndex::ReadScope& scope,
                 ChunkCollisionCache& cache, const ChunkCollisionCache::ReadScope& cache_scope,
                 const Vec3& p, VoxelReader& voxels, FirstMeetings& meetings, KnownChunk* owner,
                 OriginProof* origin, QueryStats* stats) {
  const World& world = index.world();
  const Int3 low = CellLow(world, p);
  const ChunkKey key = ChunkOf(low);                         // the mesh chunk that owns the cell
  if (!MeshedChunkRange(world).Contains(key)) return false;  // corners outside the world: air
  if (world.chunk_bounds().Contains(key)) {
    bool touch = false;
    const Meeting meeting = meetings.Classify(index, key, &touch);
    if (meeting == Meeting::kFirst) {
      const IntBox corners{low, low + Int3{2, 2, 2}};
      bool solid;
      if (world.ProvenUntouchedSide(corners, &solid)) {
        origin->solid = solid;
        Voxel fill;  // StartedInside reports the voxel
        if (solid && world.ProvenUntouched(corners, &fill)) origin->voxel = fill;
        return solid;
      }
    } else {
      const bool may_touch =
          meeting == Meeting::kKnown ? touch : index.Get(key, scope).MayTouch(kClassSolid);
      if (!may_touch) {  // no corner is solid, and the origin's voxel is one of them (as `none`
        origin->solid = false;  // is in DominantSolidCorner)
        return false;
      }
      if (index.KnownFull(key, kClassSolid) && CornersInUniformSolid(world, low)) return true;
    }
  }
  ChunkCells cells = cache.FindCells(key, cache_scope);
  if (cells.solid_cells == nullptr) {  // not built yet
    absl::Status load;
    bool built = false;
    cells = cache.FindOrBuildCells(key, cache_scope, &load, &built);
    if (stats) stats->cache_builds += built;
    if (cells.solid_cells == nullptr) return false;
  }
  *owner = {key, cells};
  const Int3 local = low - ChunkOrigin(key);
  if (((*cells.solid_cells)[local.y] >> (local.x | local.z << 3) & 1) == 0) return false;
  voxels.Hint(key, cells.source);  // StartedInside reads the origin voxel, usually in this chunk
  return true;
}

// The blocky water surface when the settings stop there; a miss otherwise.
RaycastHit WaterHit(const BroadphaseIndex& index, const RaycastInput& ray,
                    const RaycastSettings& settings, QueryStats* stats) {
  return settings.water == WaterMode::kStopAtSurface ? RaycastWaterSurface(index, ray, stats)
                                                     : RaycastHit{};
}

// Slack for the float error of chunk exit distances (world units).
float ExitSlack(const World& world, float t) { return 1e-4f * world.voxel_size() + 1e-5f * t; }

void AddTreeStats(const KdStats& kd, QueryStats* stats) {
  if (!stats) return;
  stats->tree_nodes_visited += kd.nodes_visited;
  stats->triangles_tested += kd.triangles_tested;
}

}  // namespace

RaycastHit RaycastSmooth(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                         const RaycastInput& ray, const RaycastSettings& settings,
                         QueryStats* stats) {
  const World& world = index.world();
  const RaycastHit water = WaterHit(index, ray, settings, stats);
  BroadphaseIndex::ReadScope scope(index);
  FirstMeetings meetings;
  VoxelReader voxels(index, scope, meetings);
  ChunkCollisionCache::ReadScope cache_scope(cache);
  // With a water hit the answer can be the water (its face may come before the smooth exit).
  KnownChunk origin_chunk{};  // found by InSolidCell, reused by the walk
  OriginProof origin;         // what InSolidCell proved
  if (!water.hit && InSolidCell(index, scope, cache, cache_scope, ray.origin, voxels, meetings,
                                &origin_chunk, &origin, stats)) {
    return StartedInside(world, voxels, ray, origin);
  }
  const float t_end = water.hit ? water.distance : ray.max_distance;
  const KdRay kray(ray.origin, Normalize(ray.direction));
  ClosestHitCollector closest(t_end);
  const ChunkCollision* best = nullptr;
  const ChunkCollision* first = nullptr;  // usually the chunk of the origin voxel
  KdStats kd;
  absl::Status walked =
      WalkChunks(index, scope, cache, cache_scope, kray, t_end, origin_chunk, meetings, stats,
                 [&](const ChunkCollision* c, float t_exit) {
                   if (c != nullptr) {
                     PrefetchSurfaceArrays(c->mesh);
                     if (first == nullptr) first = c;
                     const bool had = closest.has_hit();
                     const float before = closest.early_out();
                     c->tree.CastRay(c->mesh, kray, closest, &kd);
                     if (closest.has_hit() && (!had || closest.early_out() != before)) best = c;
                   }
                   // Later chunks start at t_exit: a hit clearly before it cannot be beaten.
                   return closest.has_hit() && closest.hit().t < t_exit - ExitSlack(world, t_exit);
                 });
  AddTreeStats(kd, stats);
  if (!walked.ok()) {
    RaycastHit failed;
    failed.load_status = walked;
    return failed;
  }
  if (closest.has_hit()) {
    RaycastHit hit = MakeSmoothHit(index, voxels, kray, *best, closest.hit());
    // The first crossing leaves the solid: the ray started inside terrain.
    return hit.front_face ? hit : StartedInside(world, voxels, ray, origin);
  }
  if (water.hit) return water;
  // No crossing at all: inside if the origin voxel is solid (the surface stays within a voxel of
  // the blocky one, so a long solid run without a crossing is inside).
  if (origin.solid.has_value() && !*origin.solid) return RaycastHit{};  // proven air
  if (first != nullptr) voxels.Hint(*first);
  voxels.Hint(origin_chunk.key, origin_chunk.cells.source);  // when no tree was read
  const bool solid = origin.solid ? *origin.solid : voxels.IsSolidAt(world.VoxelAt(ray.origin));
  return solid ? StartedInside(world, voxels, ray, origin) : RaycastHit{};
}

void RaycastSmoothAll(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                      const RaycastInput& ray, const RaycastSettings& settings,
                      std::vector<RaycastHit>* hits, QueryStats* stats) {
  const World& world = index.world();
  hits->clear();
  const RaycastHit water = WaterHit(index, ray, settings, stats);
  const float t_end = water.hit ? water.distance : ray.max_distance;
  const KdRay kray(ray.origin, Normalize(ray.direction));
  thread_local std::vector<TriangleRayHit> chunk_hits;
  ChunkCollisionCache::ReadScope cache_scope(cache);
  BroadphaseIndex::ReadScope scope(index);
  FirstMeetings meetings;
  VoxelReader voxels(index, scope, meetings);
  KdStats kd;
  absl::Status walked = WalkChunks(index, scope, cache, cache_scope, kray, t_end, KnownChunk{},
                                   meetings, stats, [&](const ChunkCollision* c, float) {
                                     if (c == nullptr) return false;
                                     chunk_hits.clear();
                                     AllHitsCollector collector(t_end, &chunk_hits);
                                     c->tree.CastRay(c->mesh, kray, collector, &kd);
                                     for (const TriangleRayHit& t : chunk_hits)
                                       hits->push_back(MakeSmoothHit(index, voxels, kray, *c, t));
                                     return false;
                                   });
  AddTreeStats(kd, stats);
  std::sort(hits->begin(), hits->end(),
            [](const RaycastHit& a, const RaycastHit& b) { return a.distance < b.distance; });
  // A ray through an edge or vertex shared by several triangles hits each of them (watertight
  // test): keep one crossing per surface passage (same distance, same facing).
  auto same_crossing = [&](const RaycastHit& a, const RaycastHit& b) {
    return b.distance - a.distance <= ExitSlack(world, b.distance) * 0.1f &&
           a.front_face == b.front_face;
  };
  hits->erase(std::unique(hits->begin(), hits->end(), same_crossing), hits->end());
  if (!walked.ok()) {
    hits->clear();
    hits->emplace_back().load_status = walked;  // the caller reports it; no partial answer
    return;
  }
  if (water.hit) hits->push_back(water);
}

RaycastHit Raycast(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                   const RaycastInput& ray, const RaycastSettings& settings, QueryStats* stats) {
  return settings.mode == RaycastMode::kBlocky ? RaycastBlocky(index, ray, settings, stats)
                                               : RaycastSmooth(index, cache, ray, settings, stats);
}

}  // namespace voxcol
