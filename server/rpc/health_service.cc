#include "server/rpc/health_service.h"

#include <optional>

namespace voxcol::server {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

// One Watch stream: writes the status whenever it changes, one write in flight at a time (a
// change during a write is sent after it, latest value only). Lives until OnDone.
class HealthService::Watcher final : public grpc::ServerWriteReactor<HealthCheckResponse> {
 public:
  Watcher(HealthService* service, std::string name) : service_(service), name_(std::move(name)) {}

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
    if (!ok) return FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "watch write failed"));
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
      response_.set_status(wanted_);
      writing_ = true;
      StartWrite(&response_);
      return;
    }
    if (finish_after_) FinishLocked(grpc::Status::OK);
  }

  // Like gRPC's own health service, operations start under the lock their reactions take: the
  // library runs reactions on its threads, never inline in StartWrite or Finish.
  void FinishLocked(const grpc::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(service_->mu_) {
    if (done_) return;
    done_ = true;
    ServerWriteReactor::Finish(status);
  }

  HealthService* service_;
  const std::string name_;
  HealthCheckResponse response_;
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

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* context,
                                               const HealthCheckRequest* request,
                                               HealthCheckResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::MutexLock lock(&mu_);
  ServingStatus status = StatusLocked(request->service());
  if (status == HealthCheckResponse::SERVICE_UNKNOWN) {
    reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service"));
  } else {
    response->set_status(status);
    reactor->Finish(grpc::Status::OK);
  }
  return reactor;
}

grpc::ServerWriteReactor<HealthCheckResponse>* HealthService::Watch(
    grpc::CallbackServerContext* context, const HealthCheckRequest* request) {
  auto* watcher = new Watcher(this, request->service());
  absl::MutexLock lock(&mu_);
  watchers_.insert(watcher);
  // After shutdown a new watcher hears NOT_SERVING and ends at once, like the others did.
  watcher->Update(StatusLocked(request->service()), shut_down_);
  return watcher;
}

}  // namespace voxcol::server
