// Subscribe fan-out (issue 36): the server's CPU per subscriber and change when one change goes to
// many subscribers of the same region. Against the real voxcol_server binary on loopback: N
// subscribers (gRPC callback API, 8 connections, in this process) follow the whole world while an
// editor applies 100 small edits one at a time; the server's user + system CPU (/proc/PID/stat)
// from the first edit until every subscriber has received the last change, divided by N x 100.
// Reports the encodings the server made (voxcol_subscribe_encodings_total, where the server has
// it).
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/http_get.h"
#include "tests/integration/server_process.h"
#include "tests/integration/subscribe_follower.h"
#include "voxcol/v1/edit_service.grpc.pb.h"

namespace voxcol::bench {
namespace {

constexpr int kEdits = 100;
constexpr int kChannels = 8;

// User + system CPU of `pid` in microseconds (/proc/PID/stat fields 14 and 15).
double ProcessCpuMicros(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.rfind(')');
  if (at == std::string::npos) return 0;
  std::istringstream rest(text.substr(at + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks * 1e6 / double(sysconf(_SC_CLK_TCK));
}

// Edit i: one edge^3 block of its own, in a material from i, so that every edit changes voxels.
v1::ApplyEditsRequest BlockEdit(int i, int edge) {
  v1::ApplyEditsRequest request;
  v1::FillRegion* fill = request.add_primitives()->mutable_fill_region();
  const int step = edge + 2, across = 120 / step;
  const int x = -60 + step * (i % across), z = -60 + step * (i / across % across);
  fill->mutable_region()->mutable_min()->set_x(x);
  fill->mutable_region()->mutable_min()->set_y(-8);
  fill->mutable_region()->mutable_min()->set_z(z);
  fill->mutable_region()->mutable_max()->set_x(x + edge);
  fill->mutable_region()->mutable_max()->set_y(-8 + edge);
  fill->mutable_region()->mutable_max()->set_z(z + edge);
  fill->set_material(uint32_t(60 + i % 100));  // materials the cave generator never makes
  fill->set_mode(v1::EDIT_MODE_SET);
  return request;
}

// N subscribers of the whole world, 100 edits of edge^3 voxels.
void RunFanout(benchmark::State& state, int subscribers, bool include_voxels, int edge) {
  for (auto _ : state) {
    testing::TempDir dir;
    testing::ServerProcess server;
    if (!server.Start(VOXCOL_SERVER_PATH,
                      {"--data_dir=" + dir.path() + "/data", "--seed=4", "--world_size=128,96,128",
                       "--store_sync=false"},
                      dir.path())) {
      state.SkipWithError("voxcol_server did not start");
      return;
    }
    auto editor = v1::EditService::NewStub(
        grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
    std::vector<std::unique_ptr<v1::EditService::Stub>> stubs;
    for (int c = 0; c < kChannels; ++c) {
      grpc::ChannelArguments args;
      args.SetInt("voxcol.bench_connection", c);  // distinct arguments: distinct connections
      stubs.push_back(v1::EditService::NewStub(
          grpc::CreateCustomChannel(server.address(), grpc::InsecureChannelCredentials(), args)));
    }
    std::vector<std::unique_ptr<testing::Follower>> followers;
    for (int s = 0; s < subscribers; ++s) {
      followers.push_back(std::make_unique<testing::Follower>(stubs[s % kChannels].get(), 0, kEdits,
                                                              include_voxels));
    }
    // Every stream open on the server before the first edit.
    for (int wait = 0; wait < 500; ++wait) {
      const std::string metrics = testing::HttpGet(server.metrics_port(), "/metrics");
      if (testing::MetricValue(metrics, "voxcol_subscribers") >= subscribers) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const double encodings_before = testing::MetricValue(
        testing::HttpGet(server.metrics_port(), "/metrics"), "voxcol_subscribe_encodings_total");
    const double cpu_before = ProcessCpuMicros(server.pid());
    for (int i = 0; i < kEdits; ++i) {
      grpc::ClientContext context;
      v1::EditAck ack;
      if (!editor->ApplyEdits(&context, BlockEdit(i, edge), &ack).ok()) {
        state.SkipWithError("an edit failed");
        return;
      }
    }
    for (auto& follower : followers) {
      if (!follower->WaitDone(std::chrono::seconds(120)) ||
          follower->versions().size() != size_t(kEdits)) {
        state.SkipWithError(
            ("a subscriber missed changes: " + std::to_string(follower->versions().size()))
                .c_str());
        return;
      }
    }
    const double cpu = ProcessCpuMicros(server.pid()) - cpu_before;
    const double encodings =
        testing::MetricValue(testing::HttpGet(server.metrics_port(), "/metrics"),
                             "voxcol_subscribe_encodings_total") -
        encodings_before;
    state.counters["server_cpu_ms"] = cpu / 1e3;
    state.counters["server_cpu_us_per_subscriber_change"] = cpu / (double(subscribers) * kEdits);
    if (encodings_before >= 0) state.counters["encodings_per_change"] = encodings / kEdits;
    state.counters["subscribers"] = subscribers;
  }
}
// BM_SubscribeFanout/N: N subscribers, responses without voxels (2^3-voxel edits: the changed
// chunks and boxes only).
void BM_SubscribeFanout(benchmark::State& state) {
  RunFanout(state, int(state.range(0)), false, 2);
}
BENCHMARK(BM_SubscribeFanout)
    ->Arg(1)
    ->Arg(1000)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// BM_SubscribeFanoutVoxels/N: N subscribers with include_voxels, 8^3-voxel edits (each response
// carries the changed voxels, about 1 KiB).
void BM_SubscribeFanoutVoxels(benchmark::State& state) {
  RunFanout(state, int(state.range(0)), true, 8);
}
BENCHMARK(BM_SubscribeFanoutVoxels)
    ->Arg(1)
    ->Arg(1000)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace voxcol::bench
