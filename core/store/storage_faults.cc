#include "core/store/storage_faults.h"

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace voxcol::store {

namespace {

bool IsWal(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0;
}
rocksdb::IOStatus Gone() { return rocksdb::IOStatus::IOError("simulated power cut"); }

}  // namespace

class StorageFaults::Fs : public rocksdb::FileSystemWrapper {
 public:
  Fs() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "VoxcolStorageFaults"; }

  // What an append or a sync must do now.
  enum class Injected { kNone, kNoSpace, kTorn, kSyncError };

  Injected ForAppend(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    PollControlFileLocked();
    if (no_space_) return Count(Injected::kNoSpace);
    if (tear_next_wal_append_ && IsWal(name)) {
      tear_next_wal_append_ = false;
      return Count(Injected::kTorn);
    }
    return Injected::kNone;
  }
  Injected ForSync(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    PollControlFileLocked();
    return sync_fails_ && IsWal(name) ? Count(Injected::kSyncError) : Injected::kNone;
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
    const uint64_t existing = std::filesystem::file_size(fname, ec);
    rocksdb::IOStatus s = target()->ReopenWritableFile(fname, options, result, dbg);
    if (s.ok()) Track(fname, ec ? 0 : existing, result);
    return s;
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string&, const std::string&,
                                      const rocksdb::FileOptions&,
                                      std::unique_ptr<rocksdb::FSWritableFile>*,
                                      rocksdb::IODebugContext*) override {
    return rocksdb::IOStatus::NotSupported("StorageFaults: no log recycling");
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

  struct FileState {
    uint64_t appended = 0;  // length written through this file system
    uint64_t synced = 0;    // length covered by the last completed sync
  };

  mutable std::mutex mu_;
  std::map<std::string, FileState> files_;
  bool crashed_ = false;
  bool no_space_ = false;
  bool sync_fails_ = false;
  bool tear_next_wal_append_ = false;
  uint64_t injected_ = 0;
  uint64_t wal_syncs_ = 0;
  std::chrono::microseconds wal_sync_delay_{0};
  // The control file (WatchControlFile) and what was last read from it.
  std::string control_path_;
  std::chrono::steady_clock::time_point next_poll_{};
  std::string control_text_;

  bool IsCrashed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return crashed_;
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

 private:
  class File;

  Injected Count(Injected what) {
    ++injected_;
    return what;
  }
  void Track(const std::string& name, uint64_t existing,
             std::unique_ptr<rocksdb::FSWritableFile>* result);

  // Re-reads the control file when it changed; at most every 10 ms.
  void PollControlFileLocked() {
    if (control_path_.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_poll_) return;
    next_poll_ = now + std::chrono::milliseconds(10);
    std::ifstream in(control_path_);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (text.str() == control_text_) return;
    control_text_ = text.str();
    no_space_ = sync_fails_ = false;
    std::string word;
    std::istringstream words(control_text_);
    while (words >> word) {
      if (word == "enospc") no_space_ = true;
      if (word == "eio-sync") sync_fails_ = true;
      if (word == "torn-write") tear_next_wal_append_ = true;
    }
  }
};

// A writable file whose appends and syncs go through the faults and are counted.
class StorageFaults::Fs::File : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  File(std::unique_ptr<rocksdb::FSWritableFile> target, Fs* fs, std::string name)
      : FSWritableFileOwnerWrapper(std::move(target)), fs_(fs), name_(std::move(name)) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    if (fs_->IsCrashed()) return Gone();
    const Injected fault = fs_->ForAppend(name_);
    if (fault != Injected::kNone) {
      // Half of the bytes reach the file, as a short write(2) before the error.
      const rocksdb::Slice half(data.data(), data.size() / 2);
      if (target()->Append(half, options, dbg).ok()) fs_->Appended(name_, half.size());
      return fault == Injected::kNoSpace
                 ? rocksdb::IOStatus::NoSpace("injected: no space left on device")
                 : rocksdb::IOStatus::IOError("injected: torn write (EIO)");
    }
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
    return rocksdb::IOStatus::NotSupported("StorageFaults: no direct I/O");
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice&, uint64_t, const rocksdb::IOOptions&,
                                     const rocksdb::DataVerificationInfo&,
                                     rocksdb::IODebugContext*) override {
    return rocksdb::IOStatus::NotSupported("StorageFaults: no direct I/O");
  }
  rocksdb::IOStatus Truncate(uint64_t size, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
    if (fs_->IsCrashed()) return Gone();
    return target()->Truncate(size, options, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    return SyncWith([&] { return target()->Sync(options, dbg); });
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override {
    return SyncWith([&] { return target()->Fsync(options, dbg); });
  }
  rocksdb::IOStatus Close(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override {
    // Closing does not sync; after a power cut the descriptor is simply gone.
    return target()->Close(options, dbg);
  }

 private:
  template <typename SyncFn>
  rocksdb::IOStatus SyncWith(SyncFn sync) {
    if (fs_->IsCrashed()) return Gone();
    const uint64_t covered = fs_->AppendedLength(name_);  // appends are done before the sync
    std::chrono::microseconds delay;
    {
      std::lock_guard<std::mutex> lock(fs_->mu_);
      delay = fs_->wal_sync_delay_;
    }
    if (IsWal(name_) && delay.count() > 0) std::this_thread::sleep_for(delay);
    if (fs_->ForSync(name_) == Injected::kSyncError) {
      return rocksdb::IOStatus::IOError("injected: fsync failed (EIO)");
    }
    rocksdb::IOStatus s = sync();
    if (s.ok()) fs_->Synced(name_, covered);
    return s;
  }

  Fs* fs_;
  std::string name_;
};

void StorageFaults::Fs::Track(const std::string& name, uint64_t existing,
                              std::unique_ptr<rocksdb::FSWritableFile>* result) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    files_[name] = FileState{existing, existing};
  }
  *result = std::make_unique<File>(std::move(*result), this, name);
}

