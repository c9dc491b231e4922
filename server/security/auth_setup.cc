#include "server/security/auth_setup.h"

#include <grpc/grpc.h>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "server/telemetry/log.h"

ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain of the gRPC port; enables TLS");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA bundle; when set, clients must present a certificate it signed (mutual TLS)");
ABSL_FLAG(int, tls_reload_seconds, 60,
          "How often the TLS files are re-read (rotate certificates by replacing the files)");
ABSL_FLAG(std::string, auth_tokens, "",
          "Token file, one `<sha256 hex of token> <query|edit|admin> <identity>` per line; when "
          "set every call but health checks needs `authorization: Bearer <token>`");
ABSL_FLAG(bool, insecure, false,
          "Allow a non-loopback --listen without TLS and tokens (plaintext, no authentication)");
ABSL_FLAG(double, quota_queries_per_second, 0,
          "Query calls per second per client identity (burst: one second's worth); 0 = unlimited");
ABSL_FLAG(double, quota_edits_per_second, 0,
          "Edit batches, imports, exports and checkpoints per second per client identity; 0 = "
          "unlimited");
ABSL_FLAG(int64_t, quota_open_streams, 0,
          "Open streams (Query, EditStream, Subscribe) per client identity; 0 = unlimited");
ABSL_FLAG(std::string, audit_log, "",
          "File receiving one JSON line per accepted edit batch, import, export and checkpoint");
ABSL_FLAG(bool, allow_reuseport, false,
          "Let several processes share the gRPC port (SO_REUSEPORT); off: a taken port fails");

namespace voxcol::server {

absl::StatusOr<std::unique_ptr<ServerSecurity>> SecurityFromFlags(const std::string& listen) {
  auto security = std::make_unique<ServerSecurity>();
  const std::string tokens_path = absl::GetFlag(FLAGS_auth_tokens);
  if (!tokens_path.empty()) {
    absl::StatusOr<TokenTable> tokens = TokenTable::Load(tokens_path);
    if (!tokens.ok()) return tokens.status();
    security->tokens = std::make_shared<const TokenTable>(*std::move(tokens));
  }
  security->quotas = std::make_unique<QuotaTable>(QuotaLimits{
      absl::GetFlag(FLAGS_quota_queries_per_second), absl::GetFlag(FLAGS_quota_edits_per_second),
      absl::GetFlag(FLAGS_quota_open_streams)});
  if (const std::string path = absl::GetFlag(FLAGS_audit_log); !path.empty()) {
    absl::StatusOr<std::unique_ptr<AuditLog>> audit = AuditLog::Open(path);
    if (!audit.ok()) return audit.status();
    security->audit = *std::move(audit);
  }
  TransportConfig transport{listen,
                            absl::GetFlag(FLAGS_tls_cert),
                            absl::GetFlag(FLAGS_tls_key),
                            absl::GetFlag(FLAGS_tls_client_ca),
                            absl::GetFlag(FLAGS_tls_reload_seconds),
                            security->tokens != nullptr,
                            absl::GetFlag(FLAGS_insecure)};
  security->gate = std::make_shared<CallGate>(security->tokens, security->quotas.get());
  absl::StatusOr<ServerTransport> built = BuildServerTransport(transport, security->gate);
  if (!built.ok()) return built.status();
  security->transport = *std::move(built);
  security->allow_reuseport = absl::GetFlag(FLAGS_allow_reuseport);
  LogInfo("event=security transport=%s tokens=%d audit_log=%s quotas=%g,%g,%d",
          security->transport.description, security->tokens ? security->tokens->size() : 0,
          absl::GetFlag(FLAGS_audit_log), absl::GetFlag(FLAGS_quota_queries_per_second),
          absl::GetFlag(FLAGS_quota_edits_per_second), absl::GetFlag(FLAGS_quota_open_streams));
  if (!security->transport.gated) {
    LogError("event=INSECURE address=%s message=%s", listen,
             "--insecure: serving PLAINTEXT on a non-loopback address with NO authentication, "
             "NO roles and NO quotas; anyone who can reach this port can edit, export and "
             "checkpoint the world");
  }
  return security;
}

void ApplySecurity(ServerSecurity& security, InterceptorFactories* interceptors) {
  if (security.transport.gated && security.quotas->limits().open_streams > 0) {
    interceptors->push_back(std::make_unique<StreamCountInterceptorFactory>(security.quotas.get(),
                                                                            security.tokens.get()));
  }
  if (security.audit != nullptr || security.tokens != nullptr) {
    interceptors->push_back(
        std::make_unique<AuditInterceptorFactory>(security.audit.get(), security.tokens.get()));
  }
}

}  // namespace voxcol::server
