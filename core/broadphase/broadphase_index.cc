#include "core/broadphase/broadphase_index.h"

#include <cstdio>
#include <cstdlib>
#include <new>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace voxcol {
namespace {

constexpr uint64_t kZeroWords[kChunkSize] = {};
constexpr uint64_t kOneWords[kChunkSize] = {~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull};

bool AnyBits(const SliceMasks& m) {
  uint64_t any = 0;
  for (uint64_t w : m) any |= w;
  return any != 0;
}

// Slow reference: is voxel `v` (world voxel coordinates) inside the dilated occupancy of a class?
bool DilatedAt(const World& world, const Int3& v, bool water) {
  for (int dy = -1; dy <= 1; ++dy)
    for (int dz = -1; dz <= 1; ++dz)
      for (int dx = -1; dx <= 1; ++dx) {
        Voxel u = world.GetVoxel(v + Int3{dx, dy, dz});
        if (water ? CountsAsWater(u) : CountsAsSolid(u)) return true;
      }
  return false;
}

}  // namespace

// ---- MaskRecord ----

const uint64_t* MaskRecord::solid() const {
  if (kind_ == MaskKind::kFullSolid) return kOneWords;
  return has_solid_ ? words() : kZeroWords;
}

const uint64_t* MaskRecord::water() const {
  if (kind_ == MaskKind::kFullWater) return kOneWords;
  return has_water_ ? words() + kChunkSize * has_solid_ : kZeroWords;
}

void MaskRecord::Combined(uint8_t classes, uint64_t* out) const {
  const uint64_t* s = (classes & kClassSolid) ? solid() : kZeroWords;
  const uint64_t* w = (classes & kClassWater) ? water() : kZeroWords;
  for (int y = 0; y < kChunkSize; ++y) out[y] = s[y] | w[y];
}

size_t MaskRecord::HeapBytes() const {
  if (IsShared()) return 0;
  return sizeof(MaskRecord) + sizeof(uint64_t) * kChunkSize * (has_solid_ + has_water_);
}

// Constant-initialized (constexpr constructor), so usable from any static initializer.
const MaskRecord MaskRecord::kShared[3] = {MaskRecord(MaskKind::kEmpty, 0),
                                           MaskRecord(MaskKind::kFullSolid, kClassSolid),
                                           MaskRecord(MaskKind::kFullWater, kClassWater)};

const MaskRecord& MaskRecord::Empty() { return kShared[0]; }

const MaskRecord* MaskRecord::Make(const ChunkMasks& masks, ChunkPtr chunk) {
  // Shared constants for the cases that need no per-chunk storage.
  if (masks.kind == MaskKind::kEmpty) return &kShared[0];
  if (masks.kind == MaskKind::kFullSolid) return &kShared[kClassSolid];
  if (masks.kind == MaskKind::kFullWater) return &kShared[kClassWater];
  // Header and the non-zero masks in one allocation: solid words first, then water words.
  bool has_solid = AnyBits(masks.solid), has_water = AnyBits(masks.water);
  size_t bytes = sizeof(MaskRecord) + sizeof(uint64_t) * kChunkSize * (has_solid + has_water);
  void* memory = ::operator new(bytes);
  auto* record = new (memory) MaskRecord(
      MaskKind::kPartial, uint8_t((has_solid ? kClassSolid : 0) | (has_water ? kClassWater : 0)));
  record->chunk_ = std::move(chunk);
  record->has_solid_ = has_solid;
  record->has_water_ = has_water;
  auto* words = reinterpret_cast<uint64_t*>(record + 1);
  if (has_solid) std::copy(masks.solid.begin(), masks.solid.end(), words);
  if (has_water) std::copy(masks.water.begin(), masks.water.end(), words + kChunkSize * has_solid);
  return record;
}

