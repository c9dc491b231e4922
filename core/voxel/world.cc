#include "core/voxel/world.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/voxel/remembered_parts.h"

namespace voxcol {

absl::Status ValidateWorldConfig(const WorldConfig& config) {
  const char* axes[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    int32_t s = config.size_voxels[i];
    // 2^20 voxels per axis keeps every voxel index and product well inside int32/int64.
    if (s <= 0 || s % kChunkSize != 0 || s > (1 << 20)) {
      return absl::InvalidArgumentError(absl::StrCat("world size.", axes[i],
                                                     " must be a positive multiple of ", kChunkSize,
                                                     " up to 1048576, got ", s));
    }
  }
  if (!std::isfinite(config.voxel_size) || config.voxel_size <= 0 || config.voxel_size > 1e4f) {
    return absl::InvalidArgumentError(
        absl::StrCat("voxel_size must be finite and in (0, 1e4], got ", config.voxel_size));
  }
  return absl::OkStatus();
}

IntBox WorldVoxelBounds(const WorldConfig& config) {
  Int3 half{config.size_voxels.x / 2, config.size_voxels.y / 2, config.size_voxels.z / 2};
  return {{-half.x, -half.y, -half.z}, half};
}

World::World(const WorldConfig& config, std::unique_ptr<ChunkGenerator> generator)
    : config_(config), generator_(std::move(generator)), air_(UniformChunk(Voxel{})) {
  world_internal::world_epoch.fetch_add(1, std::memory_order_acq_rel);
  voxel_bounds_ = WorldVoxelBounds(config);
  // Max exclusive: the chunk holding the last voxel, plus one (a world whose size is not a multiple
  // of the chunk size on an axis ends inside a chunk there).
  chunk_bounds_ = {ChunkOf(voxel_bounds_.min),
                   ChunkOf(voxel_bounds_.max - Int3{1, 1, 1}) + Int3{1, 1, 1}};
  const size_t chunks = size_t(chunk_bounds_.Volume());
  uniform_page_count_ = (chunks + (size_t(1) << kUniformPageBits) - 1) >> kUniformPageBits;
  uniform_pages_ = std::make_unique<std::atomic<std::atomic<uint32_t>*>[]>(uniform_page_count_);
  for (size_t i = 0; i < uniform_page_count_; ++i) uniform_pages_[i].store(nullptr);
}

World::~World() {
  world_internal::world_epoch.fetch_add(1, std::memory_order_acq_rel);
  for (size_t i = 0; i < uniform_page_count_; ++i) delete[] uniform_pages_[i].load();
}

void World::SetUniformCode(const ChunkKey& key, const Chunk* chunk) const {
  if (!chunk_bounds_.Contains(key)) return;
  uint32_t code = 0;
  if (chunk != nullptr && chunk->IsUniform()) {
    const Voxel v = chunk->voxels[0];
    UniformChunk(v);  // interned before any reader can see the code (InternedUniformChunk)
    code = kUniformBit | uint32_t(v.material) << 8 | v.occupancy;
  }
  const size_t i = ChunkIndex(key);
  std::atomic<std::atomic<uint32_t>*>& dir = uniform_pages_[i >> kUniformPageBits];
  std::atomic<uint32_t>* page = dir.load(std::memory_order_acquire);
  if (page == nullptr) {
    if (code == 0) return;
    // Shards share pages, so two writers may race to create one: the first install wins.
    auto* fresh = new std::atomic<uint32_t>[size_t(1) << kUniformPageBits]();
    if (dir.compare_exchange_strong(page, fresh, std::memory_order_acq_rel)) {
      page = fresh;
    } else {
      delete[] fresh;
    }
  }
  page[i & ((1u << kUniformPageBits) - 1)].store(code, std::memory_order_release);
}

Aabb World::world_bounds() const {
  float h = config_.voxel_size;
  return {Vec3(voxel_bounds_.min.x, voxel_bounds_.min.y, voxel_bounds_.min.z) * h,
          Vec3(voxel_bounds_.max.x, voxel_bounds_.max.y, voxel_bounds_.max.z) * h};
}

World::Shard& World::ShardFor(const ChunkKey& key) const {
  // Cheap spatial hash; neighbouring chunks land in different shards.
  uint32_t h =
      uint32_t(key.x) * 73856093u ^ uint32_t(key.y) * 19349663u ^ uint32_t(key.z) * 83492791u;
  return shards_[h % kShards];
}

absl::StatusOr<ChunkPtr> World::LoadChunk(const ChunkKey& key) const {
  return Load(key, kGenerate);
}

absl::StatusOr<ChunkPtr> World::Load(const ChunkKey& key, LoadMode mode) const {
  if (!chunk_bounds_.Contains(key)) return air_;
  const ReadSnapshot* snapshot = ThreadSnapshot();
  if (snapshot == nullptr) return LoadLatest(key, mode);
  if (snapshot->view_ != nullptr) {
    if (const ChunkPtr* old = snapshot->view_->FindChunk(key)) return *old;
  }
  const uint64_t version = snapshot->live_version_;
  if (publishing_version_.load(std::memory_order_acquire) > version) {
    if (ChunkPtr old = HistoryAt(key, version)) return old;
  }
  absl::StatusOr<ChunkPtr> latest = LoadLatest(key, mode);
  // Look again after the read: an edit that replaced the chunk (in memory or in the store) before
  // we read it recorded the history and then set publishing_version_, both before the swap.
  if (publishing_version_.load(std::memory_order_acquire) > version) {
    if (ChunkPtr old = HistoryAt(key, version)) return old;
  }
  return latest;
}

absl::StatusOr<ChunkPtr> World::LoadLatest(const ChunkKey& key, LoadMode mode) const {
  if (const uint32_t code = UniformCode(key)) return InternedUniformChunk(VoxelOfCode(code));
  Shard& shard = ShardFor(key);
  while (true) {
    uint64_t evictions;
    {
      absl::ReaderMutexLock lock(&shard.mu);
      auto it = shard.chunks.find(key);
      if (it != shard.chunks.end()) return it->second;
      evictions = shard.evictions;
    }
    // Load or generate outside the lock: both are deterministic, so a race only wastes work.
    ChunkPtr result;
    if (loader_ != nullptr) {
      absl::StatusOr<ChunkPtr> stored = loader_->Load(key);
      if (!stored.ok()) return stored.status();
      result = *std::move(stored);
    }
    if (result == nullptr) {
      if (mode == kPeek) return nullptr;  // the generator's content; nothing made resident
      result = Generated(key);
    }
    absl::MutexLock lock(&shard.mu);
    auto it = shard.chunks.find(key);
    if (it != shard.chunks.end())
      return it->second;  // published or loaded meanwhile: newer or equal
    // An eviction since our lookup may have dropped a chunk published after our store read; our
    // copy could then be stale, so read again.
    if (shard.evictions != evictions) continue;
    shard.chunks.emplace(key, result);
    SetUniformCode(key, result.get());
    EvictOver(shard, key);
    return result;
  }
}

void World::EvictOver(Shard& shard, const ChunkKey& keep) const {
  if (shard_budget_ == 0 || shard.chunks.size() <= shard_budget_) return;
  // Arbitrary victims (hash order): cheap, and a chunk costs only one store read or one generation
  // to bring back. Every published chunk is in the store, so nothing is lost.
  auto it = shard.chunks.begin();
  while (it != shard.chunks.end() && shard.chunks.size() > shard_budget_) {
    if (it->first == keep) {
      ++it;
      continue;
    }
    SetUniformCode(it->first, nullptr);
    shard.chunks.erase(it++);
  }
  ++shard.evictions;
}

void World::SetResidentBudget(size_t bytes) {
  shard_budget_ = bytes == 0 ? 0 : std::max<size_t>(1, bytes / sizeof(Chunk) / kShards);
}

void World::RestoreVersion(uint64_t version) {
  absl::MutexLock lock(&edit_mu_);
  staged_version_ = version;
  version_.store(version, std::memory_order_release);
}

absl::StatusOr<ChunkPtr> World::StagedOrLoaded(const ChunkKey& key) const {
  auto it = staged_.find(key);
  if (it != staged_.end()) return it->second;
  // Edits build on the newest content even on a thread that holds a snapshot.
  return chunk_bounds_.Contains(key) ? LoadLatest(key) : air_;
}

ChunkPtr World::GetChunk(const ChunkKey& key) const {
  absl::StatusOr<ChunkPtr> chunk = LoadChunk(key);
  return chunk.ok() ? *std::move(chunk) : air_;
}

Voxel World::GetVoxel(const Int3& voxel) const {
  if (!voxel_bounds_.Contains(voxel)) return Voxel{};
  const ChunkKey key = ChunkOf(voxel);
  const Voxel latest = LatestVoxel(key, voxel);
  if (world_internal::current_snapshot == nullptr) return latest;
  const ReadSnapshot* snapshot = ThreadSnapshot();
  if (snapshot == nullptr) return latest;
  if (snapshot->view_ != nullptr) {
    if (const ChunkPtr* old = snapshot->view_->FindChunk(key)) return (*old)->At(LocalOf(voxel));
  }
  // As in LoadChunk: read first, then check whether an edit newer than the snapshot began.
  if (publishing_version_.load(std::memory_order_acquire) > snapshot->live_version_) {
    if (ChunkPtr old = HistoryAt(key, snapshot->live_version_)) return old->At(LocalOf(voxel));
  }
  return latest;
}

Voxel World::LatestVoxel(const ChunkKey& key, const Int3& voxel) const {
  if (const uint32_t code = UniformCode(key)) return VoxelOfCode(code);
  {
    // Resident: read the voxel under the shard's reader lock, without copying the ChunkPtr (two
    // atomic reference-count updates on a pointer other threads share).
    Shard& shard = ShardFor(key);
    absl::ReaderMutexLock lock(&shard.mu);
    auto it = shard.chunks.find(key);
    if (it != shard.chunks.end()) return it->second->At(LocalOf(voxel));
  }
  absl::StatusOr<ChunkPtr> chunk = LoadLatest(key);
  return chunk.ok() ? (*chunk)->At(LocalOf(voxel)) : Voxel{};
}

Int3 World::VoxelAt(const Vec3& p) const {
  float inv = 1.0f / config_.voxel_size;
  return {FloorToInt(p.x * inv), FloorToInt(p.y * inv), FloorToInt(p.z * inv)};
}

Vec3 World::VoxelCenter(const Int3& v) const {
  return Vec3(v.x + 0.5f, v.y + 0.5f, v.z + 0.5f) * config_.voxel_size;
}

bool World::ContainsPoint(const Vec3& p) const {
  Aabb b = world_bounds();
  return IsFinite(p) && p.x >= b.min.x && p.y >= b.min.y && p.z >= b.min.z && p.x < b.max.x &&
         p.y < b.max.y && p.z < b.max.z;
}

void World::Publish(const ChunkKey& key, ChunkPtr chunk) {
  Shard& shard = ShardFor(key);
  absl::MutexLock lock(&shard.mu);
  // Clear the code before the map changes: a reader that found the new chunk in the shard can
  // then never read the old chunk's code afterwards.
  SetUniformCode(key, nullptr);
  const Chunk* raw = chunk.get();
  shard.chunks[key] = std::move(chunk);
  SetUniformCode(key, raw);
}

size_t World::resident_chunks() const {
  size_t n = 0;
  for (Shard& shard : shards_) {
    absl::ReaderMutexLock lock(&shard.mu);
    n += shard.chunks.size();
  }
  return n;
}

std::vector<ChunkKey> World::ResidentKeys() const {
  std::vector<ChunkKey> keys;
  for (Shard& shard : shards_) {
    absl::ReaderMutexLock lock(&shard.mu);
    for (const auto& [key, chunk] : shard.chunks) keys.push_back(key);
  }
  return keys;
}

// Group commit. Staging (running the edit, diffing, assigning the version) is serialized by
// edit_mu_ and sees earlier staged edits through staged_, so it never waits for a sync. The slow
// part, observers' BeforePublishGroup (the synced store write), is done by one leader at a time
// for every edit queued so far, while later edits stage and queue behind it. So N concurrent
// writers share one sync, and versions are published in the order they were assigned. Waiters
// learn that their edit is done from commit_mu_, which the leader holds only briefly.
absl::StatusOr<EditResult> World::Edit(const std::function<absl::Status(ChunkEdit&)>& edit,
                                       const EditTag& tag, std::unique_ptr<ReadSnapshot>* pinned) {
  // Edits build on the newest content, and this thread may lead a commit whose observers rebuild
  // derived data from the world: neither may read through a snapshot the caller holds.
  struct NoSnapshot {
    const ReadSnapshot* saved = world_internal::current_snapshot;
    NoSnapshot() { world_internal::current_snapshot = nullptr; }
    ~NoSnapshot() { world_internal::current_snapshot = saved; }
  } no_snapshot;
  PendingEdit pending;
  pending.tag = tag;
  pending.want_pin = pinned != nullptr;
  staging_.fetch_add(1, std::memory_order_relaxed);
  if (absl::Status s = Stage(edit, &pending); !s.ok()) return s;
  if (pending.no_op) return std::move(pending.result);
  {
    absl::MutexLock lock(&commit_mu_);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_) {
      return pending.done || !committing_;
    };
    commit_mu_.Await(absl::Condition(&ready));
    if (pending.done && !pending.status.ok()) return pending.status;
    if (pending.done) {
      if (pinned) *pinned = std::move(pending.pinned);
      return std::move(pending.result);
    }
    committing_ = true;  // our edit is still queued, so leading the next group commits it
  }
  CommitQueued();
  absl::MutexLock lock(&commit_mu_);
  if (!pending.status.ok()) return pending.status;
  if (pinned) *pinned = std::move(pending.pinned);
  return std::move(pending.result);
}

