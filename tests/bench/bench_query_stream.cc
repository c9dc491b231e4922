// Raycast throughput in process vs through the gRPC Query stream on loopback, same rays, same
// batch sizes. The server runs in this process (real gRPC server, real sockets).
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "server/convert/convert.h"
#include "server/exec/query_batch.h"
#include "server/rpc/query_service.h"
#include "tests/bench/bench_scenes.h"
#include "tests/bench/raycast_batches.h"
#include "tests/bench/thread_placement.h"

namespace voxcol::bench {
namespace {

// Both sides are measured alike (issue 15): wall time (UseRealTime), the same kQueryThreads query
// threads (a server::WorkerPool, as the server's --query_threads), the same number of batches in
// flight (the server's per-stream window), and two warm-up passes over every batch before timing.
constexpr int kQueryThreads = 2;
constexpr int kWindow = server::StreamLimits{}.max_in_flight_batches;

// CPU time of the whole process (server, client and query threads), in microseconds. Per batch it
// tells what the work costs apart from how much of the machine other processes left us.
double ProcessCpuMicros() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e6 + double(t.tv_nsec) * 1e-3;
}

void ReportCpu(benchmark::State& state, double cpu_start) {
  state.counters["cpu_us_per_batch"] =
      (ProcessCpuMicros() - cpu_start) / double(state.iterations());
}

// Runs batches on a WorkerPool without the network: validation + conversion + query, as the
// server's stream handler does for each batch it reads, up to kWindow batches in flight.
class InProcessDriver {
 public:
  explicit InProcessDriver(const std::vector<v1::QueryBatchRequest>& batches)
      : batches_(batches), pool_(kQueryThreads, 1024) {}
  ~InProcessDriver() { WaitFor(submitted_); }

  // Keeps kWindow batches in flight and waits until one more has completed.
  void Step() {
    while (submitted_ - completed_seen_ < size_t(kWindow)) Submit();
    WaitFor(++completed_seen_);
  }

 private:
  void Submit() {
    const v1::QueryBatchRequest* batch = &batches_[submitted_++ % batches_.size()];
    const bool queued = pool_.TrySubmit([this, batch] {
      // The response on a batch arena, as the stream handler builds it.
      google::protobuf::Arena arena(server::BatchArenaOptions());
      auto* response = google::protobuf::Arena::CreateMessage<v1::QueryBatchResponse>(&arena);
      server::ExecuteBatch(server::QueryEngine{BenchCaveIndex(), BenchCaveCache()}, limits_,
                           batch_limits_, *batch, absl::InfiniteFuture(), nullptr, response);
      benchmark::DoNotOptimize(response);
      std::lock_guard<std::mutex> lock(mu_);
      ++completed_;
      cv_.notify_one();
    });
    if (!queued) std::abort();  // cannot happen: kWindow tasks at most, the queue holds 1024
  }
  void WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return completed_ >= n; });
  }

  const std::vector<v1::QueryBatchRequest>& batches_;
  const server::ServiceLimits limits_;
  const server::BatchLimits batch_limits_;
  server::WorkerPool pool_;
  size_t submitted_ = 0, completed_seen_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t completed_ = 0;  // guarded by mu_
};

// With --client_apart, moves the calling thread (the benchmark's client) to the client's core and
// labels the run; the threads started before it stay on the server's core. False, with the
// benchmark skipped, when the placement failed.
bool PlaceClient(benchmark::State& state, ThreadPlacement& placement) {
  placement.ToClient();
  if (!placement.ok()) {
    state.SkipWithError("--client_apart needs two usable cores and a thread pinned to each");
    return false;
  }
  if (placement.apart()) state.SetLabel("client apart");
  return true;
}

// The same batches executed directly on kQueryThreads pool threads, no network.
void RunInProcess(benchmark::State& state, const std::vector<v1::QueryBatchRequest>& batches) {
  const int size = int(state.range(0));
  ThreadPlacement placement;  // the pool's threads on the server's core with --client_apart
  InProcessDriver driver(batches);
  if (!PlaceClient(state, placement)) return;
  // Three warm-up passes: a chunk a ray meets first gets its record on the second meeting, and
  // meetings chain (world_scenes.h, WarmRays).
  for (size_t b = 0; b < 3 * batches.size(); ++b) driver.Step();
  const double cpu_start = ProcessCpuMicros();
  for (auto _ : state) driver.Step();
  ReportCpu(state, cpu_start);
  state.SetItemsProcessed(state.iterations() * size);
  state.counters["query_threads"] = kQueryThreads;
}
void BM_RaycastInProcess(benchmark::State& state) {
  RunInProcess(state, RaycastBatches(int(state.range(0))));
}
BENCHMARK(BM_RaycastInProcess)->Arg(1)->Arg(16)->Arg(256)->UseRealTime();

