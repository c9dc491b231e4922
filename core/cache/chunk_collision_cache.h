// Lazily built per-chunk narrowphase data (marching-cubes mesh + loose kD-tree) under a byte
// budget, as in the Roblox design: nothing is built until a narrow query first touches a chunk.
//
// Invalidation: the cache observes the world's edits. After an edit is published it drops every
// chunk whose mesh reads a changed voxel (MeshChunksReading in core/mesh/marching_cubes.h: a mesh
// reads one voxel below its chunk and two above). A build that gathered
// its voxels before an edit but finished after it is returned to its caller but not cached (each
// shard remembers the last edit version that invalidated one of its chunks).
//
// Lookup: a sparse table indexed by chunk coordinate (pages of 8^3 slots, allocated on first
// touch; an untouched world costs one directory pointer per 512 chunks) holds an atomic pointer to
// each chunk's entry. A hit is two dependent loads and a reference bit: no lock, no hash, no list
// splice. Eviction is CLOCK (second chance on the reference bit) per shard, under the shard's
// mutex, which only misses, accounting, eviction and invalidation take.
//
// Reclamation: entries dropped from the table (evicted, invalidated) are retired and freed once
// every reader that could still hold them has left its ReadScope (two-epoch reclamation, as in
// BroadphaseIndex). A chunk is built exactly once per content: concurrent callers find the one
// entry in the table and wait on its once-flag.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "core/epoch_readers.h"
#include "core/kdtree/kd_tree.h"
#include "core/mesh/chunk_mesh.h"
#include "core/mesh/mesh_edges.h"
#include "core/prefetch.h"
#include "core/voxel/world.h"

namespace voxcol {

// The edge flags of one chunk mesh, computed on first use: one pointer until then. Threads that
// ask at the same time may each compute them; the first to publish wins and the others free theirs
// (no thread waits on another, and the flags are a pure function of the mesh).
class LazyEdgeFlags {
 public:
  LazyEdgeFlags() = default;
  LazyEdgeFlags(const LazyEdgeFlags&) = delete;
  LazyEdgeFlags& operator=(const LazyEdgeFlags&) = delete;
  ~LazyEdgeFlags() { delete[] flags_.load(std::memory_order_relaxed); }

  const uint16_t* Get(const ChunkMesh& mesh) const {
    const uint16_t* flags = flags_.load(std::memory_order_acquire);
    return flags != nullptr ? flags : Compute(mesh);
  }

 private:
  const uint16_t* Compute(const ChunkMesh& mesh) const;

  mutable std::atomic<uint16_t*> flags_{nullptr};  // one per triangle once computed
};

// Mesh and tree of one chunk, immutable once built, in one allocation with their arrays: this
// header, then the tree's nodes, then the mesh's arrays, which `tree` and `mesh` borrow (Create,
// KdTree::CopyPacked, ChunkMesh::CopyPacked). Shared by a reference count
// (ChunkCollisionPtr): no control block or array allocations of its own.
// Member order: a ray reads the key, the tree header and the mesh's arrays, in that order, so they
// share the first lines.
struct alignas(KdNode) ChunkCollision {
  struct Destroy {
    void operator()(ChunkCollision* c) const {
      c->~ChunkCollision();
      ::operator delete(c, std::align_val_t(alignof(ChunkCollision)));
    }
  };
  using Building = std::unique_ptr<ChunkCollision, Destroy>;  // not shared yet
  // An empty header with room for `array_bytes` behind it (arrays()), aligned for KdNode.
  static Building Create(size_t array_bytes) {
    void* memory = ::operator new(sizeof(ChunkCollision) + array_bytes,
                                  std::align_val_t(alignof(ChunkCollision)));
    return Building(new (memory) ChunkCollision);
  }
  ChunkCollision(const ChunkCollision&) = delete;
  ChunkCollision& operator=(const ChunkCollision&) = delete;
  // The room behind the header (its size is a multiple of KdNode's alignment).
  char* arrays() { return reinterpret_cast<char*>(this + 1); }

