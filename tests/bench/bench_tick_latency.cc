// Latency at the rate a game server calls (issue 35): one call per tick, at 20, 60, 100 and 128 Hz,
// against the real voxcol_server binary on loopback, on an idle server and while 16 other streams
// load it. Each benchmark runs for --tick_seconds (default 30) of wall time and reports the
// distribution of the calls' wall-clock latencies: p50, p99, p99.9 and max in milliseconds.
//
// A call that misses its tick is not made up for: the next call waits for the next tick, as a
// game loop does, so a stall shows as one slow call, not as a burst of back-to-back calls.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tests/bench/tick_flags.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"
#include "voxcol/v1/world_service.grpc.pb.h"

namespace voxcol::bench {
namespace {

using Clock = std::chrono::steady_clock;

// One server for every tick benchmark: a generated cave world of 256 x 128 x 256 voxels centred on
// the origin (smaller than the default, so that it starts fast),
// the unsynced store (the figures are about the service, not the disk's fsync), stopped at exit.
class TickServer {
 public:
  static TickServer& Get() {
    static TickServer* server = new TickServer();
    return *server;
  }
  bool ok() const { return ok_; }
  std::shared_ptr<grpc::Channel> NewChannel() const {
    grpc::ChannelArguments args;
    args.SetInt("grpc.use_local_subchannel_pool", 1);  // its own connection, as another client
    return grpc::CreateCustomChannel(process_.address(), grpc::InsecureChannelCredentials(), args);
  }

 private:
  TickServer() {
    std::vector<std::string> args = {
        "--data_dir=" + dir_.path() + "/data", "--world_size=256,128,256", "--store_sync=false",
        "--backup_root=" + dir_.path() + "/backups", "--metrics_listen="};
    // More server flags for experiments, e.g. VOXCOL_TICK_SERVER_FLAGS="--rpc_threads=1".
    if (const char* extra = std::getenv("VOXCOL_TICK_SERVER_FLAGS")) {
      for (absl::string_view flag : absl::StrSplit(extra, ' ', absl::SkipEmpty())) {
        args.emplace_back(flag);
      }
    }
    ok_ = process_.Start(VOXCOL_SERVER_PATH, args, dir_.path());
    // The server is never destroyed (benchmarks may run until exit): stop it and remove its
    // directory at exit.
    std::atexit([] {
      Get().process_.Stop();
      std::error_code ignored;
      std::filesystem::remove_all(Get().dir_.path(), ignored);
    });
  }
  testing::TempDir dir_;
  testing::ServerProcess process_;
  bool ok_ = false;
};

v1::Vec3 MakeVec3(float x, float y, float z) {
  v1::Vec3 v;
  v.set_x(x);
  v.set_y(y);
  v.set_z(z);
  return v;
}

// A ray down from above the terrain at a random column, as a ground or line-of-sight probe.
v1::RaycastRequest RandomGroundRay(std::mt19937& rng) {
  std::uniform_real_distribution<float> xz(-120.0f, 120.0f);
  v1::RaycastRequest ray;
  *ray.mutable_origin() = MakeVec3(xz(rng), 63.0f, xz(rng));
  *ray.mutable_direction() = MakeVec3(0.1f, -1.0f, 0.05f);
  ray.set_max_distance(200.0f);
  return ray;
}

v1::QueryBatchRequest RaycastBatch(std::mt19937& rng, int rays) {
  v1::QueryBatchRequest batch;
  for (int i = 0; i < rays; ++i) {
    v1::QueryRequest* q = batch.add_queries();
    q->set_client_id(uint64_t(i));
    *q->mutable_raycast() = RandomGroundRay(rng);
  }
  return batch;
}

// Calls `call` once per `period` for --tick_seconds; returns each call's latency in ms. A
// failed call aborts the benchmark with its message.
template <typename Call>
std::vector<double> RunTicks(benchmark::State& state, std::chrono::nanoseconds period, Call call) {
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(TickSeconds()));
  std::vector<double> latencies;
  auto tick = Clock::now();
  while (tick < end) {
    std::this_thread::sleep_until(tick);
    const auto start = Clock::now();
    const grpc::Status status = call();
    latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!status.ok()) {
      state.SkipWithError(("call failed: " + status.error_message()).c_str());
      break;
    }
    while (tick <= Clock::now()) tick += period;  // a late call skips the ticks it missed
  }
  return latencies;
}

