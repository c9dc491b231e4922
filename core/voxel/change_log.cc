#include "core/voxel/change_log.h"

#include "absl/strings/str_cat.h"

namespace voxcol {

ChangeEntryPtr MakeChangeEntry(const CommittedEdit& edit) {
  auto entry = std::make_shared<ChangeEntry>();
  entry->version = edit.result.version;
  entry->changes = edit.result.changes;
  entry->voxels.reserve(entry->changes.size());
  for (size_t i = 0; i < entry->changes.size(); ++i) {
    const IntBox& box = entry->changes[i].changed_voxels;
    const size_t volume = size_t(box.Volume());
    VoxelArrays voxels{box, std::vector<uint8_t>(volume), std::vector<uint8_t>(volume)};
    // edit.chunks is sorted by key in the same order as the changes.
    CopyChunkToArrays(*edit.chunks[i].second, entry->changes[i].key, box, &voxels);
    entry->voxels.push_back(std::move(voxels));
  }
  entry->bytes = ChangeEntryBytes(*entry);
  return entry;
}

size_t ChangeEntryBytes(const ChangeEntry& entry) {
  size_t bytes = 16;
  for (const ChunkChange& change : entry.changes)
    bytes += 40 + 2 * size_t(change.changed_voxels.Volume());
  return bytes;
}

RetentionWindow::RetentionWindow(const ChangeLogConfig& config, uint64_t base_version)
    : config_(config), base_version_(base_version), newest_version_(base_version) {}

void RetentionWindow::Restart(uint64_t base_version) {
  entries_.clear();
  chunks_ = bytes_ = 0;
  base_version_ = newest_version_ = base_version;
}

std::vector<uint64_t> RetentionWindow::Append(const Entry& entry) {
  std::vector<uint64_t> dropped;
  if (entry.version != newest_version_ + 1) {
    // A gap breaks the contiguous window: restart it before this entry.
    for (const Entry& e : entries_) dropped.push_back(e.version);
    Restart(entry.version - 1);
  }
  entries_.push_back(entry);
  chunks_ += entry.chunks;
  bytes_ += entry.bytes;
  newest_version_ = entry.version;
  while (entries_.size() > 1 && (entries_.size() > config_.max_versions ||
                                 chunks_ > config_.max_chunks || bytes_ > config_.max_bytes)) {
    chunks_ -= entries_.front().chunks;
    bytes_ -= entries_.front().bytes;
    base_version_ = entries_.front().version;
    dropped.push_back(base_version_);
    entries_.pop_front();
  }
  return dropped;
}

ChangeLog::ChangeLog(uint64_t start_version, const ChangeLogConfig& config,
                     std::vector<ChangeEntryPtr> restored)
    : window_(config, start_version) {
  absl::MutexLock lock(&mu_);
  bool contiguous = !restored.empty() && restored.back()->version == start_version;
  for (size_t i = 1; contiguous && i < restored.size(); ++i)
    contiguous = restored[i]->version == restored[i - 1]->version + 1;
  if (!contiguous) return;
  window_ = RetentionWindow(config, restored.front()->version - 1);
  for (ChangeEntryPtr& entry : restored) AppendLocked(std::move(entry));
}

void ChangeLog::AppendLocked(ChangeEntryPtr entry) {
  std::vector<uint64_t> dropped =
      window_.Append({entry->version, entry->changes.size(), entry->bytes});
  entries_.push_back(std::move(entry));
  // The window drops the oldest versions, or all older ones after a gap.
  while (entries_.front()->version <= window_.base_version()) entries_.pop_front();
}

void ChangeLog::AfterPublish(const CommittedEdit& edit) {
  ChangeEntryPtr entry = MakeChangeEntry(edit);
  const uint64_t version = entry->version;
  {
    absl::MutexLock lock(&mu_);
    AppendLocked(std::move(entry));
  }
  if (listener_) listener_(version);
}

absl::Status ChangeLog::CheckCursorLocked(uint64_t after_version) const {
  if (closed_) return absl::UnavailableError("the change feed is closed (server shutting down)");
  if (after_version < window_.base_version()) {
    return absl::OutOfRangeError(
        absl::StrCat("version ", after_version,
                     " is older than the change log's retention window (oldest "
                     "resumable version ",
                     window_.base_version(), "); resync with ReadVoxels"));
  }
  if (after_version > window_.newest_version()) {
    return absl::OutOfRangeError(absl::StrCat(
        "version ", after_version, " is ahead of the newest version ", window_.newest_version()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ChangeEntryPtr>> ChangeLog::Read(uint64_t after_version,
                                                            size_t max_entries,
                                                            absl::Duration wait) const {
  absl::MutexLock lock(&mu_);
  auto ready = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return closed_ || window_.newest_version() > after_version;
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), wait);
  absl::Status status = CheckCursorLocked(after_version);
  if (!status.ok()) return status;
  std::vector<ChangeEntryPtr> out;
  // Versions are contiguous, so the first entry to return sits at a known index.
  for (size_t i = after_version - window_.base_version();
       i < entries_.size() && out.size() < max_entries; ++i) {
    out.push_back(entries_[i]);
  }
  return out;
}

uint64_t ChangeLog::oldest_resumable_version() const {
  absl::MutexLock lock(&mu_);
  return window_.base_version();
}

uint64_t ChangeLog::newest_version() const {
  absl::MutexLock lock(&mu_);
  return window_.newest_version();
}

size_t ChangeLog::retained_bytes() const {
  absl::MutexLock lock(&mu_);
  return window_.bytes();
}

bool ChangeLog::closed() const {
  absl::MutexLock lock(&mu_);
  return closed_;
}

void ChangeLog::Close() {
  uint64_t version;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;  // Await re-evaluates its condition whenever mu_ is released
    version = window_.newest_version();
  }
  if (listener_) listener_(version);
}

}  // namespace voxcol
