// The broadphase index: chunk masks for a whole World, built lazily and kept current under edits.
//
// Storage: one atomic pointer per chunk of the (finite) world grid. Empty and FULL chunks point at
// shared constant records, so they cost only their slot; a partial chunk owns a record holding the
// masks that are not all zero (often only the solid one) and the chunk snapshot they describe.
//
// Concurrency: readers take a ReadScope (two atomic increments, never a lock) and then load slots.
// A missing record is built by the reader and installed with a compare-and-swap from null, so
// concurrent readers never wait for each other; losers of the race discard their copy. Edits
// replace records under a writer mutex; a replaced record is retired and freed only once every
// reader that could still hold it has left its scope (two-epoch reclamation).
//
// Class table: next to the slots, four bits per chunk say what the slot holds when that is known:
// a shared record (empty, FULL solid, FULL water) or a partial record and the classes it may touch.
// Empty and FULL chunks, and the question "may this chunk touch class C", are then answered from
// the table (0.5 byte per chunk, mostly cache resident) without loading the slot or the record, so
// a ray stepping over empty or FULL chunks costs no memory miss. A slot's code only ever describes
// the record in the slot: writers clear the code, swap the slot and set the new code under
// class_mu_, and a lazy builder sets its code under class_mu_ only while its record is still in
// the slot. A code without kCodeKnown means "look at the slot"; one value of those notes that a
// query met the chunk and went without its record (NoteMet), so that the next one builds it.
//
// Versioning: a partial record carries the ChunkPtr it was built from, and queries that test
// voxels (the blocky raycast) read voxels from that snapshot, never from the live world. So the
// mask a reader pairs with voxel data is always built from exactly that data: never older. Empty
// and FULL records carry no snapshot; an empty record is never paired with voxels (the chunk is
// skipped) and a FULL record skips nothing, so any snapshot is safe with it. Edits rebuild exactly
// the dirty chunks of each EditResult, after the new chunks are published (AfterPublish), reading
// the published data; until then readers see the previous, self-consistent record.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/macros.h"
#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "core/broadphase/chunk_masks.h"
#include "core/epoch_readers.h"
#include "core/voxel/world.h"

namespace voxcol {

// Material classes a query asks about, as bit flags.
enum MaskClass : uint8_t { kClassSolid = 1, kClassWater = 2, kClassAny = 3 };

// One chunk's broadphase data as stored by the index. Immutable once published.
class MaskRecord {
 public:
  // The shared record of chunks with no geometry (and of chunks outside the world).
  static const MaskRecord& Empty();

  MaskKind kind() const { return kind_; }
  // Solid / water slice masks (8 words, layout of SliceMasks). All zeros for a class the chunk
  // lacks, all ones for a FULL chunk of that class.
  const uint64_t* solid() const;
  const uint64_t* water() const;
  // Slice masks for the classes in `classes` ORed together, written to out[0..8).
  void Combined(uint8_t classes, uint64_t* out) const;
  // True when some voxel of the chunk may hold geometry of a class in `classes`.
  bool MayTouch(uint8_t classes) const { return (classes_ & classes) != 0; }
  // The chunk the masks were built from (partial records only; null otherwise).
  const ChunkPtr& chunk() const { return chunk_; }

  // Heap bytes of a partial record (0 for the shared constants).
  size_t HeapBytes() const;

 private:
  friend class BroadphaseIndex;
  constexpr MaskRecord(MaskKind kind, uint8_t classes) : kind_(kind), classes_(classes) {}
  // The shared records: [0] empty, [1] FULL solid, [2] FULL water (index = classes_).
  static const MaskRecord kShared[3];
  static const MaskRecord* Make(const ChunkMasks& masks, ChunkPtr chunk);
  static void Destroy(const MaskRecord* record);
  bool IsShared() const { return kind_ != MaskKind::kPartial; }
  const uint64_t* words() const { return reinterpret_cast<const uint64_t*>(this + 1); }

