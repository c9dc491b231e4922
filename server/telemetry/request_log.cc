#include "server/telemetry/request_log.h"

#include <grpcpp/server_context.h>

#include <atomic>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
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

// Repeated failures of one method with one code are logged at most kLinesPerWindow times per
// window; the first failure after a window that dropped lines first logs one `event=rpc_suppressed`
// line saying how many.
class FailureSampler {
 public:
  static constexpr int kLinesPerWindow = 10;
  static constexpr absl::Duration kWindow = absl::Seconds(10);
  static constexpr size_t kMaxKeys = 1024;

  static FailureSampler& Get() {
    static FailureSampler* sampler = new FailureSampler;
    return *sampler;
  }

  bool Admit(const char* method, const std::string& code) {
    const absl::Time now = absl::Now();
    int64_t dropped = 0;
    bool admit;
    {
      absl::MutexLock lock(&mu_);
      std::string key = absl::StrCat(method, " ", code);
      // Method names come from clients (unknown ones too): past kMaxKeys the rest share one key.
      if (windows_.size() >= kMaxKeys && !windows_.contains(key)) key = "*";
      Window& w = windows_[key];
      if (now - w.start >= kWindow) {
        dropped = w.dropped;
        w = {now, 0, 0};
      }
      admit = ++w.lines <= kLinesPerWindow;
      if (!admit) ++w.dropped;
    }
    if (dropped > 0) {
      LogLine("WARN", absl::StrFormat("event=rpc_suppressed method=%s code=%s suppressed=%d "
                                      "window_seconds=%d",
                                      LogValue(method), LogValue(code), dropped,
                                      absl::ToInt64Seconds(kWindow)));
    }
    return admit;
  }

 private:
  struct Window {
    absl::Time start;
    int64_t lines, dropped;
  };
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Window> windows_ ABSL_GUARDED_BY(mu_);
};

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
      if (it != received->end()) {
        request_id_.assign(it->second.data(), it->second.size());
      } else {
        // The handler (and the audit record it writes) sees the generated id as if the client had
        // sent it; the map holds references into request_id_, which outlives the call's handler.
        request_id_ = GenerateRequestId();
        received->emplace(grpc::string_ref(kRequestIdKey), grpc::string_ref(request_id_));
      }
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      if (request_id_.empty()) request_id_ = GenerateRequestId();
      methods->GetSendInitialMetadata()->emplace(kRequestIdKey, request_id_);
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      if (request_id_.empty()) request_id_ = GenerateRequestId();
      // Also in the trailers: a client that reads only the status (most stubs) still gets it.
      methods->GetSendTrailingMetadata()->emplace(kRequestIdKey, request_id_);
      Log(methods->GetSendStatus());
    }
    methods->Proceed();
  }

 private:
  void Log(const grpc::Status& status) {
    bool streaming = info_->type() != grpc::experimental::ServerRpcInfo::Type::UNARY;
    if (status.ok() && !streaming) return;
    bool server_fault = status.error_code() == grpc::StatusCode::INTERNAL ||
                        status.error_code() == grpc::StatusCode::DATA_LOSS ||
                        status.error_code() == grpc::StatusCode::UNKNOWN;
    // Dropped lines (below --log_level, or sampled away in a flood of failures) are not formatted.
    if (!LogEnabled(server_fault ? LogLevel::kError : LogLevel::kInfo)) return;
    if (!status.ok() &&
        !FailureSampler::Get().Admit(info_->method(), CodeName(status.error_code())))
      return;
    LogLine(server_fault ? "ERROR" : "INFO",
            absl::StrFormat(
                "event=rpc method=%s request_id=%s peer=%s code=%s millis=%d message=%s",
                LogValue(info_->method()), LogValue(request_id_),
                LogValue(info_->server_context()->peer()), LogValue(CodeName(status.error_code())),
                absl::ToInt64Milliseconds(absl::Now() - start_), LogValue(status.error_message())));
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
