#include "core/cache/chunk_collision_cache.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/base/call_once.h"
#include "core/geometry/ray_aabb.h"
#include "core/mesh/marching_cubes.h"

namespace voxcol {

namespace {

// Table slot, entry and allocation slack: the per-entry overhead beyond the payload (checked
// against sizeof(Entry) below).
constexpr size_t kEntryOverhead = 256;
constexpr size_t kNotListed = std::numeric_limits<size_t>::max();

}  // namespace

// Cache-line aligned: a lookup reads the first line (`ready`, `referenced`, the preview) and, for
// a ray origin, the second (`solid_cells`).
struct alignas(64) ChunkCollisionCache::Entry {
  explicit Entry(const ChunkKey& k) : key(k) {}
  absl::once_flag once;
  std::atomic<bool> referenced{false};  // CLOCK bit, set by hits
  bool past = false;                    // in past_ (a past version's entry), never in the table
  bool shared = false;  // one of the cache's meshless records (MeshlessRecord): never retired
  std::atomic<const ChunkCollision*> ready{nullptr};  // data.get() once built
  // A copy of data's source chunk and its preview, and the chunk's solid cells (held only here),
  // written before `ready`.
  const Chunk* source = nullptr;
  ChunkPreview preview;
  alignas(64) SolidCells solid_cells{};
  const ChunkKey key;
  ChunkCollisionPtr data;  // written once, under `once`
  uint64_t until = 0;      // past entries: their World::SnapshotDataUntil
  // Guarded by the shard mutex.
  size_t bytes = 0;  // 0 until the build is accounted
  size_t ring_pos = kNotListed;
};

ChunkCollisionCache::ChunkCollisionCache(World& world, size_t budget_bytes)
    : world_(world), shard_budget_(budget_bytes / kShards), range_(MeshedChunkRange(world)) {
  static_assert(sizeof(Entry) + sizeof(void*) + 32 <= kEntryOverhead, "kEntryOverhead is low");
  static_assert(offsetof(Entry, preview) + sizeof(ChunkPreview) <= 64,
                "a lookup reads one line of the entry");
  const Int3 extent = range_.max - range_.min;
  constexpr int kPageEdge = 1 << kPageBits;
  pages_ = {(extent.x + kPageEdge - 1) >> kPageBits, (extent.y + kPageEdge - 1) >> kPageBits,
            (extent.z + kPageEdge - 1) >> kPageBits};
  directory_size_ = size_t(pages_.x) * size_t(pages_.y) * size_t(pages_.z);
  directory_ = std::make_unique<std::atomic<Page*>[]>(directory_size_);
  for (size_t i = 0; i < directory_size_; ++i) directory_[i].store(nullptr);
  for (int solid = 0; solid < 2; ++solid) {
    ChunkCollisionPtr data(ChunkCollision::Create(0));
    auto entry = std::make_unique<Entry>(ChunkKey{});
    entry->shared = true;
    entry->data = std::move(data);
    entry->preview = ChunkPreview(*entry->data);
    entry->solid_cells.fill(solid != 0 ? ~uint64_t{0} : 0);
    absl::call_once(entry->once, [] {});
    entry->ready.store(entry->data.get(), std::memory_order_release);
    meshless_[solid] = std::move(entry);
  }
  world.AddObserver(this);
}

ChunkCollisionCache::~ChunkCollisionCache() {
  world_.RemoveObserver(this);
  for (size_t p = 0; p < directory_size_; ++p) {
    Page* page = directory_[p].load();
    if (page == nullptr) continue;
    for (std::atomic<Entry*>& slot : page->slots) {
      if (Entry* e = slot.load(); e != nullptr && !e->shared) delete e;
    }
    delete page;
  }
  {
    absl::MutexLock lock(&past_mu_);
    for (const auto& [key, e] : past_) delete e;
  }
  absl::MutexLock lock(&retire_mu_);
  for (auto& list : retired_)
    for (Entry* e : list) delete e;
}

// ---- Reclamation ----

void ChunkCollisionCache::Retire(Entry* entry) {
  absl::MutexLock lock(&retire_mu_);
  retired_[readers_.RetireList()].push_back(entry);
  readers_.Reclaim(retired_, [](Entry* e) { delete e; });
}

// ---- Table ----

ChunkCollisionCache::Shard& ChunkCollisionCache::ShardFor(const ChunkKey& key) const {
  uint32_t h =
      uint32_t(key.x) * 73856093u ^ uint32_t(key.y) * 19349663u ^ uint32_t(key.z) * 83492791u;
  return shards_[(h ^ (h >> 16)) % kShards];
}

std::atomic<ChunkCollisionCache::Entry*>* ChunkCollisionCache::SlotFor(const ChunkKey& key,
                                                                       bool create) const {
  if (!range_.Contains(key)) return nullptr;
  const Int3 k = key - range_.min;
  std::atomic<Page*>& dir =
      directory_[(size_t(k.y >> kPageBits) * size_t(pages_.z) + size_t(k.z >> kPageBits)) *
                     size_t(pages_.x) +
                 size_t(k.x >> kPageBits)];
  Page* page = dir.load(std::memory_order_acquire);
  if (page == nullptr) {
    if (!create) return nullptr;
    Page* fresh = new Page;
    if (dir.compare_exchange_strong(page, fresh, std::memory_order_acq_rel)) {
      page = fresh;
    } else {
      delete fresh;  // another thread allocated it; `page` now holds theirs
    }
  }
  constexpr int kMask = (1 << kPageBits) - 1;
  return &page->slots[((k.y & kMask) << (2 * kPageBits)) | ((k.z & kMask) << kPageBits) |
                      (k.x & kMask)];
}

ChunkCollisionCache::Entry* ChunkCollisionCache::Lookup(const ChunkKey& key) const {
  std::atomic<Entry*>* slot = SlotFor(key, false);
  return slot != nullptr ? slot->load(std::memory_order_acquire) : nullptr;
}

// ---- Builds ----

const uint16_t* LazyEdgeFlags::Compute(const ChunkMesh& mesh) const {
  thread_local std::vector<uint16_t> computed;  // reused: the one allocation kept is the copy
  ComputeEdgeFlags(mesh, &computed);
  auto owned = std::make_unique<uint16_t[]>(computed.size());
  std::copy(computed.begin(), computed.end(), owned.get());
  uint16_t* expected = nullptr;
  if (flags_.compare_exchange_strong(expected, owned.get(), std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
    return owned.release();
  }
  return expected;  // another thread published first; ours is freed
}

ChunkPreview::ChunkPreview(const ChunkCollision& c) {
  auto set = [&](int a, const void* data, size_t bytes) {
    arrays_[a] = static_cast<const char*>(data);
    lines_[a] = uint8_t(Lines(bytes));
  };
  set(0, c.tree.nodes().data(), c.tree.nodes().size() * sizeof(KdNode));
  set(1, c.mesh.IndexData(), c.mesh.IndexBytes());
  set(2, c.mesh.vertices.data(), c.mesh.vertices.size() * sizeof(QuantizedVertex));
  if (c.tree.empty()) return;  // the empty box
  // Every vertex of the chunk (the triangles use only these), in steps of 1/4096 voxel: >> 8 gives
  // 1/16 voxel, floored for the min and rounded up for the max, so the box contains them exactly.
  uint16_t lo[3] = {65535, 65535, 65535}, hi[3] = {0, 0, 0};
  for (const QuantizedVertex& v : c.mesh.vertices) {
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], v[a]);
      hi[a] = std::max(hi[a], v[a]);
    }
  }
  for (int a = 0; a < 3; ++a) {
    box_[a] = uint8_t(lo[a] >> 8);
    box_[3 + a] = uint8_t(std::min((uint32_t(hi[a]) + 255) >> 8, 255u));
  }
}