absl::Status World::Stage(const std::function<absl::Status(ChunkEdit&)>& edit,
                          PendingEdit* pending) {
  absl::MutexLock lock(&edit_mu_);
  staging_.fetch_sub(1, std::memory_order_relaxed);  // done by the time anyone sees edit_mu_ free
  ChunkEdit scratch(*this);
  scratch.base_version_ = staged_version_;
  absl::Status status = edit(scratch);
  if (status.ok())
    status = scratch.load_status_;  // never edit on top of a chunk that failed to load
  if (status.ok()) status = Diff(scratch, pending);
  if (!status.ok()) return status;
  // A batch that changes no voxel creates no version (issue 40): it is acknowledged at the newest
  // version if every staged edit is published (so that version is durable and holds the content
  // the batch was compared against). With an idempotency key (the key must be recorded), an
  // explicit version (replicas, re-seeds), a snapshot pin, or edits still in flight, it commits
  // as before and gets a version of its own.
  if (pending->result.changes.empty() && pending->tag.idempotency_key.empty() &&
      scratch.set_version_ == 0 && !pending->want_pin &&
      staged_version_ == version_.load(std::memory_order_acquire)) {
    pending->result.version = staged_version_;
    pending->no_op = true;
    return absl::OkStatus();
  }
  if (scratch.set_version_ > staged_version_ + 1) staged_version_ = scratch.set_version_ - 1;
  pending->result.version = ++staged_version_;
  for (const auto& [key, chunk] : pending->chunks) staged_[key] = chunk;
  queue_.push_back(pending);
  return absl::OkStatus();
}

