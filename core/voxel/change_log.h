// The change feed's source: an EditObserver that keeps the last committed edits in memory so that
// subscribers can follow the world from any version inside a retention window.
//
// Subscribers do not get queues of their own: each is a cursor (the last version it has seen) into
// this one shared log, read with Read(). The log is bounded (versions, chunks and bytes),
// appending never waits for a reader, and a reader whose cursor falls out of the window gets
// OUT_OF_RANGE, so a slow subscriber can never hold back edits or grow memory.
//
// Durability: the store writes the same entries (MakeChangeEntry) in the edit's own WriteBatch and
// trims them with the same RetentionWindow, so a log rebuilt from the store after a restart (or
// kill -9) holds exactly the versions the previous process could still serve.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/voxel/voxel_io.h"
#include "core/voxel/world.h"

namespace voxcol {

// One committed edit batch as the feed reports it. The voxels of each changed box are copied out
// of the chunk (at most 8^3 voxels, 1 KiB, per change) rather than keeping the chunk: the store
// keeps only each chunk's newest content, so this is what lets a restarted server still answer
// include_voxels with the voxels *after this batch*.
struct ChangeEntry {
  uint64_t version = 0;
  std::vector<ChunkChange> changes;  // sorted by key; empty for a batch that changed no voxel
  std::vector<VoxelArrays> voxels;   // the voxels of each changed_voxels box at `version`
  size_t bytes = 0;                  // ChangeEntryBytes(*this), what retention counts
};
using ChangeEntryPtr = std::shared_ptr<const ChangeEntry>;

// The entry of one committed edit (its changes and the voxels of each changed box).
ChangeEntryPtr MakeChangeEntry(const CommittedEdit& edit);
// Retention size of an entry: 16 bytes plus, per change, 40 bytes of keys and boxes and two bytes
// per changed voxel. The store's encoding has exactly this size.
size_t ChangeEntryBytes(const ChangeEntry& entry);

struct ChangeLogConfig {
  size_t max_versions = 4096;  // newest entries kept, one per version
  // Most changed chunks kept over all entries; the oldest entries go first.
  size_t max_chunks = 65536;
  // Most bytes (ChangeEntryBytes) kept over all entries; the oldest entries go first.
  size_t max_bytes = size_t(64) << 20;
};

// Which versions the feed keeps: the newest ones within every limit of the config, contiguous, and
// always at least the newest one (so a reader at newest-1 can make progress). One rule shared by
// the in-memory log and the store, which apply it to the same entries in the same order.
class RetentionWindow {
 public:
  struct Entry {
    uint64_t version = 0;
    size_t chunks = 0;
    size_t bytes = 0;
  };
  // An empty window after `base_version` (the world's version when it starts).
  RetentionWindow(const ChangeLogConfig& config, uint64_t base_version);

  // Appends `entry` and returns the versions that left the window, oldest first. A version that
  // is not newest + 1 (a gap: chunks written without an edit) restarts the window at it.
  std::vector<uint64_t> Append(const Entry& entry);
  // Empties the window; it continues after `base_version`.
  void Restart(uint64_t base_version);

  // Every version in (base_version, newest_version] is in the window.
  uint64_t base_version() const { return base_version_; }
  uint64_t newest_version() const { return newest_version_; }
  size_t size() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }

 private:
  ChangeLogConfig config_;
  std::deque<Entry> entries_;
  uint64_t base_version_;
  uint64_t newest_version_;
  size_t chunks_ = 0;
  size_t bytes_ = 0;
};

class ChangeLog : public EditObserver {
 public:
  // `start_version` is the world's version when the log is attached (World::AddObserver);
  // `restored` the entries a store kept from earlier processes (contiguous, ascending, the last
  // one at `start_version`; otherwise they are ignored). Readers can resume from the oldest
  // restored version - 1 (or `start_version`) until the window moves past it.
  ChangeLog(uint64_t start_version, const ChangeLogConfig& config,
            std::vector<ChangeEntryPtr> restored = {});

  // Appends the edit (called by World under its edit lock, in version order), wakes readers and
  // calls the listener.
  void AfterPublish(const CommittedEdit& edit) override;

  // Called with each new version after it is appended, under World's edit lock: must only note
  // the version and wake someone (Subscribe's feed pump), never block. Set before serving.
  void SetListener(std::function<void(uint64_t)> listener) { listener_ = std::move(listener); }

  // Entries with version > after_version, oldest first, at most max_entries. Waits up to `wait`
  // when there is none yet and returns an empty vector if none arrived.
  // Errors: OUT_OF_RANGE when entries after `after_version` were already dropped (or it is ahead
  // of the newest version); UNAVAILABLE once Close() was called.
  absl::StatusOr<std::vector<ChangeEntryPtr>> Read(uint64_t after_version, size_t max_entries,
                                                   absl::Duration wait) const;

  // Smallest after_version that Read accepts, and the newest version logged.
  uint64_t oldest_resumable_version() const;
  uint64_t newest_version() const;
  // Bytes (ChangeEntryBytes) of the retained entries.
  size_t retained_bytes() const;
  bool closed() const;

  // Wakes every reader and makes all further reads UNAVAILABLE (server shutdown).
  void Close();

 private:
  void AppendLocked(ChangeEntryPtr entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckCursorLocked(uint64_t after_version) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  std::function<void(uint64_t)> listener_;
  mutable absl::Mutex mu_;
  RetentionWindow window_ ABSL_GUARDED_BY(mu_);
  std::deque<ChangeEntryPtr> entries_ ABSL_GUARDED_BY(mu_);  // the window's versions, in order
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace voxcol