std::chrono::nanoseconds Period(int hz) { return std::chrono::nanoseconds(1'000'000'000 / hz); }

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = size_t(std::ceil(p * double(sorted.size()))) - 1;
  return sorted[std::min(i, sorted.size() - 1)];
}

void Report(benchmark::State& state, std::vector<double> latencies) {
  std::sort(latencies.begin(), latencies.end());
  state.counters["calls"] = double(latencies.size());
  state.counters["p50_ms"] = Percentile(latencies, 0.50);
  state.counters["p99_ms"] = Percentile(latencies, 0.99);
  state.counters["p999_ms"] = Percentile(latencies, 0.999);
  state.counters["max_ms"] = latencies.empty() ? 0 : latencies.back();
  state.counters["over_5ms"] =
      double(latencies.end() - std::upper_bound(latencies.begin(), latencies.end(), 5.0));
}

// Other clients keeping the server busy: `streams` Query streams on their own connection, each
// sending 64-ray batches back to back (one in flight), until destroyed.
class StreamLoad {
 public:
  explicit StreamLoad(int streams) {
    for (int i = 0; i < streams; ++i) threads_.emplace_back([this, i] { Run(i); });
  }
  ~StreamLoad() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }
  uint64_t batches() const { return batches_; }

 private:
  void Run(int seed) {
    auto stub = v1::QueryService::NewStub(TickServer::Get().NewChannel());
    std::mt19937 rng(1000 + seed);
    grpc::ClientContext context;
    auto stream = stub->Query(&context);
    v1::QueryBatchResponse response;
    while (!stop_) {
      if (!stream->Write(RaycastBatch(rng, 64)) || !stream->Read(&response)) return;
      ++batches_;
    }
    stream->WritesDone();
    while (stream->Read(&response)) {
    }
    stream->Finish();
  }
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> batches_{0};
  std::vector<std::thread> threads_;
};

// Calls `call` once per `period` with `load_streams` other streams loading the server.
template <typename Call>
void TimeTicks(benchmark::State& state, std::chrono::nanoseconds period, int load_streams,
               Call call) {
  std::unique_ptr<StreamLoad> load;
  if (load_streams > 0) load = std::make_unique<StreamLoad>(load_streams);
  for (auto _ : state) Report(state, RunTicks(state, period, call));
  if (load) state.counters["load_batches"] = double(load->batches());
}

bool ServerReady(benchmark::State& state) {
  if (TickServer::Get().ok()) return true;
  state.SkipWithError("voxcol_server did not start");
  return false;
}

// Builds the collision cache (chunk meshes and kD-trees) of every chunk a RandomGroundRay can
// cross, once per process: one such ray every 4 voxels over the whole range, three times (a chunk
// a ray meets first gets its broadphase record on the second meeting, and meetings chain,
// world_scenes.h, WarmRays). Without it the first ray through
// a chunk builds its mesh (about 0.5-1 ms), and the tick figures would measure the cache warming
// up rather than the call (measured: p99 1.38 ms cold, against 0.64 ms for GetWorldInfo, which
// does no query work).
void WarmCollisionCache(v1::QueryService::Stub& stub) {
  static bool warm = false;
  if (warm) return;
  warm = true;
  for (int pass = 0; pass < 3; ++pass) {
    for (float x = -124; x <= 124; x += 4) {
      for (float z = -124; z <= 124; z += 4) {
        v1::RaycastRequest ray;
        *ray.mutable_origin() = MakeVec3(x, 63.0f, z);
        *ray.mutable_direction() = MakeVec3(0.1f, -1.0f, 0.05f);
        ray.set_max_distance(200.0f);
        grpc::ClientContext context;
        v1::RaycastResponse response;
        (void)stub.Raycast(&context, ray, &response);
      }
    }
  }
}

// One unary Raycast per tick: the call a game server makes for a line-of-sight check, on a warm
// collision cache. Arg 0 is the tick rate in Hz, arg 1 the number of loading streams (0: idle).
void BM_TickUnaryRaycast(benchmark::State& state) {
  if (!ServerReady(state)) return;
  auto stub = v1::QueryService::NewStub(TickServer::Get().NewChannel());
  WarmCollisionCache(*stub);
  std::mt19937 rng(7);
  auto call = [&] {
    grpc::ClientContext context;
    v1::RaycastResponse response;
    return stub->Raycast(&context, RandomGroundRay(rng), &response);
  };
  for (int i = 0; i < 50; ++i) call();  // connect and warm up
  TimeTicks(state, Period(int(state.range(0))), int(state.range(1)), call);
}
BENCHMARK(BM_TickUnaryRaycast)
    ->ArgsProduct({{20, 60, 100, 128}, {0}})
    ->Args({60, 16})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// One GetWorldInfo per tick: the cheapest unary call (no query work), so its latency is the
// transport's and gRPC's on both ends. Arg: the tick rate in Hz.
void BM_TickUnaryWorldInfo(benchmark::State& state) {
  if (!ServerReady(state)) return;
  auto stub = v1::WorldService::NewStub(TickServer::Get().NewChannel());
  auto call = [&] {
    grpc::ClientContext context;
    v1::GetWorldInfoResponse response;
    return stub->GetWorldInfo(&context, v1::GetWorldInfoRequest(), &response);
  };
  for (int i = 0; i < 50; ++i) call();
  TimeTicks(state, Period(int(state.range(0))), 0, call);
}
BENCHMARK(BM_TickUnaryWorldInfo)
    ->Arg(100)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// One 64-ray batch per `period` on one open Query stream, `load_streams` loading the server.
