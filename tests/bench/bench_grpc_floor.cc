// gRPC's own cost per batch on a stream, without voxcol (issue 35, done-means 4): a bidi stream
// whose server answers each message with a prepared message of the size of a packed 256-ray
// batch's answer, set up as BM_RaycastArraysGrpcStream is (client window, --client_apart
// placement). No parsing, no queries: what is left is the transport both sides pay per batch. Read
// against BM_RaycastArraysInProcess/256: a stream can reach at most in_process / (in_process +
// this floor's server-core time per batch) of the in-process rate.
#include <benchmark/benchmark.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <time.h>

#include <memory>
#include <string>
#include <vector>

#include "server/convert/convert.h"
#include "server/exec/query_batch.h"
#include "server/exec/query_ops.h"
#include "tests/bench/bench_scenes.h"
#include "tests/bench/raycast_batches.h"
#include "tests/bench/thread_placement.h"

namespace voxcol::bench {
namespace {

constexpr int kWindow = 8;  // as server::StreamLimits{}.max_in_flight_batches

double ThreadCpuMicros(clockid_t clock) {
  timespec t;
  clock_gettime(clock, &t);
  return double(t.tv_sec) * 1e6 + double(t.tv_nsec) * 1e-3;
}

// Answers every message with `answer`, one write at a time, reading the next message meanwhile.
class EchoReactor final : public grpc::ServerGenericBidiReactor {
 public:
  explicit EchoReactor(const grpc::ByteBuffer* answer) : answer_(answer) { StartRead(&request_); }
  void OnReadDone(bool ok) override {
    if (!ok) {
      std::lock_guard<std::mutex> lock(mu_);
      reads_done_ = true;
      MaybeFinish();
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    ++owed_;
    if (!writing_) {
      writing_ = true;
      --owed_;
      StartWrite(answer_);
    }
    StartRead(&request_);
  }
  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (ok && owed_ > 0) {
      --owed_;
      writing_ = true;
      StartWrite(answer_);
      return;
    }
    MaybeFinish();
  }
  void OnDone() override { delete this; }

 private:
  void MaybeFinish() {
    if (reads_done_ && !writing_ && !finished_) {
      finished_ = true;
      Finish(grpc::Status::OK);
    }
  }
  const grpc::ByteBuffer* answer_;
  grpc::ByteBuffer request_;
  std::mutex mu_;
  int owed_ = 0;
  bool writing_ = false, reads_done_ = false, finished_ = false;
};

class EchoService final : public grpc::CallbackGenericService {
 public:
  explicit EchoService(const grpc::ByteBuffer* answer) : answer_(answer) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext*) override {
    return new EchoReactor(answer_);
  }

 private:
  const grpc::ByteBuffer* answer_;
};

void BM_GrpcStreamFloor(benchmark::State& state) {
  // The messages of BM_RaycastArraysGrpcStream/256: a packed request and its real answer.
  const std::vector<v1::QueryBatchRequest> batches = RaycastArrayBatches(int(state.range(0)));
  v1::QueryBatchResponse response;
  server::ExecuteBatch(server::QueryEngine{BenchCaveIndex(), BenchCaveCache()},
                       server::ServiceLimits{}, server::BatchLimits{}, batches[0],
                       absl::InfiniteFuture(), nullptr, &response);
  grpc::ByteBuffer request_bytes, answer_bytes;
  if (response.code() != 0 || !server::SerializeToByteBuffer(batches[0], &request_bytes).ok() ||
      !server::SerializeToByteBuffer(response, &answer_bytes).ok()) {
    state.SkipWithError("could not prepare the messages");
    return;
  }
  ThreadPlacement placement;  // the server's threads on the server's core with --client_apart
  EchoService service(&answer_bytes);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterCallbackGenericService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  placement.ToClient();
  if (!placement.ok()) {
    state.SkipWithError("--client_apart needs two usable cores");
    return;
  }
  if (placement.apart()) state.SetLabel("client apart");
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  grpc::CompletionQueue queue;
  auto stream = stub.PrepareCall(&context, "/bench.Echo/Echo", &queue);
  void* tag = nullptr;
  bool ok = false;
  stream->StartCall(reinterpret_cast<void*>(1));
  queue.Next(&tag, &ok);
  // One operation of each kind at a time on the client's async stream: write, wait, then read.
  size_t sent = 0, received = 0;
  grpc::ByteBuffer answer;
  auto step = [&] {
    while (sent - received < size_t(kWindow)) {
      stream->Write(request_bytes, reinterpret_cast<void*>(2));
      queue.Next(&tag, &ok);
      ++sent;
    }
    stream->Read(&answer, reinterpret_cast<void*>(3));
    queue.Next(&tag, &ok);
    if (!ok || answer.Length() != answer_bytes.Length()) state.SkipWithError("echo failed");
    ++received;
  };
  for (int i = 0; i < 200; ++i) step();
  const double client_start = ThreadCpuMicros(CLOCK_THREAD_CPUTIME_ID);
  const double process_start = ThreadCpuMicros(CLOCK_PROCESS_CPUTIME_ID);
  for (auto _ : state) step();
  const double iterations = double(state.iterations());
  const double client_us = (ThreadCpuMicros(CLOCK_THREAD_CPUTIME_ID) - client_start) / iterations;
  const double process_us =
      (ThreadCpuMicros(CLOCK_PROCESS_CPUTIME_ID) - process_start) / iterations;
  state.counters["cpu_us_per_batch"] = process_us;
  state.counters["client_thread_cpu_us_per_batch"] = client_us;
  state.counters["request_bytes"] = double(request_bytes.Length());
  state.counters["answer_bytes"] = double(answer_bytes.Length());
  while (received < sent) {
    stream->Read(&answer, reinterpret_cast<void*>(3));
    queue.Next(&tag, &ok);
    ++received;
  }
  stream->WritesDone(reinterpret_cast<void*>(4));
  queue.Next(&tag, &ok);
  grpc::Status status;
  stream->Finish(&status, reinterpret_cast<void*>(5));
  queue.Next(&tag, &ok);
  server->Shutdown();
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GrpcStreamFloor)->Arg(256)->UseRealTime();

}  // namespace
}  // namespace voxcol::bench
