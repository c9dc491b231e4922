#include "server/rpc/edit_stream.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "server/convert/convert.h"
#include "server/convert/convert_edit.h"
#include "server/exec/apply_edits.h"
#include "server/rpc/edit_service.h"
#include "server/telemetry/server_metrics.h"
#include "voxcol/v1/edit_service.pb.h"

namespace voxcol::server {

namespace {

// Field errors name the request's own path ("edits.primitives[0]...", "edits.expected_version").
void SetError(const absl::Status& status, v1::EditStreamResponse* response) {
  v1::EditStreamError* error = response->mutable_error();
  error->set_code(int32_t(status.code()));
  error->set_message(std::string(status.message()));
}

// One batch through the ApplyEdits path (ApplyEditsMessage), its errors naming "edits.<field>".
v1::EditStreamResponse ApplyOne(EditBatcher& batcher, const v1::EditStreamRequest& request,
                                const std::function<void()>& on_ordered) {
  v1::EditStreamResponse response;
  response.set_batch_id(request.batch_id());
  v1::EditAck ack;
  absl::Status status = ApplyEditsMessage(batcher, request.edits(), &ack, nullptr, &on_ordered);
  if (status.ok()) {
    *response.mutable_ack() = std::move(ack);
  } else {
    SetError(PrefixEditsField(status), &response);
  }
  return response;
}

// Process-wide in-flight accounting of all edit streams, exported as gauges (registered once, like
// the other server metrics, so that several EditStreams in one process, e.g. benchmarks, share it).
class InFlightGauges {
 public:
  static InFlightGauges& Get() {
    static InFlightGauges* gauges = new InFlightGauges;
    return *gauges;
  }
  // One more batch read on a stream that now has `stream_in_flight`.
  void Add(int stream_in_flight) {
    total_.fetch_add(1, std::memory_order_relaxed);
    int peak = peak_.load(std::memory_order_relaxed);
    while (stream_in_flight > peak &&
           !peak_.compare_exchange_weak(peak, stream_in_flight, std::memory_order_relaxed)) {
    }
  }
  void Remove(int n) { total_.fetch_sub(n, std::memory_order_relaxed); }

 private:
  InFlightGauges() {
    Metrics& registry = GetServerMetrics().registry;
    registry.AddGauge("voxcol_edit_stream_batches_in_flight",
                      "Edit stream batches read and not yet answered, over all streams",
                      [this] { return double(total_.load(std::memory_order_relaxed)); });
    registry.AddGauge("voxcol_edit_stream_in_flight_peak",
                      "Most batches one edit stream has had in flight at once since start "
                      "(bounded by --max_in_flight_edit_batches_per_stream)",
                      [this] { return double(peak_.load(std::memory_order_relaxed)); });
  }
  std::atomic<int64_t> total_{0};
  std::atomic<int> peak_{0};
};

}  // namespace

// One EditStream call. Reads batches into a queue that one pool task at a time applies in order
// (so a stream never has two batches committing at once and its versions rise in request order;
// see docs/design.md for why batches of one stream do not share a group commit yet),
// and writes each response as its batch completes. A batch is in flight from its read until its
// response is written: at the bound the stream stops reading, so a client that sends faster than
// the store syncs is held back by HTTP/2 flow control, and unread acks count against it too.
// Messages are read raw and parsed here so that a malformed one ends the stream with
// INVALID_ARGUMENT (gRPC would report it as the client's end of stream, see QueryStream).
// Finish() is always the last thing a method does with `this`: OnDone() may delete it at once.
class EditStreamReactor final : public AsyncStream {
 public:
  EditStreamReactor(EditStreams* streams, std::unique_ptr<StreamCall> call)
      : AsyncStream(std::move(call)), streams_(streams) {
    if (streams_->audit_ != nullptr) {
      caller_ = streams_->audit_->CallerOf(*context(), "/voxcol.v1.EditService/EditStream");
    }
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    v1::EditStreamRequest request;
    grpc::Status parsed = grpc::Status::OK;
    if (ok) {
      parsed = grpc::SerializationTraits<v1::EditStreamRequest>::Deserialize(&request_, &request);
      ++messages_read_;
    }
    absl::ReleasableMutexLock lock(&mu_);
    if (!ok || !parsed.ok() || cancelled_) {
      if (!parsed.ok()) {
        // The batches before it are still answered; nothing after it is read.
        error_ = absl::InvalidArgumentError(
            absl::StrCat("message ", messages_read_, " on the stream is not an EditStreamRequest (",
                         parsed.error_message(), "); the stream ends here"));
      }
      reads_done_ = true;
      FinishIfDone(lock);
      return;
    }
    pending_.push_back(std::move(request));
    ++in_flight_;
    InFlightGauges::Get().Add(in_flight_);
    if (!draining_) {
      draining_ = true;
      ScheduleNext();
    }
    if (in_flight_ >= streams_->max_in_flight_batches_) {
      reading_paused_ = true;  // OnWriteDone resumes reading
    } else {
      StartRead(&request_);
    }
  }

