#include "core/store/store.h"

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/store/chunk_codec.h"
#include "core/store/feed_codec.h"
#include "core/store/keys.h"

namespace voxcol::store {
namespace {

// The one place where RocksDB statuses become absl ones.
absl::Status FromRocks(const rocksdb::Status& s, absl::string_view what) {
  if (s.ok()) return absl::OkStatus();
  std::string message = absl::StrCat(what, ": ", s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsNotFound()) return absl::NotFoundError(message);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(message);
  if (s.IsIOError() || s.IsBusy() || s.IsTimedOut() || s.IsTryAgain())
    return absl::UnavailableError(message);
  return absl::InternalError(message);
}

// zstd where this RocksDB build has it (Debian's does), else lz4; checked at open, never silent.
rocksdb::CompressionType ChooseCompression() {
  std::vector<rocksdb::CompressionType> supported = rocksdb::GetSupportedCompressions();
  for (auto wanted : {rocksdb::kZSTD, rocksdb::kLZ4Compression}) {
    if (std::find(supported.begin(), supported.end(), wanted) != supported.end()) return wanted;
  }
  return rocksdb::kNoCompression;
}

// RocksDB's info log as lines handed to StoreOptions::log, warnings and errors only.
class LineLogger : public rocksdb::Logger {
 public:
  explicit LineLogger(std::function<void(const std::string&)> sink)
      : Logger(rocksdb::InfoLogLevel::WARN_LEVEL), sink_(std::move(sink)) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char line[1024];
    const int n = std::vsnprintf(line, sizeof line, format, ap);
    if (n < 0) return;
    if (sink_) {
      sink_(line);
    } else {
      std::fprintf(stderr, "rocksdb: %s\n", line);
    }
  }

 private:
  std::function<void(const std::string&)> sink_;
};

rocksdb::Options MakeOptions(const StoreOptions& store_options) {
  rocksdb::Options options;
  options.create_if_missing = true;
  if (store_options.env) options.env = store_options.env.get();
  options.info_log = std::make_shared<LineLogger>(store_options.log);
  options.compression = ChooseCompression();
  options.bottommost_compression = options.compression;
  options.IncreaseParallelism(2);
  // Torn WAL tails after kill -9 are dropped; everything synced before them is recovered.
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  // Startup serves quickly: after a crash, opening replays the WAL of the unflushed memtables, so
  // keep those small (replaying 38 MB took 2.3 s on the shared 2-core machine), and replay into
  // the memtable without flushing it during the open. A clean shutdown flushes (see ~Store).
  options.write_buffer_size = size_t(4) << 20;
  options.avoid_flush_during_recovery = true;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(store_options.block_cache_bytes);
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

std::string FormatConfig(const WorldConfig& c, uint32_t generator_version) {
  return absl::StrFormat("seed=%d\nsize=%d,%d,%d\nvoxel_size=%.9g\ngenerator_version=%d\n", c.seed,
                         c.size_voxels.x, c.size_voxels.y, c.size_voxels.z, c.voxel_size,
                         generator_version);
}

bool ParseConfigLine(const std::pair<std::string, std::string>& kv, WorldConfig* c, uint32_t* gen) {
  if (kv.first == "seed") return absl::SimpleAtoi(kv.second, &c->seed);
  if (kv.first == "voxel_size") return absl::SimpleAtof(kv.second, &c->voxel_size);
  if (kv.first == "generator_version") return absl::SimpleAtoi(kv.second, gen);
  std::vector<std::string> parts = absl::StrSplit(kv.second, ',');
  return kv.first == "size" && parts.size() == 3 && absl::SimpleAtoi(parts[0], &c->size_voxels.x) &&
         absl::SimpleAtoi(parts[1], &c->size_voxels.y) &&
         absl::SimpleAtoi(parts[2], &c->size_voxels.z);
}

absl::Status ParseConfig(absl::string_view text, WorldConfig* c, uint32_t* gen) {
  int fields = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    if (!ParseConfigLine(kv, c, gen)) {
      return absl::DataLossError(absl::StrCat("world config: cannot parse line '", line, "'"));
    }
    ++fields;
  }
  if (fields != 4) return absl::DataLossError("world config: incomplete record");
  return ValidateWorldConfig(*c);
}

// Puts one feed entry per edit into `batch` and deletes the versions that leave `window` (which
// it advances). A direct chunk write (no edits) at `version` empties the feed instead.
void AddFeedEntries(const std::vector<const CommittedEdit*>& edits, uint64_t version,
                    RetentionWindow* window, rocksdb::WriteBatch* batch) {
  if (edits.empty()) {
    batch->DeleteRange(std::string(1, kFeedPrefix), std::string(1, kFeedPrefix + 1));
    window->Restart(version);
    return;
  }
  for (const CommittedEdit* edit : edits) {
    ChangeEntryPtr entry = MakeChangeEntry(*edit);
    batch->Put(FeedKey(entry->version), EncodeChangeEntry(*entry));
    // A later Delete of the same key in the batch wins, so entries of a large group that do not
    // fit the window are never stored.
    for (uint64_t dropped : window->Append({entry->version, entry->changes.size(), entry->bytes}))
      batch->Delete(FeedKey(dropped));
  }
}

}  // namespace

