// Every RPC timed and counted by its final status, as a gRPC server interceptor:
//   voxcol_rpc_calls_total{method="QueryService/Raycast",code="OK"}       counter
//   voxcol_rpc_duration_seconds{method="QueryService/Raycast"}            histogram
// The duration runs from the call's arrival to its status being sent (for a stream, its life).
// Methods are registered up front from the services' descriptors, so a scrape lists every RPC
// before it is first called; a code label appears when that code first occurs.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "server/telemetry/metrics.h"

namespace voxcol::server {

class RpcMetrics {
 public:
  // Registers every method of the named services ("voxcol.v1.QueryService", ...; looked up in the
  // generated descriptor pool) with `registry`, which must outlive this object.
  RpcMetrics(Metrics& registry, const std::vector<std::string>& service_names);

  struct Method {
    std::string label;  // "QueryService/Raycast"
    Histogram* duration = nullptr;
    std::atomic<Counter*> calls[17] = {};  // by grpc::StatusCode, created on first use
  };
  // The method with gRPC path `path` ("/voxcol.v1.QueryService/Raycast"); an "other" entry for
  // paths not registered (e.g. reflection).
  Method& Find(const std::string& path);
  void Count(Method& method, int code);

 private:
  Metrics& registry_;
  absl::flat_hash_map<std::string, std::unique_ptr<Method>> by_path_;  // fixed after construction
  std::unique_ptr<Method> other_;
  absl::Mutex mu_;  // serializes the registration of new code labels
};

class RpcMetricsInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcMetricsInterceptorFactory(RpcMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  RpcMetrics* metrics_;
};

}  // namespace voxcol::server
