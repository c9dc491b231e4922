// A RocksDB file system for durability tests: it counts syncs, can slow them down (so that
// concurrent writers pile up behind one sync, as on a real disk) and simulates power loss: after
// Crash() every further write fails, and DropUnsyncedData() cuts each file written through it back
// to the length it had at its last completed Sync/Fsync, which is what a disk guarantees after a
// power cut. A kill -9 keeps the page cache, so only this can tell a synced write from an unsynced
// one.
#pragma once

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace voxcol::testing {

class FaultInjectionFs : public rocksdb::FileSystemWrapper {
 public:
  FaultInjectionFs() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "FaultInjectionFs"; }

  // Every WAL Sync/Fsync sleeps this long before it completes (0: no delay).
  void set_wal_sync_delay(std::chrono::microseconds delay) { wal_sync_delay_ = delay; }

  // Completed syncs of write-ahead log files (*.log).
  uint64_t wal_syncs() const {
    std::lock_guard<std::mutex> lock(mu_);
    return wal_syncs_;
  }
  // Bytes appended to write-ahead log files that no completed sync covers yet.
  uint64_t unsynced_wal_bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t bytes = 0;
    for (const auto& [name, f] : files_) {
      if (IsWal(name)) bytes += f.appended - f.synced;
    }
    return bytes;
  }
  uint64_t wal_bytes_appended() const {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t bytes = 0;
    for (const auto& [name, f] : files_) {
      if (IsWal(name)) bytes += f.appended;
    }
    return bytes;
  }

  // From now on every write, sync, file creation, rename and deletion fails: the process is
  // gone, nothing more reaches the disk (closing the store after this writes nothing).
  void Crash() {
    std::lock_guard<std::mutex> lock(mu_);
    crashed_ = true;
  }
  // After Crash() and after the DB is closed: what a power cut leaves. Each file written through
  // this file system is truncated to its last synced length. Returns the bytes dropped. Then the
  // file system works again (for reopening).
  uint64_t DropUnsyncedData() {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t dropped = 0;
    for (const auto& [name, f] : files_) {
      std::error_code ec;
      const uint64_t size = std::filesystem::file_size(name, ec);
      if (ec || size <= f.synced) continue;
      dropped += size - f.synced;
      std::filesystem::resize_file(name, f.synced, ec);
    }
    files_.clear();
    crashed_ = false;
    return dropped;
  }

  rocksdb::IOStatus NewWritableFile(const std::string& fname, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override {
    if (IsCrashed()) return Gone();
    rocksdb::IOStatus s = target()->NewWritableFile(fname, options, result, dbg);
    if (s.ok()) Track(fname, 0, result);
    return s;
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& fname,
                                       const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override {
    if (IsCrashed()) return Gone();
    std::error_code ec;
    uint64_t existing = std::filesystem::file_size(fname, ec);
    rocksdb::IOStatus s = target()->ReopenWritableFile(fname, options, result, dbg);
    if (s.ok()) Track(fname, ec ? 0 : existing, result);
    return s;
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string&, const std::string&,
                                      const rocksdb::FileOptions&,
                                      std::unique_ptr<rocksdb::FSWritableFile>*,
                                      rocksdb::IODebugContext*) override {
    return rocksdb::IOStatus::NotSupported("FaultInjectionFs: no log recycling");
  }
  rocksdb::IOStatus RenameFile(const std::string& src, const std::string& target_name,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override {
    if (IsCrashed()) return Gone();
    rocksdb::IOStatus s = target()->RenameFile(src, target_name, options, dbg);
    std::lock_guard<std::mutex> lock(mu_);
    if (s.ok() && files_.count(src)) {
      files_[target_name] = files_[src];
      files_.erase(src);
    }
    return s;
  }
  rocksdb::IOStatus DeleteFile(const std::string& fname, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override {
    if (IsCrashed()) return Gone();
    rocksdb::IOStatus s = target()->DeleteFile(fname, options, dbg);
    std::lock_guard<std::mutex> lock(mu_);
    if (s.ok()) files_.erase(fname);
    return s;
  }

 private:
  struct FileState {
    uint64_t appended = 0;  // length written through this file system
    uint64_t synced = 0;    // length covered by the last completed sync
  };

  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> target, FaultInjectionFs* fs, std::string name)
        : FSWritableFileOwnerWrapper(std::move(target)), fs_(fs), name_(std::move(name)) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
      if (fs_->IsCrashed()) return Gone();
      rocksdb::IOStatus s = target()->Append(data, options, dbg);
      if (s.ok()) fs_->Appended(name_, data.size());
      return s;
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             const rocksdb::DataVerificationInfo&,
                             rocksdb::IODebugContext* dbg) override {
      return Append(data, options, dbg);
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice&, uint64_t, const rocksdb::IOOptions&,
                                       rocksdb::IODebugContext*) override {
      return rocksdb::IOStatus::NotSupported("FaultInjectionFs: no direct I/O");
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice&, uint64_t, const rocksdb::IOOptions&,
                                       const rocksdb::DataVerificationInfo&,
                                       rocksdb::IODebugContext*) override {
      return rocksdb::IOStatus::NotSupported("FaultInjectionFs: no direct I/O");
    }
    rocksdb::IOStatus Truncate(uint64_t size, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override {
      if (fs_->IsCrashed()) return Gone();
      return target()->Truncate(size, options, dbg);
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
      return SyncWith([&] { return target()->Sync(options, dbg); });
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                            rocksdb::IODebugContext* dbg) override {
      return SyncWith([&] { return target()->Fsync(options, dbg); });
    }
    rocksdb::IOStatus Close(const rocksdb::IOOptions& options,
                            rocksdb::IODebugContext* dbg) override {
      // Closing does not sync; after a crash the descriptor is simply gone.
      return target()->Close(options, dbg);
    }

   private:
    template <typename SyncFn>
    rocksdb::IOStatus SyncWith(SyncFn sync) {
      if (fs_->IsCrashed()) return Gone();
      const uint64_t covered = fs_->AppendedLength(name_);  // appends are done before the sync
      if (IsWal(name_) && fs_->wal_sync_delay_.count() > 0)
        std::this_thread::sleep_for(fs_->wal_sync_delay_);
      rocksdb::IOStatus s = sync();
      if (s.ok()) fs_->Synced(name_, covered);
      return s;
    }
    FaultInjectionFs* fs_;
    std::string name_;
  };

  static bool IsWal(const std::string& name) {
    return name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0;
  }
  static rocksdb::IOStatus Gone() { return rocksdb::IOStatus::IOError("simulated crash"); }
  bool IsCrashed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return crashed_;
  }
  void Track(const std::string& name, uint64_t existing,
             std::unique_ptr<rocksdb::FSWritableFile>* result) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      files_[name] = FileState{existing, existing};
    }
    *result = std::make_unique<File>(std::move(*result), this, name);
  }
  void Appended(const std::string& name, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    files_[name].appended += bytes;
  }
  uint64_t AppendedLength(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(name);
    return it == files_.end() ? 0 : it->second.appended;
  }
  void Synced(const std::string& name, uint64_t covered) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(name);
    if (it != files_.end()) it->second.synced = std::max(it->second.synced, covered);
    if (IsWal(name)) ++wal_syncs_;
  }

  mutable std::mutex mu_;
  std::map<std::string, FileState> files_;
  bool crashed_ = false;
  uint64_t wal_syncs_ = 0;
  std::chrono::microseconds wal_sync_delay_{0};
};

// An Env for StoreOptions::env that does its file I/O through `fs`.
inline std::shared_ptr<rocksdb::Env> EnvFor(const std::shared_ptr<FaultInjectionFs>& fs) {
  return std::shared_ptr<rocksdb::Env>(rocksdb::NewCompositeEnv(fs).release());
}

}  // namespace voxcol::testing