bool ChunkPreview::MayMeet(const ChunkKey& key, float voxel_size, const Vec3& origin,
                           const Vec3& inv_direction, float t_end) const {
  if (box_[0] > box_[3]) return false;  // no triangles
  // Decoded like ChunkMesh::Decode (monotonic, so the box still contains the decoded vertices),
  // then grown by 1/16 voxel: far more than the rounding of the clip below.
  constexpr float kSixteenth = 1.0f / 16;
  const Int3 base = ChunkOrigin(key);
  Aabb box;
  for (int a = 0; a < 3; ++a) {
    box.min[a] = (float(Component(base, a)) + float(box_[a] - 1) * kSixteenth) * voxel_size;
    box.max[a] = (float(Component(base, a)) + float(box_[3 + a] + 1) * kSixteenth) * voxel_size;
  }
  float t0 = 0, t1 = t_end;
  return ClipRayToAabb(origin, inv_direction, box, &t0, &t1);
}

ChunkCollisionPtr ChunkCollisionCache::Build(const ChunkKey& key, SolidCells* solid_cells) const {
  // Build into reusable per-thread buffers, then copy them once, exact-size, into one allocation.
  thread_local ChunkMesh scratch_mesh;
  thread_local KdTree scratch_tree;
  thread_local KdBuildScratch scratch_build;
  const MeshSources sources = GatherMeshSources(world_, key);
  MeshChunk(sources, key, world_.voxel_size(), &scratch_mesh, solid_cells);
  // Reorders the mesh's triangles into leaf order: anything that names triangles by index must be
  // derived from the mesh after this.
  scratch_tree.Build(&scratch_mesh, &scratch_build);
  scratch_mesh.NarrowIndices();  // one byte per index when the mesh has at most 256 vertices
  // The header, then the nodes, then the mesh's arrays (aligned for the nodes as well).
  const size_t node_bytes = scratch_tree.nodes().bytes();
  ChunkCollision::Building out = ChunkCollision::Create(node_bytes + scratch_mesh.ArrayBytes());
  out->key = key;
  for (int c = 0; c < 8; ++c) {
    const int index = MeshSourceIndex(c & 1, (c >> 1) & 1, c >> 2);
    // Not the generator's parts: they are not the world's chunks.
    if ((sources.generator_parts >> index & 1) == 0) out->corner_chunks[c] = sources[index];
  }
  out->tree.CopyPacked(scratch_tree, out->arrays());
  out->mesh.CopyPacked(scratch_mesh, out->arrays() + node_bytes);
#ifdef VOXCOL_VALIDATE
  // Expensive: every triangle in exactly one leaf, child boxes bound their subtrees, depth bound.
  if (!out->tree.Validate(out->mesh)) {
    std::fprintf(stderr, "voxcol: kD-tree of chunk (%d, %d, %d) failed validation\n", key.x, key.y,
                 key.z);
    std::abort();
  }
#endif
  // The edge flags a contact query may add later (ChunkCollision::EdgeFlags) are counted now.
  out->bytes = uint32_t(out->mesh.DataBytes() + out->tree.DataBytes() +
                        out->mesh.triangle_count() * sizeof(uint16_t) + sizeof(ChunkCollision) +
                        kEntryOverhead);
  return ChunkCollisionPtr(std::move(out));
}