absl::Status World::Diff(const ChunkEdit& scratch, PendingEdit* pending) const {
  EditResult& result = pending->result;
  // Diff each touched chunk against the one it was copied from to find what really changed.
  for (auto& [key, chunk] : scratch.touched_) {
    // ChunkEdit::Mutable loaded it fine, but it may have been evicted and reloaded since.
    absl::StatusOr<ChunkPtr> loaded = StagedOrLoaded(key);
    if (!loaded.ok()) return loaded.status();
    const ChunkPtr& before = *loaded;
    Int3 lo{kChunkSize, kChunkSize, kChunkSize}, hi{-1, -1, -1};
    for (int y = 0; y < kChunkSize; ++y)
      for (int z = 0; z < kChunkSize; ++z)
        for (int x = 0; x < kChunkSize; ++x) {
          if (chunk->At(x, y, z) == before->At(x, y, z)) continue;
          lo = {std::min(lo.x, x), std::min(lo.y, y), std::min(lo.z, z)};
          hi = {std::max(hi.x, x), std::max(hi.y, y), std::max(hi.z, z)};
        }
    if (hi.x < 0) continue;
    Int3 origin = ChunkOrigin(key);
    result.changes.push_back({key, {origin + lo, origin + hi + Int3{1, 1, 1}}});
    pending->chunks.emplace_back(
        key, chunk->IsUniform() ? UniformChunk(chunk->voxels[0]) : ChunkPtr(chunk));
    pending->before.push_back(before);
  }
  std::sort(result.changes.begin(), result.changes.end(),
            [](const ChunkChange& a, const ChunkChange& b) { return a.key < b.key; });

  // Derived data of a chunk depends on voxels up to one voxel outside it.
  for (const ChunkChange& c : result.changes) {
    ChunkKey lo = ChunkOf(c.changed_voxels.min - Int3{1, 1, 1});
    ChunkKey hi =
        ChunkOf(c.changed_voxels.max);  // max is exclusive, so max itself is one voxel out
    for (int y = lo.y; y <= hi.y; ++y)
      for (int z = lo.z; z <= hi.z; ++z)
        for (int x = lo.x; x <= hi.x; ++x) {
          ChunkKey k{x, y, z};
          if (chunk_bounds_.Contains(k)) result.dirty_chunks.push_back(k);
        }
  }
  std::sort(result.dirty_chunks.begin(), result.dirty_chunks.end());
  result.dirty_chunks.erase(std::unique(result.dirty_chunks.begin(), result.dirty_chunks.end()),
                            result.dirty_chunks.end());
  // Sort chunks by key, and `before` along with them.
  std::vector<size_t> order(pending->chunks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return pending->chunks[a].first < pending->chunks[b].first;
  });
  std::vector<std::pair<ChunkKey, ChunkPtr>> chunks;
  std::vector<ChunkPtr> before;
  for (size_t i : order) {
    chunks.push_back(std::move(pending->chunks[i]));
    before.push_back(std::move(pending->before[i]));
  }
  pending->chunks = std::move(chunks);
  pending->before = std::move(before);
  return absl::OkStatus();
}

