// Durable edit throughput through the gRPC EditService on loopback (issue 17, Done-means 4):
// one EditStream keeping N batches in flight vs one ApplyEdits call at a time. Same server setup
// (the real EditServiceImpl with EditStreams, an EditBatcher and a change log, in this process,
// on a RocksDB store that syncs before every ack) and the same batches: one keyed FillRegion of one
// voxel each, every batch at its own voxel so that each changes a chunk.
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "core/voxel/change_log.h"
#include "core/voxel/edit_batch.h"
#include "server/exec/worker_pool.h"
#include "server/feed/subscribe_stream.h"
#include "server/rpc/edit_service.h"
#include "server/rpc/edit_stream.h"
#include "tests/core/store/store_test_util.h"

namespace voxcol::bench {
namespace {

// Batch i: material 6 + i % 200 into one voxel of the 128x96x128 world, with key prefix + i.
v1::ApplyEditsRequest EditBatchAt(uint64_t i, const std::string& key_prefix) {
  v1::ApplyEditsRequest request;
  v1::FillRegion* fill = request.add_primitives()->mutable_fill_region();
  const int x = -60 + int(i % 120), z = -60 + int(i / 120 % 120), y = -40 + int(i / 14400 % 80);
  fill->mutable_region()->mutable_min()->set_x(x);
  fill->mutable_region()->mutable_min()->set_y(y);
  fill->mutable_region()->mutable_min()->set_z(z);
  fill->mutable_region()->mutable_max()->set_x(x + 1);
  fill->mutable_region()->mutable_max()->set_y(y + 1);
  fill->mutable_region()->mutable_max()->set_z(z + 1);
  fill->set_material(uint32_t(6 + i % 200));
  fill->set_mode(v1::EDIT_MODE_SET);
  request.set_idempotency_key(key_prefix + std::to_string(i));
  return request;
}

// A synced stored world behind a real gRPC server on a loopback port, as voxcol_server wires it
// (the server's default --edit_stream_threads and --max_in_flight_edit_batches_per_stream).
class EditServer {
 public:
  EditServer()
      : world_(testing::OpenStoredCaveWorld(dir_.path(), /*sync=*/true)),
        change_log_(world_.world->version(), ChangeLogConfig{}),
        batcher_(*world_.world, EditLimits{}, 100000),
        pool_(16, 4096),
        streams_(batcher_, &pool_, 32),
        subscriptions_(change_log_, server::SubscribeLimits{}),
        service_(*world_.world, server::ServiceLimits{}, batcher_, subscriptions_, &streams_) {
    world_.world->AddObserver(&change_log_);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    rpc_threads_ = std::make_unique<server::RpcThreads>(builder, 2);
    server_ = builder.BuildAndStart();
    service_.AcceptStreams(*rpc_threads_);
    rpc_threads_->Start();
    stub_ = v1::EditService::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                         grpc::InsecureChannelCredentials()));
  }
  ~EditServer() {
    server_->Shutdown();
    rpc_threads_->Stop();
  }

  v1::EditService::Stub& stub() { return *stub_; }
  uint64_t syncs() const { return world_.store->batches_written(); }

 private:
  testing::ScratchDir dir_;
  testing::StoredCaveWorld world_;
  ChangeLog change_log_;
  EditBatcher batcher_;
  server::WorkerPool pool_;
  server::EditStreams streams_;
  server::SubscriptionHub subscriptions_;
  server::EditServiceImpl service_;
  std::unique_ptr<server::RpcThreads> rpc_threads_;  // destroyed after the server
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::EditService::Stub> stub_;
};

constexpr int kWarmUp = 64;  // batches before timing (chunk loads, connection set-up)

// One stream, state.range(0) batches kept in flight; an iteration is one acknowledged batch.
void BM_EditStream(benchmark::State& state) {
  const size_t window = size_t(state.range(0));
  EditServer server;
  grpc::ClientContext context;
  auto stream = server.stub().EditStream(&context);
  uint64_t sent = 0, received = 0;
  v1::EditStreamResponse response;
  auto step = [&] {
    while (sent - received < window) {
      v1::EditStreamRequest request;
      request.set_batch_id(sent);
      *request.mutable_edits() = EditBatchAt(sent++, "s");
      stream->Write(request);
    }
    if (!stream->Read(&response) || !response.has_ack()) state.SkipWithError("stream failed");
    ++received;
  };
  for (int i = 0; i < kWarmUp; ++i) step();
  const uint64_t syncs_before = server.syncs();
  for (auto _ : state) step();
  state.counters["syncs_per_batch"] =
      double(server.syncs() - syncs_before) / double(std::max<int64_t>(1, state.iterations()));
  while (received < sent && stream->Read(&response)) ++received;
  stream->WritesDone();
  (void)stream->Finish();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EditStream)->Arg(32)->UseRealTime();

// One ApplyEdits at a time on the same server setup and the same kind of batch.
void BM_ApplyEditsUnary(benchmark::State& state) {
  EditServer server;
  uint64_t i = 0;
  auto step = [&] {
    grpc::ClientContext context;
    v1::EditAck ack;
    if (!server.stub().ApplyEdits(&context, EditBatchAt(i++, "u"), &ack).ok())
      state.SkipWithError("ApplyEdits failed");
  };
  for (int w = 0; w < kWarmUp; ++w) step();
  for (auto _ : state) step();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ApplyEditsUnary)->UseRealTime();

}  // namespace
}  // namespace voxcol::bench
