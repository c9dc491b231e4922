// The audit log: one JSON object per line (--audit_log) for every accepted edit batch
// (FillBall, ApplyEdits, WriteVoxels, EditStream batches, the edits of Query tick batches),
// import, export and checkpoint, with who made it (identity, peer, request id), what it was and
// the resulting world version. Every value is JSON-escaped (JsonString), so no client input can
// add a field or a line. Written by a server interceptor, so the services stay unaware of it.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace voxcol::server {

class TokenTable;

// `text` as a JSON string literal: well-formed UTF-8 is kept as it is (client text such as "clé"
// reads back the same); quotes and backslash are escaped, and so are control bytes and DEL and
// every byte that is not part of a well-formed UTF-8 sequence (as \u00XX, so that invalid input
// cannot break a parser).
std::string JsonString(std::string_view text);

class AuditLog {
 public:
  // Opens `path` for appending (created with mode 0600 when missing).
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(const std::string& path);
  ~AuditLog();
  // Appends `{"time":..., <fields>}` and a newline, then flushes. `fields` is a sequence of
  // already-encoded `"key":value` pairs separated by commas.
  void Write(const std::string& fields);

 private:
  explicit AuditLog(std::FILE* file) : file_(file) {}
  absl::Mutex mu_;
  std::FILE* file_ ABSL_GUARDED_BY(mu_);
};

class AuditInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // `log` null: only the role check of tick edits. `tokens` (may be null) identifies callers.
  AuditInterceptorFactory(AuditLog* log, const TokenTable* tokens) : log_(log), tokens_(tokens) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  AuditLog* log_;
  const TokenTable* tokens_;
};

}  // namespace voxcol::server
