// Per-client quotas by authenticated identity: query calls per second, edit batches per second
// (token buckets, a second's worth of burst) and open streams. Over a quota a call fails with
// RESOURCE_EXHAUSTED before its handler runs; the message says which quota and "retry after N
// ms". Each identity has its own buckets, so other clients are unaffected.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace voxcol::server {

class TokenTable;

enum class QuotaKind { kNone, kQuery, kEdit, kStream };

struct QuotaLimits {
  double queries_per_second = 0;  // 0: unlimited
  double edits_per_second = 0;    // 0: unlimited
  int64_t open_streams = 0;       // 0: unlimited
};

class QuotaTable {
 public:
  explicit QuotaTable(QuotaLimits limits) : limits_(limits) {}

  // OK, or RESOURCE_EXHAUSTED naming the quota with a retry hint. A stream call is admitted while
  // the identity holds fewer than the open-stream limit.
  absl::Status Admit(const std::string& identity, QuotaKind kind, absl::Time now);
  void StreamOpened(const std::string& identity);
  void StreamClosed(const std::string& identity);
  const QuotaLimits& limits() const { return limits_; }

 private:
  struct Bucket {
    double tokens = -1;  // < 0: not yet filled
    absl::Time refilled;
  };
  struct Client {
    Bucket queries, edits;
    int64_t open_streams = 0;
  };
  // OK or the wait until one token is there.
  static absl::Status Take(Bucket& bucket, double rate, absl::Time now, const char* what);

  const QuotaLimits limits_;
  absl::Mutex mu_;
  std::unordered_map<std::string, Client> clients_ ABSL_GUARDED_BY(mu_);
};

// Counts every streaming call against its identity's open streams while it runs.
class StreamCountInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // `tokens` (may be null) identifies the callers as the gate does.
  StreamCountInterceptorFactory(QuotaTable* quotas, const TokenTable* tokens)
      : quotas_(quotas), tokens_(tokens) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  QuotaTable* quotas_;
  const TokenTable* tokens_;
};

}  // namespace voxcol::server
