// Authentication and authorization of every call: bearer tokens mapped to roles, checked per
// method, plus the per-client quotas, in one gRPC AuthMetadataProcessor (CallGate).
//
// Tokens live in a file (--auth_tokens), hashed at rest, one per line:
//   <sha256 hex of the token> <role> <identity>      # comments and blank lines are ignored
// Roles are ordered: query < edit < admin (admin implies edit implies query). A call carries
// `authorization: Bearer <token>`. No or an unknown token: UNAUTHENTICATED; a role below the
// method's (MethodRole): PERMISSION_DENIED. Health checks need no token. See docs/security.md.
#pragma once

#include <grpcpp/security/auth_metadata_processor.h>
#include <grpcpp/server_context.h>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/security/quota.h"
#include "server/telemetry/rpc_metrics.h"

namespace voxcol::server {

enum class Role { kOpen = 0, kQuery = 1, kEdit = 2, kAdmin = 3 };

std::string_view RoleName(Role role);

// The lowest role that may call the method with full path `method` ("/pkg.Service/Method");
// methods not in the table need admin. Also the quota the call is counted against.
struct MethodPolicy {
  Role role = Role::kAdmin;
  QuotaKind quota = QuotaKind::kNone;
};
MethodPolicy PolicyForMethod(std::string_view method);

// Lowercase hex SHA-256 of `text` (OpenSSL's libcrypto).
std::string Sha256Hex(std::string_view text);

struct TokenEntry {
  Role role = Role::kQuery;
  std::string identity;
};

// The token file, keyed by the tokens' SHA-256.
class TokenTable {
 public:
  // Errors name the file and line.
  static absl::StatusOr<TokenTable> Load(const std::string& path);
  static absl::StatusOr<TokenTable> Parse(std::string_view text, const std::string& source);
  // The entry of the presented token, or null.
  const TokenEntry* Find(std::string_view token) const;
  size_t size() const { return by_hash_.size(); }

 private:
  std::unordered_map<std::string, TokenEntry> by_hash_;
};

struct Caller {
  std::string identity;
  Role role = Role::kOpen;
};

// Who a call is, by the same rule as the gate: with `tokens`, the presented token's identity and
// role (else "anonymous", kOpen); without, the client certificate's common name (else
// "anonymous") as admin. Derived from the call's own metadata: gRPC 1.51 shares one auth context
// among all calls of a connection, so the gate cannot leave per-call properties there.
Caller IdentifyCaller(const grpc::ServerContextBase& context, const TokenTable* tokens);

// Runs on every call before any handler. `tokens` null: authentication off (every caller is
// admin, identified by its certificate's common name or as "anonymous").
class CallGate : public grpc::AuthMetadataProcessor {
 public:
  CallGate(std::shared_ptr<const TokenTable> tokens, QuotaTable* quotas)
      : tokens_(std::move(tokens)), quotas_(quotas) {}

  // Refused calls are counted in `metrics` (voxcol_rpc_calls_total by method and code) besides
  // the log line; set before the server starts (must outlive it).
  void SetRpcMetrics(RpcMetrics* metrics) { rpc_metrics_ = metrics; }

  bool IsBlocking() const override { return false; }
  // Logs every refusal (`event=refused`, method, identity, code, message) and counts it.
  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override;

 private:
  // One `event=refused` line, at most kMaxRefusalLinesPerSecond per second (a flood of bad
  // tokens must not flood the log); the next line after a second with more says how many were
  // left out. Every refusal is counted in the metrics regardless.
  static constexpr int kMaxRefusalLinesPerSecond = 100;
  void LogRefusal(std::string_view method, const std::string& identity, const grpc::Status& status);
  // The gate's decision; *caller starts as the certificate's identity and ends as the caller's.
  template <typename Find>
  grpc::Status Decide(const Find& find, std::string_view method, std::string* caller) const;

  std::shared_ptr<const TokenTable> tokens_;
  QuotaTable* quotas_;
  RpcMetrics* rpc_metrics_ = nullptr;
  absl::Mutex log_mu_;
  absl::Time log_window_start_ ABSL_GUARDED_BY(log_mu_);
  int lines_in_window_ ABSL_GUARDED_BY(log_mu_) = 0;
  int64_t lines_left_out_ ABSL_GUARDED_BY(log_mu_) = 0;
};

}  // namespace voxcol::server
