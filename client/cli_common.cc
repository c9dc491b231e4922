#include "client/cli_common.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/cli_flags.h"

namespace voxcol::client {
namespace {

const char* kMaterialNames[] = {"air", "water", "rock", "dirt", "grass", "sand"};

// gRPC and absl share the canonical code numbering.
std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(absl::StatusCode(code));
}

}  // namespace

int Usage(const std::string& message) {
  std::fprintf(stderr, "voxcol: %s\nRun 'voxcol --help' for usage.\n", message.c_str());
  return kExitUsage;
}

bool ParseVec3(const std::string& text, v1::Vec3* out) {
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  if (parts.size() != 3) return false;
  float v[3];
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    v[i] = std::strtof(parts[i].c_str(), &end);
    if (parts[i].empty() || *end != '\0') return false;
  }
  out->set_x(v[0]);
  out->set_y(v[1]);
  out->set_z(v[2]);
  return true;
}

bool ParseQuat(const std::string& text, v1::Quat* out) {
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  if (parts.size() != 4) return false;
  float v[4];
  for (int i = 0; i < 4; ++i) {
    char* end = nullptr;
    v[i] = std::strtof(parts[i].c_str(), &end);
    if (parts[i].empty() || *end != '\0') return false;
  }
  out->set_w(v[0]);
  out->set_x(v[1]);
  out->set_y(v[2]);
  out->set_z(v[3]);
  return true;
}

bool ParseInt3(const std::string& text, v1::Int3* out) {
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  int32_t v[3];
  if (parts.size() != 3) return false;
  for (int i = 0; i < 3; ++i) {
    if (!absl::SimpleAtoi(parts[i], &v[i])) return false;
  }
  out->set_x(v[0]);
  out->set_y(v[1]);
  out->set_z(v[2]);
  return true;
}

bool ParseMaterial(const std::string& text, uint32_t* out) {
  for (uint32_t i = 0; i < 6; ++i) {
    if (text == kMaterialNames[i]) {
      *out = i;
      return true;
    }
  }
  return absl::SimpleAtoi(text, out);  // the server range-checks numbers
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

std::string MaterialLabel(uint32_t m) {
  return m < 6 ? absl::StrCat(kMaterialNames[m], " (", m, ")") : absl::StrCat("solid (", m, ")");
}

std::string Fmt(const v1::Vec3& v) {
  return absl::StrFormat("(%.3f, %.3f, %.3f)", v.x(), v.y(), v.z());
}
std::string Fmt(const v1::Int3& v) { return absl::StrFormat("(%d, %d, %d)", v.x(), v.y(), v.z()); }

std::string Fmt(const v1::Penetration& p) {
  return absl::StrFormat("depth %.3f along %s at %s", p.depth(), Fmt(p.normal()),
                         Fmt(p.position()));
}

int Fail(const char* command, const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    // Reached or not, the server gave no answer in time: name the deadline, not the network.
    std::fprintf(stderr,
                 "voxcol: %s: the server at %s did not answer within --timeout_ms=%d (%s: %s); "
                 "a longer --timeout_ms may help\n",
                 command, Flags().server.c_str(), Flags().timeout_ms,
                 CodeName(status.error_code()).c_str(), status.error_message().c_str());
    return kExitUnreachable;
  }
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    std::fprintf(stderr, "voxcol: cannot reach the server at %s (%s: %s)\n", Flags().server.c_str(),
                 CodeName(status.error_code()).c_str(), status.error_message().c_str());
    return kExitUnreachable;
  }
  std::fprintf(stderr, "voxcol: %s failed: %s: %s\n", command,
               CodeName(status.error_code()).c_str(), status.error_message().c_str());
  return kExitServerError;
}

void PrintJson(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  std::printf("%s\n", out.c_str());
}

int FailedOrJson(const char* command, const grpc::Status& status,
                 const google::protobuf::Message& response) {
  if (!status.ok()) return Fail(command, status);
  if (!Flags().json) return kPrintSummary;
  PrintJson(response);
  return kExitOk;
}

}  // namespace voxcol::client

namespace voxcol::client {

bool ChannelSecurityFromFlags(ChannelSecurity* out, std::string* error) {
  ChannelSecurity security;
  security.tls = Flags().tls;
  security.server_name = Flags().tls_server_name;
  const std::pair<std::string, std::string*> files[] = {{Flags().tls_ca, &security.ca_pem},
                                                        {Flags().tls_cert, &security.cert_pem},
                                                        {Flags().tls_key, &security.key_pem}};
  for (const auto& [path, pem] : files) {
    if (!path.empty() && !ReadFile(path, pem)) {
      *error = "cannot read " + path;
      return false;
    }
  }
  if (security.cert_pem.empty() != security.key_pem.empty()) {
    *error = "--tls_cert and --tls_key must be given together";
    return false;
  }
  security.token = Flags().token;
  if (const std::string path = Flags().token_file; !path.empty()) {
    if (!ReadFile(path, &security.token)) {
      *error = "cannot read " + path;
      return false;
    }
    security.token = security.token.substr(0, security.token.find_first_of("\r\n"));
  }
  if (const char* env = std::getenv("VOXCOL_TOKEN"); security.token.empty() && env != nullptr) {
    security.token = env;
  }
  *out = std::move(security);
  return true;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace voxcol::client
