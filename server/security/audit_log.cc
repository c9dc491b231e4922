#include "server/security/audit_log.h"

#include <fcntl.h>
#include <grpcpp/server_context.h>
#include <unistd.h>

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/security/auth.h"
#include "server/telemetry/log.h"
#include "voxcol/v1/admin_service.pb.h"
#include "voxcol/v1/edit_service.pb.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

// What the interceptor does per method. Edits are not here: EditAudit records them when they
// commit. A Query stream is intercepted only to check the role of its tick batches' edits.
enum class Audited { kNone, kQuery, kImport, kExport, kCheckpoint };

Audited AuditedMethod(std::string_view method) {
  static const std::pair<std::string_view, Audited> kTable[] = {
      {"/voxcol.v1.QueryService/Query", Audited::kQuery},
      {"/voxcol.v1.AdminService/ImportRegion", Audited::kImport},
      {"/voxcol.v1.AdminService/ExportRegion", Audited::kExport},
      {"/voxcol.v1.AdminService/CreateCheckpoint", Audited::kCheckpoint},
  };
  for (const auto& [name, kind] : kTable) {
    if (name == method) return kind;
  }
  return Audited::kNone;
}

// A finite number as JSON; NaN and infinities (never in an accepted request) as null.
std::string JsonNumber(double v) { return std::isfinite(v) ? absl::StrFormat("%g", v) : "null"; }

std::string Int3Json(const v1::Int3& v) {
  return absl::StrFormat("[%d,%d,%d]", v.x(), v.y(), v.z());
}

std::string BoxJson(const v1::VoxelBox& box) {
  return absl::StrCat("{\"min\":", Int3Json(box.min()), ",\"max\":", Int3Json(box.max()), "}");
}

// What an ApplyEditsRequest does: its primitives' kinds, its idempotency key and expectation.
std::string EditsJson(const v1::ApplyEditsRequest& request) {
  std::string kinds;
  for (const v1::EditPrimitive& primitive : request.primitives()) {
    const auto* oneof = primitive.GetDescriptor()->oneof_decl(0);
    const auto* field = primitive.GetReflection()->GetOneofFieldDescriptor(primitive, oneof);
    absl::StrAppend(&kinds, kinds.empty() ? "" : ",", JsonString(field ? field->name() : "unset"));
  }
  std::string json = absl::StrCat("{\"primitives\":[", kinds,
                                  "],\"idempotency_key\":", JsonString(request.idempotency_key()));
  if (request.has_expected_version()) {
    absl::StrAppend(&json, ",\"expected_version\":", request.expected_version());
  }
  return json + "}";
}

std::string AckJson(const v1::EditAck& ack) {
  return absl::StrCat("\"version\":", ack.version(), ",\"changed_chunks\":", ack.changed_chunks(),
                      ",\"replayed\":", ack.replayed() ? "true" : "false");
}

bool ParseBuffer(grpc::ByteBuffer* buffer, google::protobuf::Message* message) {
  grpc::Slice slice;
  if (buffer == nullptr || !buffer->DumpToSingleSlice(&slice).ok()) return false;
  return message->ParseFromArray(slice.begin(), int(slice.size()));
}