Store::Store(std::unique_ptr<rocksdb::DB> db, std::string dir, const StoreOptions& options)
    : db_(std::move(db)),
      dir_(std::move(dir)),
      options_(options),
      mark_(dir_),
      feed_window_(options.change_log, 0) {}

Store::~Store() {
  if (!db_) return;
  if (mark_thread_.joinable()) {
    {
      absl::MutexLock lock(&mark_mu_);
      stop_marking_ = true;
    }
    mark_thread_.join();
  }
  if (write_state() == WriteState::kFailed) {
    // No flush after a failed write: everything acknowledged is on disk already, and a flush
    // would only write to a log RocksDB saw fail (docs/reliability.md).
    db_->Close().PermitUncheckedError();
    return;
  }
  // Flush so that the next open has no WAL to replay; a failure only makes that open slower.
  // After a flush every written version is durable, synced writes or not.
  if (db_->Flush(rocksdb::FlushOptions()).ok()) {
    mark_.Write(written_version_.load()).IgnoreError();
  }
  db_->Close().PermitUncheckedError();
}

void Store::MarkDurableVersions() {
  uint64_t marked = 0;
  absl::MutexLock lock(&mark_mu_);
  while (!mark_mu_.AwaitWithTimeout(absl::Condition(&stop_marking_), absl::Seconds(1))) {
    // With synced writes every written version is durable; marking it never claims too much.
    const uint64_t written = written_version_.load();
    if (written <= marked) continue;
    mark_mu_.Unlock();
    const bool ok = mark_.Write(written).ok();
    mark_mu_.Lock();
    if (ok) marked = written;
  }
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& dir,
                                                   const StoreOptions& options) {
  rocksdb::Options rocks_options = MakeOptions(options);
  if (rocks_options.compression == rocksdb::kNoCompression) {
    return absl::FailedPreconditionError("this RocksDB build supports neither zstd nor lz4");
  }
  std::error_code ec;  // RocksDB logs an error for a directory it must create itself
  std::filesystem::create_directories(dir, ec);
  rocksdb::DB* raw = nullptr;
  absl::Status status = FromRocks(rocksdb::DB::Open(rocks_options, dir, &raw), "open " + dir);
  if (absl::IsDataLoss(status)) {
    return absl::DataLossError(absl::StrCat(status.message(), "; ", DamagedStoreAdvice()));
  }
  if (!status.ok()) return status;
  std::unique_ptr<Store> store(new Store(std::unique_ptr<rocksdb::DB>(raw), dir, options));
  if (status = CheckFormat(*store->db_, dir); !status.ok()) return status;
  if (options.verify_on_open) {
    if (status = VerifyTables(*store->db_, dir); !status.ok()) return status;
  }
  uint64_t version = 0;
  std::string value;
  if (store->db_->Get(rocksdb::ReadOptions(), kVersionKey, &value).ok()) {
    DecodeVersion(value, &version);
  }
  if (status = store->mark_.Check(version); !status.ok()) return status;
  store->written_version_ = version;
  if (status = store->LoadRegionIndex(); !status.ok()) return status;
  if (status = store->LoadAcks(); !status.ok()) return status;
  if (status = store->LoadFeed(); !status.ok()) return status;
  if (options.sync) {
    store->mark_thread_ = std::thread([s = store.get()] { s->MarkDurableVersions(); });
  }
  return store;
}

absl::Status Store::LoadRegionIndex() {
  // Only the small region keys are read; chunk records stay on disk until touched.
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  const std::string prefix(1, kRegionPrefix);
  absl::MutexLock lock(&regions_mu_);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    Int3 region;
    if (!DecodeKey(it->key().ToStringView(), kRegionPrefix, &region)) {
      return absl::DataLossError("region index: malformed key");
    }
    edited_regions_.insert(region);
  }
  return FromRocks(it->status(), "read region index");
}

