#include "server/telemetry/request_log.h"

#include <grpcpp/server_context.h>

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "server/telemetry/log.h"

namespace voxcol::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

constexpr char kRequestIdKey[] = "x-request-id";

// Unique within this process and, through the start time, across restarts.
std::string GenerateRequestId() {
  static const int64_t start = absl::ToUnixMillis(absl::Now());
  static std::atomic<uint64_t> next{0};
  return absl::StrFormat("%x-%x", start, next.fetch_add(1, std::memory_order_relaxed));
}

// gRPC and absl share the canonical code numbering.
std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(absl::StatusCode(code));
}

class RequestLogInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit RequestLogInterceptor(grpc::experimental::ServerRpcInfo* info)
      : info_(info), start_(absl::Now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      auto* received = methods->GetRecvInitialMetadata();
      auto it = received->find(kRequestIdKey);
      request_id_ = it != received->end() ? std::string(it->second.data(), it->second.size())
                                          : GenerateRequestId();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      if (request_id_.empty()) request_id_ = GenerateRequestId();
      methods->GetSendInitialMetadata()->emplace(kRequestIdKey, request_id_);
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS))
      Log(methods->GetSendStatus());
    methods->Proceed();
  }

 private:
  void Log(const grpc::Status& status) {
    bool streaming = info_->type() != grpc::experimental::ServerRpcInfo::Type::UNARY;
    if (status.ok() && !streaming) return;
    std::string line = absl::StrFormat(
        "event=rpc method=%s request_id=%s peer=%s code=%s millis=%d message=%s",
        LogValue(info_->method()), LogValue(request_id_), LogValue(info_->server_context()->peer()),
        LogValue(CodeName(status.error_code())), absl::ToInt64Milliseconds(absl::Now() - start_),
        LogValue(status.error_message()));
    bool server_fault = status.error_code() == grpc::StatusCode::INTERNAL ||
                        status.error_code() == grpc::StatusCode::DATA_LOSS ||
                        status.error_code() == grpc::StatusCode::UNKNOWN;
    LogLine(server_fault ? "ERROR" : "INFO", line);
  }

  grpc::experimental::ServerRpcInfo* info_;
  absl::Time start_;
  std::string request_id_;
};

}  // namespace

grpc::experimental::Interceptor* RequestLogInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new RequestLogInterceptor(info);
}

}  // namespace voxcol::server
