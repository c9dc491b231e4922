// What the store checks when it opens, beyond RocksDB's own checks (issue 38): the on-disk format
// version, every table file's block checksums, and that no acknowledged version went missing.
// Private to core/store (store.cc); the results are statuses naming the file and what to do.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace rocksdb {
class DB;
}  // namespace rocksdb

namespace voxcol::store {

// The layout of keys and values this release writes (keys.h, chunk_codec.h, feed_codec.h),
// stored under "m:format". Raise it with any change an older release would misread, and keep
// reading every older one (tests/fixtures holds a data directory of each).
constexpr uint32_t kStoreFormat = 1;

// Reads the store's format, or records kStoreFormat in a store that has none (new, or made
// before formats were recorded, which is format 1). FAILED_PRECONDITION for a newer format.
absl::Status CheckFormat(rocksdb::DB& db, const std::string& dir);

// Reads every block of every table file and checks its checksum: a damaged table file is refused
// at open rather than answered DATA_LOSS chunk by chunk later. DATA_LOSS naming the file.
absl::Status VerifyTables(rocksdb::DB& db, const std::string& dir);

// A file beside the store's own (VOXCOL_DURABLE_VERSION) recording a world version that was
// durable when it was written. Opening a store whose version is lower means acknowledged edits
// are gone (a truncated or damaged manifest or log, a table file deleted, an older copy of the
// files put in place), which RocksDB may not notice: it then recovers an older state silently.
class DurableVersionMark {
 public:
  explicit DurableVersionMark(std::string dir);
  // OK when there is no mark (a new store, or one from before marks) or `stored` reaches it;
  // DATA_LOSS naming the file and what to do otherwise, or when the mark itself is unreadable.
  absl::Status Check(uint64_t stored) const;
  // Replaces the mark with `version` (a temporary file, synced, renamed, directory synced).
  absl::Status Write(uint64_t version) const;
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
};

// The advice every "damaged data directory" error ends with.
std::string DamagedStoreAdvice();

}  // namespace voxcol::store