void MaskRecord::Destroy(const MaskRecord* record) {
  if (record == nullptr || record->IsShared()) return;
  record->~MaskRecord();
  ::operator delete(const_cast<MaskRecord*>(record));
}

// ---- BroadphaseIndex ----

BroadphaseIndex::BroadphaseIndex(const World& world)
    : world_(world), chunk_bounds_(world.chunk_bounds()) {
  chunk_size_ = chunk_bounds_.max - chunk_bounds_.min;
  slot_count_ = size_t(chunk_bounds_.Volume());
  // Both arrays come from calloc, whose large blocks are fresh zero pages: a page is only made
  // resident when a slot on it is first written, so an idle server holds almost none of it
  // (8192x256x8192 voxels: 268 MiB of slots, ~0 resident until queries reach them). All-zero
  // bytes are a null slot and an unknown class code.
  static_assert(std::is_trivially_default_constructible_v<std::atomic<const MaskRecord*>> &&
                std::atomic<const MaskRecord*>::is_always_lock_free);
  slots_ = static_cast<std::atomic<const MaskRecord*>*>(
      std::calloc(slot_count_, sizeof(std::atomic<const MaskRecord*>)));
  if (slots_ == nullptr) throw std::bad_alloc();
  class_words_ = (slot_count_ + 15) / 16;
  class_codes_ =
      static_cast<std::atomic<uint64_t>*>(std::calloc(class_words_, sizeof(std::atomic<uint64_t>)));
  if (class_codes_ == nullptr) throw std::bad_alloc();
}

BroadphaseIndex::~BroadphaseIndex() {
  std::free(class_codes_);
  for (size_t i = 0; i < slot_count_; ++i) MaskRecord::Destroy(slots_[i].load());
  std::free(slots_);
  {
    absl::MutexLock lock(&past_mu_);
    for (const auto& [key, record] : past_) MaskRecord::Destroy(record);
  }
  absl::MutexLock lock(&writer_mu_);
  for (auto& list : retired_)
    for (const MaskRecord* r : list) MaskRecord::Destroy(r);
}

const MaskRecord* BroadphaseIndex::Build(const ChunkKey& key) const {
  // A chunk whose stored record is corrupt must never read as empty space: a FULL record makes
  // every query visit it, and reading it there reports the load error (DATA_LOSS).
  absl::StatusOr<ChunkPtr> centre = world_.LoadChunk(key);
  if (!centre.ok()) {
    ChunkMasks damaged;
    damaged.kind = MaskKind::kFullSolid;
    return MaskRecord::Make(damaged, nullptr);
  }
  // Hold the 27 chunks while reading them; outside the world they are air. Null: a never-edited
  // neighbour not generated yet (World::PeekChunk).
  std::array<ChunkPtr, 27> owners;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dz = -1; dz <= 1; ++dz)
      for (int dx = -1; dx <= 1; ++dx) {
        const int i = NeighbourIndex(dx, dy, dz);
        if (i == NeighbourIndex(0, 0, 0)) {
          owners[i] = *centre;
          continue;
        }
        const ChunkKey n = key + Int3{dx, dy, dz};
        absl::StatusOr<ChunkPtr> c = world_.PeekChunk(n);
        owners[i] = c.ok() ? *std::move(c) : world_.GetChunk(n);  // a failed load reads as air
      }
  if (const MaskRecord* shared = UniformHoodRecord(key, owners)) return shared;
  GenerateParts(key, &owners);
  ChunkNeighbourhood hood;
  for (int i = 0; i < 27; ++i) hood[i] = owners[i].get();
  ChunkMasks masks = BuildChunkMasks(hood);
#if VOXCOL_VALIDATE
  ValidateAgainstGenerated(key, masks);
#endif
  return MaskRecord::Make(masks, std::move(owners[NeighbourIndex(0, 0, 0)]));
}

