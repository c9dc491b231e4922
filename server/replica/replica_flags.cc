// The read replica flags (issue 22): where the primary is and how to reach it.
#include <fstream>
#include <sstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "server/replica/replica.h"

ABSL_FLAG(std::string, replica_of, "",
          "Run as a read replica of the primary at HOST:PORT: follow its change feed, serve "
          "queries, refuse edits (FAILED_PRECONDITION naming the primary); empty = a primary");
ABSL_FLAG(bool, replica_tls, false, "Reach the primary over TLS (system roots unless a CA)");
ABSL_FLAG(std::string, replica_tls_ca, "", "PEM file: CA that signed the primary's certificate");
ABSL_FLAG(std::string, replica_tls_cert, "", "PEM file: client certificate for mutual TLS");
ABSL_FLAG(std::string, replica_tls_key, "", "PEM file: key of --replica_tls_cert");
ABSL_FLAG(std::string, replica_tls_server_name, "",
          "Expected name in the primary's certificate; empty: the host of --replica_of");
ABSL_FLAG(std::string, replica_token_file, "",
          "File holding the bearer token sent to the primary (needs the edit/subscribe scope)");

namespace voxcol::server {

namespace {

absl::Status ReadFlagFile(const char* flag, const std::string& path, std::string* out) {
  if (path.empty()) return absl::OkStatus();
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": cannot read ", path));
  *out = text.str();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ReplicaOptions> ReplicaOptionsFromFlags() {
  ReplicaOptions options;
  options.primary = absl::GetFlag(FLAGS_replica_of);
  client::ChannelSecurity& security = options.security;
  security.tls = absl::GetFlag(FLAGS_replica_tls);
  security.server_name = absl::GetFlag(FLAGS_replica_tls_server_name);
  const struct {
    const char* flag;
    std::string path;
    std::string* out;
  } files[] = {{"replica_tls_ca", absl::GetFlag(FLAGS_replica_tls_ca), &security.ca_pem},
               {"replica_tls_cert", absl::GetFlag(FLAGS_replica_tls_cert), &security.cert_pem},
               {"replica_tls_key", absl::GetFlag(FLAGS_replica_tls_key), &security.key_pem},
               {"replica_token_file", absl::GetFlag(FLAGS_replica_token_file), &security.token}};
  for (const auto& file : files) {
    if (absl::Status s = ReadFlagFile(file.flag, file.path, file.out); !s.ok()) return s;
  }
  absl::StripAsciiWhitespace(&security.token);
  return options;
}

}  // namespace voxcol::server