std::vector<World::PendingEdit*> World::TakeQueue() {
  absl::MutexLock lock(&edit_mu_);
  // Edits already being staged are ready within their staging time, far less than a sync: wait
  // for them (bounded) so that they share this group's sync. Without this, writers that return
  // together from one group race back and the first one commits alone (groups of 1, N-1, 1...).
  auto all_staged =
      +[](std::atomic<int>* staging) { return staging->load(std::memory_order_relaxed) == 0; };
  edit_mu_.AwaitWithTimeout(absl::Condition(all_staged, &staging_), absl::Milliseconds(1));
  std::vector<PendingEdit*> group;
  group.swap(queue_);
  return group;
}

void World::RemoveObserver(EditObserver* observer) {
  observers_.erase(std::remove(observers_.begin(), observers_.end(), observer), observers_.end());
}

void World::CommitQueued() {
  std::vector<PendingEdit*> group = TakeQueue();
  std::vector<CommittedEdit> committed;
  committed.reserve(group.size());
  std::vector<const CommittedEdit*> views;
  for (PendingEdit* p : group) committed.push_back({p->result, p->chunks, &p->tag});
  for (const CommittedEdit& c : committed) views.push_back(&c);
  absl::Status status;
  for (EditObserver* observer : observers_) {
    if (status = observer->BeforePublishGroup(views); !status.ok()) break;
  }
  if (status.ok()) PublishGroup(group);
  absl::MutexLock lock(&commit_mu_);
  if (!status.ok()) AbortQueued(group, status);
  for (PendingEdit* p : group) p->done = true;
  committing_ = false;
}

