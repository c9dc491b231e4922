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

// Adds the listening port with the chosen credentials, refuses port sharing unless
// --allow_reuseport, and appends the security interceptors to `interceptors`.
void ApplySecurity(ServerSecurity& security, const std::string& listen,
                   grpc::ServerBuilder& builder, int* port, InterceptorFactories* interceptors);

}  // namespace voxcol::server
