#include "server/rpc/query_service.h"

#include <deque>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "server/convert/convert.h"
#include "server/exec/query_batch.h"
#include "server/exec/query_kinds.h"
#include "server/exec/query_ops.h"
#include "server/exec/read_at.h"
#include "server/session/watch_paths_stream.h"
#include "server/stream/async_unary.h"
#include "server/telemetry/server_metrics.h"

namespace voxcol::server {

namespace {

// One unary query of `kind` (a raw call: the request is parsed here, so one that does not parse
// is INVALID_ARGUMENT naming the method), counted and timed, run on one world version (the
// request's read_at, or the newest), which the response reports. The call's deadline stops shape
// queries inside their work.
absl::Status AnswerUnary(const QueryKind& kind, const WorldResolver& resolver,
                         const ServiceLimits& limits, const grpc::ServerContext& context,
                         grpc::ByteBuffer& bytes, grpc::ByteBuffer* out) {
  const absl::Time start = absl::Now();
  google::protobuf::Arena arena;
  google::protobuf::Message* request = kind.request_type->New(&arena);
  if (absl::Status parsed = ParseFromByteBuffer(&bytes, request); !parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request to /voxcol.v1.QueryService/", kind.method, " is not a ",
                     request->GetTypeName(), " (", parsed.message(), ")"));
  }
  kind.queries->Add();
  const google::protobuf::Reflection* reflection = request->GetReflection();
  std::string scratch;
  absl::StatusOr<WorldHandle> handle =
      resolver.Resolve(reflection->GetStringReference(*request, kind.world_field, &scratch));
  if (!handle.ok()) return handle.status();
  const World& world = *(*handle)->world;
  QueryInterrupt interrupt;
  if (context.deadline() != std::chrono::system_clock::time_point::max()) {
    interrupt.deadline = absl::FromChrono(context.deadline());
  }
  absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> past = OpenReadAt(
      world, static_cast<const v1::ReadAt&>(reflection->GetMessage(*request, kind.read_at_field)),
      "read_at");
  if (!past.ok()) return past.status();
  std::optional<World::ReadSnapshot> current;
  if (*past == nullptr) current.emplace(world);
  const World::ReadSnapshot& snapshot = *past != nullptr ? **past : *current;
  google::protobuf::Message* response = kind.response_type->New(&arena);
  absl::Status status = kind.run((*handle)->engine(), limits, *request, response, interrupt);
  if (status.ok() && snapshot.expired()) status = SnapshotExpiredError();
  if (status.ok()) {
    response->GetReflection()->SetUInt64(response, kind.version_field, snapshot.version());
    status = SerializeToByteBuffer(*response, out);
  }
  kind.latency->Observe(absl::ToDoubleSeconds(absl::Now() - start));
  return status;
}

}  // namespace

// One Query stream. Reads batches, runs each on the shared worker pool, writes each response as it
// completes. Messages are read raw and parsed here: gRPC reports a message that does not parse
// exactly like the client's end of stream, and the stream would end with OK; parsing ourselves
// lets it end with INVALID_ARGUMENT saying which message failed. At most max_in_flight_batches run
// per stream; beyond that the stream stops reading, so a fast client is slowed by HTTP/2 flow
// control instead of growing server queues. gRPC allows one outstanding write per stream, so
// finished responses queue here until the previous write is done; a client that keeps sending but
// does not read would grow that queue without end, so past max_pending_bytes of queued responses
// the stream is ended with RESOURCE_EXHAUSTED (QueueWrite).
class QueryStream final : public AsyncStream {
 public:
  // The most queries (packed rays included) of a batch that runs on the RPC thread even while
  // the query pool is busy, and of one that runs there in place of an idle pool worker; see
  // Submit().
  static constexpr int kShortBatchQueries = 64;
  static constexpr int kInlineBatchQueries = 1024;

