// Every query is bounded: a huge shape query either answers within its deadline or stops inside
// its work when the deadline passes, so the server's CPU falls idle instead of finishing work
// nobody waits for (a radius-40 sphere's contacts took ~15 s of CPU on this world before the
// internal-edge lookup was indexed; now ~0.1 s). tests/server checks that the interrupt reaches
// the queries.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

#include "tests/integration/server_process.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using Clock = std::chrono::steady_clock;

// User + system CPU time of a process, in clock ticks (/proc/PID/stat fields 14 and 15).
long CpuTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces; count fields after its closing parenthesis.
  size_t at = text.rfind(')');
  if (at == std::string::npos) return -1;
  std::istringstream rest(text.substr(at + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return utime + stime;
}

v1::PosedShape BigSphere(float radius) {
  v1::PosedShape shape;
  shape.mutable_shape()->mutable_sphere()->set_radius(radius);
  shape.mutable_position()->set_y(-2.5f);
  return shape;
}

class QueryDeadlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(
        VOXCOL_SERVER_PATH,
        {"--data_dir=" + dir_.path() + "/data", "--world_size=192,96,192", "--query_threads=2"},
        dir_.path()))
        << server_.Log();
    query_ = v1::QueryService::NewStub(
        grpc::CreateChannel(server_.address(), grpc::InsecureChannelCredentials()));
  }

  // Runs `call` with a 100 ms deadline, expects OK or DEADLINE_EXCEEDED, then measures how long the
  // server keeps burning CPU: the time until its CPU clock stops advancing (10 ms ticks). The
  // target is 50 ms; measured 0-12 ms idle and up to 43 ms with two CPU hogs beside it on 2 cores,
  // so the assertion allows 250 ms. That the work stops before the next chunk is asserted by
  // counting, not timing, in ShapeQueryTest.InterruptStopsSweepsOverlapsAndContacts.
  void ExpectIdleAfterDeadline(const char* name,
                               const std::function<grpc::Status(grpc::ClientContext*)>& call) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
    const Clock::time_point start = Clock::now();
    grpc::Status status = call(&context);
    // Either answer in time or stop at the deadline; never run on for seconds.
    EXPECT_TRUE(status.ok() || status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
        << name << ": " << status.error_message();
    const Clock::time_point deadline = start + std::chrono::milliseconds(100);
    // Idle once the CPU clock stands still for 100 ms (10 ticks of 10 ms polls).
    long last = CpuTicks(server_.pid());
    Clock::time_point still_since = Clock::now();
    bool idle = false;
    double idle_ms = 0;
    while (Clock::now() < deadline + std::chrono::seconds(2)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const long now = CpuTicks(server_.pid());
      if (now != last) {
        last = now;
        still_since = Clock::now();
      } else if (Clock::now() - still_since >= std::chrono::milliseconds(100)) {
        idle = true;
        idle_ms = std::max(
            0.0, std::chrono::duration<double, std::milli>(still_since - deadline).count());
        break;
      }
    }
    if (idle) {
      std::printf("%s: server CPU idle %.0f ms after the 100 ms deadline (target <= 50 ms)\n", name,
                  idle_ms);
    } else {
      std::printf("%s: server CPU still busy 2 s after the 100 ms deadline\n", name);
    }
    ASSERT_TRUE(idle) << name << ": the server kept working after the deadline";
    EXPECT_LE(idle_ms, 250.0) << name;
    EXPECT_TRUE(server_.Running());
  }

  testing::TempDir dir_;
  testing::ServerProcess server_;
  std::unique_ptr<v1::QueryService::Stub> query_;
};

// The radius-64 sphere (the largest --max_shape_extent allows by default) in each shape query.
grpc::Status Contacts64(v1::QueryService::Stub& stub, grpc::ClientContext* context) {
  v1::ContactsRequest request;
  *request.mutable_shape() = BigSphere(64);
  v1::ContactsResponse response;
  return stub.Contacts(context, request, &response);
}
grpc::Status Overlap64(v1::QueryService::Stub& stub, grpc::ClientContext* context) {
  v1::OverlapRequest request;
  *request.mutable_shape() = BigSphere(64);
  request.set_include_penetration(true);
  v1::OverlapResponse response;
  return stub.Overlap(context, request, &response);
}
grpc::Status Sweep64(v1::QueryService::Stub& stub, grpc::ClientContext* context) {
  v1::SweepRequest request;
  *request.mutable_shape() = BigSphere(64);
  request.mutable_direction()->set_x(1);
  request.set_distance(10);
  request.set_collection(v1::HIT_COLLECTION_ALL);
  v1::SweepResponse response;
  return stub.Sweep(context, request, &response);
}

TEST_F(QueryDeadlineTest, HugeShapeQueriesStopAtTheCallDeadline) {
  ExpectIdleAfterDeadline(
      "Contacts r=64", [&](grpc::ClientContext* context) { return Contacts64(*query_, context); });
  ExpectIdleAfterDeadline(
      "Overlap r=64", [&](grpc::ClientContext* context) { return Overlap64(*query_, context); });
  ExpectIdleAfterDeadline("Sweep r=64",
                          [&](grpc::ClientContext* context) { return Sweep64(*query_, context); });
}

// Given time, the same queries answer (they are bounded by the work budget, not refused).
TEST_F(QueryDeadlineTest, HugeShapeQueriesAnswerWithinTenSeconds) {
  for (auto* call : {&Contacts64, &Overlap64, &Sweep64}) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    const Clock::time_point start = Clock::now();
    grpc::Status status = call(*query_, &context);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::printf("radius-64 query answered in %.0f ms (cold chunks included)\n",
                std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
}

}  // namespace
}  // namespace voxcol