  ChunkKey key;
  uint32_t bytes = 0;  // what this entry costs in the cache budget (payload + fixed overhead)
  mutable std::atomic<uint32_t> refs{0};  // the ChunkCollisionPtrs that hold it
  KdTree tree;
  ChunkMesh mesh;
  // The chunks key + (dx, dy, dz), dx, dy, dz in {0, 1}, at index dx | dy << 1 | dz << 2, as
  // meshed: every corner of a cell whose low corner lies in chunk `key` is in one of them, so a
  // hit reads its cell's corners without world or broadphase lookups (CornerVoxel). The chunk
  // itself is the world's. A neighbour is the world's chunk, or null where the mesh read the
  // generator's part of it alone (GatherMeshSources): keeping that part would pin a private copy
  // per entry, and its voxels are read through the broadphase instead. Those reads see the
  // caller's snapshot, not necessarily the entry's version: a caller without a World::ReadSnapshot
  // racing an edit of that neighbour may read a voxel newer than the mesh (as for any voxel outside
  // the corner chunks; the service reads under snapshots).
  // They pin the world's chunks as a partial broadphase record pins its chunk; edits drop the
  // entry with the chunks' old versions. Last, outside the lines a lookup prefetches.
  std::array<ChunkPtr, 8> corner_chunks;

  // Per triangle, which of its edges and corners are real edges of the solid as far as this mesh
  // decides (ComputeEdgeFlags, core/mesh/mesh_edges.h). Computed on the first call, by the first
  // contact query that needs it (rays never do), then shared by every thread. Last as well.
  LazyEdgeFlags edge_flags;
  const uint16_t* EdgeFlags() const { return edge_flags.Get(mesh); }

  // Chunk `key` as meshed (corner_chunks[0]; null in a shared meshless record): voxel reads at a
  // hit or a ray origin in this chunk skip the world and broadphase lookups.
  const Chunk* source() const { return corner_chunks[0].get(); }
  // World voxel `voxel` as meshed, when it lies in the corner chunks (voxels key's origin + [0, 8]
  // on every axis) and its corner chunk is kept; else null.
  const Voxel* CornerVoxel(const Int3& voxel) const {
    const Int3 local = voxel - mesh.origin;
    // Unsigned, so that one compare per axis also rejects negative coordinates.
    constexpr uint32_t kEdge = kChunkSize;
    if (uint32_t(local.x) > kEdge || uint32_t(local.y) > kEdge || uint32_t(local.z) > kEdge)
      return nullptr;
    const Chunk* chunk = corner_chunks[(local.x >> kChunkBits) | (local.y >> kChunkBits) << 1 |
                                       (local.z >> kChunkBits) << 2]
                             .get();
    if (chunk == nullptr) return nullptr;
    constexpr int kMask = kChunkSize - 1;
    return &chunk->At(local.x & kMask, local.y & kMask, local.z & kMask);
  }
  // The voxel at `low` in chunk `key` as meshed, when all eight corners of the cell with low
  // corner `low` (low + {0, 1}^3) lie in that chunk (low's coordinates 0-6 in it on every axis:
  // 343 of the chunk's 512 cells) and it is kept; else null. The other corners are At() offsets.
  const Voxel* CellInSource(const Int3& low) const {
    const Int3 local = low - mesh.origin;
    constexpr uint32_t kLast = kChunkSize - 2;
    if (uint32_t(local.x) > kLast || uint32_t(local.y) > kLast || uint32_t(local.z) > kLast)
      return nullptr;
    const Chunk* chunk = source();
    return chunk != nullptr ? &chunk->At(local) : nullptr;
  }

