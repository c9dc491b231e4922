// Storage faults on demand, injected under RocksDB (a rocksdb::FileSystem wrapper): what a disk
// does that kill -9 cannot show. A full disk (ENOSPC), a failing fsync (EIO), a torn write, and a
// power cut that loses every byte no completed sync covered (the page cache survives a kill -9,
// so only this tells a synced write from an unsynced one). Tests build one and pass env() in
// StoreOptions; the server builds one only with --storage_faults_file (tests of the real binary),
// and then reads the faults to inject from that file.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace rocksdb {
class Env;
}  // namespace rocksdb

namespace voxcol::store {

class StorageFaults {
 public:
  StorageFaults();
  ~StorageFaults();
  StorageFaults(const StorageFaults&) = delete;
  StorageFaults& operator=(const StorageFaults&) = delete;

  // For StoreOptions::env: RocksDB's file I/O through this object. Outlives the store.
  std::shared_ptr<rocksdb::Env> env() const { return env_; }

  // Faults; any thread, any time.
  // While on, every append to any file writes half of its bytes and fails with ENOSPC, as
  // write(2) does on a full disk.
  void SetNoSpace(bool on);
  // While on, every sync of a write-ahead log fails with EIO; the bytes it would have covered
  // stay unsynced (a power cut drops them).
  void SetSyncFails(bool on);
  // The next append to a write-ahead log writes half of its bytes and fails with EIO.
  void TearNextWalAppend();
  // Takes the faults from the file at `path` whenever it changes (looked at, at most every 10 ms,
  // by the file operations): one word per line, `enospc`, `eio-sync` (the two switches above, on
  // while listed) and `torn-write` (one torn append each time the file is rewritten with it). A
  // missing or empty file means no faults.
  void WatchControlFile(const std::string& path);
  // Appends and syncs failed by the faults above so far.
  uint64_t injected() const;

  // What the disk has; for tests.
  // Every WAL Sync/Fsync sleeps this long before it completes (0: no delay).
  void set_wal_sync_delay(std::chrono::microseconds delay);
  // Completed syncs of write-ahead log files (*.log).
  uint64_t wal_syncs() const;
  // Bytes appended to write-ahead log files that no completed sync covers yet.
  uint64_t unsynced_wal_bytes() const;
  uint64_t wal_bytes_appended() const;

  // Power cut. From Crash() on every write, sync, file creation, rename and deletion fails: the
  // process is gone, nothing more reaches the disk (closing the store afterwards writes nothing).
  void Crash();
  // After Crash() and after the store is closed: what the power cut leaves. Each file written
  // through this object is cut back to its last synced length, or, with `torn_tail`, to that
  // plus half of its unsynced bytes (a write torn by the cut). Returns the bytes dropped; then
  // the file system works again, with no faults set.
  uint64_t DropUnsyncedData(bool torn_tail = false);

 private:
  class Fs;
  std::shared_ptr<Fs> fs_;
  std::shared_ptr<rocksdb::Env> env_;
};

}  // namespace voxcol::store