void World::PublishGroup(const std::vector<PendingEdit*>& group) {
  for (PendingEdit* p : group) {
    // Order matters (see ReadSnapshot): history and publishing_version_ first, so a reader that
    // sees anything of this edit also finds what it replaced; derived data next; the version
    // last, so a snapshot at this version never sees derived data of the previous one.
    RecordHistory(*p);
    for (const auto& [key, chunk] : p->chunks) Publish(key, chunk);
    CommittedEdit committed{p->result, p->chunks, &p->tag};
    for (EditObserver* observer : observers_) observer->AfterPublish(committed);
    version_.store(p->result.version, std::memory_order_release);
    absl::MutexLock lock(&history_mu_);
    // Before the next edit records anything, so the pin keeps exactly what it needs.
    if (p->want_pin)
      p->pinned.reset(new ReadSnapshot(*this, p->result.version, ReadSnapshot::Pinned{}));
    PruneHistoryLocked();
  }
  // Staged chunks that no later edit replaced are now published; editors can read them there.
  absl::MutexLock lock(&edit_mu_);
  for (PendingEdit* p : group) {
    for (const auto& [key, chunk] : p->chunks) {
      auto it = staged_.find(key);
      if (it != staged_.end() && it->second == chunk) staged_.erase(it);
    }
  }
}

