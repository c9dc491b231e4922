#include "server/security/tls.h"

#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace voxcol::server {
namespace {

// The host part of host:port, [v6]:port or :port.
std::string ListenHost(const std::string& listen) {
  std::string_view host = listen;
  if (host.substr(0, 1) == "[") {
    size_t end = host.find(']');
    return std::string(host.substr(1, end == std::string_view::npos ? host.npos : end - 1));
  }
  size_t colon = host.rfind(':');
  return std::string(colon == std::string_view::npos ? host : host.substr(0, colon));
}

// Non-empty and readable, so that a wrong path fails at startup, not at the first handshake.
absl::Status CheckReadable(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in || in.peek() == std::ifstream::traits_type::eof()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " ", path, " cannot be read or is empty"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ServerTransport> TlsTransport(const TransportConfig& config) {
  for (auto [path, flag] : {std::pair{config.cert_file, "tls_cert"},
                            {config.key_file, "tls_key"},
                            {config.client_ca_file, "tls_client_ca"}}) {
    if (path.empty()) continue;
    if (absl::Status s = CheckReadable(path, flag); !s.ok()) return s;
  }
  const bool mutual = !config.client_ca_file.empty();
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      config.key_file, config.cert_file, config.client_ca_file,
      unsigned(std::max(1, config.reload_seconds)));
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (mutual) {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return ServerTransport{grpc::experimental::TlsServerCredentials(options), true,
                         mutual ? "mtls" : "tls"};
}

}  // namespace

bool IsLoopbackListen(const std::string& listen) {
  const std::string host = ListenHost(listen);
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

absl::StatusOr<ServerTransport> BuildServerTransport(
    const TransportConfig& config, std::shared_ptr<grpc::AuthMetadataProcessor> gate) {
  const bool tls = !config.cert_file.empty() || !config.key_file.empty();
  if (tls && (config.cert_file.empty() || config.key_file.empty())) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key must be given together");
  }
  if (!tls && !config.client_ca_file.empty()) {
    return absl::InvalidArgumentError("--tls_client_ca needs --tls_cert and --tls_key");
  }
  const bool loopback = IsLoopbackListen(config.listen);
  if (!loopback && !tls && config.tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--auth_tokens on the non-loopback address ", config.listen,
        " needs --tls_cert and --tls_key (bearer tokens must not cross a network in clear)"));
  }
  if (!loopback && !(tls && config.tokens) && !config.insecure) {
    return absl::InvalidArgumentError(
        absl::StrCat("refusing to serve on the non-loopback address ", config.listen,
                     " without TLS and tokens: give --tls_cert, --tls_key and --auth_tokens (see "
                     "docs/security.md), listen on 127.0.0.1, or pass --insecure"));
  }
  ServerTransport transport;
  if (tls) {
    absl::StatusOr<ServerTransport> built = TlsTransport(config);
    if (!built.ok()) return built.status();
    transport = *std::move(built);
  } else if (loopback) {
    transport = {grpc::experimental::LocalServerCredentials(LOCAL_TCP), true, "local"};
  } else {
    return ServerTransport{grpc::InsecureServerCredentials(), false, "insecure"};
  }
  transport.credentials->SetAuthMetadataProcessor(std::move(gate));
  return transport;
}

}  // namespace voxcol::server
