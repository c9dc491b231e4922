// Durable world storage in an embedded RocksDB: the world's identity, every edited chunk and the
// world version. Unedited chunks are never stored; the generator reproduces them.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/store/store_integrity.h"
#include "core/voxel/change_log.h"
#include "core/voxel/world.h"

namespace rocksdb {
class DB;
class Env;
class Status;
}  // namespace rocksdb

namespace voxcol::store {

struct StoreOptions {
  // Sync the write-ahead log before an edit is acknowledged. Only benchmarks turn this off.
  bool sync = true;
  // RocksDB block cache for compressed/uncompressed blocks, bytes.
  size_t block_cache_bytes = size_t(32) << 20;
  // Idempotency keys kept durable (the newest; older records are deleted as new ones arrive).
  size_t idempotency_keys = 100000;
  // Retention of the durable change feed (the same rule as the server's in-memory ChangeLog).
  ChangeLogConfig change_log;
  // The environment RocksDB does its file I/O through; null is the default one. Tests pass a
  // fault-injecting file system that counts syncs and can drop unsynced writes on a "crash".
  std::shared_ptr<rocksdb::Env> env;
  // Where RocksDB's own warnings and errors go, one line each (null: standard error). RocksDB's
  // info log is never a file in the data directory: on a full disk, this RocksDB asserts when it
  // logs the error to a log file whose last write failed (see docs/reliability.md).
  std::function<void(const std::string& line)> log;
  // Edits are refused (RESOURCE_EXHAUSTED) while the data directory's file system has less free
  // space than this, checked before every write: RocksDB never meets a full disk in its write-
  // ahead log, and edits are accepted again as soon as space is freed (0: no check; the server
  // sets it from --min_free_disk_mb).
  uint64_t min_free_bytes = 0;
  // Read every table file's blocks at open and refuse a store with a bad checksum (the server's
  // --verify_store_on_open); otherwise a damaged block is found when its chunk is read.
  bool verify_on_open = true;
};

// An idempotency key made durable together with the batch it identified.
struct StoredAck {
  std::string key;
  uint64_t fingerprint = 0;
  uint64_t version = 0;
  uint32_t changed_chunks = 0;
};

// The world a store holds, as found or created by OpenWorld.
struct StoredWorld {
  WorldConfig config;
  uint32_t generator_version = 0;
  uint64_t version = 0;  // version after the last durable edit
  bool created = false;  // true when this call recorded `requested`
};

// A RocksDB database in one directory. Implements ChunkLoader (edited chunks on first touch) and
// EditObserver (each group of edits becomes one synced WriteBatch before it is published).
// Thread-safe.
class Store : public ChunkLoader, public EditObserver {
 public:
  // Opens or creates the database in `dir`. Cheap: reads only the region index (one key per
  // 32^3-voxel region with edits), never the chunks.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& dir,
                                                     const StoreOptions& options);
  ~Store() override;

  // Returns the world recorded in the store, or records `requested` if there is none. An existing
  // world keeps its configuration; a different generator version is FAILED_PRECONDITION because
  // regenerated chunks would silently differ from the ones the edits were made on.
  absl::StatusOr<StoredWorld> OpenWorld(const WorldConfig& requested, uint32_t generator_version);

  // ChunkLoader: the stored chunk, nullptr if never edited (no RocksDB read at all when its region
  // has no edits), DATA_LOSS if the record fails RocksDB's block checksum or our own decoding.
  absl::StatusOr<ChunkPtr> Load(const ChunkKey& key) const override;

  // EditObserver: writes all chunks of the group, the idempotency keys of its edits (EditTag), one
  // change-feed entry per edit (deleting the entries that leave the retention window) and the last
  // version as one WriteBatch (synced unless options.sync is false). On error nothing of the group
  // is stored.
  absl::Status BeforePublish(const CommittedEdit& edit) override;
  absl::Status BeforePublishGroup(const std::vector<const CommittedEdit*>& edits) override;

  // Writes chunks and the version directly (bulk tools, tests). Same atomicity as an edit. The
  // change feed cannot describe such a write, so it is emptied in the same batch.
  absl::Status WriteChunks(const std::vector<std::pair<ChunkKey, ChunkPtr>>& chunks,
                           uint64_t version);

  // Online backup: a consistent RocksDB checkpoint (hard links where possible) in `dir`, which
  // must not exist yet. The checkpoint opens as a data directory of its own.
  absl::Status CreateCheckpoint(const std::string& dir);

  // Flushes memtables to table files (tests, tools).
  absl::Status Flush();
  // Compression recorded in each live table file's properties (e.g. "ZSTD"); for checking that
  // compression is in effect.
  absl::StatusOr<std::vector<std::string>> TableCompressions() const;

