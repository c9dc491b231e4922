// Cheap Query-stream batches run on the RPC thread that read them (issue 35): which batches do,
// that their answers are the unary calls' answers, and that a stream cancelled while its batches
// run there ends cleanly (the batch may finish the call before the read callback returns).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/http_get.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::ServerProcess;
using testing::TempDir;
using Stream = grpc::ClientReaderWriter<v1::QueryBatchRequest, v1::QueryBatchResponse>;

class ShortBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(
        VOXCOL_SERVER_PATH,
        {"--data_dir=" + dir_.path() + "/data", "--world_size=128,96,128", "--query_threads=2"},
        dir_.path()))
        << server_.Log();
    channel_ = grpc::CreateChannel(server_.address(), grpc::InsecureChannelCredentials());
    query_ = v1::QueryService::NewStub(channel_);
  }

  double InlineBatches() const {
    return testing::MetricValue(testing::HttpGet(server_.metrics_port(), "/metrics"),
                                "voxcol_batches_inline_total");
  }

  // Ray i of a fan of downward-slanted rays across the world (many hit the caves' floors).
  static v1::RaycastRequest FanRay(int i) {
    v1::RaycastRequest ray;
    ray.mutable_origin()->set_x(-60.5f + float((i * 37) % 120));
    ray.mutable_origin()->set_y(40.25f);
    ray.mutable_origin()->set_z(-60.5f + float((i * 53) % 120));
    ray.mutable_direction()->set_x(0.3f * float(i % 5 - 2));
    ray.mutable_direction()->set_y(-1);
    ray.mutable_direction()->set_z(0.2f * float(i % 7 - 3));
    ray.set_max_distance(150);
    return ray;
  }

  static v1::QueryBatchRequest Rays(int count) {
    v1::QueryBatchRequest batch;
    for (int i = 0; i < count; ++i) {
      v1::QueryRequest* q = batch.add_queries();
      q->set_client_id(uint64_t(i));
      *q->mutable_raycast() = FanRay(i);
    }
    return batch;
  }

  TempDir dir_;
  ServerProcess server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::QueryService::Stub> query_;
};

TEST_F(ShortBatchTest, OnlyCheapQueryOnlyBatchesRunOnTheRpcThread) {
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = query_->Query(&context);
  // One at a time: the query pool is idle whenever a batch arrives.
  auto answer = [&](v1::QueryBatchRequest batch, int code = 0) {
    v1::QueryBatchResponse response;
    EXPECT_TRUE(stream->Write(batch) && stream->Read(&response));
    EXPECT_EQ(response.code(), code) << response.message();
  };
  const double before = InlineBatches();
  answer(Rays(1));
  answer(Rays(64));
  v1::QueryBatchRequest packed;
  for (int i = 0; i < 64; ++i) {
    const v1::RaycastRequest ray = FanRay(i);
    v1::RaycastArrays* arrays = packed.mutable_raycasts();
    for (float f : {ray.origin().x(), ray.origin().y(), ray.origin().z()}) arrays->add_origins(f);
    for (float f : {ray.direction().x(), ray.direction().y(), ray.direction().z()}) {
      arrays->add_directions(f);
    }
  }
  packed.mutable_raycasts()->add_max_distances(150);
  answer(packed);
  v1::QueryBatchRequest probe;
  v1::Vec3* half = probe.add_queries()->mutable_probe()->mutable_box()->mutable_half_extents();
  half->set_x(1);
  half->set_y(1);
  half->set_z(1);
  answer(probe);
  // Longer ones run there in place of an idle pool worker, up to 1024 queries.
  answer(Rays(65));
  answer(Rays(1024));
  EXPECT_EQ(InlineBatches() - before, 6) << "a cheap batch ran on the pool while it was idle";

  // Not on the RPC thread: 1025 queries; a shape query (may run to its budget); a wait for a
  // version.
  answer(Rays(1025));
  v1::QueryBatchRequest sweep = Rays(1);
  v1::PosedShape* shape = sweep.add_queries()->mutable_overlap()->mutable_shape();
  shape->mutable_shape()->mutable_sphere()->set_radius(2);
  answer(sweep);
  v1::QueryBatchRequest waits = Rays(1);
  waits.set_min_version(1000);  // ahead of the world: fails once its timeout passed
  waits.set_timeout_ms(20);
  answer(waits, int(grpc::StatusCode::FAILED_PRECONDITION));
  EXPECT_EQ(InlineBatches() - before, 6) << "a long or costly batch ran on the RPC thread";
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// While every pool worker is busy, a cheap batch longer than 64 queries waits for the pool (the
// pool bounds how many batches run at once); a short one still runs on the RPC thread.
TEST_F(ShortBatchTest, LongerBatchesTakeOnlyAnIdleWorkersPlace) {
  // Two batches that wait for a version the world never reaches hold both pool workers.
  v1::QueryBatchRequest waits = Rays(1);
  waits.set_min_version(1000);
  waits.set_timeout_ms(1500);
  grpc::ClientContext busy_context;
  std::unique_ptr<Stream> busy = query_->Query(&busy_context);
  ASSERT_TRUE(busy->Write(waits) && busy->Write(waits));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both have reached the pool

  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = query_->Query(&context);
  const double before = InlineBatches();
  v1::QueryBatchResponse response;
  ASSERT_TRUE(stream->Write(Rays(64)) && stream->Read(&response));
  EXPECT_EQ(response.code(), 0) << response.message();
  EXPECT_EQ(InlineBatches() - before, 1) << "a short batch waited for the busy pool";
  ASSERT_TRUE(stream->Write(Rays(65)) && stream->Read(&response));
  EXPECT_EQ(response.code(), 0) << response.message();
  EXPECT_EQ(response.results_size(), 65);
  EXPECT_EQ(InlineBatches() - before, 1) << "a 65-query batch ran beside two busy workers";
  // It was answered only once a worker was free, after the waits' timeout.
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(busy->Read(&response));
    EXPECT_EQ(response.code(), int(grpc::StatusCode::FAILED_PRECONDITION));
  }
  for (Stream* s : {busy.get(), stream.get()}) {
    s->WritesDone();
    EXPECT_TRUE(s->Finish().ok());
  }
}

