// Snapshot isolation for World: ReadSnapshot registration, the history of replaced chunks and
// dirty marks that older snapshots read, and its budget. See ReadSnapshot in world.h and the
// "Snapshot isolation" section of docs/design.md.
#include "core/voxel/world.h"

namespace voxcol {

World::ReadSnapshot::ReadSnapshot(const World& world)
    : world_(world), enclosing_(world_internal::current_snapshot) {
  const ReadSnapshot* outer = world.ThreadSnapshot();
  registered_ = outer == nullptr;
  if (registered_) {
    // Under history_mu_, so pruning (which runs after version_ advances) either sees this
    // snapshot or ran before we read the version, and then kept nothing we need.
    absl::MutexLock lock(&world.history_mu_);
    version_ = world.version();
    world.snapshots_.emplace(version_, this);
  } else {
    version_ = outer->version_;
    view_ = outer->view_;
  }
  live_version_ = view_ != nullptr ? outer->live_version_ : version_;
  world_internal::current_snapshot = this;
}

World::ReadSnapshot::ReadSnapshot(const World& world, uint64_t version, Pinned)
    : world_(world),
      version_(version),
      live_version_(version),
      entered_(false),
      enclosing_(nullptr),
      registered_(true) {
  world.snapshots_.emplace(version_, this);
}

void World::ReadSnapshot::Enter() {
  enclosing_ = world_internal::current_snapshot;
  world_internal::current_snapshot = this;
  entered_ = true;
}

World::ReadSnapshot::~ReadSnapshot() {
  if (entered_) world_internal::current_snapshot = enclosing_;
  if (!registered_) return;
  absl::MutexLock lock(&world_.history_mu_);
  auto [first, last] = world_.snapshots_.equal_range(version_);
  for (auto it = first; it != last; ++it) {
    if (it->second == this) {
      world_.snapshots_.erase(it);
      break;
    }
  }
  world_.PruneHistoryLocked();
}

const World::ReadSnapshot* World::ThreadSnapshot() const {
  for (const ReadSnapshot* s = world_internal::current_snapshot; s != nullptr; s = s->enclosing_) {
    if (&s->world_ == this) return s;
  }
  return nullptr;
}

uint64_t World::ReadVersion() const {
  const ReadSnapshot* snapshot = ThreadSnapshot();
  return snapshot != nullptr ? snapshot->version_ : version();
}

bool World::NewerThanSnapshotSlow(const ChunkKey& key) const {
  const ReadSnapshot* snapshot = ThreadSnapshot();
  if (snapshot == nullptr) return false;
  if (snapshot->view_ != nullptr && snapshot->view_->MayBeDirty(key) &&
      snapshot->view_->dirty_until.contains(key)) {
    return true;
  }
  if (publishing_version_.load(std::memory_order_acquire) <= snapshot->live_version_) return false;
  return DirtiedAfter(key, snapshot->live_version_);
}

bool World::DirtiedAfter(const ChunkKey& key, uint64_t version) const {
  absl::MutexLock lock(&history_mu_);
  auto it = dirtied_.find(key);
  return it != dirtied_.end() && it->second.back() > version;
}

ChunkPtr World::HistoryAt(const ChunkKey& key, uint64_t version) const {
  absl::MutexLock lock(&history_mu_);
  auto it = replaced_.find(key);
  if (it == replaced_.end()) return nullptr;
  for (const Replaced& r : it->second) {
    if (r.until > version) return r.chunk;
  }
  return nullptr;
}

void World::RecordHistory(const PendingEdit& p) {
  const uint64_t version = p.result.version;
  HistoryEntry entry{version, absl::Now(), {}, {}};
  for (const auto& [key, chunk] : p.chunks) entry.replaced.push_back(key);
  // Derived data of a chunk reads up to two voxels beyond it (meshes: one below, two above;
  // masks: one each side), so every chunk within two voxels of a change is dirty for snapshots.
  for (const ChunkChange& c : p.result.changes) {
    const ChunkKey lo = ChunkOf(c.changed_voxels.min - Int3{2, 2, 2});
    const ChunkKey hi = ChunkOf(c.changed_voxels.max + Int3{1, 1, 1});
    for (int y = lo.y; y <= hi.y; ++y)
      for (int z = lo.z; z <= hi.z; ++z)
        for (int x = lo.x; x <= hi.x; ++x) entry.dirtied.push_back({x, y, z});
  }
  absl::MutexLock lock(&history_mu_);
  for (size_t i = 0; i < p.chunks.size(); ++i) {
    replaced_[p.chunks[i].first].push_back({version, p.before[i]});
  }
  history_chunks_ += p.chunks.size();
  for (const ChunkKey& key : entry.dirtied) {
    std::vector<uint64_t>& versions = dirtied_[key];
    if (versions.empty() || versions.back() != version) versions.push_back(version);
  }
  history_.push_back(std::move(entry));
  EnforceHistoryBudgetLocked();
  // Before any chunk of this edit is swapped in (Publish takes the shard locks after this).
  publishing_version_.store(version, std::memory_order_seq_cst);
}

uint64_t World::OldestReaderLocked() const {
  for (const auto& [version, snapshot] : snapshots_) {
    if (!snapshot->expired()) return version;
  }
  return version_.load(std::memory_order_acquire);
}

void World::EnforceHistoryBudgetLocked() const {
  // Versions kept only by retention go first, oldest first, down to the retention's bound (and
  // before any live snapshot expires for the snapshot budget).
  const uint64_t reader = OldestReaderLocked();
  auto over = [&](size_t bound) { return bound != 0 && history_chunks_ * sizeof(Chunk) > bound; };
  while ((over(retention_.max_bytes) || over(history_budget_)) && !history_.empty() &&
         history_.front().version <= reader) {
    PopHistoryLocked();
  }
  while (history_budget_ != 0 && history_chunks_ * sizeof(Chunk) > history_budget_) {
    // Expire every snapshot of the oldest unexpired version, then drop what only they needed.
    auto it = snapshots_.begin();
    while (it != snapshots_.end() && it->second->expired()) ++it;
    if (it == snapshots_.end()) break;
    const uint64_t oldest = it->first;
    for (; it != snapshots_.end() && it->first == oldest; ++it) {
      it->second->expired_.store(true, std::memory_order_release);
      ++expired_snapshots_;
    }
    PruneHistoryLocked();
  }
}

void World::PruneHistoryLocked() const {
  // An entry replaced at version U is needed by snapshots older than U; dirty marks likewise.
  // Retention (world_retention.cc) may keep more.
  const uint64_t oldest = OldestReaderLocked();
  while (!history_.empty() && history_.front().version <= oldest &&
         !RetainedLocked(history_.front())) {
    PopHistoryLocked();
  }
}

void World::PopHistoryLocked() const {
  HistoryEntry& entry = history_.front();
  for (const ChunkKey& key : entry.replaced) {
    auto it = replaced_.find(key);
    std::vector<Replaced>& list = it->second;
    list.erase(list.begin());  // the oldest entry of this key is the one this edit added
    --history_chunks_;
    if (list.empty()) replaced_.erase(it);
  }
  for (const ChunkKey& key : entry.dirtied) {
    auto it = dirtied_.find(key);
    if (it == dirtied_.end()) continue;
    std::vector<uint64_t>& versions = it->second;
    if (versions.front() == entry.version) versions.erase(versions.begin());
    if (versions.empty()) dirtied_.erase(it);
  }
  oldest_published_ = entry.published;  // entry.version is now the oldest readable
  // Cached past views of versions no longer readable would keep dropped chunks alive.
  for (auto& view : views_) {
    if (view != nullptr && view->version < entry.version) view.reset();
  }
  history_.pop_front();
}

World::HistoryStats World::history_stats() const {
  absl::MutexLock lock(&history_mu_);
  HistoryStats stats;
  stats.chunks = history_chunks_;
  stats.bytes = history_chunks_ * sizeof(Chunk);
  stats.snapshots = snapshots_.size();
  stats.oldest = snapshots_.empty() ? 0 : snapshots_.begin()->first;
  stats.expired = expired_snapshots_;
  stats.oldest_readable = OldestReadableLocked();
  stats.versions = history_.size();
  return stats;
}

}  // namespace voxcol