  void OnWriteDone(bool ok) override {
    absl::ReleasableMutexLock lock(&mu_);
    writes_.pop_front();
    writing_ = false;
    --in_flight_;
    InFlightGauges::Get().Remove(1);
    if (!ok) cancelled_ = true;  // the client is gone
    StartNextWrite();
    if (reading_paused_ && !cancelled_ && in_flight_ < streams_->max_in_flight_batches_) {
      reading_paused_ = false;
      StartRead(&request_);
    }
    FinishIfDone(lock);
  }

  void OnCancel() override {
    absl::ReleasableMutexLock lock(&mu_);
    cancelled_ = true;
    FinishIfDone(lock);
  }

  void OnDone() override {
    // Batches never answered (cancelled stream) leave the shared in-flight count.
    InFlightGauges::Get().Remove(in_flight_);
    delete this;
  }

 private:
  // Queues the pool task that applies the stream's next batch. draining_ is set while that task
  // is queued, or runs and has not yet taken its place in the world's version order.
  void ScheduleNext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (streams_->pool_->TrySubmit([this] { ApplyNext(); })) return;
    draining_ = false;
    FailPending();
  }

  // Pool task: applies the oldest pending batch. As soon as the batch has its place in the
  // version order (EditBatcher::Apply's on_ordered, under the world's edit lock; or when Apply
  // returns without editing) the next batch is scheduled, so the stream's batches are staged in
  // request order but wait for their durable write together and share group commits. Responses
  // are written in request order (sequence numbers), whatever order the applies return in.
  void ApplyNext() {
    v1::EditStreamRequest request;
    uint64_t seq = 0;
    {
      absl::ReleasableMutexLock lock(&mu_);
      if (pending_.empty() || cancelled_) {
        draining_ = false;
        FinishIfDone(lock);
        return;
      }
      request = std::move(pending_.front());
      pending_.pop_front();
      seq = next_seq_++;
      ++applying_;
    }
    bool ordered = false;
    const std::function<void()> on_ordered = [&] {
      if (ordered) return;
      ordered = true;
      absl::MutexLock lock(&mu_);
      if (pending_.empty() || cancelled_) {
        draining_ = false;
      } else {
        ScheduleNext();
      }
    };
    v1::EditStreamResponse response = Apply(request, on_ordered);
    on_ordered();  // a batch refused before editing (or replayed) never reached the edit lock
    // Recorded once committed, whether or not the stream is still there to be answered.
    if (response.has_ack() && streams_->audit_ != nullptr) {
      streams_->audit_->StreamBatch(caller_, request.batch_id(), request.edits(), response.ack());
    }
    absl::ReleasableMutexLock lock(&mu_);
    --applying_;
    CompleteLocked(seq, response);
    FinishIfDone(lock);
  }

  // The batch on the world its request names (the streams' batcher without a resolver).
  v1::EditStreamResponse Apply(const v1::EditStreamRequest& request,
                               const std::function<void()>& on_ordered) {
    if (streams_->resolver_ == nullptr) return ApplyOne(streams_->batcher_, request, on_ordered);
    absl::StatusOr<WorldHandle> world = streams_->resolver_->Resolve(request.world());
    if (world.ok() && !request.edits().world().empty() &&
        request.edits().world() != request.world()) {
      world = absl::InvalidArgumentError("edits.world: must be empty or the request's world");
    }
    if (!world.ok()) {
      v1::EditStreamResponse response;
      response.set_batch_id(request.batch_id());
      SetError(world.status(), &response);
      return response;
    }
    return ApplyOne(*(*world)->batcher, request, on_ordered);
  }