  QueryStream(QueryServiceImpl* service, std::unique_ptr<StreamCall> call)
      : AsyncStream(std::move(call)),
        service_(service),
        call_deadline_(absl::FromChrono(context()->deadline())),
        host_(PeerHost(context()->peer())) {
    GetServerMetrics().streams_opened->Add();
    if (service_->audit_ != nullptr) {
      caller_ = service_->audit_->CallerOf(*context(), "/voxcol.v1.QueryService/Query");
    }
    if (!service_->AcquireStream(host_)) {
      counted_ = false;
      Finish(ToGrpcStatus(absl::ResourceExhaustedError(
          "too many open Query streams from this client (--max_streams_per_client)")));
      return;
    }
    StartRead(&request_);
  }

  // "ipv4:127.0.0.1:5555" -> "ipv4:127.0.0.1": streams are limited per client host, not per port.
  static std::string PeerHost(const std::string& peer) {
    size_t colon = peer.rfind(':');
    return colon == std::string::npos ? peer : peer.substr(0, colon);
  }

  // Every method that may end the call decides under mu_ and calls Finish() after unlocking, as
  // the last thing it does with `this`: OnDone() (which deletes the stream) may run at once on
  // another thread.
  void OnReadDone(bool ok) override {
    if (!ok) {
      absl::ReleasableMutexLock lock(&mu_);
      reads_done_ = true;
      FinishIfDone(lock);
      return;
    }
    auto batch = std::make_shared<StreamBatch>();
    absl::Status parsed = ParseFromByteBuffer(&request_, batch->request);
    request_.Clear();
    ++messages_read_;
    if (!parsed.ok()) {
      // The batches before it are still answered; nothing after it is read.
      absl::ReleasableMutexLock lock(&mu_);
      error_ = absl::InvalidArgumentError(
          absl::StrCat("message ", messages_read_, " on the stream is not a QueryBatchRequest (",
                       parsed.message(), "); the stream ends here"));
      reads_done_ = true;
      FinishIfDone(lock);
      return;
    }
    if (!Submit(std::move(batch))) return;  // the call ended (cancelled, or past its pending limit)
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    if (in_flight_ >= service_->stream_limits_.max_in_flight_batches) {
      reading_paused_ = true;  // Complete() resumes reading
    } else {
      StartRead(&request_);
    }
  }

  void OnWriteDone(bool ok) override {
    absl::ReleasableMutexLock lock(&mu_);
    const size_t bytes = writes_.front().Length();
    pending_bytes_ -= bytes;
    GetServerMetrics().query_stream_pending_bytes.fetch_sub(int64_t(bytes));
    writes_.pop_front();
    if (!ok) cancelled_.store(true);  // the client is gone
    writing_ = false;
    StartNextWrite();
    FinishIfDone(lock);
  }

  void OnCancel() override {
    cancelled_.store(true);
    absl::ReleasableMutexLock lock(&mu_);
    FinishIfDone(lock);
  }

  void OnDone() override {
    if (counted_) service_->ReleaseStream(host_);
    {
      absl::MutexLock lock(&mu_);  // a cancelled stream may end with responses still queued
      GetServerMetrics().query_stream_pending_bytes.fetch_sub(int64_t(pending_bytes_));
    }
    delete this;
  }

 private:
  // One batch read from the stream. Its request and response live on one arena: parsing and
  // answering it allocate a few blocks, not several objects per query.
  struct StreamBatch {
    google::protobuf::Arena arena{BatchArenaOptions()};
    v1::QueryBatchRequest* request =
        google::protobuf::Arena::CreateMessage<v1::QueryBatchRequest>(&arena);
    v1::QueryBatchResponse* response =
        google::protobuf::Arena::CreateMessage<v1::QueryBatchResponse>(&arena);
    absl::Time arrival;
  };

