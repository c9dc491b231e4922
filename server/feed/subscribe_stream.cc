#include "server/feed/subscribe_stream.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"
#include "server/convert/convert_edit.h"
#include "server/telemetry/server_metrics.h"

namespace voxcol::server {
namespace {

// The log reads of one pump round. Streams at the same cursor (most of them) share one read, so the
// pump takes the log's lock about once per round rather than once per stream: the edit path
// appends under that lock, and the pump runs at a lower priority, so each of its holds risks
// being preempted while an edit waits (an edit waited ~100 ms in the handler).
class RoundReader {
 public:
  explicit RoundReader(const ChangeLog& log) : log_(log) {}

  // As ChangeLog::Read without waiting; served from the round's snapshot when it covers the
  // request (a stream at the snapshot's newest version gets nothing new until the next round).
  absl::StatusOr<std::vector<ChangeEntryPtr>> Read(uint64_t after_version, size_t max_entries) {
    if (has_snapshot_ && after_version >= after_ && after_version <= after_ + entries_.size()) {
      const size_t first = size_t(after_version - after_);
      if (complete_ || first + max_entries <= entries_.size()) {
        const size_t n = std::min(max_entries, entries_.size() - first);
        return std::vector<ChangeEntryPtr>(entries_.begin() + first, entries_.begin() + first + n);
      }
    }
    absl::StatusOr<std::vector<ChangeEntryPtr>> read =
        log_.Read(after_version, max_entries, absl::ZeroDuration());
    if (read.ok() && !has_snapshot_) {
      has_snapshot_ = true;
      after_ = after_version;
      entries_ = *read;
      complete_ = read->size() < max_entries;  // everything up to the newest version
    }
    return read;
  }

 private:
  const ChangeLog& log_;
  bool has_snapshot_ = false;
  uint64_t after_ = 0;                   // the snapshot holds the versions after this one
  std::vector<ChangeEntryPtr> entries_;  // contiguous
  bool complete_ = false;
};

// How long the pump waits for a write to complete before it takes the writes in flight as stalled.
constexpr absl::Duration kStalledWrite = absl::Milliseconds(50);

}  // namespace

// The serialized responses of recent changes, one per change and filter (region, include_voxels):
// every subscriber with that filter sends the same bytes (grpc::ByteBuffer copies share their
// slices), so a change going to 1,000 subscribers of one region is encoded once, not 1,000 times.
// Used by the pump thread only.
class SubscriptionHub::EncodedChanges {
 public:
  struct Encoded {
    bool in_region;            // the change touched the region (else only include_empty sends it)
    grpc::ByteBuffer message;  // the serialized SubscribeResponse
    size_t bytes;
  };

  const Encoded& Get(const ChangeEntry& entry, const IntBox& region, bool include_voxels) {
    const Key key{entry.version, region.min.x, region.min.y, region.min.z,
                  region.max.x,  region.max.y, region.max.z, include_voxels};
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    Encoded encoded;
    v1::SubscribeResponse response;
    encoded.in_region = ToProto(entry, region, include_voxels, &response);
    bool own = false;
    grpc::SerializationTraits<v1::SubscribeResponse>::Serialize(response, &encoded.message, &own);
    encoded.bytes = encoded.message.Length();
    GetServerMetrics().subscribe_encodings->Add();
    // Bounded in entries and bytes: the oldest versions go first (a subscriber far behind
    // encodes them again), never the one just made.
    bytes_ += encoded.bytes;
    auto made = cache_.emplace(key, std::move(encoded)).first;
    while ((cache_.size() > kMaxEntries || bytes_ > kMaxBytes) && cache_.begin() != made) {
      bytes_ -= cache_.begin()->second.bytes;
      cache_.erase(cache_.begin());
    }
    return made->second;
  }