  // Answers every pending batch with RESOURCE_EXHAUSTED: the pool refused the stream's task.
  void FailPending() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const v1::EditStreamRequest& request : pending_) {
      v1::EditStreamResponse response;
      response.set_batch_id(request.batch_id());
      SetError(absl::ResourceExhaustedError("server overloaded: no edit thread, retry later"),
               &response);
      CompleteLocked(next_seq_++, response);
    }
    pending_.clear();
  }

  // Holds the response of batch `seq` until every earlier batch is answered, then queues the
  // answered prefix for writing.
  void CompleteLocked(uint64_t seq, const v1::EditStreamResponse& response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    grpc::ByteBuffer buffer;
    bool own_buffer = false;
    grpc::Status serialized = grpc::SerializationTraits<v1::EditStreamResponse>::Serialize(
        response, &buffer, &own_buffer);
    if (!serialized.ok()) {
      // Without its ack the stream's order would break: end the stream instead.
      if (error_.ok()) error_ = absl::InternalError("a response could not be serialized");
      cancelled_ = true;
      return;
    }
    answered_.emplace(seq, std::move(buffer));
    while (!answered_.empty() && answered_.begin()->first == next_write_seq_) {
      writes_.push_back(std::move(answered_.begin()->second));
      answered_.erase(answered_.begin());
      ++next_write_seq_;
    }
    StartNextWrite();
  }

  void StartNextWrite() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || writes_.empty() || cancelled_) return;
    writing_ = true;
    StartWrite(&writes_.front());
  }

  // Finishes the call once nothing runs or waits any more; unlocks `lock` first, because the
  // reactor may be deleted as soon as Finish() is called.
  void FinishIfDone(absl::ReleasableMutexLock& lock) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || draining_ || applying_ > 0 || writing_ || !(reads_done_ || cancelled_)) return;
    if (!cancelled_ && (!pending_.empty() || !writes_.empty())) return;
    finished_ = true;
    grpc::Status status =
        cancelled_ && error_.ok() ? grpc::Status::CANCELLED : ToGrpcStatus(error_);
    lock.Release();
    Finish(status);
  }

  EditStreams* streams_;
  EditAudit::Caller caller_;   // who opened the stream, for the audit log
  grpc::ByteBuffer request_;   // read buffer; only touched by the reading side
  int64_t messages_read_ = 0;  // only touched by the reading side
  absl::Mutex mu_;
  std::deque<v1::EditStreamRequest> pending_ ABSL_GUARDED_BY(mu_);  // read, not yet applied
  std::deque<grpc::ByteBuffer> writes_ ABSL_GUARDED_BY(mu_);        // answered, not yet written
  absl::Status error_ ABSL_GUARDED_BY(mu_);  // why the stream ends, if not OK
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;   // read and not yet written
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  int applying_ ABSL_GUARDED_BY(mu_) = 0;       // batches between ApplyNext's pop and their answer
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;  // of the next batch taken from pending_
  uint64_t next_write_seq_ ABSL_GUARDED_BY(mu_) = 0;  // of the next response to write
  std::map<uint64_t, grpc::ByteBuffer> answered_ ABSL_GUARDED_BY(mu_);  // out of order so far
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool reading_paused_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

EditStreams::EditStreams(EditBatcher& batcher, WorkerPool* pool, int max_in_flight_batches)
    : batcher_(batcher), pool_(pool), max_in_flight_batches_(std::max(1, max_in_flight_batches)) {
  InFlightGauges::Get();  // registers the gauges during setup, before metrics are served
}

AsyncStream* EditStreams::Open(std::unique_ptr<StreamCall> call) {
  return new EditStreamReactor(this, std::move(call));
}

// Declared in edit_service.h; lives here so that the edit stream stays out of the unary service.
AsyncStream* EditServiceImpl::OpenEditStream(std::unique_ptr<StreamCall> call) {
  if (edit_streams_ == nullptr) {
    return FinishedStream(std::move(call),
                          ToGrpcStatus(absl::UnimplementedError("EditStream is off")));
  }
  return edit_streams_->Open(std::move(call));
}

}  // namespace voxcol::server