absl::Status Store::LoadAcks() {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  const std::string prefix(1, kAckPrefix);
  std::vector<StoredAck> acks;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    StoredAck ack;
    ack.key = it->key().ToString().substr(1);
    if (!DecodeAck(it->value().ToStringView(), &ack.fingerprint, &ack.version,
                   &ack.changed_chunks)) {
      return absl::DataLossError(absl::StrCat("idempotency key '", ack.key, "': bad record"));
    }
    acks.push_back(std::move(ack));
  }
  if (absl::Status s = FromRocks(it->status(), "read idempotency keys"); !s.ok()) return s;
  std::sort(acks.begin(), acks.end(),
            [](const StoredAck& a, const StoredAck& b) { return a.version < b.version; });
  // A smaller --idempotency_keys than before: forget the oldest now.
  const size_t excess =
      acks.size() > options_.idempotency_keys ? acks.size() - options_.idempotency_keys : 0;
  if (excess > 0) {
    rocksdb::WriteBatch batch;
    for (size_t i = 0; i < excess; ++i) batch.Delete(std::string(1, kAckPrefix) + acks[i].key);
    if (absl::Status s =
            FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "trim idempotency keys");
        !s.ok()) {
      return s;
    }
    acks.erase(acks.begin(), acks.begin() + excess);
  }
  absl::MutexLock lock(&acks_mu_);
  for (const StoredAck& ack : acks) {
    ack_order_.emplace_back(ack.version, ack.key);
    ack_versions_[ack.key] = ack.version;
  }
  acks_at_open_ = std::move(acks);
  return absl::OkStatus();
}

absl::Status Store::LoadFeed() {
  uint64_t version = 0;
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), kVersionKey, &value);
  if (s.ok() && !DecodeVersion(value, &version))
    return absl::DataLossError("world version: bad record");
  if (!s.ok() && !s.IsNotFound()) return FromRocks(s, "read world version");
  std::vector<ChangeEntryPtr> entries;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  const std::string prefix(1, kFeedPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    uint64_t entry_version = 0;
    if (!DecodeVersion(it->key().ToStringView().substr(1), &entry_version))
      return absl::DataLossError("change feed: malformed key");
    absl::StatusOr<ChangeEntryPtr> entry =
        DecodeChangeEntry(entry_version, it->value().ToStringView());
    if (!entry.ok()) return entry.status();
    entries.push_back(*std::move(entry));
  }
  if (absl::Status st = FromRocks(it->status(), "read change feed"); !st.ok()) return st;
  // Keep the contiguous run ending at the world version, then the window of this process's
  // limits (they may be smaller than the last one's); delete everything else at once.
  size_t first = entries.size();
  while (first > 0 && entries[first - 1]->version == version - (entries.size() - first)) --first;
  rocksdb::WriteBatch batch;
  for (size_t i = 0; i < first; ++i) batch.Delete(FeedKey(entries[i]->version));
  RetentionWindow window(options_.change_log,
                         first < entries.size() ? entries[first]->version - 1 : version);
  for (size_t i = first; i < entries.size(); ++i) {
    const ChangeEntry& e = *entries[i];
    for (uint64_t dropped : window.Append({e.version, e.changes.size(), e.bytes}))
      batch.Delete(FeedKey(dropped));
  }
  if (batch.Count() > 0) {
    if (absl::Status st =
            FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "trim change feed");
        !st.ok()) {
      return st;
    }
  }
  for (size_t i = first; i < entries.size(); ++i) {
    if (entries[i]->version > window.base_version()) feed_at_open_.push_back(entries[i]);
  }
  absl::MutexLock lock(&feed_mu_);
  feed_window_ = std::move(window);
  return absl::OkStatus();
}

uint64_t Store::feed_oldest_resumable_version() const {
  absl::MutexLock lock(&feed_mu_);
  return feed_window_.base_version();
}

size_t Store::feed_entries() const {
  absl::MutexLock lock(&feed_mu_);
  return feed_window_.size();
}

