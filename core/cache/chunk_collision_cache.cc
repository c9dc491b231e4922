#include "core/cache/chunk_collision_cache.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "core/mesh/marching_cubes.h"

namespace voxcol {

namespace {

// Map node, LRU node and control blocks: a rough per-entry overhead beyond the payload.
constexpr size_t kEntryOverhead = 160;

template <typename T>
void CopyExact(const std::vector<T>& from, std::vector<T>* to) {
  to->reserve(from.size());
  to->assign(from.begin(), from.end());
}

}  // namespace

ChunkCollisionCache::ChunkCollisionCache(World& world, size_t budget_bytes)
    : world_(world), shard_budget_(budget_bytes / kShards) {
  world.AddObserver(this);
}

ChunkCollisionCache::Shard& ChunkCollisionCache::ShardFor(const ChunkKey& key) const {
  uint32_t h =
      uint32_t(key.x) * 73856093u ^ uint32_t(key.y) * 19349663u ^ uint32_t(key.z) * 83492791u;
  return shards_[(h ^ (h >> 16)) % kShards];
}

ChunkCollisionPtr ChunkCollisionCache::Build(const ChunkKey& key) const {
  // Build into reusable per-thread buffers, then keep exact-size copies.
  thread_local ChunkMesh scratch_mesh;
  thread_local KdBuildScratch scratch_tree;
  MeshChunk(GatherMeshSources(world_, key), key, world_.voxel_size(), &scratch_mesh);
  auto out = std::make_shared<ChunkCollision>();
  out->key = key;
  out->mesh.origin = scratch_mesh.origin;
  out->mesh.voxel_size = scratch_mesh.voxel_size;
  CopyExact(scratch_mesh.vertices, &out->mesh.vertices);
  CopyExact(scratch_mesh.indices, &out->mesh.indices);
  CopyExact(scratch_mesh.materials, &out->mesh.materials);
  out->tree.Build(out->mesh, &scratch_tree);
#ifdef VOXCOL_VALIDATE
  // Expensive: every triangle in exactly one leaf, child boxes bound their subtrees, depth bound.
  if (!out->tree.Validate(out->mesh)) {
    std::fprintf(stderr, "voxcol: kD-tree of chunk (%d, %d, %d) failed validation\n", key.x, key.y,
                 key.z);
    std::abort();
  }
#endif
  out->bytes =
      out->mesh.DataBytes() + out->tree.DataBytes() + sizeof(ChunkCollision) + kEntryOverhead;
  return out;
}

std::shared_ptr<ChunkCollisionCache::Slot> ChunkCollisionCache::FindOrAddSlot(Shard& shard,
                                                                              const ChunkKey& key,
                                                                              uint64_t seen_version,
                                                                              bool* cacheable) {
  absl::MutexLock lock(&shard.mu);
  auto it = shard.map.find(key);
  if (it != shard.map.end()) {
    shard.lru.splice(shard.lru.begin(), shard.lru, it->second.lru);
    hits_.fetch_add(1, std::memory_order_relaxed);
    *cacheable = true;
    return it->second.slot;
  }
  auto slot = std::make_shared<Slot>();
  // An edit published after we read the version may have invalidated what we are about to build.
  *cacheable = shard.invalidated_version <= seen_version;
  if (*cacheable) {
    shard.lru.push_front(key);
    shard.map.emplace(key, Entry{slot, shard.lru.begin(), 0});
  }
  return slot;
}

void ChunkCollisionCache::Erase(Shard& shard, const ChunkKey& key) {
  auto it = shard.map.find(key);
  if (it == shard.map.end()) return;
  shard.bytes -= it->second.bytes;
  shard.lru.erase(it->second.lru);
  shard.map.erase(it);
}

void ChunkCollisionCache::Account(Shard& shard, const ChunkKey& key,
                                  const std::shared_ptr<Slot>& slot) {
  absl::MutexLock lock(&shard.mu);
  auto it = shard.map.find(key);
  if (it == shard.map.end() || it->second.slot != slot) return;  // invalidated meanwhile
  it->second.bytes = slot->data->bytes;
  shard.bytes += it->second.bytes;
  // Evict least recently used entries; the new one goes too if it alone exceeds the budget.
  while (shard.bytes > shard_budget_ && !shard.lru.empty()) {
    ChunkKey victim = shard.lru.back();
    Erase(shard, victim);
    evictions_.fetch_add(1, std::memory_order_relaxed);
  }
}

ChunkCollisionPtr ChunkCollisionCache::Get(const ChunkKey& key, bool* built) {
  Shard& shard = ShardFor(key);
  const uint64_t seen_version = world_.version();
  bool cacheable = false;
  std::shared_ptr<Slot> slot = FindOrAddSlot(shard, key, seen_version, &cacheable);
  bool did_build = false;
  absl::call_once(slot->once, [&] {
    slot->data = Build(key);
    did_build = true;
  });
  if (did_build) {
    builds_.fetch_add(1, std::memory_order_relaxed);
    if (cacheable) Account(shard, key, slot);
  }
  if (built) *built = did_build;
  return slot->data;
}

void ChunkCollisionCache::AfterPublish(const CommittedEdit& edit) {
  for (const ChunkChange& change : edit.result.changes) {
    IntBox keys = MeshChunksReading(change.changed_voxels);
    for (int y = keys.min.y; y < keys.max.y; ++y)
      for (int z = keys.min.z; z < keys.max.z; ++z)
        for (int x = keys.min.x; x < keys.max.x; ++x) {
          Shard& shard = ShardFor({x, y, z});
          absl::MutexLock lock(&shard.mu);
          shard.invalidated_version = std::max(shard.invalidated_version, edit.result.version);
          if (shard.map.contains(ChunkKey{x, y, z}))
            invalidations_.fetch_add(1, std::memory_order_relaxed);
          Erase(shard, {x, y, z});
        }
  }
}

ChunkCollisionCacheStats ChunkCollisionCache::stats() const {
  ChunkCollisionCacheStats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.builds = builds_.load(std::memory_order_relaxed);
  s.evictions = evictions_.load(std::memory_order_relaxed);
  s.invalidations = invalidations_.load(std::memory_order_relaxed);
  for (Shard& shard : shards_) {
    absl::MutexLock lock(&shard.mu);
    s.bytes += shard.bytes;
    s.entries += shard.map.size();
  }
  return s;
}

}  // namespace voxcol