ChunkCollisionCache::Entry* ChunkCollisionCache::FindOrAdd(const ChunkKey& key, bool* cacheable) {
  // The version our build will read (the thread's snapshot, else the newest).
  const uint64_t seen_version = world_.LiveReadVersion();
  std::atomic<Entry*>* slot = SlotFor(key, true);  // null outside the table: never cached
  Shard& shard = ShardFor(key);
  absl::MutexLock lock(&shard.mu);
  if (slot != nullptr) {
    if (Entry* found = slot->load(std::memory_order_relaxed); found != nullptr) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      *cacheable = true;
      return found;
    }
  }
  auto* entry = new Entry(key);
  // An edit published after we read the version may have invalidated what we are about to build.
  *cacheable = slot != nullptr && shard.invalidated_version <= seen_version;
  if (*cacheable) {
    slot->store(entry, std::memory_order_release);
    ++shard.entries;
  }
  return entry;
}

const ChunkCollision* ChunkCollisionCache::Ensure(Entry* entry, bool cacheable, bool* built) {
  bool did_build = false;
  Entry* shared = nullptr;
  absl::call_once(entry->once, [&] {
    entry->data = Build(entry->key, &entry->solid_cells);
    // Without a triangle: the shared record's data, before anyone sees the built copy.
    shared = MeshlessRecord(*entry->data, entry->solid_cells);
    if (shared != nullptr) entry->data = shared->data;
    entry->source = entry->data->source();
    entry->preview = ChunkPreview(*entry->data);
    entry->ready.store(entry->data.get(), std::memory_order_release);
    did_build = true;
  });
  if (did_build) {
    builds_.fetch_add(1, std::memory_order_relaxed);
    if (entry->past) {
      AccountPast(entry);
    } else if (cacheable) {
      if (shared != nullptr) {
        Share(ShardFor(entry->key), entry, shared);
      } else {
        Account(ShardFor(entry->key), entry);
      }
    } else {
      Retire(entry);  // private to this call; freed after the caller's scope
    }
  }
  if (built) *built = did_build;
  return entry->data.get();
}

