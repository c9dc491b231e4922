// The security flags of voxcol_server (TLS, tokens, --insecure, quotas, audit log, port reuse)
// and how they are applied to the gRPC server builder. See docs/security.md.
#pragma once

#include <grpcpp/server_builder.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/security/audit_log.h"
#include "server/security/auth.h"
#include "server/security/quota.h"
#include "server/security/tls.h"

namespace voxcol::server {

using InterceptorFactories =
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>;

struct ServerSecurity {
  std::shared_ptr<const TokenTable> tokens;  // null: authentication off
  std::unique_ptr<QuotaTable> quotas;
  std::unique_ptr<AuditLog> audit;  // null: no audit log
  ServerTransport transport;
  std::shared_ptr<CallGate> gate;  // the transport's; set its RpcMetrics before serving
  bool allow_reuseport = false;
};

// Reads the security flags for a server listening on `listen`; errors name the flag. Logs the
// resulting mode (and, loudly, --insecure).
absl::StatusOr<std::unique_ptr<ServerSecurity>> SecurityFromFlags(const std::string& listen);

// Appends the security interceptors to `interceptors`. The gRPC port is bound by the server's
// Listener (server/app/listener.h) with `transport.credentials`, sharing it with other processes
// only with `allow_reuseport`.
void ApplySecurity(ServerSecurity& security, InterceptorFactories* interceptors);

}  // namespace voxcol::server