 private:
  ChunkCollision() = default;
};
static_assert(sizeof(ChunkCollision) % alignof(KdNode) == 0, "the nodes follow the header");

// A counted reference to built collision data (a shared_ptr without a control block: the count
// lives in the data).
class ChunkCollisionPtr {
 public:
  ChunkCollisionPtr() = default;
  ChunkCollisionPtr(std::nullptr_t) {}  // NOLINT(google-explicit-constructor): as shared_ptr
  // Shares data built by ChunkCollision::Create.
  explicit ChunkCollisionPtr(ChunkCollision::Building built) : p_(built.release()) { Ref(); }
  ChunkCollisionPtr(const ChunkCollisionPtr& o) : p_(o.p_) { Ref(); }
  ChunkCollisionPtr(ChunkCollisionPtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  ChunkCollisionPtr& operator=(ChunkCollisionPtr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~ChunkCollisionPtr() {
    if (p_ != nullptr && p_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
      ChunkCollision::Destroy()(p_);
  }

  const ChunkCollision* get() const { return p_; }
  const ChunkCollision& operator*() const { return *p_; }
  const ChunkCollision* operator->() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const ChunkCollisionPtr& o) const { return p_ == o.p_; }
  bool operator!=(const ChunkCollisionPtr& o) const { return p_ != o.p_; }

 private:
  void Ref() const {
    if (p_ != nullptr) p_->refs.fetch_add(1, std::memory_order_relaxed);
  }

  ChunkCollision* p_ = nullptr;
};

// What a lookup learns of a chunk's collision data from the table entry, before it reads the data:
// - where the header, the tree's nodes and the mesh's indices and vertices lie (the first
//   kMaxLines lines of each array). The arrays lie in one block behind the header, so a query
//   that follows the pointers waits for the header before it can ask for them; their addresses
//   here let it ask for all of them at once (Prefetch).
// - the box of the chunk's triangles, rounded outward to 1/16 voxel, so that a ray that misses it
//   skips the chunk without reading the data at all (MayMeet).
class ChunkPreview {
 public:
  static constexpr int kMaxLines = 32;  // per array: 2 KiB, more than most chunks' arrays
  ChunkPreview() = default;
  explicit ChunkPreview(const ChunkCollision& c);

  // Starts loading the lines of `c`, the collision data this was made from. Nothing is read.
  void Prefetch(const ChunkCollision* c) const {
    // The members before the last two, which a ray does not read (and the tail padding of
    // alignas: at most one line more than they need).
    constexpr int kHeaderLines = (sizeof(ChunkCollision) - sizeof(ChunkCollision::corner_chunks) -
                                  sizeof(ChunkCollision::edge_flags) + 63) /
                                 64;
    PrefetchLines(c, kHeaderLines);
    for (int a = 0; a < 3; ++a) PrefetchLines(arrays_[a], lines_[a]);
  }
  // The lines of an array of `bytes` that a prefetch covers: at most kMaxLines.
  static int Lines(size_t bytes) { return int(std::min<size_t>((bytes + 63) / 64, kMaxLines)); }

  // False when the segment [0, t_end] of the ray (origin, 1 / direction) cannot meet a triangle
  // of chunk `key` (meshed at `voxel_size`): it misses their box grown by 1/16 voxel, or there
  // are none.
  bool MayMeet(const ChunkKey& key, float voxel_size, const Vec3& origin, const Vec3& inv_direction,
               float t_end) const;

  bool operator==(const ChunkPreview& o) const {
    return std::equal(arrays_, arrays_ + 3, o.arrays_) &&
           std::equal(lines_, lines_ + 3, o.lines_) && std::equal(box_, box_ + 6, o.box_);
  }
  bool operator!=(const ChunkPreview& o) const { return !(*this == o); }

 private:
  const char* arrays_[3] = {};
  uint8_t lines_[3] = {};
  // Min and max corner of the triangles' box in 1/16 voxel from the chunk's origin (the mesh's
  // fixed-point vertices >> 8, rounded outward); min > max when there are no triangles.
  uint8_t box_[6] = {255, 255, 255, 0, 0, 0};
};

// A built entry found by ChunkCollisionCache::Peek: its data and what the entry knows of it.
struct ChunkLookup {
  const ChunkCollision* collision = nullptr;  // null: not built yet (Find builds it)
  const ChunkPreview* preview = nullptr;
};

// What a ray that starts in a chunk reads of its entry (ChunkCollisionCache::FindCells).
struct ChunkCells {
  ChunkLookup entry;                        // entry.collision null: not cached
  const SolidCells* solid_cells = nullptr;  // the chunk's (MeshChunk), held by its table entry
  const Chunk* source = nullptr;            // ChunkCollision::source()
};

struct ChunkCollisionCacheStats {
  uint64_t hits = 0;
  uint64_t builds = 0;
  uint64_t evictions = 0;
  uint64_t invalidations = 0;
  size_t bytes = 0;  // currently cached
  size_t entries = 0;
  size_t past_bytes = 0;  // built for snapshots of past versions (SetPastBudget)
};

class ChunkCollisionCache : public EditObserver {
  struct ReaderShardData {
    std::atomic<uint64_t> hits{0};  // hits of the shard's threads, on their own line
  };
  using Readers = EpochReaders<ChunkCollisionCache, ReaderShardData>;

 public:
  // Registers itself as an edit observer of `world`, so construct it before the world serves edits;
  // the destructor unregisters it, so destroy it while no edit is in flight and before the world.
  // `budget_bytes` bounds the cached bytes (split evenly over the shards).
  ChunkCollisionCache(World& world, size_t budget_bytes);
  ~ChunkCollisionCache() override;
  ChunkCollisionCache(const ChunkCollisionCache&) = delete;
  ChunkCollisionCache& operator=(const ChunkCollisionCache&) = delete;

  // Pins the entries a thread finds for as long as it lives. Scopes may nest: only a thread's
  // outermost scope on a cache counts it as a reader (two atomic read-modify-writes, full barriers
  // on x86); a nested one costs no atomic operation (core/epoch_readers.h).
  class ReadScope : public Readers::Scope {
   public:
    explicit ReadScope(const ChunkCollisionCache& cache) : Scope(cache.readers_) {}

   private:
    friend class ChunkCollisionCache;  // counts hits in the thread's shard
  };

  // The mesh and tree of chunk `key` for the world's current content, built on first use. `key`
  // may lie one chunk below the world's min corner (see MeshedChunkRange). Thread-safe. Sets
  // *built when this call did the build. A chunk without a triangle gets one of two shared
  // records (its cells all open or all solid): its `key`, `mesh.origin`, `source()` and
  // `corner_chunks` are not the chunk's. The same holds for Find, FindCached, Peek and FindCells.
  ChunkCollisionPtr Get(const ChunkKey& key, bool* built = nullptr);
  // Get for queries that must not mesh a chunk whose stored record fails to load: as Find, before a
  // build (never on a hit) the world chunk at `key` is loaded, and if that fails, returns null and
  // sets *error.
  ChunkCollisionPtr GetChecked(const ChunkKey& key, absl::Status* error, bool* built = nullptr);

  // Same data for queries: valid while `scope` lives, without reference counting. Before a chunk
  // is built, the world chunk at `key` is loaded (World::LoadChunk): if that fails, returns null
  // and sets *error, never meshes the chunk as air. A cached entry was built from a chunk that
  // loaded, and edits drop it, so a hit needs no world lookup. A hit starts loading the data's
  // first lines (ChunkPreview::Prefetch).
  const ChunkCollision* Find(const ChunkKey& key, const ReadScope& scope, absl::Status* error,
                             bool* built = nullptr);

  // Find's fast path alone: the built entry of `key`, or null when there is none yet (no build, no
  // world access).
  const ChunkCollision* FindCached(const ChunkKey& key, const ReadScope& scope) const;

  // FindCached's answer with its preview, for a caller that decides from the preview whether to
  // read the data (and prefetches it if so). Empty when `key` has no built entry.
  ChunkLookup Peek(const ChunkKey& key, const ReadScope& scope) const;

  // Peek's answer with the chunk's solid cells and source chunk, held by the table entry so that
  // reading them costs no load of the collision data. Empty when `key` has no built entry.
  ChunkCells FindCells(const ChunkKey& key, const ReadScope& scope) const;
  // FindCells for a ray origin in a chunk that may not be built yet: as Find, builds it first (the
  // answer lives as long as `scope`). Empty, with *error set, when the chunk fails to load.
  ChunkCells FindOrBuildCells(const ChunkKey& key, const ReadScope& scope, absl::Status* error,
                              bool* built);

  size_t budget_bytes() const { return shard_budget_ * kShards; }
  // Meshes and trees built for snapshots of past versions (World::OpenSnapshotAt) are kept, keyed
  // by chunk and World::SnapshotDataUntil, up to about `bytes` (oldest dropped first; 0: none are
  // kept). Default 32 MiB. Call before serving.
  void SetPastBudget(size_t bytes) { past_budget_ = bytes; }
  ChunkCollisionCacheStats stats() const;

  void AfterPublish(const CommittedEdit& edit) override;

 private:
  static constexpr int kShards = 16;
  static constexpr int kPageBits = 3;  // pages of 8^3 slots
  static constexpr int kPageSlots = 1 << (3 * kPageBits);
  struct Entry;
  struct Page {
    std::atomic<Entry*> slots[kPageSlots] = {};
  };
  struct Shard {
    absl::Mutex mu;
    std::vector<Entry*> ring ABSL_GUARDED_BY(mu);  // built, accounted entries (CLOCK order)
    size_t hand ABSL_GUARDED_BY(mu) = 0;
    size_t bytes ABSL_GUARDED_BY(mu) = 0;
    size_t entries ABSL_GUARDED_BY(mu) = 0;  // in the table, built or not
    uint64_t invalidated_version ABSL_GUARDED_BY(mu) = 0;
  };

  Shard& ShardFor(const ChunkKey& key) const;
  // The table slot of `key`, or null when its page was never allocated (and `create` is false).
  std::atomic<Entry*>* SlotFor(const ChunkKey& key, bool create) const;
  Entry* Lookup(const ChunkKey& key) const;
  // The built entry of `key` for the calling thread's snapshot, marked referenced and counted as a
  // hit; null when there is none.
  Entry* FindReady(const ChunkKey& key, const ReadScope& scope) const;
  // Slow path: the entry in the table (added if missing), or a private one when an edit may have
  // invalidated what we are about to build (then *cacheable is false).
  Entry* FindOrAdd(const ChunkKey& key, bool* cacheable);
  // FindOrAdd for the calling thread's snapshot: a private, uncacheable entry when the table may
  // hold a newer version of the chunk's data than the snapshot.
  Entry* FindOrBuildFor(const ChunkKey& key, bool* cacheable);
  // FindOrBuildFor for the checked lookups (Find, GetChecked): first loads the world chunk at `key`
  // and, if that fails, returns null and sets *error, so a chunk whose stored record does not load
  // is never meshed as air.
  Entry* LoadedEntryFor(const ChunkKey& key, bool* cacheable, absl::Status* error);
  // The past-version entry of `key` for the calling thread's snapshot (added if missing), or null
  // when it has none (see SetPastBudget).
  Entry* PastEntry(const ChunkKey& key);
  // Counts a freshly built past entry and drops the oldest ones over the budget.
  void AccountPast(Entry* entry);
  // Builds the entry's data once (a shared record's data for a chunk without a triangle); returns
  // the data.
  const ChunkCollision* Ensure(Entry* entry, bool cacheable, bool* built);
  ChunkCollisionPtr Build(const ChunkKey& key, SolidCells* solid_cells) const;
  void Account(Shard& shard, Entry* entry);
  // The shared record that stands for `c` when it has no triangle and its cells are all open or
  // all solid (no per-chunk data a query reads), else null.
  Entry* MeshlessRecord(const ChunkCollision& c, const SolidCells& cells) const;
  // Puts `shared` in the slot of the just-built `entry` (unless an edit dropped it meanwhile).
  void Share(Shard& shard, Entry* entry, Entry* shared);
  void EvictOver(Shard& shard) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  // Removes the table entry of `key` (if any) and retires it. Returns whether there was one.
  bool Drop(Shard& shard, const ChunkKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  void Unring(Shard& shard, Entry* entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  void Retire(Entry* entry);

  World& world_;  // observed: the destructor unregisters
  size_t shard_budget_;
  IntBox range_;  // keys the table covers (MeshedChunkRange)
  Int3 pages_;    // directory extent in pages
  std::unique_ptr<std::atomic<Page*>[]> directory_;
  size_t directory_size_ = 0;
  mutable std::array<Shard, kShards> shards_;
  // Chunks without a triangle whose cells are all open ([0]) or all solid ([1]) share one record:
  // two thirds of a world's built chunks (all air, rock or sea), each ~700 bytes as an entry of
  // its own. In the table, not in an eviction ring; they cost no budget.
  std::unique_ptr<Entry> meshless_[2];
  std::atomic<uint64_t> hits_{0};  // slow-path hits (an entry found under the shard lock)
  std::atomic<uint64_t> builds_{0}, evictions_{0}, invalidations_{0};

  // Two-epoch reclamation of replaced and evicted entries (core/epoch_readers.h); a reader's shard
  // also counts its hits, so a hit writes only a line its thread owns.
  Readers readers_;
  absl::Mutex retire_mu_;
  std::vector<Entry*> retired_[2] ABSL_GUARDED_BY(retire_mu_);

  using PastKey = std::pair<ChunkKey, uint64_t>;
  size_t past_budget_ = size_t(32) << 20;
  mutable absl::Mutex past_mu_;  // never held with a shard mutex or retire_mu_
  absl::flat_hash_map<PastKey, Entry*> past_ ABSL_GUARDED_BY(past_mu_);
  std::deque<PastKey> past_order_ ABSL_GUARDED_BY(past_mu_);
  size_t past_bytes_ ABSL_GUARDED_BY(past_mu_) = 0;
};

}  // namespace voxcol
