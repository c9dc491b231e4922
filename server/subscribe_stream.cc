#include "server/subscribe_stream.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <deque>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/convert.h"
#include "server/convert_edit.h"

namespace voxcol::server {
namespace {

// A call answered with an error before anything is streamed.
class FinishedSubscribe final : public grpc::ServerWriteReactor<v1::SubscribeResponse> {
 public:
  explicit FinishedSubscribe(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

// One Subscribe stream: a cursor into the change log and a buffer of at most `capacity` prepared
// responses, the front of which is being written. gRPC allows one outstanding write per stream;
// the pump (Pump) fills the buffer and gRPC's callback threads (OnWriteDone) drain it, so no
// thread ever waits for this client.
class SubscribeStream final : public grpc::ServerWriteReactor<v1::SubscribeResponse> {
 public:
  SubscribeStream(SubscriptionHub* hub, const IntBox& region, bool include_voxels, uint64_t cursor,
                  const SubscribeLimits& limits)
      : hub_(hub),
        region_(region),
        include_voxels_(include_voxels),
        capacity_(limits.buffer_responses),
        byte_capacity_(limits.buffer_bytes),
        cursor_(cursor),
        last_sent_(cursor) {}

  // Moves new entries from the log into the buffer and starts writing; the pump calls it. Returns
  // true when the log may hold more for this stream right now (call again).
  bool Pump(const ChangeLog& log) {
    absl::MutexLock lock(&mu_);
    // A live stream with nothing waiting behind its write in flight keeps up with its client: if
    // more versions arrived than its buffer holds, the pump was late (a burst of edits, or the
    // pump yielding the CPU), not the client slow, so take them as a catch-up instead of ending it.
    if (caught_up_ && buffer_.size() <= 1) caught_up_ = false;
    if (finished_ || (buffer_.size() >= capacity_ && !caught_up_)) return false;
    // While catching up take only what fits; once live take one more than fits, so that a stream
    // that cannot keep up is noticed.
    const size_t room = capacity_ - std::min(capacity_, buffer_.size()) + (caught_up_ ? 1 : 0);
    absl::StatusOr<std::vector<ChangeEntryPtr>> entries =
        log.Read(cursor_, room, absl::ZeroDuration());
    if (!entries.ok()) {
      EndLocked(ReadError(entries.status()));
      return false;
    }
    for (const ChangeEntryPtr& entry : *entries) {
      Buffered item{entry->version, 0, {}};
      if (ToProto(*entry, region_, include_voxels_, &item.response)) {
        item.bytes = item.response.ByteSizeLong();
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
        buffer_.push_back(std::move(item));
      }
      cursor_ = entry->version;
    }
    // Fewer entries than asked for, all taken: this stream has reached the newest version.
    if (entries->size() < room && (entries->empty() || cursor_ == entries->back()->version))
      caught_up_ = true;
    StartNextWriteLocked();
    return entries->size() == room && cursor_ == entries->back()->version;
  }

  void OnWriteDone(bool ok) override {
    bool wake = false;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (ok) last_sent_ = buffer_.front().version;
      buffered_bytes_ -= buffer_.front().bytes;
      buffer_.pop_front();
      if (finished_) return;
      if (!ok) {
        EndLocked(absl::CancelledError("the client went away"));
        return;
      }
      StartNextWriteLocked();
      wake =
          !caught_up_ && buffer_.size() <= capacity_ / 2 && buffered_bytes_ <= byte_capacity_ / 2;
    }
    if (wake) hub_->Wake(this);  // room again while catching up
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
    buffered_bytes_ = buffer_.empty() ? 0 : buffer_.front().bytes;
    if (status.code() == absl::StatusCode::kResourceExhausted) hub_->ended_slow_.fetch_add(1);
    Finish(ToGrpcStatus(status));
  }

  void StartNextWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || buffer_.empty()) return;
    writing_ = true;
    StartWrite(&buffer_.front().response);  // deque: push_back keeps the front where it is
  }

  struct Buffered {
    uint64_t version;
    size_t bytes;  // serialized size
    v1::SubscribeResponse response;
  };

  SubscriptionHub* const hub_;
  const IntBox region_;
  const bool include_voxels_;
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
    : log_(log), limits_(limits) {
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

grpc::ServerWriteReactor<v1::SubscribeResponse>* SubscriptionHub::Failed(
    const absl::Status& status) {
  return new FinishedSubscribe(ToGrpcStatus(status));
}

grpc::ServerWriteReactor<v1::SubscribeResponse>* SubscriptionHub::Open(
    const v1::SubscribeRequest& request, const IntBox& region) {
  const uint64_t cursor =
      request.has_from_version() ? request.from_version() : log_.newest_version();
  // A cursor outside the window fails here with OUT_OF_RANGE, before anything is streamed.
  absl::Status status = log_.Read(cursor, 0, absl::ZeroDuration()).status();
  if (!status.ok()) return Failed(status);
  auto stream =
      std::make_shared<SubscribeStream>(this, region, request.include_voxels(), cursor, limits_);
  SubscribeStream* raw = stream.get();
  absl::MutexLock lock(&mu_);
  streams_.emplace(raw, std::move(stream));
  ready_.insert(raw);
  return raw;
}

SubscribeStats SubscriptionHub::stats() const {
  absl::MutexLock lock(&mu_);
  return {streams_.size(), ended_slow_.load()};
}

void SubscriptionHub::WakeAll() {
  absl::MutexLock lock(&mu_);
  wake_all_ = true;
}

void SubscriptionHub::Wake(SubscribeStream* stream) {
  absl::MutexLock lock(&mu_);
  ready_.insert(stream);
}

void SubscriptionHub::Remove(SubscribeStream* stream) {
  std::shared_ptr<SubscribeStream> last;  // released after the lock
  absl::MutexLock lock(&mu_);
  auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  last = std::move(it->second);
  streams_.erase(it);
  ready_.erase(stream);
}

void SubscriptionHub::Run() {
  // Feeding subscribers must not take CPU from edits and queries: run below their priority.
  setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), 10);
  std::vector<std::shared_ptr<SubscribeStream>> batch;
  while (true) {
    batch.clear();
    {
      absl::MutexLock lock(&mu_);
      auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || wake_all_ || !ready_.empty();
      };
      mu_.Await(absl::Condition(&has_work));  // sleeps: no polling between versions
      if (stop_) return;
      for (const auto& [raw, stream] : streams_) {
        if (wake_all_ || ready_.contains(raw)) batch.push_back(stream);
      }
      wake_all_ = false;
      ready_.clear();
    }
    // Outside the hub's lock: new edits (WakeAll) and new streams never wait for a round.
    for (const std::shared_ptr<SubscribeStream>& stream : batch) {
      if (stream->Pump(log_)) Wake(stream.get());
    }
  }
}

}  // namespace voxcol::server