 private:
  // Version first, so that begin() is the oldest change.
  using Key = std::tuple<uint64_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, bool>;
  static constexpr size_t kMaxEntries = 4096;
  static constexpr size_t kMaxBytes = size_t(16) << 20;
  std::map<Key, Encoded> cache_;
  size_t bytes_ = 0;  // of the encodings held
};

// One Subscribe stream: a cursor into the change log and a buffer of at most `capacity` prepared
// responses, the front of which is being written. gRPC allows one outstanding write per stream;
// the pump (Pump) fills the buffer and starts each write, and the write's completion
// (OnWriteDone, on an RPC thread) only pops it and hands the stream back to the pump, so
// no thread ever waits for this client.
class SubscribeStream final : public AsyncStream {
 public:
  SubscribeStream(std::unique_ptr<StreamCall> call, SubscriptionHub* hub, const IntBox& region,
                  const v1::SubscribeRequest& request, uint64_t cursor,
                  const SubscribeLimits& limits)
      : AsyncStream(std::move(call)),
        hub_(hub),
        region_(region),
        include_voxels_(request.include_voxels()),
        include_empty_(request.include_empty()),
        capacity_(limits.buffer_responses),
        byte_capacity_(limits.buffer_bytes),
        cursor_(cursor),
        last_sent_(cursor) {}

  ~SubscribeStream() override { AddBuffered(-int64_t(buffered_bytes_)); }

  // Moves new entries from the log into the buffer and, unless a write is in flight, starts
  // writing the front one (then sets *started); the pump calls it. Returns true when the log may
  // hold more for this stream right now (visit it again).
  bool Pump(RoundReader& log, SubscriptionHub::EncodedChanges& encoded, bool* started) {
    absl::MutexLock lock(&mu_);
    *started = false;
    if (finished_) return false;
    // A live stream that is not waiting for its client (no write in flight, or nothing waiting
    // behind it) keeps up: if more versions arrived than its buffer holds, the pump was late (a
    // burst of edits, or the pump yielding the CPU), not the client slow, so take them as a
    // catch-up instead of ending it.
    if (caught_up_ && (!writing_ || buffer_.size() <= 1)) caught_up_ = false;
    bool more = false;
    if (buffer_.size() < capacity_ || caught_up_) {
      // While catching up take only what fits; once live take one more than fits, so that a
      // stream that cannot keep up is noticed.
      const size_t room = capacity_ - std::min(capacity_, buffer_.size()) + (caught_up_ ? 1 : 0);
      absl::StatusOr<std::vector<ChangeEntryPtr>> entries = log.Read(cursor_, room);
      if (!entries.ok()) {
        EndLocked(ReadError(entries.status()));
        return false;
      }
      if (!TakeLocked(*entries, encoded)) return false;
      // Fewer entries than asked for, all taken: this stream has reached the newest version.
      if (entries->size() < room && (entries->empty() || cursor_ == entries->back()->version))
        caught_up_ = true;
      more = entries->size() == room && cursor_ == entries->back()->version;
    }
    *started = StartNextWriteLocked();
    return more;
  }