void ChunkCollisionCache::Account(Shard& shard, Entry* entry) {
  absl::MutexLock lock(&shard.mu);
  std::atomic<Entry*>* slot = SlotFor(entry->key, false);
  if (slot == nullptr || slot->load(std::memory_order_relaxed) != entry)
    return;  // invalidated meanwhile
  entry->bytes = entry->data->bytes;
  shard.bytes += entry->bytes;
  entry->referenced.store(true, std::memory_order_relaxed);
  entry->ring_pos = shard.ring.size();
  shard.ring.push_back(entry);
  EvictOver(shard);
}

ChunkCollisionCache::Entry* ChunkCollisionCache::MeshlessRecord(const ChunkCollision& c,
                                                                const SolidCells& cells) const {
  if (c.mesh.triangle_count() != 0) return nullptr;
  for (int solid = 0; solid < 2; ++solid) {
    if (cells == meshless_[solid]->solid_cells) return meshless_[solid].get();
  }
  return nullptr;
}

void ChunkCollisionCache::Share(Shard& shard, Entry* entry, Entry* shared) {
  absl::MutexLock lock(&shard.mu);
  std::atomic<Entry*>* slot = SlotFor(entry->key, false);
  if (slot == nullptr || slot->load(std::memory_order_relaxed) != entry)
    return;  // invalidated meanwhile (and retired by Drop)
  slot->store(shared, std::memory_order_release);
  Retire(entry);  // the entry alone: its data is the shared record's
}

void ChunkCollisionCache::EvictOver(Shard& shard) {
  // CLOCK: the hand clears reference bits and evicts the first entry found without one. After two
  // laps without success (readers keep setting bits) it evicts regardless. The new entry goes too
  // if it alone exceeds the budget.
  size_t steps = 0;
  while (shard.bytes > shard_budget_ && !shard.ring.empty()) {
    if (shard.hand >= shard.ring.size()) shard.hand = 0;
    Entry* e = shard.ring[shard.hand];
    if (steps++ < 2 * shard.ring.size() && e->referenced.load(std::memory_order_relaxed)) {
      e->referenced.store(false, std::memory_order_relaxed);
      ++shard.hand;
      continue;
    }
    Drop(shard, e->key);
    evictions_.fetch_add(1, std::memory_order_relaxed);
  }
}

void ChunkCollisionCache::Unring(Shard& shard, Entry* entry) {
  if (entry->ring_pos == kNotListed) return;
  Entry* last = shard.ring.back();
  shard.ring[entry->ring_pos] = last;
  last->ring_pos = entry->ring_pos;
  shard.ring.pop_back();
  entry->ring_pos = kNotListed;
}

bool ChunkCollisionCache::Drop(Shard& shard, const ChunkKey& key) {
  std::atomic<Entry*>* slot = SlotFor(key, false);
  if (slot == nullptr) return false;
  Entry* entry = slot->load(std::memory_order_relaxed);
  if (entry == nullptr) return false;
  slot->store(nullptr, std::memory_order_release);
  Unring(shard, entry);
  shard.bytes -= entry->bytes;
  --shard.entries;
  if (!entry->shared) Retire(entry);
  return true;
}

// ---- Queries ----

ChunkCollisionCache::Entry* ChunkCollisionCache::FindReady(const ChunkKey& key,
                                                           const ReadScope& scope) const {
  Entry* entry = Lookup(key);
  if (entry == nullptr || entry->ready.load(std::memory_order_acquire) == nullptr) return nullptr;
  // An entry built for a version newer than the thread's snapshot is not for this reader.
  if (world_.NewerThanSnapshot(key)) return nullptr;
  if (!entry->referenced.load(std::memory_order_relaxed))
    entry->referenced.store(true, std::memory_order_relaxed);
  scope.shard_data().hits.fetch_add(1, std::memory_order_relaxed);
  return entry;
}