void BroadphaseIndex::GenerateParts(const ChunkKey& key, std::array<ChunkPtr, 27>* owners) const {
  // BuildChunkMasks reads only the part of a neighbour inside the 10^3 box: only that part is
  // generated, into a per-thread scratch chunk that lives until the next build on this thread (the
  // masks do not keep neighbours). No proof is asked of it: a proof costs about as much as
  // generating a layer, and the parts read near the surface are seldom uniform (World::
  // ProvenUniform; the whole neighbourhood's proof is UniformHoodRecord's).
  // On the heap: static TLS comes out of every thread's stack, and some threads' stacks are small.
  thread_local std::unique_ptr<std::array<Chunk, 27>> scratch;
  if (scratch == nullptr) scratch = std::make_unique<std::array<Chunk, 27>>();
  for (int i = 0; i < 27; ++i) {
    ChunkPtr& owner = (*owners)[i];
    if (owner != nullptr) continue;
    const Int3 d{i % 3 - 1, i / 9 - 1, i / 3 % 3 - 1};  // NeighbourIndex's order
    Chunk* chunk = &(*scratch)[i];
    world_.GeneratePart(key + d, NeighbourPart(key, d), chunk);
    owner = ChunkPtr(ChunkPtr(), chunk);  // not owned: the scratch outlives the build
  }
}

#if VOXCOL_VALIDATE
void BroadphaseIndex::ValidateAgainstGenerated(const ChunkKey& key, const ChunkMasks& masks) const {
  // Against the world's own chunks (generated where needed), not the generated parts.
  std::array<ChunkPtr, 27> owners;
  ChunkNeighbourhood hood;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dz = -1; dz <= 1; ++dz)
      for (int dx = -1; dx <= 1; ++dx) {
        const int i = NeighbourIndex(dx, dy, dz);
        owners[i] = world_.GetChunk(key + Int3{dx, dy, dz});
        hood[i] = owners[i].get();
      }
  if (absl::Status s = ValidateChunkMasks(hood, masks); !s.ok()) {
    std::fprintf(stderr, "broadphase validation failed for chunk (%d, %d, %d): %s\n", key.x, key.y,
                 key.z, std::string(s.message()).c_str());
    std::abort();
  }
}
#endif

const MaskRecord* BroadphaseIndex::UniformHoodRecord(const ChunkKey& key,
                                                     const std::array<ChunkPtr, 27>& owners) const {
  const Chunk& centre = *owners[NeighbourIndex(0, 0, 0)];
  if (!centre.IsUniform()) return nullptr;
  const Voxel v = centre.voxels[0];
  // Every neighbour either holds v throughout (whatever it is, resident, stored or edited, its
  // voxels are read) or is the generator's content, not generated yet.
  bool generator_part = false;
  for (const ChunkPtr& c : owners) {
    if (c == nullptr) {
      generator_part = true;
    } else if (c.get() != &centre && !(c->voxels[0] == v && c->IsUniform())) {
      return nullptr;
    }
  }
  if (generator_part) {  // the generator must prove v over the whole 10^3 box
    const Int3 origin = ChunkOrigin(key);
    const Int3 past{kChunkSize + 1, kChunkSize + 1, kChunkSize + 1};
    Voxel fill;
    if (!world_.ProvenUniform({origin - Int3{1, 1, 1}, origin + past}, &fill) || fill != v)
      return nullptr;
  }
  ChunkMasks masks;  // kEmpty
  if (CountsAsSolid(v)) masks.kind = MaskKind::kFullSolid;
  if (CountsAsWater(v)) masks.kind = MaskKind::kFullWater;
#if VOXCOL_VALIDATE
  ValidateAgainstGenerated(key, masks);
#endif
  return MaskRecord::Make(masks, nullptr);
}

unsigned BroadphaseIndex::CodeOf(const MaskRecord* record) {
  return kCodeKnown | (record->IsShared() ? kCodeShared : 0) | record->classes_;
}