void TimeStreamBatches(benchmark::State& state, std::chrono::nanoseconds period, int load_streams) {
  if (!ServerReady(state)) return;
  auto stub = v1::QueryService::NewStub(TickServer::Get().NewChannel());
  WarmCollisionCache(*stub);
  std::mt19937 rng(11);
  grpc::ClientContext context;
  auto stream = stub->Query(&context);
  v1::QueryBatchResponse response;
  std::vector<double> server_ms;  // the server's own time per batch, arrival to answer
  auto call = [&] {
    if (!stream->Write(RaycastBatch(rng, 64)) || !stream->Read(&response)) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream ended");
    }
    if (response.results_size() != 64) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "a batch result is missing");
    }
    server_ms.push_back(response.server_micros() / 1000.0);
    return grpc::Status::OK;
  };
  for (int i = 0; i < 50; ++i) call();
  server_ms.clear();
  TimeTicks(state, period, load_streams, call);
  std::sort(server_ms.begin(), server_ms.end());
  state.counters["server_p50_ms"] = Percentile(server_ms, 0.50);
  state.counters["server_p999_ms"] = Percentile(server_ms, 0.999);
  stream->WritesDone();
  stream->Finish();
}

// One 64-ray batch per tick on one open Query stream: a game server's per-tick query batch. Arg 0
// is the tick rate in Hz, arg 1 the number of loading streams.
void BM_TickStreamBatch(benchmark::State& state) {
  TimeStreamBatches(state, Period(int(state.range(0))), int(state.range(1)));
}
BENCHMARK(BM_TickStreamBatch)
    ->ArgsProduct({{20, 60, 128}, {0}})
    ->Args({60, 16})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// A stream used about once a second (one batch every 1.01 s): on gRPC's callback API such a batch
// waited up to ~90 ms for a callback thread that had gone to sleep after 1 s without events.
void BM_TickStreamBatchSparse(benchmark::State& state) {
  TimeStreamBatches(state, std::chrono::milliseconds(1010), 0);
}
BENCHMARK(BM_TickStreamBatchSparse)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

// One FillBall per tick, timed to its acknowledgement (the unsynced store).
void BM_TickFillBall(benchmark::State& state) {
  if (!ServerReady(state)) return;
  auto stub = v1::EditService::NewStub(TickServer::Get().NewChannel());
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> xz(-120.0f, 120.0f), y(-56.0f, 56.0f);
  auto call = [&] {
    grpc::ClientContext context;
    v1::FillBallRequest request;
    *request.mutable_center() = MakeVec3(xz(rng), y(rng), xz(rng));
    request.set_radius(2.0f);
    request.set_material(rng() % 2 ? 0 : 1);
    v1::EditAck ack;
    return stub->FillBall(&context, request, &ack);
  };
  for (int i = 0; i < 20; ++i) call();
  TimeTicks(state, Period(int(state.range(0))), 0, call);
}
BENCHMARK(BM_TickFillBall)->Arg(100)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

// The floor under every figure above: the same tick loop around a 64-byte echo over a plain TCP
// loopback connection to a thread of this process (blocking sockets, Nagle off), with no gRPC
// and no server. Its p99.9 and max are what waking one thread on each side of a loopback socket
// costs on this machine; no RPC over loopback can do better.
class LoopbackEcho {
 public:
  LoopbackEcho() {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        listen(listener, 1) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      if (listener >= 0) close(listener);
      return;
    }
    client_ = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(client_, reinterpret_cast<sockaddr*>(&address), length) != 0) {
      close(listener);
      return;
    }
    const int server = accept(listener, nullptr, nullptr);
    close(listener);
    const int one = 1;
    setsockopt(client_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    echo_ = std::thread([server] {
      char buffer[64];
      while (ReadAll(server, buffer) && write(server, buffer, sizeof(buffer)) == sizeof(buffer)) {
      }
      close(server);
    });
    ok_ = true;
  }
  ~LoopbackEcho() {
    if (client_ >= 0) shutdown(client_, SHUT_RDWR);
    if (echo_.joinable()) echo_.join();
    if (client_ >= 0) close(client_);
  }
  bool ok() const { return ok_; }
  bool RoundTrip() {
    char buffer[64] = {1};
    return write(client_, buffer, sizeof(buffer)) == sizeof(buffer) && ReadAll(client_, buffer);
  }

 private:
  static bool ReadAll(int fd, char (&buffer)[64]) {
    size_t got = 0;
    while (got < sizeof(buffer)) {
      const ssize_t n = read(fd, buffer + got, sizeof(buffer) - got);
      if (n <= 0) return false;
      got += size_t(n);
    }
    return true;
  }
  int client_ = -1;
  std::thread echo_;
  bool ok_ = false;
};

void BM_TickLoopbackEcho(benchmark::State& state) {
  LoopbackEcho echo;
  if (!echo.ok()) {
    state.SkipWithError("no loopback socket");
    return;
  }
  auto call = [&] {
    return echo.RoundTrip() ? grpc::Status::OK
                            : grpc::Status(grpc::StatusCode::UNAVAILABLE, "echo failed");
  };
  for (int i = 0; i < 50; ++i) call();
  TimeTicks(state, Period(int(state.range(0))), 0, call);
}
BENCHMARK(BM_TickLoopbackEcho)
    ->Arg(100)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace voxcol::bench