  // Runs the batch, on the query pool or here on the RPC thread that read it: the hand-off to the
  // pool and back costs two thread wake-ups, most of a small tick batch's tail and a third of a
  // 256-ray batch's cost beyond the queries (docs/benchmarks.md, "Tick latency" and "Query
  // stream"). Only batches of cheap kinds (those unary calls run inline) run here:
  // - a short one whenever the pool has nothing queued;
  // - one of up to kInlineBatchQueries in place of an idle pool worker (WorkerPool::TryRunHere,
  //   which keeps the pool's bound on concurrent batches), by at most all but one RPC thread at a
  //   time, so that one always takes new calls.
  // Under load the pool stays the one queue that orders and sheds work. False (and nothing runs)
  // if the call has ended meanwhile: a cancellation may finish the call while its last read is
  // being handled. Either way the stream lives until OnReadDone returns (AsyncStream runs
  // OnDone() only after every reaction has returned), so a batch run here may complete, and
  // finish the call, first.
  bool Submit(std::shared_ptr<StreamBatch> batch) {
    GetServerMetrics().batches->Add();
    batch->arrival = absl::Now();
    absl::Time deadline = call_deadline_;
    if (batch->request->timeout_ms() > 0) {
      deadline =
          std::min(deadline, batch->arrival + absl::Milliseconds(batch->request->timeout_ms()));
    }
    {
      absl::MutexLock lock(&mu_);
      if (finished_ || overflowed_) return false;  // overflowed: nothing more is read or run
      ++in_flight_;  // from here the call cannot finish before Complete()
    }
    // Runs the queries; the answer is sent by Complete() after it, outside the pool's place, so
    // that the place is free again before the client can send its next batch.
    auto execute = [this, batch = batch.get(), deadline] {
      const int64_t queued = absl::ToInt64Microseconds(absl::Now() - batch->arrival);
      absl::StatusOr<WorldHandle> world = service_->resolver_.Resolve(batch->request->world());
      if (world.ok()) {
        ExecuteBatch((*world)->engine(), service_->limits_, service_->stream_limits_.batch,
                     *batch->request, deadline, &cancelled_, batch->response);
      } else {
        FailBatch(*batch->request, world.status(), batch->response);
      }
      batch->response->mutable_timing()->set_queue_micros(uint32_t(queued));
    };
    // One walk over the queries' kinds; a short batch is a cheap one of few queries.
    const v1::QueryBatchRequest& request = *batch->request;
    const bool cheap = IsShortBatch(request, kInlineBatchQueries);
    const int queries = request.queries_size() + request.raycasts().origins_size() / 3;
    bool ran_here = false;
    if (cheap && queries <= kShortBatchQueries && service_->pool_->queued() == 0) {
      execute();
      ran_here = true;
    } else if (cheap) {
      ran_here = RunInPoolsPlace(execute);
    }
    if (ran_here) {
      GetServerMetrics().batches_inline->Add();
      Complete(*batch);
      return true;
    }
    if (!service_->pool_->TrySubmit([this, batch, execute] {
          execute();
          Complete(*batch);
        })) {
      FailBatch(*batch->request,
                absl::ResourceExhaustedError("server overloaded: query queue is full, retry later"),
                batch->response);
      Complete(*batch);
    }
    return true;
  }

  // Runs `run` here through WorkerPool::TryRunHere if fewer than max_inline_batches_ RPC threads
  // are running batches that way; false (and nothing ran) otherwise.
  bool RunInPoolsPlace(absl::FunctionRef<void()> run) {
    std::atomic<int>& running = service_->inline_batches_;
    if (running.fetch_add(1) >= service_->max_inline_batches_) {
      running.fetch_sub(1);
      return false;
    }
    const bool ran = service_->pool_->TryRunHere(run);
    running.fetch_sub(1);
    return ran;
  }

