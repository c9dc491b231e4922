// The gRPC port's transport security and the startup policy that goes with it.
//
// - --tls_cert and --tls_key: TLS; --tls_client_ca as well: mutual TLS (clients must present a
//   certificate signed by that CA). The files are re-read every --tls_reload_seconds, so a
//   certificate is rotated by replacing the files (atomically, e.g. a symlink swap; Kubernetes
//   Secret volumes do this).
// - Without TLS on a loopback address the port uses gRPC's local credentials (plaintext, loopback
//   peers only), so that tokens and quotas still apply.
// - A non-loopback address needs TLS and tokens, unless --insecure is given (then plaintext, no
//   authentication and no quotas, which the log states loudly at startup).
#pragma once

#include <grpcpp/security/auth_metadata_processor.h>
#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace voxcol::server {

struct TransportConfig {
  std::string listen;
  std::string cert_file, key_file, client_ca_file;  // empty: none
  int reload_seconds = 60;
  bool tokens = false;    // --auth_tokens is given
  bool insecure = false;  // --insecure
};

// True for 127.0.0.0/8, ::1 and localhost (with a port); false for wildcards and anything else.
bool IsLoopbackListen(const std::string& listen);

struct ServerTransport {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  bool gated = false;       // the CallGate runs on every call (false only with --insecure)
  std::string description;  // for the startup log: tls, mtls, local or insecure
};

// Checks the policy above and builds the credentials with `gate` attached; errors name the flags.
absl::StatusOr<ServerTransport> BuildServerTransport(
    const TransportConfig& config, std::shared_ptr<grpc::AuthMetadataProcessor> gate);

}  // namespace voxcol::server