  ChunkPtr chunk_;
  MaskKind kind_;
  uint8_t classes_;                        // kClassSolid / kClassWater bits that may be touched
  uint8_t has_solid_ = 0, has_water_ = 0;  // which masks follow the header
};

// Memory used by the index. Bits per voxel are over the partial chunks (non-empty, non-full).
struct BroadphaseMemory {
  size_t slot_bytes = 0;    // the per-chunk pointer array and the class table (4 bits per chunk)
  size_t record_bytes = 0;  // partial records: header + masks, as requested from the allocator
  size_t mask_bytes = 0;    // the mask words alone
  size_t built_chunks = 0, empty_chunks = 0, full_chunks = 0, partial_chunks = 0;
  size_t met_chunks = 0;  // chunks without a record that a query noted meeting (NoteMet)
  size_t total_bytes() const { return slot_bytes + record_bytes; }
  double MaskBitsPerVoxel() const;   // mask_bytes over partial chunks
  double TotalBitsPerVoxel() const;  // total_bytes over partial chunks
};

class BroadphaseIndex : public EditObserver {
 public:
  // Precondition: `world` outlives the index. Register the index with world.AddObserver(&index)
  // (before serving) so that edits keep it current, or call Update() yourself after each edit.
  // The world has no RemoveObserver: once registered, the index must outlive every later edit.
  explicit BroadphaseIndex(const World& world);
  ~BroadphaseIndex() override;
  BroadphaseIndex(const BroadphaseIndex&) = delete;
  BroadphaseIndex& operator=(const BroadphaseIndex&) = delete;

  const World& world() const { return world_; }

  // Pins the records a thread loads for as long as it lives. Scopes may nest. The outermost
  // scope of a thread on an index counts the thread as a reader (two atomic read-modify-writes,
  // full barriers on x86); a scope nested in it on the same index relies on that count and costs
  // no atomic operation (core/epoch_readers.h). So a caller that runs many queries in a row (a
  // query batch) holds one scope around them, and their own scopes nest in it.
  class ReadScope : public EpochReaders<BroadphaseIndex>::Scope {
   public:
    explicit ReadScope(const BroadphaseIndex& index) : Scope(index.readers_) {}
  };

  // The record of chunk `key`, building it on first use. Chunks outside the world are empty. The
  // reference stays valid while `scope` lives. Thread-safe.
  // Under a World::ReadSnapshot, the record describes the snapshot's version: where an edit
  // published since may have rebuilt the slot, a private record is built from the snapshot's
  // chunks (and freed after `scope`).
  const MaskRecord& Get(const ChunkKey& key, const ReadScope& scope) const {
    if (!InBounds(key)) return MaskRecord::Empty();
    const size_t i = SlotIndex(key);
    const unsigned code = ClassCode(i);
    const MaskRecord* record;
    if ((code & kCodeShared) != 0) {
      record = &MaskRecord::kShared[code & 3];
    } else {
      std::atomic<const MaskRecord*>& slot = slots_[i];
      record = slot.load(std::memory_order_acquire);
      if (record == nullptr) record = &BuildSlot(slot, key);  // built once, then a single load
    }
    if (world_.NewerThanSnapshot(key)) return SnapshotRecord(key);
    return *record;
  }

  // Get(key, scope).MayTouch(classes), answered from the class table when it knows the chunk
  // (every built chunk): no slot or record load. Thread-safe.
  bool MayTouch(const ChunkKey& key, uint8_t classes, const ReadScope& scope) const {
    bool touch;
    return TableKnows(key, classes, &touch) ? touch : Get(key, scope).MayTouch(classes);
  }
  // MayTouch from the class table alone: true, with *touch, when the table knows chunk `key` for
  // the calling thread's snapshot; false when only the record can tell (or outside the world).
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool TableKnows(const ChunkKey& key, uint8_t classes,
                                               bool* touch) const {
    return InBounds(key) && TableKnowsAt(SlotIndex(key), key, classes, touch);
  }
  // TableKnows for a chunk of the world whose slot a walk has kept (SlotOf, SlotStrides).
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool TableKnowsAt(size_t slot, const ChunkKey& key, uint8_t classes,
                                                 bool* touch) const {
    ABSL_ASSERT(InBounds(key) && slot == SlotIndex(key));
    const unsigned code = ClassCode(slot);
    if ((code & kCodeKnown) == 0 || world_.NewerThanSnapshot(key)) return false;
    *touch = (code & classes) != 0;
    return true;
  }
  // The class table's layout, for walks that step from chunk to chunk (smooth_walk::ChunkWalk):
  // the slot of chunk `key` (of the world's; outside, a number that steps like one) and how far a
  // step of one chunk along x, y or z moves it.
  size_t SlotOf(const ChunkKey& key) const { return SlotIndex(key); }
  std::array<size_t, 3> SlotStrides() const {
    return {1, size_t(chunk_size_.z) * size_t(chunk_size_.x), size_t(chunk_size_.x)};
  }