  void OnWriteDone(bool ok) override {
    bool more = false;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (ok) last_sent_ = buffer_.front().version;
      buffered_bytes_ -= buffer_.front().bytes;
      AddBuffered(-int64_t(buffer_.front().bytes));
      buffer_.pop_front();
      if (!finished_ && !ok) EndLocked(absl::CancelledError("the client went away"));
      // More to send: the buffer, or the log beyond what the buffer took while catching up.
      more = !finished_ && (!buffer_.empty() || !caught_up_);
    }
    // The pump starts the next write (the stream stays alive until OnDone).
    hub_->WriteDone(this, more);
  }

  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    if (!finished_) EndLocked(absl::CancelledError("cancelled by the client"));
  }

  // The last reaction: the hub drops its reference (this may delete the stream).
  void OnDone() override { hub_->Remove(this); }

 private:
  // A cursor that was valid when the stream opened leaves the window only when the stream fell
  // behind it; a closed log is a shutdown.
  absl::Status ReadError(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (status.code() != absl::StatusCode::kOutOfRange) return status;
    return absl::ResourceExhaustedError(
        absl::StrCat("subscriber fell behind: versions after ", cursor_,
                     " left the change log's retention window; resync with ReadVoxels and "
                     "subscribe again from the version it returns"));
  }

  // The first response always fits, however large: a stream must be able to make progress.
  bool FitsLocked(size_t bytes) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return buffer_.empty() ||
           (buffer_.size() < capacity_ && buffered_bytes_ + bytes <= byte_capacity_);
  }

  // Finishes the call; a write in flight stays in the buffer until OnWriteDone (gRPC sends the
  // status after it, when the client reads).
  void EndLocked(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    finished_ = true;
    buffer_.erase(buffer_.begin() + (writing_ ? 1 : 0), buffer_.end());
    const size_t kept = buffer_.empty() ? 0 : buffer_.front().bytes;
    AddBuffered(int64_t(kept) - int64_t(buffered_bytes_));
    buffered_bytes_ = kept;
    if (status.code() == absl::StatusCode::kResourceExhausted) hub_->ended_slow_.fetch_add(1);
    Finish(ToGrpcStatus(status));
  }

  // Buffers the responses of `entries` (those inside the region) and advances the cursor past
  // the ones taken. Returns false if the stream was ended (a live stream whose buffer is full).
  bool TakeLocked(const std::vector<ChangeEntryPtr>& entries,
                  SubscriptionHub::EncodedChanges& encoded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const ChangeEntryPtr& entry : entries) {
      const SubscriptionHub::EncodedChanges::Encoded& change =
          encoded.Get(*entry, region_, include_voxels_);
      if (change.in_region || include_empty_) {
        Buffered item{entry->version, change.bytes, change.message};
        if (!FitsLocked(item.bytes)) {
          if (!caught_up_) break;  // catching up: continue from here once the buffer drains
          EndLocked(absl::ResourceExhaustedError(absl::StrCat(
              "subscriber fell behind: its buffer (", capacity_, " responses, ", byte_capacity_,
              " bytes; --subscribe_buffer, --subscribe_buffer_mb) is full; subscribe again with "
              "from_version set to the version of the last response you received (the server "
              "last sent version ",
              last_sent_, ")")));
          return false;
        }
        buffered_bytes_ += item.bytes;
        AddBuffered(int64_t(item.bytes));
        buffer_.push_back(std::move(item));
      }
      cursor_ = entry->version;
    }
    return true;
  }

  // The process-wide gauge of buffered bytes (voxcol_subscribe_buffered_bytes).
  static void AddBuffered(int64_t bytes) {
    GetServerMetrics().subscribe_buffered_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }

  // Starts writing the front response unless a write is in flight; true if it started one.
  bool StartNextWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || buffer_.empty()) return false;
    writing_ = true;
    StartWrite(&buffer_.front().message);  // deque: push_back keeps the front where it is
    return true;
  }

  struct Buffered {
    uint64_t version;
    size_t bytes;              // serialized size
    grpc::ByteBuffer message;  // the serialized SubscribeResponse
  };

  SubscriptionHub* const hub_;
  const IntBox region_;
  const bool include_voxels_;
  const bool include_empty_;    // also batches that changed nothing in the region (read replicas)
  const size_t capacity_;       // responses
  const size_t byte_capacity_;  // serialized bytes
  absl::Mutex mu_;
  uint64_t cursor_ ABSL_GUARDED_BY(mu_);     // newest version taken from the log
  uint64_t last_sent_ ABSL_GUARDED_BY(mu_);  // version of the last response written
  std::deque<Buffered> buffer_ ABSL_GUARDED_BY(mu_);
  size_t buffered_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;    // buffer_.front() is being written
  bool caught_up_ ABSL_GUARDED_BY(mu_) = false;  // has read up to the newest version once
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

SubscriptionHub::SubscriptionHub(ChangeLog& log, const SubscribeLimits& limits)
    : log_(log), limits_(limits), encoded_(std::make_unique<EncodedChanges>()) {
  log_.SetListener([this](uint64_t) { WakeAll(); });
  pump_ = std::thread([this] { Run(); });
}

SubscriptionHub::~SubscriptionHub() {
  log_.SetListener(nullptr);
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  pump_.join();
}

AsyncStream* SubscriptionHub::Failed(std::unique_ptr<StreamCall> call, const absl::Status& status) {
  return FinishedStream(std::move(call), ToGrpcStatus(status));
}