void BroadphaseIndex::SetClassCode(size_t i, unsigned code) const {
  // Writers of codes hold class_mu_, so a plain read-modify-write cannot lose a neighbour's code;
  // it may drop a neighbour's NoteMet note (set without the lock), which is all a note may suffer.
  std::atomic<uint64_t>& word = class_codes_[i >> 4];
  const int shift = int(i & 15) * 4;
  uint64_t w = word.load(std::memory_order_relaxed);
  w = (w & ~(uint64_t(15) << shift)) | uint64_t(code) << shift;
  word.store(w, std::memory_order_release);
}

void BroadphaseIndex::NoteMet(const ChunkKey& key) const {
  if (!chunk_bounds_.Contains(key)) return;
  // No lock: a compare-and-swap from "unknown" only. Writers of codes (under class_mu_) load and
  // store the word; one that stores after this drops the note, which is all a note may suffer.
  const size_t i = SlotIndex(key);
  std::atomic<uint64_t>& word = class_codes_[i >> 4];
  const int shift = int(i & 15) * 4;
  uint64_t w = word.load(std::memory_order_relaxed);
  while (((w >> shift) & 15) == 0 && !word.compare_exchange_weak(w, w | uint64_t(kCodeMet) << shift,
                                                                 std::memory_order_relaxed)) {
  }
}

const MaskRecord& BroadphaseIndex::BuildSlot(std::atomic<const MaskRecord*>& slot,
                                             const ChunkKey& key) const {
  // Only null is replaced here, so an edit's newer record always wins the race.
  const MaskRecord* built = Build(key);
  const MaskRecord* record = nullptr;
  if (slot.compare_exchange_strong(record, built, std::memory_order_acq_rel)) {
    // An edit may have replaced our record since; its code is then already right.
    absl::MutexLock lock(&class_mu_);
    if (slot.load(std::memory_order_acquire) == built) SetClassCode(SlotIndex(key), CodeOf(built));
    return *built;
  }
  MaskRecord::Destroy(built);
  return *record;
}

const MaskRecord& BroadphaseIndex::SnapshotRecord(const ChunkKey& key) const {
  // Records for the same (key, until) describe the same voxels (World::SnapshotDataUntil).
  const uint64_t until = past_budget_ != 0 ? world_.SnapshotDataUntil(key) : 0;
  if (until != 0) {
    absl::ReaderMutexLock lock(&past_mu_);
    auto it = past_.find(PastKey{key, until});
    if (it != past_.end()) return *it->second;
  }
  // Build reads the chunks through World::LoadChunk, which answers as of the thread's snapshot.
  const MaskRecord* built = Build(key);
  std::vector<const MaskRecord*> retire;  // the caller's ReadScope keeps the epoch from them
  if (until == 0) {
    retire.push_back(built);
  } else {
    absl::MutexLock lock(&past_mu_);
    auto [it, inserted] = past_.emplace(PastKey{key, until}, built);
    if (!inserted) {
      retire.push_back(built);  // another reader built it meanwhile
      built = it->second;
    } else {
      past_order_.push_back(it->first);
      past_bytes_ += built->HeapBytes() + sizeof(PastKey) * 2 + sizeof(void*);
      while (past_bytes_ > past_budget_ && past_order_.size() > 1) {
        auto old = past_.find(past_order_.front());
        past_order_.pop_front();
        past_bytes_ -= old->second->HeapBytes() + sizeof(PastKey) * 2 + sizeof(void*);
        retire.push_back(old->second);
        past_.erase(old);
      }
    }
  }
  absl::MutexLock lock(&writer_mu_);
  for (const MaskRecord* r : retire) Retire(r);
  TryReclaim();
  return *built;
}

size_t BroadphaseIndex::past_record_bytes() const {
  absl::MutexLock lock(&past_mu_);
  return past_bytes_;
}

