// Raycast throughput in process vs through the gRPC Query stream on loopback, same rays, same
// batch sizes. The server runs in this process (real gRPC server, real sockets).
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include "server/query_batch.h"
#include "server/query_service.h"
#include "tests/bench/bench_scenes.h"

namespace voxcol::bench {
namespace {

constexpr int kRays = 4096;

v1::QueryBatchRequest MakeBatch(const std::vector<RaycastInput>& rays, size_t first, int size) {
  v1::QueryBatchRequest batch;
  for (int i = 0; i < size; ++i) {
    const RaycastInput& r = rays[(first + i) % rays.size()];
    v1::QueryRequest* q = batch.add_queries();
    q->set_client_id(i);
    auto* ray = q->mutable_raycast();
    ray->mutable_origin()->set_x(r.origin.x);
    ray->mutable_origin()->set_y(r.origin.y);
    ray->mutable_origin()->set_z(r.origin.z);
    ray->mutable_direction()->set_x(r.direction.x);
    ray->mutable_direction()->set_y(r.direction.y);
    ray->mutable_direction()->set_z(r.direction.z);
    ray->set_max_distance(r.max_distance);
  }
  return batch;
}

// The same batches executed directly (validation + conversion + query), no network.
void BM_RaycastInProcess(benchmark::State& state) {
  World& world = BenchCaveWorld();
  std::vector<RaycastInput> rays = DownwardRays(world, kRays, 9);
  const int size = int(state.range(0));
  std::vector<v1::QueryBatchRequest> batches;
  for (int b = 0; b < kRays / size; ++b) batches.push_back(MakeBatch(rays, size_t(b) * size, size));
  server::ServiceLimits limits;
  server::BatchLimits batch_limits;
  size_t i = 0;
  for (auto _ : state) {
    v1::QueryBatchResponse response;
    server::ExecuteBatch(server::QueryEngine{BenchCaveIndex(), BenchCaveCache()}, limits,
                         batch_limits, batches[i++ % batches.size()], absl::InfiniteFuture(),
                         nullptr, &response);
    benchmark::DoNotOptimize(response);
  }
  state.SetItemsProcessed(state.iterations() * size);
}
BENCHMARK(BM_RaycastInProcess)->Arg(1)->Arg(16)->Arg(256);

// One stream, batches pipelined up to the server's per-stream in-flight limit.
void BM_RaycastGrpcStream(benchmark::State& state) {
  World& world = BenchCaveWorld();
  std::vector<RaycastInput> rays = DownwardRays(world, kRays, 9);
  const int size = int(state.range(0));
  std::vector<v1::QueryBatchRequest> batches;
  for (int b = 0; b < kRays / size; ++b) batches.push_back(MakeBatch(rays, size_t(b) * size, size));

  server::WorkerPool pool(2, 1024);
  server::StreamLimits stream_limits;
  server::QueryServiceImpl service(world, server::QueryEngine{BenchCaveIndex(), BenchCaveCache()},
                                   server::ServiceLimits{}, stream_limits, &pool);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  auto stub = v1::QueryService::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Query(&context);

  const int window = stream_limits.max_in_flight_batches;
  size_t sent = 0, received = 0;
  v1::QueryBatchResponse response;
  for (auto _ : state) {
    while (sent - received < size_t(window)) stream->Write(batches[sent++ % batches.size()]);
    if (!stream->Read(&response) || response.code() != 0) state.SkipWithError("stream failed");
    ++received;
  }
  while (received < sent && stream->Read(&response)) ++received;
  stream->WritesDone();
  (void)stream->Finish();
  server->Shutdown();
  state.SetItemsProcessed(state.iterations() * size);
}
BENCHMARK(BM_RaycastGrpcStream)->Arg(1)->Arg(16)->Arg(256)->UseRealTime();

}  // namespace
}  // namespace voxcol::bench