  // Queues a finished batch for writing and resumes reading if the stream was throttled. A tick
  // batch whose edits committed is audited here, whether or not its answer can still be sent.
  void Complete(StreamBatch& batch) {
    if (batch.response->has_edit_ack() && service_->audit_ != nullptr) {
      service_->audit_->StreamBatch(caller_, batch.request->batch_id(), batch.request->edits(),
                                    batch.response->edit_ack());
    }
    absl::Duration elapsed = absl::Now() - batch.arrival;
    GetServerMetrics().batch_latency->Observe(absl::ToDoubleSeconds(elapsed));
    batch.response->set_server_micros(uint32_t(absl::ToInt64Microseconds(elapsed)));
    grpc::ByteBuffer buffer;
    absl::Status serialized = SerializeToByteBuffer(*batch.response, &buffer);
    absl::ReleasableMutexLock lock(&mu_);
    --in_flight_;
    if (!serialized.ok() && error_.ok()) {
      error_ = absl::InternalError(
          absl::StrCat("a batch response could not be serialized: ", serialized.message()));
    }
    if (!cancelled_.load() && serialized.ok() && !overflowed_) QueueWrite(std::move(buffer));
    StartNextWrite();
    if (reading_paused_ && !overflowed_ &&
        in_flight_ < service_->stream_limits_.max_in_flight_batches) {
      reading_paused_ = false;
      StartRead(&request_);
    }
    FinishIfDone(lock);
  }

  // Queues a response behind the write in flight, unless the responses queued would then exceed
  // max_pending_bytes: the client is not reading (it keeps sending, or stopped reading while
  // batches ran). Then the stream is ended instead: the queued responses are dropped but for the
  // one being written, nothing more is read or run, and once the batches in flight completed the
  // call finishes with RESOURCE_EXHAUSTED (sent after that last response, when the client reads).
  void QueueWrite(grpc::ByteBuffer buffer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const size_t bytes = buffer.Length();
    const size_t limit = service_->stream_limits_.max_pending_bytes;
    std::atomic<int64_t>& pending_gauge = GetServerMetrics().query_stream_pending_bytes;
    if (!writes_.empty() && pending_bytes_ + bytes > limit) {
      overflowed_ = true;
      error_ = absl::ResourceExhaustedError(absl::StrCat(
          "the client did not read its responses: ", pending_bytes_ + bytes,
          " bytes of responses would be queued on this stream, more than its limit of ", limit,
          " bytes (--max_stream_pending_mb); the stream ends here, read responses as they come"));
      const size_t kept = writing_ ? writes_.front().Length() : 0;
      writes_.erase(writes_.begin() + (writing_ ? 1 : 0), writes_.end());
      pending_gauge.fetch_sub(int64_t(pending_bytes_ - kept));
      pending_bytes_ = kept;
      GetServerMetrics().streams_ended_slow->Add();
      return;
    }
    pending_bytes_ += bytes;
    pending_gauge.fetch_add(int64_t(bytes));
    writes_.push_back(std::move(buffer));
  }

  void StartNextWrite() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || writes_.empty() || cancelled_.load()) return;
    writing_ = true;
    StartWrite(&writes_.front());
  }

  // Ends the call once nothing runs, waits or writes any more: unlocks `lock` first, and the
  // caller must not touch `this` after it returns. An overflowed stream ends as soon as no batch
  // runs: its client is not reading, so a write in flight may never complete (AsyncStream sends
  // the status after it), and a read in flight ends with the call.
  void FinishIfDone(absl::ReleasableMutexLock& lock) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const bool cancelled = cancelled_.load();
    const bool ending = cancelled || overflowed_;
    if (finished_ || in_flight_ > 0 || (writing_ && !overflowed_) || !(reads_done_ || ending) ||
        (!ending && !writes_.empty())) {
      lock.Release();
      return;
    }
    finished_ = true;
    const grpc::Status status = cancelled ? grpc::Status::CANCELLED : ToGrpcStatus(error_);
    lock.Release();
    Finish(status);
  }

  QueryServiceImpl* service_;
  const absl::Time call_deadline_;
  const std::string host_;
  EditAudit::Caller caller_;   // who opened the stream, for the audit log of tick edits
  bool counted_ = true;        // holds one of the host's stream slots
  grpc::ByteBuffer request_;   // read buffer; only touched by the reading side
  int64_t messages_read_ = 0;  // only touched by the reading side
  std::atomic<bool> cancelled_{false};
  absl::Mutex mu_;
  std::deque<grpc::ByteBuffer> writes_ ABSL_GUARDED_BY(mu_);  // the front one is being written
  size_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;             // of writes_
  bool overflowed_ ABSL_GUARDED_BY(mu_) = false;  // ended by max_pending_bytes (QueueWrite)
  absl::Status error_ ABSL_GUARDED_BY(mu_);       // why the stream ends, if not OK
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool reading_paused_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

