// The batched bidirectional Query stream against the real server binary.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <tuple>

#include "tests/integration/http_get.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::ServerProcess;
using testing::TempDir;
using Stream = grpc::ClientReaderWriter<v1::QueryBatchRequest, v1::QueryBatchResponse>;

class QueryStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH,
                              {"--data_dir=" + dir_.path() + "/data", "--world_size=128,96,128",
                               "--query_threads=2", "--max_queued_batches=8"},
                              dir_.path()))
        << server_.Log();
    channel_ = grpc::CreateChannel(server_.address(), grpc::InsecureChannelCredentials());
    query_ = v1::QueryService::NewStub(channel_);
    edit_ = v1::EditService::NewStub(channel_);
  }

  static v1::QueryRequest Ray(uint64_t id, float x, float y, float z, float dx, float dy, float dz,
                              float len = 200) {
    v1::QueryRequest q;
    q.set_client_id(id);
    auto* r = q.mutable_raycast();
    r->mutable_origin()->set_x(x);
    r->mutable_origin()->set_y(y);
    r->mutable_origin()->set_z(z);
    r->mutable_direction()->set_x(dx);
    r->mutable_direction()->set_y(dy);
    r->mutable_direction()->set_z(dz);
    r->set_max_distance(len);
    return q;
  }

  TempDir dir_;
  ServerProcess server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::QueryService::Stub> query_;
  std::unique_ptr<v1::EditService::Stub> edit_;
};

