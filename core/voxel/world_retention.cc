// Lag compensation for World: retention of recent versions without live snapshots, snapshots of a
// past version (OpenSnapshotAt) with their shared lookup tables (PastView), and the mapping of
// server time to version. See "Versioned queries" in docs/design.md.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/voxel/world.h"

namespace voxcol {

World::ReadSnapshot::ReadSnapshot(const World& world, uint64_t version,
                                  std::shared_ptr<const PastView> view, AtVersion)
    : world_(world),
      version_(version),
      view_(std::move(view)),
      live_version_(view_ != nullptr ? view_->through : version),
      entered_(true),
      enclosing_(world_internal::current_snapshot),
      registered_(true) {
  world.snapshots_.emplace(version_, this);
  world_internal::current_snapshot = this;
}

bool World::RetainedLocked(const HistoryEntry& entry) const {
  // The entry of version U holds what version U - 1 reads; U - 1 was current until U's publication.
  const uint64_t current = publishing_version_.load(std::memory_order_acquire);
  if (retention_.versions != 0 && entry.version + retention_.versions > current) return true;
  return retention_.window > absl::ZeroDuration() &&
         entry.published >= absl::Now() - retention_.window;
}

uint64_t World::OldestReadableLocked() const {
  return history_.empty() ? version_.load(std::memory_order_acquire) : history_.front().version - 1;
}

uint64_t World::OldestReadableVersion() const {
  absl::MutexLock lock(&history_mu_);
  return OldestReadableLocked();
}

absl::StatusOr<uint64_t> World::VersionAtTime(absl::Time t) const {
  const absl::Time now = absl::Now();
  if (t > now) {
    return absl::OutOfRangeError(absl::StrCat("server time ", absl::FormatTime(t),
                                              " is in the future (server time is ",
                                              absl::FormatTime(now), ")"));
  }
  absl::MutexLock lock(&history_mu_);
  const uint64_t current = version_.load(std::memory_order_acquire);
  // Entries of published versions, ascending by publication time: the last one published at or
  // before t is the version current then.
  auto end = history_.end();
  while (end != history_.begin() && std::prev(end)->version > current) --end;
  auto after = std::upper_bound(history_.begin(), end, t,
                                [](absl::Time time, const auto& e) { return time < e.published; });
  if (after != history_.begin()) return std::prev(after)->version;
  if (t < oldest_published_) {
    return absl::OutOfRangeError(absl::StrCat(
        "server time ", absl::FormatTime(t), " is older than the oldest readable version ",
        OldestReadableLocked(), " (published ", absl::FormatTime(oldest_published_), ")"));
  }
  return OldestReadableLocked();
}

std::shared_ptr<const World::PastView> World::PastViewLocked(uint64_t version) const {
  const uint64_t through = history_.back().version;
  for (const auto& view : views_) {
    if (view != nullptr && view->version == version && view->through == through) return view;
  }
  auto view = std::make_shared<PastView>();
  view->version = version;
  view->through = through;
  for (auto e = history_.rbegin(); e != history_.rend() && e->version > version; ++e) {
    for (const ChunkKey& key : e->replaced) {
      if (view->chunks.contains(key)) continue;
      for (const Replaced& r : replaced_.at(key)) {
        if (r.until > version) {
          view->chunks.emplace(key, r.chunk);
          PastView::Set(view->chunk_filter, key);
          break;
        }
      }
    }
    for (const ChunkKey& key : e->dirtied) {
      if (view->dirty_until.contains(key)) continue;
      const std::vector<uint64_t>& versions = dirtied_.at(key);
      view->dirty_until.emplace(key, *std::upper_bound(versions.begin(), versions.end(), version));
      PastView::Set(view->dirty_filter, key);
    }
  }
  view->bytes = sizeof(PastView) + view->chunks.capacity() * sizeof(std::pair<ChunkKey, ChunkPtr>) +
                view->dirty_until.capacity() * sizeof(std::pair<ChunkKey, uint64_t>);
  views_[next_view_] = view;
  next_view_ = (next_view_ + 1) % kViewCache;
  return view;
}

absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> World::OpenSnapshotAt(uint64_t version) const {
  absl::MutexLock lock(&history_mu_);
  const uint64_t current = version_.load(std::memory_order_acquire);
  if (version > current) {
    return absl::OutOfRangeError(
        absl::StrCat("version ", version, " is in the future: the world is at version ", current));
  }
  const uint64_t oldest = OldestReadableLocked();
  if (version < oldest) {
    return absl::OutOfRangeError(absl::StrCat("version ", version,
                                              " is no longer kept: the oldest readable version is ",
                                              oldest, " (the world is at version ", current, ")"));
  }
  std::shared_ptr<const PastView> view;
  if (publishing_version_.load(std::memory_order_acquire) > version) view = PastViewLocked(version);
  return std::unique_ptr<ReadSnapshot>(
      new ReadSnapshot(*this, version, std::move(view), ReadSnapshot::AtVersion{}));
}

uint64_t World::SnapshotDataUntil(const ChunkKey& key) const {
  const ReadSnapshot* snapshot = ThreadSnapshot();
  if (snapshot == nullptr) return 0;
  if (snapshot->view_ != nullptr) {
    auto it = snapshot->view_->dirty_until.find(key);
    if (it != snapshot->view_->dirty_until.end()) return it->second;
  }
  const uint64_t live = snapshot->live_version_;
  if (publishing_version_.load(std::memory_order_acquire) <= live) return 0;
  absl::MutexLock lock(&history_mu_);
  auto it = dirtied_.find(key);
  if (it == dirtied_.end()) return 0;
  auto after = std::upper_bound(it->second.begin(), it->second.end(), live);
  return after == it->second.end() ? 0 : *after;
}

uint64_t World::LiveReadVersion() const {
  const ReadSnapshot* snapshot = ThreadSnapshot();
  return snapshot != nullptr ? snapshot->live_version_ : version();
}

}  // namespace voxcol