class AuditInterceptor : public grpc::experimental::Interceptor {
 public:
  AuditInterceptor(AuditLog* log, const TokenTable* tokens, grpc::experimental::ServerRpcInfo* info,
                   Audited kind)
      : log_(log), tokens_(tokens), info_(info), kind_(kind) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      LearnCaller();
      OnRequest(methods->GetRecvMessage());
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      OnResponse(methods);
    }
    methods->Proceed();
  }

 private:
  // Who calls, read once from the call (callback streams skip the initial-metadata hook).
  void LearnCaller() {
    if (caller_known_) return;
    caller_known_ = true;
    const grpc::ServerContextBase& context = *info_->server_context();
    const auto& metadata = context.client_metadata();
    auto it = metadata.find("x-request-id");
    if (it != metadata.end()) request_id_.assign(it->second.data(), it->second.size());
    Caller caller = IdentifyCaller(context, tokens_);
    identity_ = std::move(caller.identity);
    role_ = caller.role;
  }
  void OnRequest(void* message);
  // A tick batch with edits from a caller below the edit role: edits dropped, stream cancelled.
  void CheckTickEditRole(grpc::ByteBuffer* buffer);
  void OnResponse(grpc::experimental::InterceptorBatchMethods* methods);

  // A line: the event, who, the method's details and the result (encoded JSON members).
  void Write(std::string_view event, const std::string& what, const std::string& result) {
    if (log_ == nullptr) return;
    log_->Write(
        absl::StrCat("\"event\":", JsonString(event), ",\"method\":", JsonString(info_->method()),
                     ",\"identity\":", JsonString(identity_),
                     ",\"peer\":", JsonString(info_->server_context()->peer()),
                     ",\"request_id\":", JsonString(request_id_), ",\"what\":", what, ",", result));
  }

  AuditLog* log_;  // null: only the role check of tick edits
  const TokenTable* tokens_;
  grpc::experimental::ServerRpcInfo* info_;
  const Audited kind_;
  std::string request_id_, identity_ = "anonymous";
  Role role_ = Role::kOpen;  // until LearnCaller
  bool caller_known_ = false;
  std::string what_;  // unary calls
};

void AuditInterceptor::OnRequest(void* message) {
  if (message == nullptr) return;
  switch (kind_) {
    case Audited::kImport:
      what_ =
          absl::StrCat("{\"region_bytes\":",
                       static_cast<const v1::ImportRegionRequest*>(message)->region().size(), "}");
      break;
    case Audited::kExport:
      what_ = absl::StrCat(
          "{\"box\":", BoxJson(static_cast<const v1::ExportRegionRequest*>(message)->box()), "}");
      break;
    case Audited::kCheckpoint:
      what_ = absl::StrCat(
          "{\"dir\":", JsonString(static_cast<const v1::CreateCheckpointRequest*>(message)->dir()),
          "}");
      break;
    case Audited::kQuery:
      CheckTickEditRole(static_cast<grpc::ByteBuffer*>(message));
      break;
    case Audited::kNone:
      break;
  }
}

void AuditInterceptor::CheckTickEditRole(grpc::ByteBuffer* buffer) {
  if (role_ >= Role::kEdit) return;
  v1::QueryBatchRequest request;
  if (!ParseBuffer(buffer, &request) || !request.has_edits()) return;
  // A query-role stream may not edit through a tick batch: the edits are dropped and the stream
  // is cancelled before the batch runs.
  LogError("event=permission_denied method=%s identity=%s reason=%s", info_->method(), identity_,
           "tick batch edits need the edit role; stream cancelled");
  request.clear_edits();
  std::string bytes = request.SerializeAsString();
  grpc::Slice slice(bytes);
  *buffer = grpc::ByteBuffer(&slice, 1);
  info_->server_context()->TryCancel();
}

void AuditInterceptor::OnResponse(grpc::experimental::InterceptorBatchMethods* methods) {
  if (kind_ == Audited::kQuery) return;
  const void* message = methods->GetSendMessage();
  if (message == nullptr || what_.empty()) return;
  switch (kind_) {
    case Audited::kImport:
      Write("import", what_, AckJson(*static_cast<const v1::EditAck*>(message)));
      break;
    case Audited::kExport:
      Write("export", what_,
            absl::StrCat("\"version\":",
                         static_cast<const v1::ExportRegionResponse*>(message)->version()));
      break;
    case Audited::kCheckpoint: {
      const auto& r = *static_cast<const v1::CreateCheckpointResponse*>(message);
      Write("checkpoint", what_,
            absl::StrCat("\"version\":", r.version(), ",\"checkpoint_dir\":", JsonString(r.dir())));
      break;
    }
    default:
      break;
  }
  what_.clear();
}