  // For queries that can go without a chunk's record the first time they meet it (a cold ray
  // proves its stretch through the chunk empty, World::ProvenUntouchedSide, or meshes the chunk
  // directly): true when the chunk has no record and no query noted meeting it (NoteMet). A
  // chunk met again builds its record, so that later queries answer from the class table: a
  // proof costs thousands of instructions (and store lookups), the table one load; and a record
  // costs about a mesh, which a cold ray that meshes the chunk anyway need not pay first.
  bool Unmet(const ChunkKey& key) const { return InBounds(key) && ClassCode(SlotIndex(key)) == 0; }
  // Notes that a query met chunk `key` and went without its record, so that Unmet is false from
  // then on. A hint only: a record built later replaces it, and a writer racing with the note may
  // drop it (the chunk then reads as unmet once more). Unmet is also true for a moment while a
  // record is being swapped into the slot; a query then goes without the record once.
  void NoteMet(const ChunkKey& key) const;

  // True when the class table knows chunk `key` as FULL of `cls` (kClassSolid or kClassWater):
  // every voxel of its 10^3 neighbourhood holds that class. False when unknown (not built yet).
  bool KnownFull(const ChunkKey& key, MaskClass cls) const {
    if (!InBounds(key)) return false;
    const unsigned code = ClassCode(SlotIndex(key));
    return code == (kCodeKnown | kCodeShared | cls) && !world_.NewerThanSnapshot(key);
  }

  // Rebuilds the records of result.dirty_chunks from the world's current data. Called by
  // AfterPublish; edits are serialized by the world, and the index serializes its writers too.
  void Update(const EditResult& result);
  void AfterPublish(const CommittedEdit& edit) override { Update(edit.result); }

  // Records built for snapshots of past versions (World::OpenSnapshotAt) are kept, keyed by chunk
  // and World::SnapshotDataUntil, up to about `bytes` (oldest dropped first; 0: none are kept, each
  // read builds its own). Default 16 MiB. Call before serving.
  void SetPastRecordBudget(size_t bytes) { past_budget_ = bytes; }
  size_t past_record_bytes() const;

  // Builds every chunk of the world (for memory measurements and warm starts).
  void BuildAll();
  // Walks all slots; approximate while edits run concurrently.
  BroadphaseMemory Memory() const;

 private:
  // chunk_bounds_.Contains(key) from the offset SlotIndex computes too (one unsigned compare per
  // axis: an offset below the bounds wraps to a large one).
  bool InBounds(const ChunkKey& key) const {
    const Int3 k = key - chunk_bounds_.min;
    return (uint32_t(k.x) < uint32_t(chunk_size_.x)) & (uint32_t(k.y) < uint32_t(chunk_size_.y)) &
           (uint32_t(k.z) < uint32_t(chunk_size_.z));
  }
  size_t SlotIndex(const ChunkKey& key) const {  // wraps modulo 2^64 outside the bounds
    const Int3 k = key - chunk_bounds_.min;
    return (size_t(int64_t(k.y)) * size_t(chunk_size_.z) + size_t(int64_t(k.z))) *
               size_t(chunk_size_.x) +
           size_t(int64_t(k.x));
  }
  std::atomic<const MaskRecord*>& Slot(const ChunkKey& key) const { return slots_[SlotIndex(key)]; }

