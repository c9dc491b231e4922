#include "server/security/quota.h"

#include <grpcpp/server_context.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "server/security/auth.h"

namespace voxcol::server {

absl::Status QuotaTable::Take(Bucket& bucket, double rate, absl::Time now, const char* what) {
  const double burst = std::max(1.0, rate);  // a second's worth
  if (bucket.tokens < 0) {
    bucket.tokens = burst;
  } else {
    bucket.tokens =
        std::min(burst, bucket.tokens + absl::ToDoubleSeconds(now - bucket.refilled) * rate);
  }
  bucket.refilled = now;
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return absl::OkStatus();
  }
  const int64_t retry_ms = int64_t(std::ceil((1 - bucket.tokens) / rate * 1000));
  return absl::ResourceExhaustedError(absl::StrCat("quota exceeded: ", what, " per second (", rate,
                                                   "); retry after ", retry_ms, " ms"));
}

absl::Status QuotaTable::Admit(const std::string& identity, QuotaKind kind, absl::Time now) {
  if (kind == QuotaKind::kNone) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  Client& client = clients_[identity];
  switch (kind) {
    case QuotaKind::kQuery:
      if (limits_.queries_per_second <= 0) return absl::OkStatus();
      return Take(client.queries, limits_.queries_per_second, now, "query calls");
    case QuotaKind::kEdit:
      if (limits_.edits_per_second <= 0) return absl::OkStatus();
      return Take(client.edits, limits_.edits_per_second, now, "edit batches");
    case QuotaKind::kStream:
      if (limits_.open_streams <= 0 || client.open_streams < limits_.open_streams) {
        return absl::OkStatus();
      }
      return absl::ResourceExhaustedError(
          absl::StrCat("quota exceeded: ", client.open_streams, " open streams (limit ",
                       limits_.open_streams, "); retry after 1000 ms or after closing one"));
    case QuotaKind::kNone:
      break;
  }
  return absl::OkStatus();
}

void QuotaTable::StreamOpened(const std::string& identity) {
  absl::MutexLock lock(&mu_);
  ++clients_[identity].open_streams;
}

void QuotaTable::StreamClosed(const std::string& identity) {
  absl::MutexLock lock(&mu_);
  auto it = clients_.find(identity);
  if (it != clients_.end() && it->second.open_streams > 0) --it->second.open_streams;
}

namespace {

class StreamCountInterceptor : public grpc::experimental::Interceptor {
 public:
  StreamCountInterceptor(QuotaTable* quotas, std::string identity)
      : quotas_(quotas), identity_(std::move(identity)) {
    quotas_->StreamOpened(identity_);
  }
  ~StreamCountInterceptor() override { quotas_->StreamClosed(identity_); }
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    methods->Proceed();
  }

 private:
  QuotaTable* quotas_;
  std::string identity_;
};

}  // namespace

grpc::experimental::Interceptor* StreamCountInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  if (info->type() == grpc::experimental::ServerRpcInfo::Type::UNARY) return nullptr;
  if (PolicyForMethod(info->method()).quota != QuotaKind::kStream) return nullptr;
  return new StreamCountInterceptor(quotas_,
                                    IdentifyCaller(*info->server_context(), tokens_).identity);
}

}  // namespace voxcol::server