// The same rays as packed arrays (QueryBatchRequest.raycasts): the fast way to send many rays.
void BM_RaycastArraysInProcess(benchmark::State& state) {
  RunInProcess(state, RaycastArrayBatches(int(state.range(0))));
}
BENCHMARK(BM_RaycastArraysInProcess)->Arg(16)->Arg(256)->UseRealTime();

// What the stream adds to a batch in protobuf alone, on one thread, no network: the client
// serializes the request as the generated stub does, the server parses it onto a batch arena and
// serializes the response as the stream handler does, and the client parses the response onto an
// arena as RunGrpcStream's client does. The responses are built before timing, by the same
// ExecuteBatch call the in-process driver makes: both sides do that work, so it is not counted
// here. With BM_RaycastInProcess's and BM_RaycastGrpcStream's cpu_us_per_batch this splits the
// stream's extra CPU into codec and transport (docs/benchmarks.md, "What a per-ray batch costs the
// stream").
struct CodecSteps {
  google::protobuf::Arena server_arena{server::BatchArenaOptions()};
  google::protobuf::Arena client_arena{server::BatchArenaOptions()};
  grpc::ByteBuffer request_buffer, response_buffer;
  v1::QueryBatchRequest* request = nullptr;    // as the server parsed it
  v1::QueryBatchResponse* response = nullptr;  // as the client parsed it

  bool Serialize(const v1::QueryBatchRequest& batch) {
    request_buffer.Clear();  // gRPC's serializer writes only into an empty buffer
    bool own = false;
    return grpc::SerializationTraits<v1::QueryBatchRequest>::Serialize(batch, &request_buffer, &own)
        .ok();
  }
  bool Parse() {
    server_arena.Reset();
    request = google::protobuf::Arena::CreateMessage<v1::QueryBatchRequest>(&server_arena);
    return server::ParseFromByteBuffer(&request_buffer, request).ok();
  }
  bool Answer(const v1::QueryBatchResponse& answer) {
    return server::SerializeToByteBuffer(answer, &response_buffer).ok();
  }
  bool Receive() {
    client_arena.Reset();
    response = google::protobuf::Arena::CreateMessage<v1::QueryBatchResponse>(&client_arena);
    return grpc::SerializationTraits<v1::QueryBatchResponse>::Deserialize(&response_buffer,
                                                                          response)
        .ok();
  }
};

void RunCodec(benchmark::State& state, const std::vector<v1::QueryBatchRequest>& batches) {
  const int size = int(state.range(0));
  std::vector<std::unique_ptr<v1::QueryBatchResponse>> responses;
  CodecSteps steps;
  for (const v1::QueryBatchRequest& batch : batches) {
    auto& response = responses.emplace_back(std::make_unique<v1::QueryBatchResponse>());
    server::ExecuteBatch(server::QueryEngine{BenchCaveIndex(), BenchCaveCache()},
                         server::ServiceLimits{}, server::BatchLimits{}, batch,
                         absl::InfiniteFuture(), nullptr, response.get());
    // Untimed check that each step round-trips exactly what it was given.
    if (response->code() != 0 || !steps.Serialize(batch) || !steps.Parse() ||
        steps.request->SerializeAsString() != batch.SerializeAsString() ||
        !steps.Answer(*response) || !steps.Receive() ||
        steps.response->SerializeAsString() != response->SerializeAsString()) {
      state.SkipWithError("a batch failed or did not round-trip");
      return;
    }
  }
  using Clock = std::chrono::steady_clock;
  Clock::duration client{}, server_parse{}, server_serialize{};
  size_t next = 0, request_bytes = 0, response_bytes = 0;
  for (auto _ : state) {
    const size_t b = next++ % batches.size();
    const Clock::time_point t0 = Clock::now();
    const bool serialized = steps.Serialize(batches[b]);
    const Clock::time_point t1 = Clock::now();
    request_bytes += steps.request_buffer.Length();
    const bool parsed = steps.Parse();
    const Clock::time_point t2 = Clock::now();
    const bool answered = steps.Answer(*responses[b]);
    const Clock::time_point t3 = Clock::now();
    response_bytes += steps.response_buffer.Length();
    const bool received = steps.Receive();
    const Clock::time_point t4 = Clock::now();
    if (!serialized || !parsed || !answered || !received) {
      state.SkipWithError("a codec step failed");
      break;
    }
    client += (t1 - t0) + (t4 - t3);
    server_parse += t2 - t1;
    server_serialize += t3 - t2;
  }
  if (state.error_occurred()) return;
  const auto per_batch = [&](Clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count() / double(state.iterations());
  };
  state.counters["client_us_per_batch"] = per_batch(client);
  state.counters["server_parse_us_per_batch"] = per_batch(server_parse);
  state.counters["server_serialize_us_per_batch"] = per_batch(server_serialize);
  state.counters["request_bytes"] = double(request_bytes) / double(state.iterations());
  state.counters["response_bytes"] = double(response_bytes) / double(state.iterations());
  state.SetItemsProcessed(state.iterations() * size);
}
void BM_RaycastStreamCodec(benchmark::State& state) {
  RunCodec(state, RaycastBatches(int(state.range(0))));
}
BENCHMARK(BM_RaycastStreamCodec)->Arg(256);
void BM_RaycastArraysStreamCodec(benchmark::State& state) {
  RunCodec(state, RaycastArrayBatches(int(state.range(0))));
}
BENCHMARK(BM_RaycastArraysStreamCodec)->Arg(256);

