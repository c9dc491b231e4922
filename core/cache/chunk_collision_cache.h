// Lazily built per-chunk narrowphase data (marching-cubes mesh + loose kD-tree) under a byte
// budget, as in the Roblox design: nothing is built until a narrow query first touches a chunk.
//
// Invalidation: the cache observes the world's edits. After an edit is published it drops every
// chunk whose mesh reads a changed voxel (MeshChunksReading in core/mesh/marching_cubes.h: a mesh
// reads one voxel below its chunk and two above). A build that gathered
// its voxels before an edit but finished after it is returned to its caller but not cached (each
// shard remembers the last edit version that invalidated one of its chunks).
//
// Concurrency: sharded by chunk key, one mutex per shard held only for map/LRU updates. A chunk is
// built exactly once per content: concurrent callers share one slot and wait on its once-flag.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>

#include "absl/base/call_once.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/kdtree/kd_tree.h"
#include "core/mesh/chunk_mesh.h"
#include "core/voxel/world.h"

namespace voxcol {

// Mesh and tree of one chunk, immutable once built.
struct ChunkCollision {
  ChunkKey key;
  ChunkMesh mesh;
  KdTree tree;
  size_t bytes = 0;  // what this entry costs in the cache budget (payload + fixed overhead)
};
using ChunkCollisionPtr = std::shared_ptr<const ChunkCollision>;

struct ChunkCollisionCacheStats {
  uint64_t hits = 0;
  uint64_t builds = 0;
  uint64_t evictions = 0;
  uint64_t invalidations = 0;
  size_t bytes = 0;  // currently cached
  size_t entries = 0;
};

class ChunkCollisionCache : public EditObserver {
 public:
  // Registers itself as an edit observer of `world`, so construct it before the world serves edits.
  // `budget_bytes` bounds the cached bytes (split evenly over the shards).
  ChunkCollisionCache(World& world, size_t budget_bytes);
  ChunkCollisionCache(const ChunkCollisionCache&) = delete;
  ChunkCollisionCache& operator=(const ChunkCollisionCache&) = delete;

  // The mesh and tree of chunk `key` for the world's current content, built on first use. `key`
  // may lie one chunk below the world's min corner (see MeshedChunkRange). Thread-safe. Sets
  // *built when this call did the build.
  ChunkCollisionPtr Get(const ChunkKey& key, bool* built = nullptr);

  size_t budget_bytes() const { return shard_budget_ * kShards; }
  ChunkCollisionCacheStats stats() const;

  void AfterPublish(const CommittedEdit& edit) override;

 private:
  static constexpr int kShards = 16;
  struct Slot {
    absl::once_flag once;
    ChunkCollisionPtr data;
  };
  struct Entry {
    std::shared_ptr<Slot> slot;
    std::list<ChunkKey>::iterator lru;
    size_t bytes = 0;  // 0 until the build is accounted
  };
  struct Shard {
    absl::Mutex mu;
    absl::flat_hash_map<ChunkKey, Entry> map ABSL_GUARDED_BY(mu);
    std::list<ChunkKey> lru ABSL_GUARDED_BY(mu);  // most recent first
    size_t bytes ABSL_GUARDED_BY(mu) = 0;
    uint64_t invalidated_version ABSL_GUARDED_BY(mu) = 0;
  };

  Shard& ShardFor(const ChunkKey& key) const;
  std::shared_ptr<Slot> FindOrAddSlot(Shard& shard, const ChunkKey& key, uint64_t seen_version,
                                      bool* cacheable);
  ChunkCollisionPtr Build(const ChunkKey& key) const;
  void Account(Shard& shard, const ChunkKey& key, const std::shared_ptr<Slot>& slot);
  void Erase(Shard& shard, const ChunkKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);

  const World& world_;
  size_t shard_budget_;
  mutable std::array<Shard, kShards> shards_;
  std::atomic<uint64_t> hits_{0}, builds_{0}, evictions_{0}, invalidations_{0};
};

}  // namespace voxcol
