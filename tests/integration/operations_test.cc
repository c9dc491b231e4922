// Operations surface of the real server: the /metrics exposition (checked by Prometheus' own
// promtool, bucket bounds parsed back exactly, every RPC counted by code), health per service
// name with Watch ending on cancel and on shutdown, and `voxcol_server --help`.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "tests/integration/http_get.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;
using testing::RunCommand;
using testing::ServerProcess;
using testing::TempDir;

// The histogram bounds docs/operations.md promises, as decimal literals.
const std::vector<double> kDocumentedBounds = {1e-5,   2.5e-5, 5e-5, 1e-4,  2.5e-4, 5e-4, 1e-3,
                                               2.5e-3, 5e-3,   0.01, 0.025, 0.05,   0.1,  0.25,
                                               0.5,    1,      2.5,  5,     10,     25};

class OperationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH,
                              {"--data_dir=" + dir_.path() + "/data", "--world_size=64,64,64"},
                              dir_.path()))
        << server_.Log();
    channel_ = grpc::CreateChannel(server_.address(), grpc::InsecureChannelCredentials());
  }

  // One good and one bad Raycast.
  void CallRaycastTwice() {
    auto stub = v1::QueryService::NewStub(channel_);
    v1::RaycastRequest good;
    good.mutable_origin()->set_y(20);
    good.mutable_direction()->set_y(-1);
    good.set_max_distance(100);
    v1::RaycastResponse response;
    grpc::ClientContext c1;
    ASSERT_TRUE(stub->Raycast(&c1, good, &response).ok());
    v1::RaycastRequest bad = good;
    bad.mutable_direction()->set_y(0);  // zero direction
    grpc::ClientContext c2;
    EXPECT_EQ(stub->Raycast(&c2, bad, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }

  // The value of the sample whose line starts with `prefix` (name and labels), or -1.
  static double Sample(const std::string& text, const std::string& prefix) {
    size_t at = text.find("\n" + prefix + " ");
    return at == std::string::npos ? -1 : std::atof(text.c_str() + at + prefix.size() + 2);
  }

  TempDir dir_;
  ServerProcess server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(OperationsTest, MetricsPassPromtoolAndCountEveryRpcByCode) {
  CallRaycastTwice();
  const std::string text = testing::HttpGet(server_.metrics_port(), "/metrics");
  ASSERT_FALSE(text.empty());
  const std::string file = dir_.path() + "/metrics.txt";
  std::ofstream(file) << text;
  // promtool (Prometheus' own linter and parser) reads the exposition on stdin.
  auto check = RunCommand({"sh", "-c", std::string(PROMTOOL_PATH) + " check metrics < " + file},
                          dir_.path());
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;

  EXPECT_EQ(Sample(text, R"(voxcol_rpc_calls_total{method="QueryService/Raycast",code="OK"})"), 1);
  EXPECT_EQ(Sample(text, R"(voxcol_rpc_calls_total{method="QueryService/Raycast",)"
                         R"(code="INVALID_ARGUMENT"})"),
            1);
  EXPECT_EQ(Sample(text, R"(voxcol_rpc_duration_seconds_count{method="QueryService/Raycast"})"), 2);
  // Every RPC of the API is listed before it is first called.
  for (const char* method :
       {"QueryService/Query", "QueryService/Sweep", "EditService/ApplyEdits",
        "EditService/Subscribe", "AdminService/CreateCheckpoint", "WorldService/GetWorldInfo"}) {
    EXPECT_EQ(
        Sample(text, std::string("voxcol_rpc_duration_seconds_count{method=\"") + method + "\"}"),
        0)
        << method;
  }
  EXPECT_GT(Sample(text, "process_resident_memory_bytes"), 1e6);
  EXPECT_GE(Sample(text, "process_cpu_seconds_total"), 0);
  EXPECT_GT(Sample(text, "process_threads"), 1);
  EXPECT_TRUE(std::regex_search(
      text,
      std::regex(R"(\nvoxcol_build_info\{version="[0-9.]+",revision="[0-9a-f]+(-dirty)?"\} 1\n)")))
      << text.substr(0, 2000);

  // The bucket bounds parse back to exactly the documented doubles, in order.
  std::vector<double> bounds;
  const std::regex bucket(
      R"re(\nvoxcol_rpc_duration_seconds_bucket\{method="QueryService/Raycast",le="([^"]+)"\})re");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), bucket);
       it != std::sregex_iterator(); ++it) {
    if ((*it)[1] != "+Inf") bounds.push_back(std::strtod((*it)[1].str().c_str(), nullptr));
  }
  EXPECT_EQ(bounds, kDocumentedBounds);
}

// The shipped default of --store_sync is durable: this fixture's server is started without the
// flag and reports that it syncs before each ack (metric and start-up log); a server started with
// --store_sync=false reports that it does not. (The store's own tests check that the option
// really syncs the write-ahead log.)
TEST_F(OperationsTest, TheDefaultStoreSyncsBeforeEachAck) {
  EXPECT_EQ(Sample(testing::HttpGet(server_.metrics_port(), "/metrics"), "voxcol_store_sync"), 1);
  EXPECT_NE(server_.Log().find("store_sync=true"), std::string::npos) << server_.Log();
  TempDir other_dir;
  ServerProcess unsynced;
  ASSERT_TRUE(unsynced.Start(
      VOXCOL_SERVER_PATH,
      {"--data_dir=" + other_dir.path() + "/data", "--world_size=64,64,64", "--store_sync=false"},
      other_dir.path()))
      << unsynced.Log();
  EXPECT_EQ(Sample(testing::HttpGet(unsynced.metrics_port(), "/metrics"), "voxcol_store_sync"), 0);
  EXPECT_NE(unsynced.Log().find("store_sync=false"), std::string::npos) << unsynced.Log();
}

TEST_F(OperationsTest, HealthPerServiceAndWatchEndsOnCancelAndOnShutdown) {
  auto health = Health::NewStub(channel_);
  for (const char* service : {"", "voxcol.v1.QueryService", "voxcol.v1.EditService",
                              "voxcol.v1.WorldService", "voxcol.v1.AdminService"}) {
    HealthCheckRequest request;
    request.set_service(service);
    HealthCheckResponse response;
    grpc::ClientContext context;
    grpc::Status status = health->Check(&context, request, &response);
    ASSERT_TRUE(status.ok()) << service << ": " << int(status.error_code())
                             << status.error_message();
    EXPECT_EQ(response.status(), HealthCheckResponse::SERVING) << service;
  }
  HealthCheckRequest unknown;
  unknown.set_service("voxcol.v1.NoSuchService");
  HealthCheckResponse response;
  grpc::ClientContext unknown_context;
  EXPECT_EQ(health->Check(&unknown_context, unknown, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);

  HealthCheckRequest query;
  query.set_service("voxcol.v1.QueryService");
  {  // Cancelled by the client: the stream ends with CANCELLED.
    grpc::ClientContext context;
    auto watch = health->Watch(&context, query);
    ASSERT_TRUE(watch->Read(&response));
    EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
    context.TryCancel();
    while (watch->Read(&response)) {
    }
    EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  // On shutdown the watcher hears NOT_SERVING, its stream ends, and the server exits 0.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto watch = health->Watch(&context, query);
  ASSERT_TRUE(watch->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
  ASSERT_EQ(kill(server_.pid(), SIGTERM), 0);
  const auto signalled = std::chrono::steady_clock::now();
  bool heard_not_serving = false;
  while (watch->Read(&response)) {
    heard_not_serving |= response.status() == HealthCheckResponse::NOT_SERVING;
  }
  const grpc::Status end = watch->Finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  std::printf("Watch ended %.3f s after SIGTERM: %d %s\n", seconds, int(end.error_code()),
              end.error_message().c_str());
  EXPECT_TRUE(heard_not_serving);
  // Ended by the server with OK, not cancelled when the shutdown grace period ran out.
  EXPECT_EQ(end.error_code(), grpc::StatusCode::OK) << end.error_message();
  EXPECT_EQ(server_.Stop(), 0) << server_.Log();
}

TEST(ServerHelpTest, HelpListsTheFlagsAndExitsZero) {
  TempDir dir;
  auto help = RunCommand({VOXCOL_SERVER_PATH, "--help"}, dir.path());
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("voxcol_server: voxel terrain collision and query service"),
            std::string::npos)
      << help.out;
  for (const char* flag : {"--listen", "--data_dir", "--query_threads", "--metrics_listen"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  }
  EXPECT_EQ(help.out.find("UNKNOWN"), std::string::npos) << help.out.substr(0, 200);
}

}  // namespace
}  // namespace voxcol
