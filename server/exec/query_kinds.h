// The query kinds table (issue 36): one row per query the API answers, and everything the server
// does per kind reached through it. The Query stream runs a batch's queries by their row, the
// unary QueryService method of the same row answers single calls (server/rpc/query_service.cc
// serves every row's method the same way), and the row's metric series are registered from it.
//
// Adding a query kind: its messages and unary method in query_service.proto (and its field in
// QueryRequest / QueryResult for batches), its conversion (server/convert), its Run function
// (query_ops.h, or core), and its row in query_kinds.cc. Nothing else in server/ names kinds;
// tests/server/exec/query_kinds_test.cc fails when a kind of the proto has no row, a row has no
// metric series, no role or no CLI command.
#pragma once

#include <google/protobuf/message.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/query/query_types.h"
#include "server/exec/query_ops.h"
#include "server/exec/service_limits.h"
#include "server/telemetry/metrics.h"

namespace voxcol::server {

struct QueryKind {
  // The `kind` label of voxcol_queries_total ("raycast"); for a kind with a batch form also its
  // field in QueryRequest's `query` oneof and QueryResult's `result` oneof.
  absl::string_view name;
  // The unary QueryService method, and the `method` label of voxcol_rpc_latency_seconds.
  absl::string_view method;
  // The voxcol CLI command that makes this query.
  absl::string_view cli_command;
  // Whether a unary call of this kind runs on the RPC thread that took it: kinds whose work is
  // short and bounded by their limits (a raycast, a probe, a hit check). The shape queries and
  // character moves, which may run to their work budget or deadline, go to the query pool.
  bool inline_on_rpc_thread;
  // Runs `request` (this kind's request message) on the version the calling thread reads and
  // fills `response` (its response message) without its version. INVALID_ARGUMENT naming the
  // field for bad input; DEADLINE_EXCEEDED / CANCELLED when `interrupt` stopped it.
  absl::Status (*run)(const QueryEngine& engine, const ServiceLimits& limits,
                      const google::protobuf::Message& request, google::protobuf::Message* response,
                      const QueryInterrupt& interrupt);
  // Empty instances of the kind's request and response messages (New() makes more).
  const google::protobuf::Message* request_type;
  const google::protobuf::Message* response_type;
  // Where the request's fields common to every kind are: `world` (string), `read_at` (ReadAt),
  // and the response's `version` (uint64).
  const google::protobuf::FieldDescriptor* world_field;
  const google::protobuf::FieldDescriptor* read_at_field;
  const google::protobuf::FieldDescriptor* version_field;
  // The row's fields in QueryRequest and QueryResult; null without a batch form.
  const google::protobuf::FieldDescriptor* batch_request_field;
  const google::protobuf::FieldDescriptor* batch_result_field;
  // voxcol_queries_total{kind=name} (queries run, unary or in batches) and
  // voxcol_rpc_latency_seconds{method=method} (unary calls, arrival to answer).
  Counter* queries;
  Histogram* latency;
};

// Every row, in the proto's order of unary methods. Built (and its metrics registered in
// GetServerMetrics()) on first use.
absl::Span<const QueryKind> QueryKinds();
// The row whose batch field is `field` of QueryRequest (by number), or null.
const QueryKind* QueryKindOfBatchField(int field_number);
// The row whose unary method is `method` ("Raycast"), or null.
const QueryKind* QueryKindOfMethod(absl::string_view method);

}  // namespace voxcol::server
