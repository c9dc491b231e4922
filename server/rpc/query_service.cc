#include "server/rpc/query_service.h"

#include <deque>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "server/convert/convert.h"
#include "server/exec/query_batch.h"
#include "server/exec/query_ops.h"
#include "server/exec/read_at.h"
#include "server/exec/validate_hit.h"
#include "server/telemetry/server_metrics.h"

namespace voxcol::server {

namespace {

// Runs `run` under the snapshot the request's read_at names (the newest version when unset) and
// sets the response's version. OUT_OF_RANGE for a version no longer kept.
template <typename Request, typename Response, typename Run>
absl::Status RunAtVersion(const World& world, const Request& request, Response* response,
                          const Run& run) {
  absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> past =
      OpenReadAt(world, request.read_at(), "read_at");
  if (!past.ok()) return past.status();
  std::optional<World::ReadSnapshot> current;
  if (*past == nullptr) current.emplace(world);
  const World::ReadSnapshot& snapshot = *past != nullptr ? **past : *current;
  absl::Status status = run();
  if (status.ok() && snapshot.expired()) status = SnapshotExpiredError();
  if (status.ok()) response->set_version(snapshot.version());
  return status;
}

// One unary query: counted, timed, run on one world version, which the response reports.
// The call's deadline stops shape queries inside their work.
template <typename Request, typename Response>
grpc::Status RunUnary(const WorldResolver& resolver, const ServiceLimits& limits,
                      absl::Status (*run)(const QueryEngine&, const ServiceLimits&, const Request&,
                                          Response*, const QueryInterrupt&),
                      Counter* queries, Histogram* latency, const grpc::ServerContext& context,
                      const Request& request, Response* response) {
  absl::Time start = absl::Now();
  queries->Add();
  absl::StatusOr<WorldHandle> handle = resolver.Resolve(request.world());
  if (!handle.ok()) return ToGrpcStatus(handle.status());
  const World& world = *(*handle)->world;
  const QueryEngine engine = (*handle)->engine();
  QueryInterrupt interrupt;
  if (context.deadline() != std::chrono::system_clock::time_point::max()) {
    interrupt.deadline = absl::FromChrono(context.deadline());
  }
  absl::Status status = RunAtVersion(
      world, request, response, [&] { return run(engine, limits, request, response, interrupt); });
  latency->Observe(absl::ToDoubleSeconds(absl::Now() - start));
  if (!status.ok()) {
    GetServerMetrics().query_failures->Add();
    return ToGrpcStatus(status);
  }
  return grpc::Status::OK;
}

}  // namespace

// One Query stream. Reads batches, runs each on the shared worker pool, writes each response as it
// completes. Messages are read raw and parsed here: gRPC reports a message that does not parse
// exactly like the client's end of stream, and the stream would end with OK; parsing ourselves
// lets it end with INVALID_ARGUMENT saying which message failed. At most max_in_flight_batches run
// per stream; beyond that the stream stops reading, so a fast client is slowed by HTTP/2 flow
// control instead of growing server queues. gRPC allows one outstanding write per stream, so
// finished responses queue here until the previous write is done.
class QueryStream final : public AsyncStream {
 public:
  QueryStream(QueryServiceImpl* service, std::unique_ptr<StreamCall> call)
      : AsyncStream(std::move(call)),
        service_(service),
        call_deadline_(absl::FromChrono(context()->deadline())),
        host_(PeerHost(context()->peer())) {
    GetServerMetrics().streams_opened->Add();
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
    if (!Submit(std::move(batch))) return;  // the call already ended (cancelled)
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

  // Runs the batch on the pool; false (and nothing runs) if the call has ended meanwhile: a
  // cancellation may finish the call while its last read is being handled, and then the stream
  // is deleted once OnReadDone returns.
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
      if (finished_) return false;
      ++in_flight_;  // from here the call cannot finish before Complete()
    }
    bool accepted = service_->pool_->TrySubmit([this, batch, deadline] {
      const int64_t queued = absl::ToInt64Microseconds(absl::Now() - batch->arrival);
      absl::StatusOr<WorldHandle> world = service_->resolver_.Resolve(batch->request->world());
      if (world.ok()) {
        ExecuteBatch((*world)->engine(), service_->limits_, service_->stream_limits_.batch,
                     *batch->request, deadline, &cancelled_, batch->response);
      } else {
        FailBatch(*batch->request, world.status(), batch->response);
      }
      batch->response->mutable_timing()->set_queue_micros(uint32_t(queued));
      Complete(*batch);
    });
    if (!accepted) {
      FailBatch(*batch->request,
                absl::ResourceExhaustedError("server overloaded: query queue is full, retry later"),
                batch->response);
      Complete(*batch);
    }
    return true;
  }

