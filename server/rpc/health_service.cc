#include "server/rpc/health_service.h"

#include <optional>
#include <string>

#include "server/convert/convert.h"

namespace voxcol::server {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

// One Watch stream: writes the status whenever it changes, one write in flight at a time (a
// change during a write is sent after it, latest value only). Lives until OnDone.
class HealthService::Watcher final : public AsyncStream {
 public:
  Watcher(std::unique_ptr<StreamCall> call, HealthService* service, std::string name)
      : AsyncStream(std::move(call)), service_(service), name_(std::move(name)) {}

  // Called under the service's lock with the service's status now.
  void Update(ServingStatus status, bool finish) ABSL_EXCLUSIVE_LOCKS_REQUIRED(service_->mu_) {
    if (done_) return;
    wanted_ = status;
    finish_after_ |= finish;
    WriteOrFinishLocked();
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&service_->mu_);
    writing_ = false;
    if (!ok) return FinishLocked(ToGrpcStatus(absl::CancelledError("watch write failed")));
    WriteOrFinishLocked();
  }

  void OnCancel() override {  // the client cancelled (or the server is cancelling all calls)
    absl::MutexLock lock(&service_->mu_);
    FinishLocked(grpc::Status::CANCELLED);
  }

  void OnDone() override {
    {
      absl::MutexLock lock(&service_->mu_);
      service_->watchers_.erase(this);
      if (service_->watchers_.empty()) service_->no_watchers_.SignalAll();
    }
    delete this;
  }

 private:
  void WriteOrFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(service_->mu_) {
    if (done_ || writing_) return;
    if (!sent_ || *sent_ != wanted_) {
      sent_ = wanted_;
      HealthCheckResponse response;
      response.set_status(wanted_);
      bool own = false;
      grpc::SerializationTraits<HealthCheckResponse>::Serialize(response, &response_, &own);
      writing_ = true;
      StartWrite(&response_);
      return;
    }
    if (finish_after_) FinishLocked(grpc::Status::OK);
  }

  // Operations start under the lock their reactions take: reactions run on the RPC threads, never
  // inline in StartWrite or Finish.
  void FinishLocked(const grpc::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(service_->mu_) {
    if (done_) return;
    done_ = true;
    Finish(status);
  }

  HealthService* service_;
  const std::string name_;
  grpc::ByteBuffer response_;  // the serialized HealthCheckResponse being written
  ServingStatus wanted_ = HealthCheckResponse::UNKNOWN;
  std::optional<ServingStatus> sent_;
  bool writing_ = false;
  bool finish_after_ = false;
  bool done_ = false;

  friend class HealthService;
};

HealthService::HealthService() { serving_[""] = true; }

HealthService::~HealthService() {
  absl::MutexLock lock(&mu_);
  while (!watchers_.empty()) no_watchers_.Wait(&mu_);
}

HealthService::ServingStatus HealthService::StatusLocked(const std::string& service) const {
  auto it = serving_.find(service);
  if (it == serving_.end()) return HealthCheckResponse::SERVICE_UNKNOWN;
  return it->second ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
}

void HealthService::SetServing(const std::string& service, bool serving) {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return;
  serving_[service] = serving;
  for (Watcher* w : watchers_) {
    if (w->name_ == service) w->Update(StatusLocked(service), false);
  }
}

void HealthService::Shutdown() {
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
  for (auto& [name, serving] : serving_) serving = false;
  for (Watcher* w : watchers_) w->Update(HealthCheckResponse::NOT_SERVING, true);
}

grpc::Status HealthService::Check(grpc::ServerContext*, const HealthCheckRequest* request,
                                  HealthCheckResponse* response) {
  absl::MutexLock lock(&mu_);
  ServingStatus status = StatusLocked(request->service());
  if (status == HealthCheckResponse::SERVICE_UNKNOWN) {
    return ToGrpcStatus(absl::NotFoundError("unknown service"));
  }
  response->set_status(status);
  return grpc::Status::OK;
}

void HealthService::AcceptStreams(const RpcThreads& threads) {
  AcceptCalls(threads, WriterMethod(this, &HealthService::RequestWatch,
                                    [this](std::unique_ptr<StreamCall> call) {
                                      return OpenWatch(std::move(call));
                                    }));
}

AsyncStream* HealthService::OpenWatch(std::unique_ptr<StreamCall> call) {
  HealthCheckRequest request;
  absl::Status parsed = ParseFromByteBuffer(&static_cast<WriterCall&>(*call).request, &request);
  if (!parsed.ok()) {
    return FinishedStream(
        std::move(call),
        ToGrpcStatus(absl::InvalidArgumentError("the request is not a HealthCheckRequest (" +
                                                std::string(parsed.message()) + ")")));
  }
  auto* watcher = new Watcher(std::move(call), this, request.service());
  absl::MutexLock lock(&mu_);
  watchers_.insert(watcher);
  // After shutdown a new watcher hears NOT_SERVING and ends at once, like the others did.
  watcher->Update(StatusLocked(request.service()), shut_down_);
  return watcher;
}

}  // namespace voxcol::server
