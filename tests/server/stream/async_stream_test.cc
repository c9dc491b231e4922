// AsyncStream and RpcThreads (server/stream) on a real gRPC server on loopback: the shutdown order
// the server uses (Server::Shutdown with a grace period, Wait, RpcThreads::Stop) with streams that
// still have work elsewhere or keep an RPC thread busy past the deadline. Before Stop waited for
// the calls, both cases aborted the process (an operation started on a shut-down queue).
#include "server/stream/async_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol::server {
namespace {

using Service = v1::QueryService::WithRawMethod_Query<v1::QueryService::Service>;

struct Counters {
  std::atomic<int> opened{0};
  std::atomic<int> done{0};
};

// Reads one message, then either finishes from another thread after `work` (a batch on a pool)
// or, with `block_rpc_thread`, sleeps in OnReadDone itself and finishes when the read fails.
class Handler final : public AsyncStream {
 public:
  Handler(std::unique_ptr<StreamCall> call, Counters* counters, std::chrono::milliseconds work,
          bool block_rpc_thread)
      : AsyncStream(std::move(call)),
        counters_(counters),
        work_(work),
        block_rpc_thread_(block_rpc_thread) {
    ++counters_->opened;
    StartRead(&request_);
  }
  ~Handler() override {
    if (worker_.joinable()) worker_.join();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return Finish(grpc::Status::CANCELLED);
    if (block_rpc_thread_) {
      std::this_thread::sleep_for(work_);
      StartRead(&request_);  // fails once the call was cancelled
      return;
    }
    worker_ = std::thread([this] {
      std::this_thread::sleep_for(work_);
      Finish(grpc::Status::OK);
    });
  }
  void OnDone() override {
    ++counters_->done;
    // The worker may still be returning from Finish: join it on a thread of its own.
    std::thread([this] { delete this; }).detach();
  }

 private:
  Counters* counters_;
  const std::chrono::milliseconds work_;
  const bool block_rpc_thread_;
  grpc::ByteBuffer request_;
  std::thread worker_;
};

// Opens `streams` Query streams that each send one batch, shuts the server down with a 100 ms
// grace period, and checks that every stream ended before RpcThreads::Stop returned.
void ShutDownWithStreamsBusy(std::chrono::milliseconds work, bool block_rpc_thread, int streams) {
  Service service;
  Counters counters;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  RpcThreads threads(builder, 1);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  AcceptCalls(threads, BidiMethod(&service, &Service::RequestQuery,
                                  [&](std::unique_ptr<StreamCall> call) -> AsyncStream* {
                                    return new Handler(std::move(call), &counters, work,
                                                       block_rpc_thread);
                                  }));
  threads.Start();
  auto stub = v1::QueryService::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<
      std::unique_ptr<grpc::ClientReaderWriter<v1::QueryBatchRequest, v1::QueryBatchResponse>>>
      calls;
  for (int i = 0; i < streams; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    calls.push_back(stub->Query(contexts.back().get()));
    ASSERT_TRUE(calls.back()->Write(v1::QueryBatchRequest()));
  }
  while (counters.opened < streams) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the reads are being handled
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  server->Wait();
  threads.Stop();
  EXPECT_EQ(counters.done.load(), streams);
  for (auto& context : contexts) context->TryCancel();
}

TEST(AsyncStreamTest, StopWaitsForStreamsWhoseWorkOutlivesTheGracePeriod) {
  ShutDownWithStreamsBusy(std::chrono::milliseconds(400), /*block_rpc_thread=*/false, 4);
}

TEST(AsyncStreamTest, StopRunsTheLastCallbacksOfStreamsThatHeldTheRpcThreadPastTheDeadline) {
  ShutDownWithStreamsBusy(std::chrono::milliseconds(300), /*block_rpc_thread=*/true, 2);
}

}  // namespace
}  // namespace voxcol::server