TEST_F(ShortBatchTest, AnswersAreTheUnaryAnswers) {
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = query_->Query(&context);
  v1::QueryBatchResponse response;
  ASSERT_TRUE(stream->Write(Rays(64)) && stream->Read(&response));
  ASSERT_EQ(response.results_size(), 64);
  int hits = 0;
  for (int i = 0; i < 64; ++i) {
    grpc::ClientContext unary_context;
    v1::RaycastResponse unary;
    ASSERT_TRUE(query_->Raycast(&unary_context, FanRay(i), &unary).ok());
    const v1::RaycastResponse& batched = response.results(i).raycast();
    ASSERT_EQ(batched.hit(), unary.hit()) << "ray " << i;
    if (!unary.hit()) continue;
    ++hits;
    EXPECT_EQ(batched.first().distance(), unary.first().distance()) << "ray " << i;
    EXPECT_EQ(batched.first().voxel().x(), unary.first().voxel().x()) << "ray " << i;
    EXPECT_EQ(batched.first().voxel().y(), unary.first().voxel().y()) << "ray " << i;
    EXPECT_EQ(batched.first().voxel().z(), unary.first().voxel().z()) << "ray " << i;
  }
  EXPECT_GT(hits, 10) << "the fan should hit the terrain";
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// Each round writes short batches without reading and cancels at once, so cancellations land
// while batches run on the RPC thread, in the read callback. The server must end every stream
// (no crash, no leaked call: the shutdown below waits for every call) and keep answering.
// A cancellation may reach the server before any batch of its round does (the client can drop
// writes still in its buffers), so every fourth round first waits for one answer: those streams
// surely have batches run on the RPC thread (this test's pool never has anything queued) before
// their cancellation lands.
TEST_F(ShortBatchTest, CancellingDuringShortBatchesEndsTheStream) {
  const v1::QueryBatchRequest batch = Rays(64);
  const double inline_before = InlineBatches();
  for (int round = 0; round < 40; ++round) {
    grpc::ClientContext context;
    std::unique_ptr<Stream> stream = query_->Query(&context);
    if (round % 4 == 3) {
      v1::QueryBatchResponse answered;
      ASSERT_TRUE(stream->Write(batch) && stream->Read(&answered));
      EXPECT_EQ(answered.code(), 0) << answered.message();
    }
    for (int b = 0; b < 1 + round % 8; ++b) {
      if (!stream->Write(batch)) break;
    }
    if (round % 2 == 1) std::this_thread::sleep_for(std::chrono::microseconds(200 * (round % 5)));
    context.TryCancel();
    const grpc::Status status = stream->Finish();
    EXPECT_TRUE(status.ok() || status.error_code() == grpc::StatusCode::CANCELLED)
        << status.error_message();
  }
  EXPECT_GE(InlineBatches() - inline_before, 10) << "the answered batches ran on the RPC thread";
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = query_->Query(&context);
  v1::QueryBatchResponse response;
  ASSERT_TRUE(stream->Write(Rays(8)) && stream->Read(&response));
  EXPECT_EQ(response.code(), 0);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  // A clean exit: the shutdown waits until every call of the RPC threads is over and freed (the
  // client's connection is closed first, or gRPC holds the shutdown's grace period for it).
  stream.reset();
  query_.reset();
  channel_.reset();
  EXPECT_EQ(server_.Stop(), 0) << server_.Log();
}

}  // namespace
}  // namespace voxcol
