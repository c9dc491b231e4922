// grpc.health.v1.Health, overall ("") and per service name. Replaces gRPC's default service so
// that shutdown ends Watch streams at once (NOT_SERVING, then OK) instead of holding them until
// the shutdown grace period cancels them.
#pragma once

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/stream/async_stream.h"

namespace voxcol::server {

// Check uses the sync API; Watch runs on the server's own queues (server/stream/async_stream.h).
class HealthService final
    : public grpc::health::v1::Health::WithRawMethod_Watch<grpc::health::v1::Health::Service> {
 public:
  using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

  HealthService();  // "" is SERVING
  ~HealthService() override;

  // Sets a service's status and tells its watchers. Ignored after Shutdown.
  void SetServing(const std::string& service, bool serving);
  // Every service turns NOT_SERVING (for good); watchers hear it and their streams end with OK.
  void Shutdown();

  grpc::Status Check(grpc::ServerContext* context,
                     const grpc::health::v1::HealthCheckRequest* request,
                     grpc::health::v1::HealthCheckResponse* response) override;
  // Starts answering Watch; call once, after the server started and before `threads` start.
  void AcceptStreams(const RpcThreads& threads);

  class Watcher;

 private:
  friend class Watcher;
  AsyncStream* OpenWatch(std::unique_ptr<StreamCall> call);
  ServingStatus StatusLocked(const std::string& service) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  absl::CondVar no_watchers_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<std::string, bool> serving_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<Watcher*> watchers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace voxcol::server