// One stream to a server with kQueryThreads query threads; the client keeps `window` batches
// written and not yet answered. The server runs at most its per-stream limit (kWindow) at once and
// leaves the rest in the transport.
void RunGrpcStream(benchmark::State& state, int window,
                   const std::vector<v1::QueryBatchRequest>& batches) {
  World& world = BenchCaveWorld();
  const int size = int(state.range(0));
  // With --client_apart: the pool, the server and the gRPC threads it starts on the server's core.
  ThreadPlacement placement;
  server::WorkerPool pool(kQueryThreads, 1024);
  server::StreamLimits stream_limits;
  server::QueryServiceImpl service(world, server::QueryEngine{BenchCaveIndex(), BenchCaveCache()},
                                   server::ServiceLimits{}, stream_limits, &pool);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  server::RpcThreads rpc_threads(builder, kQueryThreads);  // as the server's default on 2 cores
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  service.AcceptStreams(rpc_threads);
  rpc_threads.Start();
  if (!PlaceClient(state, placement)) return;  // the client's channel starts on its core
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  auto stub = v1::QueryService::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Query(&context);

  // Each response is decoded in full into a message on an arena that is reset between reads (a
  // reused heap message would still allocate every result's nested messages).
  size_t sent = 0, received = 0;
  google::protobuf::Arena arena(server::BatchArenaOptions());
  auto step = [&] {
    while (sent - received < size_t(window)) stream->Write(batches[sent++ % batches.size()]);
    arena.Reset();
    auto* response = google::protobuf::Arena::CreateMessage<v1::QueryBatchResponse>(&arena);
    if (!stream->Read(response) || response->code() != 0) state.SkipWithError("stream failed");
    ++received;
  };
  for (size_t b = 0; b < 3 * batches.size(); ++b) step();  // three warm-up passes, as above
  const double cpu_start = ProcessCpuMicros();
  for (auto _ : state) step();
  ReportCpu(state, cpu_start);
  v1::QueryBatchResponse response;
  while (received < sent && stream->Read(&response)) ++received;
  stream->WritesDone();
  (void)stream->Finish();
  server->Shutdown();
  rpc_threads.Stop();
  state.SetItemsProcessed(state.iterations() * size);
  state.counters["query_threads"] = kQueryThreads;
}
// Batches pipelined up to the server's per-stream in-flight limit, as many as in process.
void BM_RaycastGrpcStream(benchmark::State& state) {
  RunGrpcStream(state, kWindow, RaycastBatches(int(state.range(0))));
}
BENCHMARK(BM_RaycastGrpcStream)->Arg(1)->Arg(16)->Arg(256)->UseRealTime();

// BM_RaycastGrpcStream with the rays as packed arrays; compare with BM_RaycastArraysInProcess.
void BM_RaycastArraysGrpcStream(benchmark::State& state) {
  RunGrpcStream(state, kWindow, RaycastArrayBatches(int(state.range(0))));
}
BENCHMARK(BM_RaycastArraysGrpcStream)->Arg(16)->Arg(256)->UseRealTime();

// The client keeps twice the server's limit in flight, so the next batch is already on the server
// when one finishes: how much of the stream's gap is the round trip rather than CPU. Not the
// like-for-like figure (that is BM_RaycastGrpcStream).
void BM_RaycastGrpcStreamDeep(benchmark::State& state) {
  RunGrpcStream(state, 2 * kWindow, RaycastBatches(int(state.range(0))));
}
BENCHMARK(BM_RaycastGrpcStreamDeep)->Arg(256)->UseRealTime();

}  // namespace
}  // namespace voxcol::bench