const ChunkCollision* ChunkCollisionCache::FindCached(const ChunkKey& key,
                                                      const ReadScope& scope) const {
  const Entry* entry = FindReady(key, scope);
  return entry != nullptr ? entry->ready.load(std::memory_order_relaxed) : nullptr;
}

ChunkLookup ChunkCollisionCache::Peek(const ChunkKey& key, const ReadScope& scope) const {
  const Entry* entry = FindReady(key, scope);
  if (entry == nullptr) return {};
  return {entry->ready.load(std::memory_order_relaxed), &entry->preview};
}

namespace {
// What FindCells answers from a built entry (a template: Entry is private to the cache).
template <typename TableEntry>
ChunkCells CellsOf(const TableEntry& entry) {
  return {{entry.ready.load(std::memory_order_relaxed), &entry.preview},
          &entry.solid_cells,
          entry.source};
}
}  // namespace

ChunkCells ChunkCollisionCache::FindCells(const ChunkKey& key, const ReadScope& scope) const {
  const Entry* entry = FindReady(key, scope);
  return entry == nullptr ? ChunkCells{} : CellsOf(*entry);
}

ChunkCells ChunkCollisionCache::FindOrBuildCells(const ChunkKey& key, const ReadScope& scope,
                                                 absl::Status* error, bool* built) {
  if (const Entry* entry = FindReady(key, scope)) {
    if (built) *built = false;
    return CellsOf(*entry);
  }
  bool cacheable = false;
  Entry* entry = LoadedEntryFor(key, &cacheable, error);
  if (entry == nullptr) return {};
  // A private or at once evicted entry is retired, not freed: it outlives the caller's scope.
  Ensure(entry, cacheable, built);
  return CellsOf(*entry);
}

ChunkCollisionCache::Entry* ChunkCollisionCache::FindOrBuildFor(const ChunkKey& key,
                                                                bool* cacheable) {
  // A reader whose snapshot is older than an edit near `key` builds a private entry from its
  // snapshot's chunks (Build reads through World::LoadChunk) and caches nothing. Checked before
  // (no table entry for a stale build) and after (the table's entry may be from a newer reader).
  if (!world_.NewerThanSnapshot(key)) {
    Entry* entry = FindOrAdd(key, cacheable);
    // A private entry (not cacheable) is built from this snapshot anyway.
    if (!*cacheable || !world_.NewerThanSnapshot(key)) return entry;
  }
  *cacheable = false;
  if (Entry* past = PastEntry(key)) return past;
  return new Entry(key);
}

ChunkCollisionCache::Entry* ChunkCollisionCache::LoadedEntryFor(const ChunkKey& key,
                                                                bool* cacheable,
                                                                absl::Status* error) {
  // Never mesh a chunk whose stored record fails to load: it would read as air.
  if (absl::StatusOr<ChunkPtr> loaded = world_.LoadChunk(key); !loaded.ok()) {
    *error = loaded.status();
    return nullptr;
  }
  return FindOrBuildFor(key, cacheable);
}

ChunkCollisionCache::Entry* ChunkCollisionCache::PastEntry(const ChunkKey& key) {
  const uint64_t until = past_budget_ != 0 ? world_.SnapshotDataUntil(key) : 0;
  if (until == 0) return nullptr;
  {
    absl::ReaderMutexLock lock(&past_mu_);
    auto it = past_.find(PastKey{key, until});
    if (it != past_.end()) return it->second;
  }
  absl::MutexLock lock(&past_mu_);
  auto [it, inserted] = past_.emplace(PastKey{key, until}, nullptr);
  if (inserted) {
    it->second = new Entry(key);
    it->second->past = true;
    it->second->until = until;
    past_order_.push_back(it->first);
  }
  return it->second;
}