StorageFaults::StorageFaults()
    : fs_(std::make_shared<Fs>()), env_(rocksdb::NewCompositeEnv(fs_).release()) {}

StorageFaults::~StorageFaults() = default;

void StorageFaults::SetNoSpace(bool on) {
  std::lock_guard<std::mutex> lock(fs_->mu_);
  fs_->no_space_ = on;
}

void StorageFaults::SetSyncFails(bool on) {
  std::lock_guard<std::mutex> lock(fs_->mu_);
  fs_->sync_fails_ = on;
}

void StorageFaults::TearNextWalAppend() {
  std::lock_guard<std::mutex> lock(fs_->mu_);
  fs_->tear_next_wal_append_ = true;
}

void StorageFaults::WatchControlFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(fs_->mu_);
  fs_->control_path_ = path;
}

uint64_t StorageFaults::injected() const {
  std::lock_guard<std::mutex> lock(fs_->mu_);
  return fs_->injected_;
}

void StorageFaults::set_wal_sync_delay(std::chrono::microseconds delay) {
  std::lock_guard<std::mutex> lock(fs_->mu_);
  fs_->wal_sync_delay_ = delay;
}

uint64_t StorageFaults::wal_syncs() const {
  std::lock_guard<std::mutex> lock(fs_->mu_);
  return fs_->wal_syncs_;
}

uint64_t StorageFaults::unsynced_wal_bytes() const {
  std::lock_guard<std::mutex> lock(fs_->mu_);
  uint64_t bytes = 0;
  for (const auto& [name, f] : fs_->files_) {
    if (IsWal(name)) bytes += f.appended - f.synced;
  }
  return bytes;
}

uint64_t StorageFaults::wal_bytes_appended() const {
  std::lock_guard<std::mutex> lock(fs_->mu_);
  uint64_t bytes = 0;
  for (const auto& [name, f] : fs_->files_) {
    if (IsWal(name)) bytes += f.appended;
  }
  return bytes;
}

void StorageFaults::Crash() {
  std::lock_guard<std::mutex> lock(fs_->mu_);
  fs_->crashed_ = true;
}

uint64_t StorageFaults::DropUnsyncedData(bool torn_tail) {
  std::lock_guard<std::mutex> lock(fs_->mu_);
  uint64_t dropped = 0;
  for (const auto& [name, f] : fs_->files_) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(name, ec);
    if (ec || size <= f.synced) continue;
    const uint64_t keep = f.synced + (torn_tail ? (size - f.synced) / 2 : 0);
    dropped += size - keep;
    std::filesystem::resize_file(name, keep, ec);
  }
  fs_->files_.clear();
  fs_->crashed_ = false;
  fs_->no_space_ = fs_->sync_fails_ = fs_->tear_next_wal_append_ = false;
  return dropped;
}

}  // namespace voxcol::store