// Length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 if the bytes there are not one.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // overlong below U+0800
    if (lead == 0xed) high = 0x9f;  // surrogates U+D800..U+DFFF
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;   // overlong below U+10000
    if (lead == 0xf4) high = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return length;
}

}  // namespace

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c == 0x7f) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
    } else if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(text, i);
      if (length == 0) {
        absl::StrAppendFormat(&out, "\\u%04x", c);  // a byte that is not UTF-8, escaped alone
      } else {
        out.append(text.substr(i, length));
        i += length;
        continue;
      }
    } else {
      out += char(c);
    }
    ++i;
  }
  return out + "\"";
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  std::FILE* file = fd < 0 ? nullptr : fdopen(fd, "a");
  if (file == nullptr) {
    if (fd >= 0) close(fd);
    return absl::InvalidArgumentError(absl::StrCat("--audit_log ", path, " cannot be opened"));
  }
  return std::unique_ptr<AuditLog>(new AuditLog(file));
}

AuditLog::~AuditLog() {
  absl::MutexLock lock(&mu_);
  std::fclose(file_);
}

void AuditLog::Write(const std::string& fields) {
  const std::string time =
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  const std::string line = absl::StrCat("{\"time\":", JsonString(time), ",", fields, "}\n");
  absl::MutexLock lock(&mu_);
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

grpc::experimental::Interceptor* AuditInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  const Audited kind = AuditedMethod(info->method());
  if (kind == Audited::kNone) return nullptr;
  // A Query stream only needs the role check, which needs tokens; the others only the log.
  if (kind == Audited::kQuery ? tokens_ == nullptr : log_ == nullptr) return nullptr;
  return new AuditInterceptor(log_, tokens_, info, kind);
}

EditAudit::Caller EditAudit::CallerOf(const grpc::ServerContextBase& context,
                                      std::string_view method) const {
  Caller caller;
  caller.method = std::string(method);
  if (log_ == nullptr) return caller;
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("x-request-id");
  if (it != metadata.end()) caller.request_id.assign(it->second.data(), it->second.size());
  caller.identity = IdentifyCaller(context, tokens_).identity;
  caller.peer = context.peer();
  return caller;
}

void EditAudit::Record(const Caller& caller, const std::string& what,
                       const v1::EditAck& ack) const {
  if (log_ == nullptr) return;
  log_->Write(absl::StrCat(
      "\"event\":\"edit\",\"method\":", JsonString(caller.method),
      ",\"identity\":", JsonString(caller.identity), ",\"peer\":", JsonString(caller.peer),
      ",\"request_id\":", JsonString(caller.request_id), ",\"what\":", what, ",", AckJson(ack)));
}

void EditAudit::FillBall(const Caller& caller, const v1::FillBallRequest& request,
                         const v1::EditAck& ack) const {
  if (log_ == nullptr) return;
  Record(caller,
         absl::StrCat("{\"center\":[", JsonNumber(request.center().x()), ",",
                      JsonNumber(request.center().y()), ",", JsonNumber(request.center().z()),
                      "],\"radius\":", JsonNumber(request.radius()),
                      ",\"material\":", request.material(), "}"),
         ack);
}

void EditAudit::ApplyEdits(const Caller& caller, const v1::ApplyEditsRequest& request,
                           const v1::EditAck& ack) const {
  if (log_ == nullptr) return;
  Record(caller, EditsJson(request), ack);
}

void EditAudit::WriteVoxels(const Caller& caller, const v1::WriteVoxelsRequest& request,
                            const v1::EditAck& ack) const {
  if (log_ == nullptr) return;
  Record(caller, absl::StrCat("{\"region\":", BoxJson(request.voxels().region()), "}"), ack);
}

void EditAudit::StreamBatch(const Caller& caller, uint64_t batch_id,
                            const v1::ApplyEditsRequest& edits, const v1::EditAck& ack) const {
  if (log_ == nullptr) return;
  Record(caller, absl::StrCat("{\"batch_id\":", batch_id, ",\"edits\":", EditsJson(edits), "}"),
         ack);
}

}  // namespace voxcol::server