absl::StatusOr<StoredWorld> Store::OpenWorld(const WorldConfig& requested,
                                             uint32_t generator_version) {
  StoredWorld stored;
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), kConfigKey, &value);
  if (s.IsNotFound()) {
    rocksdb::WriteOptions sync;
    sync.sync = true;
    absl::Status status =
        FromRocks(db_->Put(sync, kConfigKey, FormatConfig(requested, generator_version)),
                  "record world config");
    if (!status.ok()) return status;
    return StoredWorld{requested, generator_version, 0, true};
  }
  if (absl::Status status = FromRocks(s, "read world config"); !status.ok()) return status;
  if (absl::Status status = ParseConfig(value, &stored.config, &stored.generator_version);
      !status.ok()) {
    return status;
  }
  if (stored.generator_version != generator_version) {
    return absl::FailedPreconditionError(
        absl::StrCat("world was generated by generator version ", stored.generator_version,
                     " but this server has version ", generator_version, "; refusing to open it"));
  }
  s = db_->Get(rocksdb::ReadOptions(), kVersionKey, &value);
  if (s.ok() && !DecodeVersion(value, &stored.version))
    return absl::DataLossError("world version: bad record");
  if (!s.ok() && !s.IsNotFound()) return FromRocks(s, "read world version");
  return stored;
}

bool Store::RegionHasEdits(const ChunkKey& chunk) const {
  absl::ReaderMutexLock lock(&regions_mu_);  // shared: first touches of many chunks run in parallel
  return edited_regions_.contains(RegionOf(chunk));
}

absl::StatusOr<ChunkPtr> Store::Load(const ChunkKey& key) const {
  if (!RegionHasEdits(key)) return nullptr;
  chunk_reads_.fetch_add(1, std::memory_order_relaxed);
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), EncodeKey(kChunkPrefix, key), &value);
  if (s.IsNotFound()) return nullptr;
  std::string what = absl::StrFormat("stored chunk (%d, %d, %d)", key.x, key.y, key.z);
  if (absl::Status status = FromRocks(s, what); !status.ok()) return status;
  return DecodeChunk(value, what);
}

absl::Status Store::BeforePublish(const CommittedEdit& edit) { return BeforePublishGroup({&edit}); }

absl::Status Store::BeforePublishGroup(const std::vector<const CommittedEdit*>& edits) {
  // Later edits of the group overwrite earlier ones' chunks within the batch (applied in order).
  std::vector<std::pair<ChunkKey, ChunkPtr>> chunks;
  for (const CommittedEdit* edit : edits)
    chunks.insert(chunks.end(), edit->chunks.begin(), edit->chunks.end());
  return Write(chunks, edits.back()->result.version, edits);
}

absl::Status Store::WriteChunks(const std::vector<std::pair<ChunkKey, ChunkPtr>>& chunks,
                                uint64_t version) {
  return Write(chunks, version, {});
}

namespace {

absl::Status DiskFullError(absl::string_view why) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "the data directory's disk is full (", why,
      "): edits are refused until space is freed, then accepted again without a restart; "
      "queries are still answered"));
}

}  // namespace

absl::Status Store::CheckFreeSpace() {
  if (options_.min_free_bytes == 0) return absl::OkStatus();
  struct statvfs fs;
  if (statvfs(dir_.c_str(), &fs) != 0) return absl::OkStatus();  // unknown: let RocksDB find out
  const uint64_t free_bytes = uint64_t(fs.f_bavail) * fs.f_frsize;
  if (free_bytes >= options_.min_free_bytes) return absl::OkStatus();
  write_state_.store(WriteState::kNoSpace, std::memory_order_release);
  return DiskFullError(absl::StrCat(free_bytes >> 20, " MiB free, --min_free_disk_mb is ",
                                    options_.min_free_bytes >> 20));
}

absl::Status Store::WriteFailed(const rocksdb::Status& s) {
  write_errors_.fetch_add(1, std::memory_order_relaxed);
  if (s.IsNoSpace()) {
    write_state_.store(WriteState::kNoSpace, std::memory_order_release);
    return DiskFullError(s.ToString());
  }
  if (!s.IsIOError() && !s.IsCorruption()) return FromRocks(s, "write edit batch");
  // Never retried (see WriteState::kFailed): stop taking edits, keep serving reads.
  absl::MutexLock lock(&failure_mu_);
  failure_ = absl::StrCat(
      "storage failed (", s.ToString(),
      "): this server takes no more edits until it is restarted; every acknowledged edit is "
      "safe on disk; check the disk (docs/reliability.md) before restarting; queries are still "
      "answered");
  write_state_.store(WriteState::kFailed, std::memory_order_release);
  return absl::UnavailableError(failure_);
}