  // RocksDB point reads issued by Load so far.
  uint64_t chunk_reads() const { return chunk_reads_.load(std::memory_order_relaxed); }

  // The idempotency keys stored by earlier processes, oldest first, as read by Open (at most
  // options.idempotency_keys; Open deleted older ones).
  const std::vector<StoredAck>& acks_at_open() const { return acks_at_open_; }
  // The change-feed entries stored by earlier processes, ascending and contiguous up to the stored
  // world version, within options.change_log (Open deleted the others). Moves them out: call once,
  // to seed the ChangeLog.
  std::vector<ChangeEntryPtr> TakeFeedAtOpen() { return std::move(feed_at_open_); }
  // Versions and bytes of the stored change feed.
  uint64_t feed_oldest_resumable_version() const;
  size_t feed_entries() const;

  // Whether edits can be written now.
  enum class WriteState {
    kOk = 0,
    // The disk had less than options.min_free_bytes free at the last write, or RocksDB met a
    // full disk (ENOSPC): edits are refused with RESOURCE_EXHAUSTED until there is space again
    // (checked at each write; RocksDB's own recovery polls), then the state is kOk again.
    kNoSpace = 1,
    // A write or sync failed with an I/O error: what reached the disk is unknown (a failed fsync
    // may have dropped dirty pages, and a retried fsync can report success on lost data), so
    // RocksDB stops writing for the rest of the process and so does the store: every edit is
    // refused with UNAVAILABLE until a restart, which recovers every acknowledged edit.
    kFailed = 2,
  };
  WriteState write_state() const { return write_state_.load(std::memory_order_acquire); }
  // Edit writes that failed so far (each failed its whole group of edits).
  uint64_t write_errors() const { return write_errors_.load(std::memory_order_relaxed); }

  // Writes (WriteBatches) issued so far.
  uint64_t batches_written() const { return batches_written_.load(std::memory_order_relaxed); }
  // Whether each write syncs the write-ahead log before it returns (StoreOptions::sync).
  bool syncs_writes() const { return options_.sync; }

 private:
  Store(std::unique_ptr<rocksdb::DB> db, std::string dir, const StoreOptions& options);
  // NO_SPACE's status if the data directory's file system has less than min_free_bytes free.
  absl::Status CheckFreeSpace();
  absl::Status LoadRegionIndex();
  absl::Status LoadAcks();
  absl::Status LoadFeed();
  absl::Status Write(const std::vector<std::pair<ChunkKey, ChunkPtr>>& chunks, uint64_t version,
                     const std::vector<const CommittedEdit*>& edits);
  bool RegionHasEdits(const ChunkKey& chunk) const;
  // The status of an edit write that RocksDB failed with `s`; updates write_state_.
  absl::Status WriteFailed(const rocksdb::Status& s);

  // Records durable versions in the DurableVersionMark, at most every second, until stopped.
  void MarkDurableVersions();

  std::unique_ptr<rocksdb::DB> db_;
  std::string dir_;
  StoreOptions options_;
  DurableVersionMark mark_;
  std::atomic<uint64_t> written_version_{0};  // of the last successful write
  absl::Mutex mark_mu_;
  bool stop_marking_ ABSL_GUARDED_BY(mark_mu_) = false;
  std::thread mark_thread_;
  mutable absl::Mutex regions_mu_;
  absl::flat_hash_set<Int3> edited_regions_ ABSL_GUARDED_BY(regions_mu_);
  mutable std::atomic<uint64_t> chunk_reads_{0};
  std::vector<StoredAck> acks_at_open_;
  absl::Mutex acks_mu_;
  // Stored keys by version, oldest first, and the version each key was last written with (a key
  // forgotten by the batcher may be reused; only its newest record is live).
  std::deque<std::pair<uint64_t, std::string>> ack_order_ ABSL_GUARDED_BY(acks_mu_);
  absl::flat_hash_map<std::string, uint64_t> ack_versions_ ABSL_GUARDED_BY(acks_mu_);
  std::atomic<uint64_t> batches_written_{0};
  std::atomic<WriteState> write_state_{WriteState::kOk};
  std::atomic<uint64_t> write_errors_{0};
  absl::Mutex failure_mu_;
  std::string failure_ ABSL_GUARDED_BY(failure_mu_);  // why the state is kFailed
  std::vector<ChangeEntryPtr> feed_at_open_;
  mutable absl::Mutex feed_mu_;
  RetentionWindow feed_window_ ABSL_GUARDED_BY(feed_mu_);
};

}  // namespace voxcol::store
