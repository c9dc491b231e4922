#include "server/security/auth.h"

#include <google/protobuf/descriptor.h>
#include <grpc/grpc_security_constants.h>
#include <openssl/evp.h>

#include <array>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "server/convert/convert.h"
#include "server/telemetry/log.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {
namespace {

constexpr std::string_view kHealthPrefix = "/grpc.health.v1.Health/";
constexpr std::string_view kReflectionPrefix = "/grpc.reflection.";
constexpr std::string_view kQueryServicePrefix = "/voxcol.v1.QueryService/";

struct MethodEntry {
  std::string_view method;
  MethodPolicy policy;
};

// Every RPC of voxcol.v1 with the lowest role that may call it. Query streams and EditStreams
// are counted as streams; their batches are not counted one by one. The unary QueryService
// methods (one per row of the query kinds table, server/exec/query_kinds.h) are not listed: every
// one of them is a query (PolicyForMethod), so a new query kind needs no entry here.
constexpr MethodEntry kMethods[] = {
    {"/voxcol.v1.WorldService/GetWorldInfo", {Role::kQuery, QuotaKind::kQuery}},
    {"/voxcol.v1.WorldService/ListWorlds", {Role::kQuery, QuotaKind::kQuery}},
    {"/voxcol.v1.WorldService/CreateWorld", {Role::kAdmin, QuotaKind::kEdit}},
    {"/voxcol.v1.WorldService/DeleteWorld", {Role::kAdmin, QuotaKind::kEdit}},
    {"/voxcol.v1.QueryService/Query", {Role::kQuery, QuotaKind::kStream}},
    {"/voxcol.v1.QueryService/WatchPaths", {Role::kQuery, QuotaKind::kStream}},
    {"/voxcol.v1.ReplicaService/GetReplicaStatus", {Role::kQuery, QuotaKind::kQuery}},
    {"/voxcol.v1.EditService/ReadVoxels", {Role::kQuery, QuotaKind::kQuery}},
    {"/voxcol.v1.EditService/Subscribe", {Role::kQuery, QuotaKind::kStream}},
    {"/voxcol.v1.EditService/FillBall", {Role::kEdit, QuotaKind::kEdit}},
    {"/voxcol.v1.EditService/ApplyEdits", {Role::kEdit, QuotaKind::kEdit}},
    {"/voxcol.v1.EditService/WriteVoxels", {Role::kEdit, QuotaKind::kEdit}},
    {"/voxcol.v1.EditService/EditStream", {Role::kEdit, QuotaKind::kStream}},
    {"/voxcol.v1.AdminService/CreateCheckpoint", {Role::kAdmin, QuotaKind::kEdit}},
    {"/voxcol.v1.AdminService/ExportRegion", {Role::kAdmin, QuotaKind::kEdit}},
    {"/voxcol.v1.AdminService/ImportRegion", {Role::kAdmin, QuotaKind::kEdit}},
    // Bodies are the game server's session state: writing them takes the edit role, but one call
    // per game tick is counted like a query (cheap, not durable), not against the edit quota.
    {"/voxcol.v1.BodyService/UpdateBodies", {Role::kEdit, QuotaKind::kQuery}},
    {"/voxcol.v1.BodyService/ListBodies", {Role::kQuery, QuotaKind::kQuery}},
};

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool ParseRole(std::string_view name, Role* role) {
  if (name == "query")
    *role = Role::kQuery;
  else if (name == "edit")
    *role = Role::kEdit;
  else if (name == "admin")
    *role = Role::kAdmin;
  else
    return false;
  return true;
}

bool ValidIdentity(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(c) && std::string_view("._-@:").find(c) == std::string_view::npos)
      return false;
  }
  return true;
}

bool ValidHash(std::string_view hex) {
  if (hex.size() != 64) return false;
  for (char c : hex) {
    if (!absl::ascii_isxdigit(c) || absl::ascii_isupper(c)) return false;
  }
  return true;
}

std::string FirstProperty(const grpc::AuthContext& context, const char* name) {
  std::vector<grpc::string_ref> values = context.FindPropertyValues(name);
  return values.empty() ? std::string() : std::string(values[0].data(), values[0].size());
}

}  // namespace

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kOpen:
      return "open";
    case Role::kQuery:
      return "query";
    case Role::kEdit:
      return "edit";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

MethodPolicy PolicyForMethod(std::string_view method) {
  if (StartsWith(method, kHealthPrefix)) return {Role::kOpen, QuotaKind::kNone};
  if (StartsWith(method, kReflectionPrefix)) return {Role::kQuery, QuotaKind::kStream};
  for (const MethodEntry& entry : kMethods) {
    if (entry.method == method) return entry.policy;
  }
  // QueryService only reads: its unary methods are queries (the Query stream is listed above).
  // Only methods the service really has, and only unary ones: a path it does not define, or a
  // new streaming method, falls back to admin until it is listed.
  if (StartsWith(method, kQueryServicePrefix)) {
    const google::protobuf::MethodDescriptor* descriptor =
        v1::RaycastRequest::descriptor()
            ->file()
            ->FindServiceByName("QueryService")
            ->FindMethodByName(std::string(method.substr(kQueryServicePrefix.size())));
    if (descriptor != nullptr && !descriptor->client_streaming() &&
        !descriptor->server_streaming()) {
      return {Role::kQuery, QuotaKind::kQuery};
    }
  }
  return {Role::kAdmin, QuotaKind::kNone};
}

