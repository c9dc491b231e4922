#include "server/telemetry/rpc_metrics.h"

#include <google/protobuf/descriptor.h>

#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace voxcol::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

constexpr char kCallsName[] = "voxcol_rpc_calls_total";
constexpr char kDurationName[] = "voxcol_rpc_duration_seconds";

std::unique_ptr<RpcMetrics::Method> NewMethod(Metrics& registry, std::string label) {
  auto method = std::make_unique<RpcMetrics::Method>();
  method->label = std::move(label);
  method->duration = registry.AddHistogram(
      kDurationName, "Time from a call's arrival to its status (a stream's whole life), seconds",
      absl::StrCat("method=\"", method->label, "\""));
  return method;
}

class RpcMetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  RpcMetricsInterceptor(RpcMetrics* metrics, RpcMetrics::Method* method)
      : metrics_(metrics), method_(method), start_(std::chrono::steady_clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      method_->duration->Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
      metrics_->Count(*method_, int(methods->GetSendStatus().error_code()));
    }
    methods->Proceed();
  }

 private:
  RpcMetrics* metrics_;
  RpcMetrics::Method* method_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

RpcMetrics::RpcMetrics(Metrics& registry, const std::vector<std::string>& service_names)
    : registry_(registry) {
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const std::string& name : service_names) {
    const google::protobuf::ServiceDescriptor* service = pool->FindServiceByName(name);
    if (service == nullptr) continue;
    for (int i = 0; i < service->method_count(); ++i) {
      const std::string label = absl::StrCat(service->name(), "/", service->method(i)->name());
      by_path_[absl::StrCat("/", name, "/", service->method(i)->name())] =
          NewMethod(registry, label);
    }
  }
  other_ = NewMethod(registry, "other");
}

RpcMetrics::Method& RpcMetrics::Find(const std::string& path) {
  auto it = by_path_.find(path);
  return it != by_path_.end() ? *it->second : *other_;
}

void RpcMetrics::Count(Method& method, int code) {
  if (code < 0 || code >= 17) code = int(grpc::StatusCode::UNKNOWN);
  Counter* counter = method.calls[code].load(std::memory_order_acquire);
  if (counter == nullptr) {
    absl::MutexLock lock(&mu_);
    counter = method.calls[code].load(std::memory_order_relaxed);
    if (counter == nullptr) {
      counter = registry_.AddCounter(
          kCallsName, "RPCs completed, by method and final status code",
          absl::StrCat("method=\"", method.label, "\",code=\"",
                       absl::StatusCodeToString(absl::StatusCode(code)), "\""));
      method.calls[code].store(counter, std::memory_order_release);
    }
  }
  counter->Add();
}

grpc::experimental::Interceptor* RpcMetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new RpcMetricsInterceptor(metrics_, &metrics_->Find(info->method()));
}

}  // namespace voxcol::server
