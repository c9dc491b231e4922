// The query kinds table (server/exec/query_kinds.h) against the proto, the metrics, the role table
// and the CLI: a kind added to the API without its row, or a row without its metric series, role
// or CLI command, fails here.
#include "server/exec/query_kinds.h"

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>

#include "server/security/auth.h"
#include "server/telemetry/server_metrics.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::MethodDescriptor;

// Runs `command` and returns what it printed on stdout.
std::string Output(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  pclose(pipe);
  return out;
}

// Whether `voxcol <command> --help` shows the command's own usage (CLI11 answers an unknown
// command's --help with the top-level usage).
bool CliHasCommand(const std::string& command) {
  const std::string usage = "Usage: voxcol " + command + " ";
  return Output(std::string(VOXCOL_CLI_PATH) + " " + command + " --help").find(usage) !=
         std::string::npos;
}

TEST(QueryKindsTest, EveryBatchKindOfTheProtoHasARow) {
  const auto* oneof = v1::QueryRequest::descriptor()->FindOneofByName("query");
  ASSERT_NE(oneof, nullptr);
  for (int i = 0; i < oneof->field_count(); ++i) {
    const FieldDescriptor* field = oneof->field(i);
    const QueryKind* kind = QueryKindOfBatchField(field->number());
    ASSERT_NE(kind, nullptr) << "QueryRequest." << field->name() << " has no row";
    EXPECT_EQ(kind->name, field->name());
    EXPECT_EQ(kind->request_type->GetDescriptor(), field->message_type());
    // The result of the same name carries the kind's response message.
    const FieldDescriptor* result = v1::QueryResult::descriptor()->FindFieldByName(field->name());
    ASSERT_NE(result, nullptr) << field->name();
    EXPECT_EQ(kind->batch_result_field, result);
    EXPECT_EQ(kind->response_type->GetDescriptor(), result->message_type());
  }
  const auto* results = v1::QueryResult::descriptor()->FindOneofByName("result");
  ASSERT_NE(results, nullptr);
  EXPECT_EQ(results->field_count(), oneof->field_count());
}

TEST(QueryKindsTest, EveryUnaryQueryMethodHasARowWithItsTypes) {
  const auto* service = v1::RaycastRequest::descriptor()->file()->FindServiceByName("QueryService");
  ASSERT_NE(service, nullptr);
  std::set<std::string> methods;
  for (int i = 0; i < service->method_count(); ++i) {
    const MethodDescriptor* method = service->method(i);
    if (method->client_streaming() || method->server_streaming()) continue;  // Query
    // Navmesh polygons for drawing (render --navmesh): a tool's call, not a query of a tick, so
    // unary only (docs/api.md).
    if (method->name() == "GetNavMesh") continue;
    methods.insert(method->name());
    const QueryKind* kind = QueryKindOfMethod(method->name());
    ASSERT_NE(kind, nullptr) << "QueryService." << method->name() << " has no row";
    EXPECT_EQ(kind->request_type->GetDescriptor(), method->input_type());
    EXPECT_EQ(kind->response_type->GetDescriptor(), method->output_type());
  }
  EXPECT_EQ(methods.size(), QueryKinds().size()) << "a row names no unary method of the service";
}

TEST(QueryKindsTest, EveryRowHasItsMetricSeriesAndTheQueryRole) {
  const absl::Span<const QueryKind> kinds = QueryKinds();  // registers the series
  const std::string metrics = GetServerMetrics().registry.Render();
  for (const QueryKind& kind : kinds) {
    const std::string name(kind.name), method(kind.method);
    EXPECT_NE(metrics.find("voxcol_queries_total{kind=\"" + name + "\"}"), std::string::npos)
        << name;
    EXPECT_NE(metrics.find("voxcol_rpc_latency_seconds_count{method=\"" + method + "\"}"),
              std::string::npos)
        << method;
    EXPECT_EQ(PolicyForMethod("/voxcol.v1.QueryService/" + method).role, Role::kQuery) << method;
  }
}

TEST(QueryKindsTest, EveryRowHasACliCommand) {
  for (const QueryKind& kind : QueryKinds()) {
    EXPECT_TRUE(CliHasCommand(std::string(kind.cli_command))) << "voxcol " << kind.cli_command;
  }
  EXPECT_FALSE(CliHasCommand("no-such-query"));  // the check can fail
}

}  // namespace
}  // namespace voxcol::server
