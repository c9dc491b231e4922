// The audit log: one JSON object per line (--audit_log) for every committed edit batch
// (FillBall, ApplyEdits, WriteVoxels, EditStream batches, the edits of Query tick batches),
// import, export and checkpoint, with who made it (identity, peer, request id), what it was and
// the resulting world version. Every value is JSON-escaped (JsonString), so no client input can
// add a field or a line. Imports, exports and checkpoints are written by a server interceptor;
// edits by EditAudit, which the RPC layer calls when a batch has committed.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_interceptor.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "voxcol/v1/edit_service.pb.h"

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

// Audit records of edit batches, written by the RPC layer when a batch has committed (issue 36),
// not when its answer is sent: a batch whose client went away after the commit (a cancelled
// EditStream, a tick batch of a cancelled Query stream, a unary caller that gave up) is recorded
// all the same, and exactly once. A replayed batch (same idempotency key) is recorded with
// "replayed":true; a batch that failed is not recorded. Same line format as the interceptor's.
class EditAudit {
 public:
  // `log` null: records nothing. `tokens` (may be null) identifies callers.
  EditAudit(AuditLog* log, const TokenTable* tokens) : log_(log), tokens_(tokens) {}

  // Who made a call, read once from it (a stream's batches share their stream's).
  struct Caller {
    std::string method, identity, peer, request_id;
  };
  Caller CallerOf(const grpc::ServerContextBase& context, std::string_view method) const;

  void FillBall(const Caller& caller, const v1::FillBallRequest& request,
                const v1::EditAck& ack) const;
  void ApplyEdits(const Caller& caller, const v1::ApplyEditsRequest& request,
                  const v1::EditAck& ack) const;
  void WriteVoxels(const Caller& caller, const v1::WriteVoxelsRequest& request,
                   const v1::EditAck& ack) const;
  // A batch of an EditStream or the edits of a Query tick batch.
  void StreamBatch(const Caller& caller, uint64_t batch_id, const v1::ApplyEditsRequest& edits,
                   const v1::EditAck& ack) const;

 private:
  void Record(const Caller& caller, const std::string& what, const v1::EditAck& ack) const;

  AuditLog* const log_;
  const TokenTable* const tokens_;
};

}  // namespace voxcol::server