TEST_F(QueryStreamTest, MixedBatchFailsOnlyTheInvalidQueries) {
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = query_->Query(&context);
  v1::QueryBatchRequest batch;
  batch.set_batch_id(7);
  *batch.add_queries() = Ray(1, 3.5f, 47.5f, -7.5f, 0, -1, 0);
  *batch.add_queries() = Ray(2, 0, 0, 0, 0, 0, 0);      // zero direction
  *batch.add_queries() = Ray(3, NAN, 10, 0, 0, -1, 0);  // NaN origin
  *batch.add_queries() = Ray(4, 10.5f, 47.5f, 10.5f, 0, -1, 0);
  batch.add_queries()->set_client_id(5);               // no query kind
  *batch.add_queries() = Ray(6, 0, 500, 0, 0, -1, 0);  // outside the world
  ASSERT_TRUE(stream->Write(batch));
  v1::QueryBatchResponse response;
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.batch_id(), 7u);
  EXPECT_EQ(response.code(), 0);
  ASSERT_EQ(response.results_size(), 6);
  const char* fields[] = {nullptr, "direction", "origin", nullptr, "query", "origin"};
  for (int i = 0; i < 6; ++i) {
    const v1::QueryResult& r = response.results(i);
    EXPECT_EQ(r.client_id(), uint64_t(i + 1));
    if (fields[i] == nullptr) {
      EXPECT_EQ(r.code(), 0) << r.message();
      EXPECT_TRUE(r.has_raycast());
      EXPECT_TRUE(r.raycast().hit());
    } else {
      EXPECT_EQ(r.code(), int(grpc::StatusCode::INVALID_ARGUMENT)) << i;
      EXPECT_NE(r.message().find(fields[i]), std::string::npos) << r.message();
      EXPECT_FALSE(r.has_raycast());
    }
  }
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// The batch reports where its server time went: the parts are filled and fit in server_micros
// (a batch waiting for min_version: MinVersionNotReachedFailsAfterWaitingItsTimeout).
TEST_F(QueryStreamTest, BatchTimingSplitsTheServerTime) {
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = query_->Query(&context);
  v1::QueryBatchRequest batch;
  for (int i = 0; i < 64; ++i) *batch.add_queries() = Ray(i, -30.5f + i, 47.5f, 5.5f, 0, -1, 0);
  ASSERT_TRUE(stream->Write(batch));
  v1::QueryBatchResponse response;
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(response.code(), 0) << response.message();
  const v1::BatchTiming& t = response.timing();
  EXPECT_GT(t.run_micros(), 0u);
  EXPECT_LE(uint64_t(t.queue_micros()) + t.wait_micros() + t.run_micros(),
            response.server_micros());
  EXPECT_LT(t.wait_micros(), 50000u);  // nothing to wait for
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// A batch big enough to span several of the server's arena blocks (~300 bytes of answer per hit) is
// answered query for query exactly as the unary Raycast answers each ray alone.
TEST_F(QueryStreamTest, LargeBatchAnswersEqualTheUnaryAnswers) {
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = query_->Query(&context);
  v1::QueryBatchRequest batch;
  batch.set_batch_id(11);
  for (int i = 0; i < 1500; ++i) {
    *batch.add_queries() = Ray(i, -60.5f + float(i % 120), 47.5f, -40.5f + float(i / 120) * 6.0f,
                               0.1f * float(i % 7 - 3), -1, 0.05f * float(i % 5 - 2));
  }
  *batch.add_queries() = Ray(9999, 0, 0, 0, 0, 0, 0);  // a failure among them
  ASSERT_TRUE(stream->Write(batch));
  v1::QueryBatchResponse response;
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(response.code(), 0) << response.message();
  ASSERT_EQ(response.results_size(), batch.queries_size());
  int hits = 0;
  for (int i = 0; i < batch.queries_size(); ++i) {
    const v1::QueryResult& r = response.results(i);
    EXPECT_EQ(r.client_id(), batch.queries(i).client_id());
    grpc::ClientContext unary_context;
    v1::RaycastResponse unary;
    grpc::Status status = query_->Raycast(&unary_context, batch.queries(i).raycast(), &unary);
    EXPECT_EQ(r.code(), int(status.error_code())) << i;
    if (!status.ok()) continue;
    unary.clear_version();  // a batch reports its version once, not per query
    hits += unary.hit();
    EXPECT_EQ(r.raycast().SerializeAsString(), unary.SerializeAsString()) << i;
  }
  EXPECT_GT(hits, 1000);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// A message that is not a QueryBatchRequest ends the stream with INVALID_ARGUMENT saying which
// message it was, after the batches before it are answered; nothing after it is answered. (gRPC
// reports an unparsable message like the client's end of stream, so the stream used to end OK
// and the batches sent after it were silently dropped.) Raw bytes need the generic stub.
TEST_F(QueryStreamTest, UnparsableMessageEndsTheStreamWithInvalidArgument) {
  grpc::CompletionQueue cq;
  auto wait = [&cq](intptr_t want) {
    void* tag = nullptr;
    bool ok = false;
    EXPECT_TRUE(cq.Next(&tag, &ok));
    EXPECT_EQ(reinterpret_cast<intptr_t>(tag), want);
    return ok;
  };
  auto bytes = [](const std::string& raw) {
    grpc::Slice slice(raw);
    return grpc::ByteBuffer(&slice, 1);
  };
  auto batch = [&](uint64_t id) {
    v1::QueryBatchRequest request;
    request.set_batch_id(id);
    *request.add_queries() = Ray(1, 3.5f, 47.5f, -7.5f, 0, -1, 0);
    return bytes(request.SerializeAsString());
  };
  grpc::GenericStub stub(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto call = stub.PrepareCall(&context, "/voxcol.v1.QueryService/Query", &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(wait(1));
  grpc::ByteBuffer first = batch(1);
  call->Write(first, reinterpret_cast<void*>(2));
  ASSERT_TRUE(wait(2));
  grpc::ByteBuffer answer;
  call->Read(&answer, reinterpret_cast<void*>(3));
  ASSERT_TRUE(wait(3));
  v1::QueryBatchResponse response;
  ASSERT_TRUE(
      grpc::SerializationTraits<v1::QueryBatchResponse>::Deserialize(&answer, &response).ok());
  EXPECT_EQ(response.batch_id(), 1u);
  EXPECT_EQ(response.code(), 0);
  // Field 1 (batch_id) as length-delimited with a truncated length: not a QueryBatchRequest.
  grpc::ByteBuffer garbage = bytes(std::string("\x0a\xff", 2));
  call->Write(garbage, reinterpret_cast<void*>(4));
  wait(4);
  grpc::ByteBuffer third = batch(3);
  call->Write(third, reinterpret_cast<void*>(5));
  wait(5);  // may fail: the server may have ended the stream already
  call->WritesDone(reinterpret_cast<void*>(6));
  wait(6);
  call->Read(&answer, reinterpret_cast<void*>(7));
  EXPECT_FALSE(wait(7)) << "a batch after the unparsable message was answered";
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(8));
  ASSERT_TRUE(wait(8));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("message 2"), std::string::npos) << status.error_message();
  EXPECT_NE(status.error_message().find("QueryBatchRequest"), std::string::npos);
  EXPECT_TRUE(server_.Running());
}

TEST_F(QueryStreamTest, ExpiredDeadlinesAreHonoured) {
  // A call whose deadline has already passed fails without reaching the query path.
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() - std::chrono::seconds(1));
    std::unique_ptr<Stream> stream = query_->Query(&context);
    v1::QueryBatchRequest batch;
    *batch.add_queries() = Ray(1, 0, 40, 0, 0, -1, 0);
    stream->Write(batch);
    v1::QueryBatchResponse response;
    EXPECT_FALSE(stream->Read(&response));
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  // A batch deadline of 1 ms cannot cover 4,000 rays of 3,000 voxels each.
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = query_->Query(&context);
  v1::QueryBatchRequest batch;
  batch.set_timeout_ms(1);
  for (int i = 0; i < 4000; ++i)
    *batch.add_queries() = Ray(i, -63.5f + (i % 127), 47.5f, -63.5f, 0.01f, 0.001f, 1, 3000);
  ASSERT_TRUE(stream->Write(batch));
  v1::QueryBatchResponse response;
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.code(), int(grpc::StatusCode::DEADLINE_EXCEEDED)) << response.message();
  EXPECT_EQ(response.results_size(), 0);
  // The stream and the server go on.
  v1::QueryBatchRequest small;
  small.set_batch_id(2);
  *small.add_queries() = Ray(1, 3.5f, 47.5f, -7.5f, 0, -1, 0);
  ASSERT_TRUE(stream->Write(small));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.batch_id(), 2u);
  EXPECT_EQ(response.code(), 0);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(QueryStreamTest, MinVersionGivesReadYourWrites) {
  grpc::ClientContext query_context;
  std::unique_ptr<Stream> stream = query_->Query(&query_context);
  v1::QueryBatchRequest batch;
  *batch.add_queries() = Ray(1, 20.5f, 47.5f, 20.5f, 0, -1, 0);
  v1::QueryBatchResponse before;
  ASSERT_TRUE(stream->Write(batch) && stream->Read(&before));
  ASSERT_TRUE(before.results(0).raycast().hit());
  float ground = before.results(0).raycast().first().position().y();

  // Build a rock ball above the ground, then ask for at least that version.
  grpc::ClientContext edit_context;
  v1::FillBallRequest fill;
  fill.mutable_center()->set_x(20.5f);
  fill.mutable_center()->set_y(ground + 6);
  fill.mutable_center()->set_z(20.5f);
  fill.set_radius(3);
  fill.set_material(2);
  v1::EditAck ack;
  grpc::Status status = edit_->FillBall(&edit_context, fill, &ack);
  ASSERT_TRUE(status.ok()) << status.error_message();
  batch.set_min_version(ack.version());
  v1::QueryBatchResponse after;
  ASSERT_TRUE(stream->Write(batch) && stream->Read(&after));
  EXPECT_EQ(after.code(), 0);
  EXPECT_GE(after.version(), ack.version());
  EXPECT_NEAR(after.results(0).raycast().first().position().y(), ground + 9, 1.0f);

  // A version the world never reaches fails the batch quickly, not the stream.
  batch.set_min_version(ack.version() + 1000);
  batch.set_timeout_ms(200);
  v1::QueryBatchResponse future;
  ASSERT_TRUE(stream->Write(batch) && stream->Read(&future));
  EXPECT_EQ(future.code(), int(grpc::StatusCode::FAILED_PRECONDITION)) << future.message();
  EXPECT_NE(future.message().find("min_version"), std::string::npos);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// The batch arrives before the edit it asks for: the server must wait, and another client's edit
// made while it waits must release it with that edit visible. Fails if min_version is checked
// once without waiting (the batch fails) or ignored (it answers at once, without the edit).
TEST_F(QueryStreamTest, MinVersionAheadOfTheWorldWaitsForAnotherClientsEdit) {
  grpc::ClientContext query_context;
  std::unique_ptr<Stream> stream = query_->Query(&query_context);
  v1::QueryBatchRequest batch;
  *batch.add_queries() = Ray(1, -20.5f, 47.5f, -20.5f, 0, -1, 0);
  v1::QueryBatchResponse before;
  ASSERT_TRUE(stream->Write(batch) && stream->Read(&before));
  ASSERT_EQ(before.code(), 0) << before.message();
  ASSERT_TRUE(before.results(0).raycast().hit());
  const float ground = before.results(0).raycast().first().position().y();
  const uint64_t wanted = before.version() + 1;

  // Ask for the next version (--max_min_version_wait_ms is 1000 by default) before it exists.
  batch.set_batch_id(2);
  batch.set_min_version(wanted);
  batch.set_timeout_ms(5000);
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(stream->Write(batch));
  std::this_thread::sleep_for(std::chrono::milliseconds(250));

  // Another client (its own channel) builds a rock ball above the ground while the batch waits.
  auto other = grpc::CreateCustomChannel(server_.address(), grpc::InsecureChannelCredentials(), [] {
    grpc::ChannelArguments args;
    args.SetInt("other_client", 1);  // no shared connection
    return args;
  }());
  auto editor = v1::EditService::NewStub(other);
  grpc::ClientContext edit_context;
  v1::FillBallRequest fill;
  fill.mutable_center()->set_x(-20.5f);
  fill.mutable_center()->set_y(ground + 6);
  fill.mutable_center()->set_z(-20.5f);
  fill.set_radius(3);
  fill.set_material(2);
  v1::EditAck ack;
  grpc::Status status = editor->FillBall(&edit_context, fill, &ack);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(ack.version(), wanted);

  v1::QueryBatchResponse after;
  ASSERT_TRUE(stream->Read(&after));
  const double waited_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent).count();
  EXPECT_EQ(after.batch_id(), 2u);
  EXPECT_EQ(after.code(), 0) << after.message();
  EXPECT_GE(after.version(), wanted);
  ASSERT_EQ(after.results_size(), 1);
  EXPECT_NEAR(after.results(0).raycast().first().position().y(), ground + 9, 1.0f);
  EXPECT_GE(waited_ms, 200);  // answered only after the edit
  std::printf("batch for version %llu answered after %.0f ms at version %llu\n",
              (unsigned long long)wanted, waited_ms, (unsigned long long)after.version());
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// The timeout path: a version nobody produces fails the batch with FAILED_PRECONDITION after the
// batch's own wait (300 ms here, below the server's 1 s cap), not at once and not never.
TEST_F(QueryStreamTest, MinVersionNotReachedFailsAfterWaitingItsTimeout) {
  grpc::ClientContext query_context;
  std::unique_ptr<Stream> stream = query_->Query(&query_context);
  v1::QueryBatchRequest batch;
  *batch.add_queries() = Ray(1, -20.5f, 47.5f, -20.5f, 0, -1, 0);
  v1::QueryBatchResponse now;
  ASSERT_TRUE(stream->Write(batch) && stream->Read(&now));
  batch.set_min_version(now.version() + 1);
  batch.set_timeout_ms(300);
  const auto sent = std::chrono::steady_clock::now();
  v1::QueryBatchResponse late;
  ASSERT_TRUE(stream->Write(batch) && stream->Read(&late));
  const double waited_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent).count();
  EXPECT_EQ(late.code(), int(grpc::StatusCode::FAILED_PRECONDITION)) << late.message();
  EXPECT_NE(late.message().find("min_version"), std::string::npos) << late.message();
  EXPECT_EQ(late.results_size(), 0);
  EXPECT_GE(waited_ms, 250);
  EXPECT_LT(waited_ms, 2000);
  // Its timing shows the wait as wait, not run.
  EXPECT_GE(late.timing().wait_micros(), 250000u);
  EXPECT_EQ(late.timing().run_micros(), 0u);
  EXPECT_LE(uint64_t(late.timing().queue_micros()) + late.timing().wait_micros(),
            late.server_micros());
  std::printf("unreachable min_version failed after %.0f ms (batch timeout 300 ms)\n", waited_ms);
  // The stream goes on.
  batch.clear_min_version();
  ASSERT_TRUE(stream->Write(batch) && stream->Read(&now));
  EXPECT_EQ(now.code(), 0);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(QueryStreamTest, CancellingAStreamStopsItsWork) {
  auto context = std::make_unique<grpc::ClientContext>();
  std::unique_ptr<Stream> stream = query_->Query(context.get());
  // Four heavy batches (as many as may run at once on one stream), then cancel. Each query is a
  // large sphere's contacts in the caves (milliseconds each), so a batch runs for seconds and the
  // cancel always lands mid-batch, however fast rays get.
  for (int b = 0; b < 4; ++b) {
    v1::QueryBatchRequest batch;
    batch.set_batch_id(b);
    for (int i = 0; i < 2000; ++i) {
      v1::QueryRequest* q = batch.add_queries();
      q->set_client_id(uint64_t(i));
      v1::PosedShape* shape = q->mutable_contacts()->mutable_shape();
      shape->mutable_shape()->mutable_sphere()->set_radius(12);
      v1::Vec3* p = shape->mutable_position();
      p->set_x(-50.5f + float((i * 7) % 100));
      p->set_y(-20.5f + float(i % 40));
      p->set_z(-50.5f + float((i * 13) % 100));
    }
    ASSERT_TRUE(stream->Write(batch));
  }
  // Cancel as soon as the server has taken the batches in (a fixed sleep raced with faster
  // servers: the batches could finish before it ended).
  for (int i = 0; i < 500; ++i) {
    if (testing::MetricValue(testing::HttpGet(server_.metrics_port(), "/metrics"),
                             "voxcol_batches_total") >= 4) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  context->TryCancel();
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // The server stops the cancelled batches part-way (counted) and keeps serving others promptly.
  double cancelled = 0;
  for (int i = 0; i < 100 && cancelled < 1; ++i) {
    cancelled = testing::MetricValue(testing::HttpGet(server_.metrics_port(), "/metrics"),
                                     "voxcol_batches_cancelled_total");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GE(cancelled, 1) << "no batch noticed the cancellation";
  grpc::ClientContext fresh;
  fresh.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  std::unique_ptr<Stream> other = query_->Query(&fresh);
  v1::QueryBatchRequest small;
  *small.add_queries() = Ray(1, 3.5f, 47.5f, -7.5f, 0, -1, 0);
  v1::QueryBatchResponse response;
  ASSERT_TRUE(other->Write(small) && other->Read(&response));
  EXPECT_EQ(response.code(), 0);
  other->WritesDone();
  EXPECT_TRUE(other->Finish().ok());
}

TEST_F(QueryStreamTest, OverloadIsShedWithResourceExhausted) {
  constexpr int kHeavyQueries = 60;
  // 2 threads and 8 queued batches: 12 streams x 4 heavy batches cannot all be admitted.
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<Stream>> streams;
  for (int s = 0; s < 12; ++s) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    streams.push_back(query_->Query(contexts.back().get()));
    for (int b = 0; b < 4; ++b) {
      // Heavy whatever the raycast speed: sphere contacts of radius 12 (milliseconds each).
      v1::QueryBatchRequest batch;
      batch.set_batch_id(b);
      for (int i = 0; i < kHeavyQueries; ++i) {
        v1::QueryRequest* q = batch.add_queries();
        q->set_client_id(i);
        v1::PosedShape* shape = q->mutable_contacts()->mutable_shape();
        shape->mutable_shape()->mutable_sphere()->set_radius(12);
        shape->mutable_position()->set_x(-50.0f + float((i * 7 + s * 13) % 100));
        shape->mutable_position()->set_y(-20.0f + float(i % 40));
        shape->mutable_position()->set_z(-50.0f + float((i * 11 + b * 17) % 100));
      }
      ASSERT_TRUE(streams.back()->Write(batch));
    }
    streams.back()->WritesDone();
  }
  int ok = 0, shed = 0, other = 0;
  for (auto& stream : streams) {
    v1::QueryBatchResponse response;
    while (stream->Read(&response)) {
      if (response.code() == 0) {
        ++ok;
        EXPECT_EQ(response.results_size(), kHeavyQueries);
      } else if (response.code() == int(grpc::StatusCode::RESOURCE_EXHAUSTED)) {
        ++shed;
        EXPECT_EQ(response.results_size(), 0);
      } else {
        ++other;
      }
    }
    EXPECT_TRUE(stream->Finish().ok());
  }
  std::printf("overload: %d batches answered, %d shed\n", ok, shed);
  EXPECT_EQ(ok + shed, 48);
  EXPECT_EQ(other, 0);
  EXPECT_GT(shed, 0);
  EXPECT_GT(ok, 0);
}

TEST_F(QueryStreamTest, RequestIdsAreEchoedAndFailuresLogged) {
  grpc::ClientContext context;
  context.AddMetadata("x-request-id", "req-7f3a");
  v1::RaycastRequest bad;  // no direction, no max_distance
  v1::RaycastResponse response;
  grpc::Status status = query_->Raycast(&context, bad, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  auto echoed = context.GetServerInitialMetadata().find("x-request-id");
  ASSERT_NE(echoed, context.GetServerInitialMetadata().end());
  EXPECT_EQ(std::string(echoed->second.data(), echoed->second.size()), "req-7f3a");
  // Without a client id the server makes one and still echoes it.
  grpc::ClientContext anonymous;
  (void)query_->Raycast(&anonymous, bad, &response);
  EXPECT_NE(anonymous.GetServerInitialMetadata().find("x-request-id"),
            anonymous.GetServerInitialMetadata().end());
  std::string log;
  for (int i = 0; i < 50 && log.find("request_id=req-7f3a") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    log = server_.Log();
  }
  EXPECT_NE(log.find("event=rpc method=/voxcol.v1.QueryService/Raycast request_id=req-7f3a"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("code=INVALID_ARGUMENT"), std::string::npos) << log;
}

TEST(QueryStreamLimits, StreamsBeyondThePerClientLimitAreRefused) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(
      VOXCOL_SERVER_PATH,
      {"--data_dir=" + dir.path() + "/data", "--world_size=64,64,64", "--max_streams_per_client=2"},
      dir.path()))
      << server.Log();
  auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  auto stub = v1::QueryService::NewStub(channel);
  auto open = [&](grpc::ClientContext* context, v1::QueryBatchResponse* response) {
    std::unique_ptr<Stream> stream = stub->Query(context);
    v1::QueryBatchRequest batch;
    batch.add_queries()->set_client_id(1);  // an empty query kind: answered INVALID_ARGUMENT
    bool ok = stream->Write(batch) && stream->Read(response);
    return std::make_pair(std::move(stream), ok);
  };
  grpc::ClientContext c1, c2, c3;
  v1::QueryBatchResponse r;
  auto [s1, ok1] = open(&c1, &r);
  auto [s2, ok2] = open(&c2, &r);
  EXPECT_TRUE(ok1 && ok2);
  auto [s3, ok3] = open(&c3, &r);
  EXPECT_FALSE(ok3);
  EXPECT_EQ(s3->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // Closing one stream frees its slot; the server releases it when the call is done, which may be
  // a moment after the client saw Finish, so allow up to a second.
  s1->WritesDone();
  EXPECT_TRUE(s1->Finish().ok());
  std::unique_ptr<Stream> s4;
  std::unique_ptr<grpc::ClientContext> c4;
  bool ok4 = false;
  for (int attempt = 0; attempt < 50 && !ok4; ++attempt) {
    if (s4) (void)s4->Finish();
    c4 = std::make_unique<grpc::ClientContext>();
    std::tie(s4, ok4) = open(c4.get(), &r);
    if (!ok4) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(ok4);
  for (auto* s : {s2.get(), s4.get()}) {
    s->WritesDone();
    EXPECT_TRUE(s->Finish().ok());
  }
}

// SIGTERM with Query streams open: one idle, one with heavy batches still running and unread. The
// streams end within the grace period (the running batches are cancelled), the server exits 0, and
// every stream ends with an error status instead of hanging.
TEST(QueryStreamShutdown, OpenStreamsEndAndTheServerExits) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH,
                           {"--data_dir=" + dir.path() + "/data", "--world_size=128,96,128",
                            "--query_threads=2", "--shutdown_grace_seconds=1"},
                           dir.path()))
      << server.Log();
  auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  auto stub = v1::QueryService::NewStub(channel);
  grpc::ClientContext idle_context, busy_context;
  std::unique_ptr<Stream> idle = stub->Query(&idle_context);
  std::unique_ptr<Stream> busy = stub->Query(&busy_context);
  // The idle stream answers one batch first, so it is surely open on the server.
  v1::QueryBatchRequest empty;
  empty.add_queries()->set_client_id(1);  // no query kind: INVALID_ARGUMENT for that query
  v1::QueryBatchResponse response;
  ASSERT_TRUE(idle->Write(empty) && idle->Read(&response));
  for (int b = 0; b < 6; ++b) {
    v1::QueryBatchRequest batch;
    for (int i = 0; i < 40; ++i) {
      v1::PosedShape* shape = batch.add_queries()->mutable_contacts()->mutable_shape();
      shape->mutable_shape()->mutable_sphere()->set_radius(12);
      shape->mutable_position()->set_x(-50.0f + float((i * 7 + b * 13) % 100));
      shape->mutable_position()->set_z(-50.0f + float((i * 11) % 100));
    }
    ASSERT_TRUE(busy->Write(batch));
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(server.Stop(SIGTERM, std::chrono::seconds(30)), 0) << server.Log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << server.Log();
  while (idle->Read(&response)) {
  }
  EXPECT_FALSE(idle->Finish().ok());
  while (busy->Read(&response)) {
  }
  EXPECT_FALSE(busy->Finish().ok());
}

}  // namespace
}  // namespace voxcol
