#include "core/voxel/change_log.h"

#include "absl/strings/str_cat.h"

namespace voxcol {

ChangeLog::ChangeLog(uint64_t start_version, const ChangeLogConfig& config)
    : config_(config), base_version_(start_version), newest_version_(start_version) {}

void ChangeLog::AfterPublish(const CommittedEdit& edit) {
  auto entry = std::make_shared<ChangeEntry>();
  entry->version = edit.result.version;
  entry->changes = edit.result.changes;
  entry->chunks.reserve(edit.chunks.size());
  for (const auto& [key, chunk] : edit.chunks) entry->chunks.push_back(chunk);
  absl::MutexLock lock(&mu_);
  if (entry->version != newest_version_ + 1) {
    // A gap (the log attached late or a version restored) breaks the contiguous window: restart it.
    entries_.clear();
    chunks_ = 0;
    base_version_ = entry->version - 1;
  }
  chunks_ += entry->chunks.size();
  newest_version_ = entry->version;
  entries_.push_back(std::move(entry));
  TrimLocked();
}

void ChangeLog::TrimLocked() {
  // Keep at least the newest entry so a reader at newest-1 can always make progress.
  while (entries_.size() > 1 &&
         (entries_.size() > config_.max_versions || chunks_ > config_.max_chunks)) {
    chunks_ -= entries_.front()->chunks.size();
    base_version_ = entries_.front()->version;
    entries_.pop_front();
  }
}

absl::Status ChangeLog::CheckCursorLocked(uint64_t after_version) const {
  if (closed_) return absl::UnavailableError("the change feed is closed (server shutting down)");
  if (after_version < base_version_) {
    return absl::OutOfRangeError(
        absl::StrCat("version ", after_version,
                     " is older than the change log's retention window (oldest "
                     "resumable version ",
                     base_version_, "); resync with ReadVoxels"));
  }
  if (after_version > newest_version_) {
    return absl::OutOfRangeError(absl::StrCat("version ", after_version,
                                              " is ahead of the newest version ", newest_version_));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ChangeEntryPtr>> ChangeLog::Read(uint64_t after_version,
                                                            size_t max_entries,
                                                            absl::Duration wait) const {
  absl::MutexLock lock(&mu_);
  auto ready = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return closed_ || newest_version_ > after_version;
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), wait);
  absl::Status status = CheckCursorLocked(after_version);
  if (!status.ok()) return status;
  std::vector<ChangeEntryPtr> out;
  // Versions are contiguous, so the first entry to return sits at a known index.
  for (size_t i = after_version - base_version_; i < entries_.size() && out.size() < max_entries;
       ++i) {
    out.push_back(entries_[i]);
  }
  return out;
}

uint64_t ChangeLog::oldest_resumable_version() const {
  absl::MutexLock lock(&mu_);
  return base_version_;
}

uint64_t ChangeLog::newest_version() const {
  absl::MutexLock lock(&mu_);
  return newest_version_;
}

void ChangeLog::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;  // Await re-evaluates its condition whenever mu_ is released
}

}  // namespace voxcol