  // Queues a finished batch for writing and resumes reading if the stream was throttled.
  void Complete(StreamBatch& batch) {
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
    if (!cancelled_.load() && serialized.ok()) writes_.push_back(std::move(buffer));
    StartNextWrite();
    if (reading_paused_ && in_flight_ < service_->stream_limits_.max_in_flight_batches) {
      reading_paused_ = false;
      StartRead(&request_);
    }
    FinishIfDone(lock);
  }

  void StartNextWrite() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || writes_.empty() || cancelled_.load()) return;
    writing_ = true;
    StartWrite(&writes_.front());
  }

  // Ends the call once nothing runs, waits or writes any more: unlocks `lock` first, and the
  // caller must not touch `this` after it returns.
  void FinishIfDone(absl::ReleasableMutexLock& lock) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const bool cancelled = cancelled_.load();
    if (finished_ || in_flight_ > 0 || writing_ || !(reads_done_ || cancelled) ||
        (!cancelled && !writes_.empty())) {
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
  bool counted_ = true;        // holds one of the host's stream slots
  grpc::ByteBuffer request_;   // read buffer; only touched by the reading side
  int64_t messages_read_ = 0;  // only touched by the reading side
  std::atomic<bool> cancelled_{false};
  absl::Mutex mu_;
  std::deque<grpc::ByteBuffer> writes_ ABSL_GUARDED_BY(mu_);
  absl::Status error_ ABSL_GUARDED_BY(mu_);  // why the stream ends, if not OK
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

void QueryServiceImpl::AcceptStreams(const RpcThreads& threads) {
  AcceptCalls(threads, BidiMethod(this, &QueryServiceImpl::RequestQuery,
                                  [this](std::unique_ptr<StreamCall> call) -> AsyncStream* {
                                    return new QueryStream(this, std::move(call));
                                  }));
}

grpc::Status QueryServiceImpl::Raycast(grpc::ServerContext* context,
                                       const v1::RaycastRequest* request,
                                       v1::RaycastResponse* response) {
  ServerMetrics& metrics = GetServerMetrics();
  return RunUnary(resolver_, limits_, &RunRaycast, metrics.queries_raycast, metrics.raycast_latency,
                  *context, *request, response);
}

grpc::Status QueryServiceImpl::Sweep(grpc::ServerContext* context, const v1::SweepRequest* request,
                                     v1::SweepResponse* response) {
  ServerMetrics& metrics = GetServerMetrics();
  return RunUnary(resolver_, limits_, &RunSweep, metrics.queries_sweep, metrics.sweep_latency,
                  *context, *request, response);
}

grpc::Status QueryServiceImpl::Overlap(grpc::ServerContext* context,
                                       const v1::OverlapRequest* request,
                                       v1::OverlapResponse* response) {
  ServerMetrics& metrics = GetServerMetrics();
  return RunUnary(resolver_, limits_, &RunOverlap, metrics.queries_overlap, metrics.overlap_latency,
                  *context, *request, response);
}

grpc::Status QueryServiceImpl::Contacts(grpc::ServerContext* context,
                                        const v1::ContactsRequest* request,
                                        v1::ContactsResponse* response) {
  ServerMetrics& metrics = GetServerMetrics();
  return RunUnary(resolver_, limits_, &RunContacts, metrics.queries_contacts,
                  metrics.contacts_latency, *context, *request, response);
}

grpc::Status QueryServiceImpl::Probe(grpc::ServerContext* context, const v1::ProbeRequest* request,
                                     v1::ProbeResponse* response) {
  ServerMetrics& metrics = GetServerMetrics();
  return RunUnary(resolver_, limits_, &RunProbe, metrics.queries_probe, metrics.probe_latency,
                  *context, *request, response);
}

grpc::Status QueryServiceImpl::MoveCharacters(grpc::ServerContext* context,
                                              const v1::MoveCharactersRequest* request,
                                              v1::MoveCharactersResponse* response) {
  const MoveCharactersMetrics& metrics = GetMoveCharactersMetrics();
  return RunUnary(resolver_, limits_, &RunMoveCharacters, metrics.queries, metrics.latency,
                  *context, *request, response);
}

grpc::Status QueryServiceImpl::ValidateHit(grpc::ServerContext* context,
                                           const v1::ValidateHitRequest* request,
                                           v1::ValidateHitResponse* response) {
  absl::StatusOr<WorldHandle> handle = resolver_.Resolve(request->world());
  if (!handle.ok()) return ToGrpcStatus(handle.status());
  absl::Status status = RunAtVersion(*(*handle)->world, *request, response, [&] {
    return RunValidateHit((*handle)->engine(), limits_, *request, response);
  });
  if (!status.ok()) {
    GetServerMetrics().query_failures->Add();
    return ToGrpcStatus(status);
  }
  return grpc::Status::OK;
}

}  // namespace voxcol::server