const MaskRecord* BroadphaseIndex::Replace(size_t i, const MaskRecord* record) {
  // Clear the code first: a reader that saw the new record in the slot can then never read the
  // old code afterwards.
  absl::MutexLock lock(&class_mu_);
  SetClassCode(i, 0);
  const MaskRecord* old = slots_[i].exchange(record, std::memory_order_acq_rel);
  SetClassCode(i, CodeOf(record));
  return old;
}

void BroadphaseIndex::Update(const EditResult& result) {
  absl::MutexLock lock(&writer_mu_);
  for (const ChunkKey& key : result.dirty_chunks) {
    if (!chunk_bounds_.Contains(key)) continue;
    // Store even where nothing was built yet: a lazy builder that read pre-edit data can then
    // no longer install its stale record (its compare-and-swap from null fails).
    Retire(Replace(SlotIndex(key), Build(key)));
  }
  TryReclaim();
}

void BroadphaseIndex::Retire(const MaskRecord* record) const {
  if (record != nullptr && !record->IsShared()) retired_[readers_.RetireList()].push_back(record);
}

void BroadphaseIndex::TryReclaim() const { readers_.Reclaim(retired_, &MaskRecord::Destroy); }

void BroadphaseIndex::BuildAll() {
  ReadScope scope(*this);
  for (int y = chunk_bounds_.min.y; y < chunk_bounds_.max.y; ++y)
    for (int z = chunk_bounds_.min.z; z < chunk_bounds_.max.z; ++z)
      for (int x = chunk_bounds_.min.x; x < chunk_bounds_.max.x; ++x) Get({x, y, z}, scope);
}

BroadphaseMemory BroadphaseIndex::Memory() const {
  ReadScope scope(*this);
  BroadphaseMemory m;
  m.slot_bytes = slot_count_ * sizeof(slots_[0]) + class_words_ * sizeof(class_codes_[0]);
  for (size_t i = 0; i < slot_count_; ++i) {
    const MaskRecord* r = slots_[i].load(std::memory_order_acquire);
    if (r == nullptr) {
      m.met_chunks += ClassCode(i) == kCodeMet;
      continue;
    }
    ++m.built_chunks;
    switch (r->kind()) {
      case MaskKind::kEmpty:
        ++m.empty_chunks;
        break;
      case MaskKind::kFullSolid:
      case MaskKind::kFullWater:
        ++m.full_chunks;
        break;
      case MaskKind::kPartial:
        ++m.partial_chunks;
        m.record_bytes += r->HeapBytes();
        m.mask_bytes += r->HeapBytes() - sizeof(MaskRecord);
        break;
    }
  }
  return m;
}

double BroadphaseMemory::MaskBitsPerVoxel() const {
  return partial_chunks == 0 ? 0.0
                             : 8.0 * double(mask_bytes) / double(partial_chunks * kChunkVoxels);
}

double BroadphaseMemory::TotalBitsPerVoxel() const {
  return partial_chunks == 0 ? 0.0
                             : 8.0 * double(total_bytes()) / double(partial_chunks * kChunkVoxels);
}

absl::Status ValidateMaskRecord(const World& world, const ChunkKey& key, const MaskRecord& record) {
  Int3 origin = ChunkOrigin(key);
  for (int y = 0; y < kChunkSize; ++y)
    for (int z = 0; z < kChunkSize; ++z)
      for (int x = 0; x < kChunkSize; ++x) {
        int bit = x | z << kChunkBits;
        Int3 v = origin + Int3{x, y, z};
        bool solid = record.solid()[y] >> bit & 1, water = record.water()[y] >> bit & 1;
        if (solid != DilatedAt(world, v, false) || water != DilatedAt(world, v, true)) {
          return absl::InternalError(absl::StrCat("mask mismatch at voxel (", v.x, ", ", v.y, ", ",
                                                  v.z, "): solid bit ", solid, ", water bit ",
                                                  water));
        }
      }
  return absl::OkStatus();
}

}  // namespace voxcol