void World::AbortQueued(const std::vector<PendingEdit*>& group, const absl::Status& status) {
  absl::MutexLock lock(&edit_mu_);
  for (PendingEdit* p : group) {
    p->status = status;
    p->done = true;
  }
  // Edits staged after the group were computed on top of its chunks: they cannot commit either.
  for (PendingEdit* p : queue_) {
    p->status =
        absl::AbortedError(absl::StrCat("an earlier edit failed to commit: ", status.message()));
    p->done = true;
  }
  queue_.clear();
  staged_.clear();
  staged_version_ = version_.load(std::memory_order_acquire);
}

absl::StatusOr<uint64_t> World::ReadConsistent(const std::function<absl::Status()>& read) const {
  ReadSnapshot snapshot(*this);
  absl::Status status = read();
  if (!status.ok()) return status;
  if (snapshot.expired()) {
    return absl::AbortedError(
        "the world changed faster than this read's snapshot could be kept (old chunk versions "
        "exceeded the history budget); retry");
  }
  return snapshot.version();
}

Voxel ChunkEdit::Get(const Int3& voxel) const {
  if (!world_.voxel_bounds().Contains(voxel)) return Voxel{};
  ChunkKey key = ChunkOf(voxel);
  auto it = touched_.find(key);
  if (it != touched_.end()) return it->second->At(LocalOf(voxel));
  absl::StatusOr<ChunkPtr> chunk = world_.StagedOrLoaded(key);
  if (!chunk.ok()) {
    load_status_.Update(chunk.status());
    return Voxel{};
  }
  return (*chunk)->At(LocalOf(voxel));
}

Chunk* ChunkEdit::Mutable(const ChunkKey& key) {
  auto it = touched_.find(key);
  if (it != touched_.end()) return it->second.get();
  absl::StatusOr<ChunkPtr> published = world_.StagedOrLoaded(key);
  if (!published.ok()) load_status_.Update(published.status());
  auto copy = std::make_shared<Chunk>(published.ok() ? **published : Chunk{});
  Chunk* raw = copy.get();
  touched_.emplace(key, std::move(copy));
  return raw;
}

void ChunkEdit::Set(const Int3& voxel, Voxel v) {
  Mutable(ChunkOf(voxel))->At(LocalOf(voxel)) = Canonical(v);
}

}  // namespace voxcol