std::string Sha256Hex(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) absl::StrAppendFormat(&hex, "%02x", digest[i]);
  return hex;
}

absl::StatusOr<TokenTable> TokenTable::Parse(std::string_view text, const std::string& source) {
  TokenTable table;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    std::vector<std::string> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipWhitespace());
    Role role;
    if (fields.size() != 3 || !ValidHash(fields[0]) || !ParseRole(fields[1], &role) ||
        !ValidIdentity(fields[2])) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ":", line_number,
          ": expected `<sha256 hex, lowercase> <query|edit|admin> <identity [A-Za-z0-9._@:-]>`"));
    }
    if (!table.by_hash_.emplace(std::string(fields[0]), TokenEntry{role, std::string(fields[2])})
             .second) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_number, ": the same token hash appears twice"));
    }
  }
  if (table.by_hash_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": holds no token"));
  }
  return table;
}

absl::StatusOr<TokenTable> TokenTable::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the token file ", path));
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

const TokenEntry* TokenTable::Find(std::string_view token) const {
  auto it = by_hash_.find(Sha256Hex(token));
  return it == by_hash_.end() ? nullptr : &it->second;
}

Caller IdentifyCaller(const grpc::ServerContextBase& context, const TokenTable* tokens) {
  if (tokens == nullptr) {
    std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
    std::string name = auth ? FirstProperty(*auth, GRPC_X509_CN_PROPERTY_NAME) : std::string();
    return {name.empty() ? "anonymous" : name, Role::kAdmin};
  }
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it != metadata.end()) {
    std::string_view header(it->second.data(), it->second.size());
    if (StartsWith(header, "Bearer ")) {
      if (const TokenEntry* entry = tokens->Find(header.substr(7))) {
        return {entry->identity, entry->role};
      }
    }
  }
  return {"anonymous", Role::kOpen};
}

grpc::Status CallGate::Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                               OutputMetadata*, OutputMetadata*) {
  auto find = [&](std::string_view key) {
    auto it = auth_metadata.find(grpc::string_ref(key.data(), key.size()));
    return it == auth_metadata.end() ? std::string_view()
                                     : std::string_view(it->second.data(), it->second.size());
  };
  const std::string_view method = find(":path");
  std::string identity = FirstProperty(*context, GRPC_X509_CN_PROPERTY_NAME);
  const grpc::Status status = Decide(find, method, &identity);
  if (!status.ok()) {
    // A refused call never reaches the interceptors that log and count the others: it is logged
    // and counted here, in the same series.
    LogRefusal(method, identity.empty() ? std::string("anonymous") : identity, status);
    if (rpc_metrics_ != nullptr) {
      rpc_metrics_->Count(rpc_metrics_->Find(std::string(method)), int(status.error_code()));
    }
  }
  return status;
}

void CallGate::LogRefusal(std::string_view method, const std::string& identity,
                          const grpc::Status& status) {
  int64_t left_out = 0;
  {
    absl::MutexLock lock(&log_mu_);
    const absl::Time now = absl::Now();
    if (now - log_window_start_ >= absl::Seconds(1)) {
      left_out = std::exchange(lines_left_out_, 0);
      log_window_start_ = now;
      lines_in_window_ = 0;
    }
    if (lines_in_window_ >= kMaxRefusalLinesPerSecond) {
      ++lines_left_out_;
      return;
    }
    ++lines_in_window_;
  }
  if (left_out > 0) {
    // All of them are counted in voxcol_rpc_calls_total.
    LogInfo("event=refusals_not_logged count=%d limit_per_second=%d", left_out,
            kMaxRefusalLinesPerSecond);
  }
  LogInfo("event=refused method=%s identity=%s code=%s message=%s", std::string(method), identity,
          absl::StatusCodeToString(absl::StatusCode(status.error_code())), status.error_message());
}

template <typename Find>
grpc::Status CallGate::Decide(const Find& find, std::string_view method,
                              std::string* caller) const {
  std::string& identity = *caller;
  const MethodPolicy policy = PolicyForMethod(method);
  if (tokens_ != nullptr && policy.role != Role::kOpen) {
    std::string_view header = find("authorization");
    if (header.empty()) {
      return ToGrpcStatus(
          absl::UnauthenticatedError("no credentials: send `authorization: Bearer <token>`"));
    }
    const TokenEntry* entry = nullptr;
    if (StartsWith(header, "Bearer ")) entry = tokens_->Find(header.substr(7));
    if (entry == nullptr) {
      return ToGrpcStatus(absl::UnauthenticatedError("unknown bearer token"));
    }
    identity = entry->identity;  // also for the refusal's log line
    if (entry->role < policy.role) {
      return ToGrpcStatus(absl::PermissionDeniedError(absl::StrCat(
          std::string(method), " needs the ", std::string(RoleName(policy.role)),
          " role; identity ", entry->identity, " has ", std::string(RoleName(entry->role)))));
    }
  }
  if (identity.empty()) identity = "anonymous";
  if (absl::Status quota = quotas_->Admit(identity, policy.quota, absl::Now()); !quota.ok()) {
    return ToGrpcStatus(
        absl::ResourceExhaustedError(absl::StrCat(quota.message(), " (identity ", identity, ")")));
  }
  return grpc::Status::OK;
}

}  // namespace voxcol::server
