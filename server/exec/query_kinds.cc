#include "server/exec/query_kinds.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/exec/validate_hit.h"
#include "server/telemetry/server_metrics.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// A typed Run function as a row's `run`: the table hands it the messages of its own kind.
template <typename Request, typename Response,
          absl::Status (*Run)(const QueryEngine&, const ServiceLimits&, const Request&, Response*,
                              const QueryInterrupt&)>
absl::Status RunAs(const QueryEngine& engine, const ServiceLimits& limits, const Message& request,
                   Message* response, const QueryInterrupt& interrupt) {
  return Run(engine, limits, static_cast<const Request&>(request), static_cast<Response*>(response),
             interrupt);
}

// ValidateHit is one raycast of the claim's length: bounded like a raycast, it takes no interrupt.
absl::Status RunValidateHitKind(const QueryEngine& engine, const ServiceLimits& limits,
                                const v1::ValidateHitRequest& request,
                                v1::ValidateHitResponse* response, const QueryInterrupt&) {
  return RunValidateHit(engine, limits, request, response);
}

// FindPath takes its distance limit from the service's limits.
absl::Status RunFindPathKind(const QueryEngine& engine, const ServiceLimits& limits,
                             const v1::FindPathRequest& request, v1::FindPathResponse* response,
                             const QueryInterrupt& interrupt) {
  NavContext context = engine.nav;
  context.max_path_distance = limits.max_path_distance;
  return RunFindPath(engine.world(), context, request, response, interrupt);
}

struct Row {
  const char* name;
  bool in_batch;
  const char* method;
  const char* cli_command;
  bool inline_on_rpc_thread;
  decltype(QueryKind::run) run;
  const Message& (*request_type)();
  const Message& (*response_type)();
};

// The default instance of a generated message, as a function (the table holds no objects that
// need dynamic initialization).
template <typename M>
const Message& Default() {
  return M::default_instance();
}

// The table. A new kind adds one line here (see query_kinds.h).
constexpr Row kRows[] = {
    {"raycast", true, "Raycast", "raycast", true,
     &RunAs<v1::RaycastRequest, v1::RaycastResponse, &RunRaycast>, &Default<v1::RaycastRequest>,
     &Default<v1::RaycastResponse>},
    {"sweep", true, "Sweep", "sweep", false, &RunAs<v1::SweepRequest, v1::SweepResponse, &RunSweep>,
     &Default<v1::SweepRequest>, &Default<v1::SweepResponse>},
    {"overlap", true, "Overlap", "overlap", false,
     &RunAs<v1::OverlapRequest, v1::OverlapResponse, &RunOverlap>, &Default<v1::OverlapRequest>,
     &Default<v1::OverlapResponse>},
    {"contacts", true, "Contacts", "contacts", false,
     &RunAs<v1::ContactsRequest, v1::ContactsResponse, &RunContacts>, &Default<v1::ContactsRequest>,
     &Default<v1::ContactsResponse>},
    {"probe", true, "Probe", "probe", true, &RunAs<v1::ProbeRequest, v1::ProbeResponse, &RunProbe>,
     &Default<v1::ProbeRequest>, &Default<v1::ProbeResponse>},
    {"move_characters", true, "MoveCharacters", "move-character", false,
     &RunAs<v1::MoveCharactersRequest, v1::MoveCharactersResponse, &RunMoveCharacters>,
     &Default<v1::MoveCharactersRequest>, &Default<v1::MoveCharactersResponse>},
    {"validate_hit", false, "ValidateHit", "validate-hit", true,
     &RunAs<v1::ValidateHitRequest, v1::ValidateHitResponse, &RunValidateHitKind>,
     &Default<v1::ValidateHitRequest>, &Default<v1::ValidateHitResponse>},
    {"find_path", true, "FindPath", "path", false,
     &RunAs<v1::FindPathRequest, v1::FindPathResponse, &RunFindPathKind>,
     &Default<v1::FindPathRequest>, &Default<v1::FindPathResponse>},
};

// The field `name` of `message`'s type, of the expected type; aborts at start-up on a table that
// does not match the proto (a programming error, caught by every test that runs a query).
const FieldDescriptor* FieldOf(const Message& message, const std::string& name,
                               FieldDescriptor::CppType type) {
  const FieldDescriptor* field = message.GetDescriptor()->FindFieldByName(name);
  if (field == nullptr || field->cpp_type() != type) {
    std::fprintf(stderr, "query kinds table: %s has no field %s of the expected type\n",
                 message.GetTypeName().c_str(), name.c_str());
    std::abort();
  }
  return field;
}

std::vector<QueryKind> Build() {
  Metrics& registry = GetServerMetrics().registry;
  std::vector<QueryKind> kinds;
  for (const Row& row : kRows) {
    QueryKind kind;
    kind.name = row.name;
    kind.method = row.method;
    kind.cli_command = row.cli_command;
    kind.inline_on_rpc_thread = row.inline_on_rpc_thread;
    kind.run = row.run;
    kind.request_type = &row.request_type();
    kind.response_type = &row.response_type();
    kind.world_field = FieldOf(*kind.request_type, "world", FieldDescriptor::CPPTYPE_STRING);
    kind.read_at_field = FieldOf(*kind.request_type, "read_at", FieldDescriptor::CPPTYPE_MESSAGE);
    if (kind.read_at_field->message_type() != v1::ReadAt::descriptor()) {
      std::fprintf(stderr, "query kinds table: %s.read_at is not a ReadAt\n",
                   kind.request_type->GetTypeName().c_str());
      std::abort();
    }
    kind.version_field = FieldOf(*kind.response_type, "version", FieldDescriptor::CPPTYPE_UINT64);
    kind.batch_request_field = nullptr;
    kind.batch_result_field = nullptr;
    if (row.in_batch) {
      kind.batch_request_field =
          FieldOf(v1::QueryRequest::default_instance(), row.name, FieldDescriptor::CPPTYPE_MESSAGE);
      kind.batch_result_field =
          FieldOf(v1::QueryResult::default_instance(), row.name, FieldDescriptor::CPPTYPE_MESSAGE);
    }
    kind.queries = registry.AddCounter("voxcol_queries_total", "Queries executed, by kind",
                                       absl::StrCat("kind=\"", row.name, "\""));
    kind.latency = registry.AddHistogram("voxcol_rpc_latency_seconds",
                                         "Time from arrival to completion on the server, seconds",
                                         absl::StrCat("method=\"", row.method, "\""));
    kinds.push_back(kind);
  }
  return kinds;
}

const std::vector<QueryKind>& Table() {
  static const std::vector<QueryKind>* table = new std::vector<QueryKind>(Build());
  return *table;
}

}  // namespace

absl::Span<const QueryKind> QueryKinds() { return Table(); }

const QueryKind* QueryKindOfBatchField(int field_number) {
  for (const QueryKind& kind : Table()) {
    if (kind.batch_request_field != nullptr && kind.batch_request_field->number() == field_number) {
      return &kind;
    }
  }
  return nullptr;
}

const QueryKind* QueryKindOfMethod(absl::string_view method) {
  for (const QueryKind& kind : Table()) {
    if (kind.method == method) return &kind;
  }
  return nullptr;
}

}  // namespace voxcol::server