absl::Status Store::Write(const std::vector<std::pair<ChunkKey, ChunkPtr>>& chunks,
                          uint64_t version, const std::vector<const CommittedEdit*>& edits) {
  rocksdb::WriteBatch batch;
  // Idempotency keys go in the same batch as their edits: durable together or not at all. The
  // oldest keys beyond the capacity are deleted in it too.
  absl::MutexLock acks_lock(&acks_mu_);
  std::vector<std::pair<uint64_t, std::string>> added;
  for (const CommittedEdit* edit : edits) {
    if (edit->tag == nullptr || edit->tag->idempotency_key.empty()) continue;
    const std::string& key = edit->tag->idempotency_key;
    batch.Put(std::string(1, kAckPrefix) + key,
              EncodeAck(edit->tag->fingerprint, edit->result.version,
                        uint32_t(edit->result.changes.size())));
    added.emplace_back(edit->result.version, key);
  }
  size_t dropped = 0;
  while (ack_order_.size() - dropped + added.size() > options_.idempotency_keys &&
         dropped < ack_order_.size()) {
    const auto& [old_version, old_key] = ack_order_[dropped++];
    auto live = ack_versions_.find(old_key);
    const bool rewritten = std::any_of(added.begin(), added.end(),
                                       [&key = old_key](const auto& a) { return a.second == key; });
    if (live != ack_versions_.end() && live->second == old_version && !rewritten) {
      batch.Delete(std::string(1, kAckPrefix) + old_key);
    }
  }
  std::vector<Int3> regions;
  for (const auto& [key, chunk] : chunks) {
    batch.Put(EncodeKey(kChunkPrefix, key), EncodeChunk(*chunk));
    regions.push_back(RegionOf(key));
  }
  std::sort(regions.begin(), regions.end());
  regions.erase(std::unique(regions.begin(), regions.end()), regions.end());
  for (const Int3& region : regions) batch.Put(EncodeKey(kRegionPrefix, region), "");
  batch.Put(kVersionKey, EncodeVersion(version));
  absl::MutexLock feed_lock(&feed_mu_);
  RetentionWindow feed_window = feed_window_;  // committed only if the write succeeds
  AddFeedEntries(edits, version, &feed_window, &batch);
  if (write_state() == WriteState::kFailed) {
    absl::MutexLock lock(&failure_mu_);
    return absl::UnavailableError(failure_);
  }
  if (absl::Status space = CheckFreeSpace(); !space.ok()) return space;
  rocksdb::WriteOptions write;
  write.sync = options_.sync;
  if (rocksdb::Status s = db_->Write(write, &batch); !s.ok()) return WriteFailed(s);
  write_state_.store(WriteState::kOk, std::memory_order_release);  // RocksDB recovered, if it was
  written_version_.store(std::max(written_version_.load(), version));
  batches_written_.fetch_add(1, std::memory_order_relaxed);
  feed_window_ = std::move(feed_window);
  for (size_t i = 0; i < dropped; ++i) {
    auto live = ack_versions_.find(ack_order_.front().second);
    if (live != ack_versions_.end() && live->second == ack_order_.front().first) {
      ack_versions_.erase(live);
    }
    ack_order_.pop_front();
  }
  for (auto& [v, key] : added) {
    ack_versions_[key] = v;
    ack_order_.emplace_back(v, std::move(key));
  }
  // Before the caller publishes: a reader that misses the chunk in memory must find it here.
  absl::MutexLock lock(&regions_mu_);
  edited_regions_.insert(regions.begin(), regions.end());
  return absl::OkStatus();
}

absl::Status Store::CreateCheckpoint(const std::string& dir) {
  rocksdb::Checkpoint* raw = nullptr;
  absl::Status status = FromRocks(rocksdb::Checkpoint::Create(db_.get(), &raw), "checkpoint");
  if (!status.ok()) return status;
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  const uint64_t version = written_version_.load();  // the checkpoint holds at least this one
  // log_size_for_flush = 0: flush the memtable first so the checkpoint holds no WAL to replay.
  status = FromRocks(checkpoint->CreateCheckpoint(dir, 0), "checkpoint to " + dir);
  // A copy of the checkpoint cut short (a half-copied backup) is then refused, not opened older.
  if (status.ok()) status = DurableVersionMark(dir).Write(version);
  return status;
}

absl::Status Store::Flush() {
  absl::Status status = FromRocks(db_->Flush(rocksdb::FlushOptions()), "flush");
  if (status.ok()) mark_.Write(written_version_.load()).IgnoreError();
  return status;
}

absl::StatusOr<std::vector<std::string>> Store::TableCompressions() const {
  rocksdb::TablePropertiesCollection tables;
  absl::Status status = FromRocks(db_->GetPropertiesOfAllTables(&tables), "table properties");
  if (!status.ok()) return status;
  std::vector<std::string> names;
  for (const auto& [file, props] : tables) names.push_back(props->compression_name);
  return names;
}

}  // namespace voxcol::store
