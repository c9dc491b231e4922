// The change feed's source: an EditObserver that keeps the last committed edits in memory so that
// subscribers can follow the world from any version inside a retention window.
//
// Subscribers do not get queues of their own: each is a cursor (the last version it has seen) into
// this one shared log, read with Read(). The log is bounded (versions and chunks), appending never
// waits for a reader, and a reader whose cursor falls out of the window gets OUT_OF_RANGE, so a
// slow subscriber can never hold back edits or grow memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/voxel/world.h"

namespace voxcol {

// One committed edit batch as the feed reports it.
struct ChangeEntry {
  uint64_t version = 0;
  std::vector<ChunkChange> changes;  // sorted by key; empty for a batch that changed no voxel
  std::vector<ChunkPtr> chunks;      // content of each changed chunk at `version`, same order
};
using ChangeEntryPtr = std::shared_ptr<const ChangeEntry>;

struct ChangeLogConfig {
  size_t max_versions = 4096;  // newest entries kept, one per version
  // Most changed chunks kept over all entries (~1 KiB each); the oldest entries go first.
  size_t max_chunks = 65536;
};

class ChangeLog : public EditObserver {
 public:
  // `start_version` is the world's version when the log is attached (World::AddObserver):
  // readers can resume from it until the window moves past it.
  ChangeLog(uint64_t start_version, const ChangeLogConfig& config);

  // Appends the edit (called by World under its edit lock, in version order) and wakes readers.
  void AfterPublish(const CommittedEdit& edit) override;

  // Entries with version > after_version, oldest first, at most max_entries. Waits up to `wait`
  // when there is none yet and returns an empty vector if none arrived.
  // Errors: OUT_OF_RANGE when entries after `after_version` were already dropped (or it is ahead
  // of the newest version); UNAVAILABLE once Close() was called.
  absl::StatusOr<std::vector<ChangeEntryPtr>> Read(uint64_t after_version, size_t max_entries,
                                                   absl::Duration wait) const;

  // Smallest after_version that Read accepts, and the newest version logged.
  uint64_t oldest_resumable_version() const;
  uint64_t newest_version() const;

  // Wakes every reader and makes all further reads UNAVAILABLE (server shutdown).
  void Close();

 private:
  void TrimLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckCursorLocked(uint64_t after_version) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const ChangeLogConfig config_;
  mutable absl::Mutex mu_;
  std::deque<ChangeEntryPtr> entries_ ABSL_GUARDED_BY(mu_);  // contiguous versions, oldest first
  uint64_t base_version_ ABSL_GUARDED_BY(mu_);    // every version > base_version_ is in entries_
  uint64_t newest_version_ ABSL_GUARDED_BY(mu_);  // base_version_ + entries_.size()
  size_t chunks_ ABSL_GUARDED_BY(mu_) = 0;        // sum of entries' chunks
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace voxcol