  // Class codes, 4 bits per slot: kCodeKnown | [kCodeShared] | classes. Without kCodeKnown:
  // unknown, either 0 or kCodeMet (NoteMet).
  static constexpr unsigned kCodeKnown = 8, kCodeShared = 4, kCodeMet = 1;
  static unsigned CodeOf(const MaskRecord* record);
  unsigned ClassCode(size_t i) const {
    return unsigned(class_codes_[i >> 4].load(std::memory_order_acquire) >> ((i & 15) * 4)) & 15;
  }
  void SetClassCode(size_t i, unsigned code) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(class_mu_);
  // Swaps slot i to `record` (with its code) and returns the previous record.
  const MaskRecord* Replace(size_t i, const MaskRecord* record);
  const MaskRecord* Build(const ChunkKey& key) const;
  // Building without generating never-edited neighbours (`owners` as in Build: null for those),
  // from ChunkGenerator::ProvenUniform. The shared record of a chunk whose 10^3 neighbourhood is
  // one voxel value; null when that is not shown.
  const MaskRecord* UniformHoodRecord(const ChunkKey& key,
                                      const std::array<ChunkPtr, 27>& owners) const;
  // Fills the null owners: the part of the neighbour that the masks read, generated alone
  // (World::GeneratePart) into a per-thread scratch chunk, valid until the thread's next build.
  void GenerateParts(const ChunkKey& key, std::array<ChunkPtr, 27>* owners) const;
#if VOXCOL_VALIDATE
  // Aborts unless `masks` are those of the world's own chunks around `key`.
  void ValidateAgainstGenerated(const ChunkKey& key, const ChunkMasks& masks) const;
#endif
  // A record of the calling thread's snapshot: from the past-record cache, else built and kept
  // there; uncached ones are retired at once, so they live until the caller's ReadScope ends.
  const MaskRecord& SnapshotRecord(const ChunkKey& key) const;
  // Lazy build of an empty slot; returns whichever record won the race to fill it.
  const MaskRecord& BuildSlot(std::atomic<const MaskRecord*>& slot, const ChunkKey& key) const;
  void Retire(const MaskRecord* record) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(writer_mu_);
  void TryReclaim() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(writer_mu_);

  const World& world_;
  IntBox chunk_bounds_;
  Int3 chunk_size_;  // chunk_bounds_ extent
  size_t slot_count_ = 0;
  std::atomic<const MaskRecord*>* slots_ = nullptr;  // calloc: see the constructor
  // 16 codes per word; zero-filled by calloc, so pages never written stay unallocated.
  std::atomic<uint64_t>* class_codes_ = nullptr;
  size_t class_words_ = 0;
  mutable absl::Mutex class_mu_;  // orders code updates against slot swaps; never held by readers

  // Two-epoch reclamation of replaced and evicted records (core/epoch_readers.h).
  EpochReaders<BroadphaseIndex> readers_;
  mutable absl::Mutex writer_mu_;
  mutable std::vector<const MaskRecord*> retired_[2] ABSL_GUARDED_BY(writer_mu_);

  // Past-version records (SetPastRecordBudget); evicted ones are retired like replaced slots.
  using PastKey = std::pair<ChunkKey, uint64_t>;
  size_t past_budget_ = size_t(16) << 20;
  mutable absl::Mutex past_mu_;  // never held with writer_mu_
  mutable absl::flat_hash_map<PastKey, const MaskRecord*> past_ ABSL_GUARDED_BY(past_mu_);
  mutable std::deque<PastKey> past_order_ ABSL_GUARDED_BY(past_mu_);  // insertion order
  mutable size_t past_bytes_ ABSL_GUARDED_BY(past_mu_) = 0;
};

// Recomputes the masks of `key` voxel by voxel from the world (27 reads per voxel) and compares
// them with `record`. Slow: for tests and VOXCOL_VALIDATE builds. The message names the first
// differing voxel.
absl::Status ValidateMaskRecord(const World& world, const ChunkKey& key, const MaskRecord& record);

}  // namespace voxcol