AsyncStream* SubscriptionHub::Open(std::unique_ptr<StreamCall> call,
                                   const v1::SubscribeRequest& request, const IntBox& region) {
  const uint64_t cursor =
      request.has_from_version() ? request.from_version() : log_.newest_version();
  // A cursor outside the window fails here with OUT_OF_RANGE, before anything is streamed.
  absl::Status status = log_.Read(cursor, 0, absl::ZeroDuration()).status();
  if (!status.ok()) return Failed(std::move(call), status);
  auto stream =
      std::make_shared<SubscribeStream>(std::move(call), this, region, request, cursor, limits_);
  SubscribeStream* raw = stream.get();
  absl::MutexLock lock(&mu_);
  streams_.emplace(raw, Entry{std::move(stream)});
  EnqueueLocked(raw);
  return raw;
}

SubscribeStats SubscriptionHub::stats() const {
  absl::MutexLock lock(&mu_);
  return {streams_.size(), ended_slow_.load()};
}

void SubscriptionHub::WakeAll() {
  absl::MutexLock lock(&mu_);
  wake_all_ = true;  // the pump queues every stream: this runs under the world's edit lock
}

void SubscriptionHub::EnqueueLocked(SubscribeStream* stream) {
  auto it = streams_.find(stream);
  if (it == streams_.end() || it->second.queued) return;
  it->second.queued = true;
  ready_.push_back(stream);
}

void SubscriptionHub::WriteDone(SubscribeStream* stream, bool more) {
  absl::MutexLock lock(&mu_);
  --in_flight_;
  stalled_ = std::min(stalled_, in_flight_);
  if (more) EnqueueLocked(stream);
}

void SubscriptionHub::Remove(SubscribeStream* stream) {
  std::shared_ptr<SubscribeStream> last;  // released after the lock
  absl::MutexLock lock(&mu_);
  auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  last = std::move(it->second.stream);
  if (it->second.queued) ready_.erase(std::find(ready_.begin(), ready_.end(), stream));
  streams_.erase(it);
}

void SubscriptionHub::Run() {
  // Feeding subscribers must not take CPU from edits and queries: run below their priority.
  setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), 10);
  const int64_t window = int64_t(std::max<size_t>(1, limits_.writes_in_flight));
  std::vector<std::shared_ptr<SubscribeStream>> batch;
  std::vector<SubscribeStream*> again;
  while (true) {
    batch.clear();
    again.clear();
    {
      absl::MutexLock lock(&mu_);
      // Work: a new version, or queued streams and at most half a window of writes counted in
      // flight (rounds of at least half a window).
      auto has_work = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || wake_all_ ||
               (!ready_.empty() && in_flight_ - std::min(stalled_, in_flight_) <= window / 2);
      };
      auto has_streams = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || wake_all_ || !ready_.empty();
      };
      while (!has_work()) {
        if (ready_.empty()) {
          mu_.Await(absl::Condition(&has_streams));  // sleeps: no polling between versions
        } else if (!mu_.AwaitWithTimeout(absl::Condition(&has_work), kStalledWrite)) {
          // No write completed for a while: a client that stopped reading holds its write until
          // it reads or goes away. Those writes stop counting, so that stalled clients cannot
          // hold the window (and the fan-out) for everyone else.
          stalled_ = in_flight_;
        }
      }
      if (stop_) return;
      if (wake_all_) {
        for (auto& [raw, entry] : streams_) {
          if (!entry.queued) ready_.push_back(raw);
          entry.queued = true;
        }
        wake_all_ = false;
      }
      // Each stream of the round starts at most one write: its slot is counted from here (so
      // that a completion can never be counted before its start), and released if unused.
      while (!ready_.empty() && in_flight_ - std::min(stalled_, in_flight_) < window) {
        Entry& entry = streams_.at(ready_.front());
        ready_.pop_front();
        entry.queued = false;
        batch.push_back(entry.stream);
        ++in_flight_;
      }
    }
    // Outside the hub's lock: new edits (WakeAll) and completed writes never wait for a round.
    int64_t started = 0;
    RoundReader reader(log_);
    for (const std::shared_ptr<SubscribeStream>& stream : batch) {
      bool write = false;
      if (stream->Pump(reader, *encoded_, &write)) again.push_back(stream.get());
      started += write ? 1 : 0;
    }
    absl::MutexLock lock(&mu_);
    in_flight_ -= int64_t(batch.size()) - started;
    stalled_ = std::min(stalled_, in_flight_);
    for (SubscribeStream* stream : again) EnqueueLocked(stream);
  }
}

}  // namespace voxcol::server