bool QueryServiceImpl::AcquireStream(const std::string& host) {
  absl::MutexLock lock(&streams_mu_);
  int& open = streams_per_host_[host];
  if (open >= stream_limits_.max_streams_per_client) return false;
  ++open;
  return true;
}

void QueryServiceImpl::ReleaseStream(const std::string& host) {
  absl::MutexLock lock(&streams_mu_);
  if (--streams_per_host_[host] <= 0) streams_per_host_.erase(host);
}

QueryServiceImpl::QueryServiceImpl(const WorldResolver& resolver, const ServiceLimits& limits,
                                   const StreamLimits& stream_limits, WorkerPool* pool)
    : resolver_(resolver), limits_(limits), stream_limits_(stream_limits), pool_(pool) {
  MarkUnaryMethodsRaw();
}

grpc::Status QueryServiceImpl::GetNavMesh(grpc::ServerContext*,
                                          const v1::GetNavMeshRequest* request,
                                          v1::GetNavMeshResponse* response) {
  absl::StatusOr<WorldHandle> world = resolver_.Resolve(request->world(), "world");
  if (!world.ok()) return ToGrpcStatus(world.status());
  return ToGrpcStatus(RunGetNavMesh((*world)->nav, *request, response));
}

void QueryServiceImpl::MarkUnaryMethodsRaw() {
  const google::protobuf::ServiceDescriptor* service =
      v1::RaycastRequest::descriptor()->file()->FindServiceByName("QueryService");
  for (const QueryKind& kind : QueryKinds()) {
    const google::protobuf::MethodDescriptor* method =
        service->FindMethodByName(std::string(kind.method));
    // The generated service numbers its methods in the proto's order, as the descriptor does.
    unary_methods_.push_back({&kind, method->index()});
    MarkMethodRaw(method->index());
  }
}

void QueryServiceImpl::AcceptStreams(const RpcThreads& threads) {
  max_inline_batches_ = std::max(1, threads.thread_count() - 1);
  for (const UnaryKind& unary : unary_methods_) {
    auto method = std::make_shared<UnaryMethod>();
    method->request = [this, index = unary.method_index](
                          grpc::ServerContext* context, grpc::ByteBuffer* request,
                          grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>* responder,
                          grpc::ServerCompletionQueue* queue, void* tag) {
      RequestAsyncUnary(index, context, request, responder, queue, queue, tag);
    };
    if (!unary.kind->inline_on_rpc_thread) {
      // Work that may run to its budget or deadline: on the query pool, shed when it is full.
      method->run_elsewhere = [this](std::function<void()> task) {
        return pool_->TrySubmit(std::move(task));
      };
      method->refused = ToGrpcStatus(
          absl::ResourceExhaustedError("server overloaded: query queue is full, retry later"));
    }
    method->handle = [this, kind = unary.kind](grpc::ServerContext& context,
                                               grpc::ByteBuffer& request,
                                               grpc::ByteBuffer* response) {
      absl::Status status = AnswerUnary(*kind, resolver_, limits_, context, request, response);
      if (!status.ok()) GetServerMetrics().query_failures->Add();
      return ToGrpcStatus(status);
    };
    AcceptUnaryCalls(threads, std::move(method));
  }
  AcceptCalls(threads, BidiMethod(this, &QueryServiceImpl::RequestQuery,
                                  [this](std::unique_ptr<StreamCall> call) -> AsyncStream* {
                                    return new QueryStream(this, std::move(call));
                                  }));
  AcceptCalls(threads, BidiMethod(this, &QueryServiceImpl::RequestWatchPaths,
                                  [this](std::unique_ptr<StreamCall> call) -> AsyncStream* {
                                    return OpenWatchPaths(resolver_, limits_.max_path_distance,
                                                          std::move(call));
                                  }));
}

}  // namespace voxcol::server