void ChunkCollisionCache::AccountPast(Entry* entry) {
  std::vector<Entry*> evicted;
  {
    absl::MutexLock lock(&past_mu_);
    auto self = past_.find(PastKey{entry->key, entry->until});
    if (self == past_.end() || self->second != entry) return;  // evicted while it was built
    entry->bytes = entry->data->bytes;
    past_bytes_ += entry->bytes;
    while (past_bytes_ > past_budget_ && past_order_.size() > 1) {
      auto old = past_.find(past_order_.front());
      past_order_.pop_front();
      past_bytes_ -= old->second->bytes;  // 0 while not built: counted by its own AccountPast
      old->second->bytes = 0;
      evicted.push_back(old->second);
      past_.erase(old);
    }
  }
  // Readers that found them hold a ReadScope: freed after it, as table evictions.
  for (Entry* e : evicted) Retire(e);
}

const ChunkCollision* ChunkCollisionCache::Find(const ChunkKey& key, const ReadScope& scope,
                                                absl::Status* error, bool* built) {
  if (const Entry* entry = FindReady(key, scope)) {
    const ChunkCollision* data = entry->ready.load(std::memory_order_relaxed);
    entry->preview.Prefetch(data);
    if (built) *built = false;
    return data;
  }
  bool cacheable = false;
  Entry* entry = LoadedEntryFor(key, &cacheable, error);
  return entry == nullptr ? nullptr : Ensure(entry, cacheable, built);
}

ChunkCollisionPtr ChunkCollisionCache::Get(const ChunkKey& key, bool* built) {
  ReadScope scope(*this);
  if (const Entry* entry = FindReady(key, scope)) {
    if (built) *built = false;
    return entry->data;
  }
  bool cacheable = false;
  Entry* entry = FindOrBuildFor(key, &cacheable);
  Ensure(entry, cacheable, built);
  return entry->data;
}

ChunkCollisionPtr ChunkCollisionCache::GetChecked(const ChunkKey& key, absl::Status* error,
                                                  bool* built) {
  ReadScope scope(*this);
  if (const Entry* entry = FindReady(key, scope)) {
    if (built) *built = false;
    return entry->data;
  }
  bool cacheable = false;
  Entry* entry = LoadedEntryFor(key, &cacheable, error);
  if (entry == nullptr) return nullptr;
  Ensure(entry, cacheable, built);
  return entry->data;
}

void ChunkCollisionCache::AfterPublish(const CommittedEdit& edit) {
  for (const ChunkChange& change : edit.result.changes) {
    IntBox keys = MeshChunksReading(change.changed_voxels);
    // Also the entries that pin the changed chunk as a corner chunk (ChunkCollision::corner_chunks:
    // the chunk itself and the ones one below it), even where their meshes do not read the changed
    // voxels: a pin must not keep an old version of a chunk alive.
    const ChunkKey changed = ChunkOf(change.changed_voxels.min);
    keys.min = {std::min(keys.min.x, changed.x - 1), std::min(keys.min.y, changed.y - 1),
                std::min(keys.min.z, changed.z - 1)};
    for (int y = keys.min.y; y < keys.max.y; ++y)
      for (int z = keys.min.z; z < keys.max.z; ++z)
        for (int x = keys.min.x; x < keys.max.x; ++x) {
          Shard& shard = ShardFor({x, y, z});
          absl::MutexLock lock(&shard.mu);
          shard.invalidated_version = std::max(shard.invalidated_version, edit.result.version);
          if (Drop(shard, {x, y, z})) invalidations_.fetch_add(1, std::memory_order_relaxed);
        }
  }
}

ChunkCollisionCacheStats ChunkCollisionCache::stats() const {
  ChunkCollisionCacheStats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  readers_.ForEachShard(
      [&s](const auto& shard) { s.hits += shard.data.hits.load(std::memory_order_relaxed); });
  s.builds = builds_.load(std::memory_order_relaxed);
  s.evictions = evictions_.load(std::memory_order_relaxed);
  s.invalidations = invalidations_.load(std::memory_order_relaxed);
  for (Shard& shard : shards_) {
    absl::MutexLock lock(&shard.mu);
    s.bytes += shard.bytes;
    s.entries += shard.entries;
  }
  absl::MutexLock lock(&past_mu_);
  s.past_bytes = past_bytes_;
  return s;
}

}  // namespace voxcol
