// Writers never wait for readers (issue 16): while one long Query batch runs on its snapshot,
// edits sent meanwhile are acknowledged before the batch answers, and the batch's answer is the
// world at the version it reports: a second server replaying only the edits up to that version
// answers the same batch identically, while the final world answers it differently.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/query_batch_client.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using Clock = std::chrono::steady_clock;

struct Server {
  testing::TempDir dir;
  testing::ServerProcess process;
  std::unique_ptr<v1::QueryService::Stub> query;
  std::unique_ptr<v1::EditService::Stub> edit;

  void Start() {
    ASSERT_TRUE(process.Start(VOXCOL_SERVER_PATH,
                              {"--data_dir=" + dir.path() + "/data", "--world_size=192,96,192",
                               "--seed=5", "--query_threads=2"},
                              dir.path()))
        << process.Log();
    // The long batch's contact manifolds make a response of several MiB.
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    auto channel =
        grpc::CreateCustomChannel(process.address(), grpc::InsecureChannelCredentials(), args);
    query = v1::QueryService::NewStub(channel);
    edit = v1::EditService::NewStub(channel);
  }

  // Applies one dig and returns the version it produced (0 on failure).
  uint64_t Dig(const v1::FillBallRequest& ball) {
    grpc::ClientContext context;
    v1::EditAck ack;
    grpc::Status status = edit->FillBall(&context, ball, &ack);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return status.ok() ? ack.version() : 0;
  }

  v1::QueryBatchResponse RunBatch(const v1::QueryBatchRequest& batch) {
    return testing::RunOneBatch(*query, batch);
  }
};

// Digs of radius 3 along the batch's rays, so each one changes what some query sees.
std::vector<v1::FillBallRequest> Digs(int n) {
  std::vector<v1::FillBallRequest> digs;
  for (int i = 0; i < n; ++i) {
    v1::FillBallRequest ball;
    ball.mutable_center()->set_x(-60.0f + 3.0f * float(i % 40));
    ball.mutable_center()->set_y(-8.0f + float(i % 5));
    ball.mutable_center()->set_z(float(i % 7) * 3.0f - 9.0f);
    ball.set_radius(3.0f);
    ball.set_material(0);
    digs.push_back(ball);
  }
  return digs;
}

// A deliberately long batch: many cold, large-sphere contact queries spread over the world, and
// rays through the dug region.
v1::QueryBatchRequest LongBatch() {
  v1::QueryBatchRequest batch;
  batch.set_batch_id(1);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> x(-90, 90), y(-40, 40), off(-12, 12);
  for (int i = 0; i < 300; ++i) {
    v1::QueryRequest* q = batch.add_queries();
    q->set_client_id(i);
    v1::PosedShape* shape = q->mutable_contacts()->mutable_shape();
    shape->mutable_shape()->mutable_sphere()->set_radius(20.0f);
    shape->mutable_position()->set_x(x(rng));
    shape->mutable_position()->set_y(y(rng));
    shape->mutable_position()->set_z(x(rng));
  }
  for (int i = 0; i < 400; ++i) {
    v1::QueryRequest* q = batch.add_queries();
    q->set_client_id(10000 + i);
    v1::RaycastRequest* ray = q->mutable_raycast();
    ray->mutable_origin()->set_x(-80.0f);
    ray->mutable_origin()->set_y(-6.0f + off(rng) * 0.5f);
    ray->mutable_origin()->set_z(off(rng));
    ray->mutable_direction()->set_x(1.0f);
    ray->mutable_direction()->set_y(off(rng) * 0.01f);
    ray->mutable_direction()->set_z(off(rng) * 0.01f);
    ray->set_max_distance(150.0f);
  }
  return batch;
}

bool SameResults(const v1::QueryBatchResponse& a, const v1::QueryBatchResponse& b) {
  if (a.results_size() != b.results_size()) return false;
  for (int i = 0; i < a.results_size(); ++i) {
    if (a.results(i).SerializeAsString() != b.results(i).SerializeAsString()) return false;
  }
  return true;
}

TEST(SnapshotIsolationTest, EditsAreAckedWhileALongBatchRunsAndItAnswersItsVersion) {
  Server live;
  live.Start();
  const std::vector<v1::FillBallRequest> digs = Digs(400);
  constexpr int kBefore = 2;  // applied before the batch: its version is kBefore
  for (int i = 0; i < kBefore; ++i) ASSERT_EQ(live.Dig(digs[i]), uint64_t(i + 1));

  const v1::QueryBatchRequest batch = LongBatch();
  std::atomic<bool> answered{false};
  Clock::time_point answer_time;
  v1::QueryBatchResponse snapshot_answer;
  std::thread reader([&] {
    snapshot_answer = live.RunBatch(batch);
    answer_time = Clock::now();
    answered = true;
  });
  // Give the batch a head start so that it holds its snapshot, then edit until it answers.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  struct Ack {
    uint64_t version;
    Clock::time_point at;
    double latency_ms;
  };
  std::vector<Ack> acks;
  for (size_t i = kBefore; i < digs.size() && !answered.load(); ++i) {
    const Clock::time_point sent = Clock::now();
    const uint64_t version = live.Dig(digs[i]);
    const Clock::time_point at = Clock::now();
    acks.push_back({version, at, std::chrono::duration<double, std::milli>(at - sent).count()});
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a steady stream, not a burst
  }
  reader.join();
  ASSERT_EQ(snapshot_answer.results_size(), batch.queries_size());
  for (const v1::QueryResult& r : snapshot_answer.results()) ASSERT_EQ(r.code(), 0) << r.message();

  size_t acked_before_answer = 0;
  std::vector<double> latencies;
  for (const Ack& a : acks) {
    if (a.at < answer_time) ++acked_before_answer;
    latencies.push_back(a.latency_ms);
  }
  std::sort(latencies.begin(), latencies.end());
  ASSERT_FALSE(latencies.empty());
  const double p99 = latencies[std::min(latencies.size() - 1, latencies.size() * 99 / 100)];
  std::printf(
      "batch ran %u ms at version %llu; %zu edits acked before its answer; ack latency "
      "p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
      snapshot_answer.timing().run_micros() / 1000, (unsigned long long)snapshot_answer.version(),
      acked_before_answer, latencies[latencies.size() / 2], p99, latencies.back());
  // Edits did not wait for the batch: several were acknowledged while it ran.
  EXPECT_GE(acked_before_answer, 3u);
  EXPECT_EQ(snapshot_answer.version(), uint64_t(kBefore));
  ASSERT_FALSE(acks.empty());
  EXPECT_GT(acks.back().version, snapshot_answer.version());

  // The final world answers differently: the edits made during the batch matter to it.
  const v1::QueryBatchResponse final_answer = live.RunBatch(batch);
  EXPECT_EQ(final_answer.version(), acks.back().version);
  EXPECT_FALSE(SameResults(snapshot_answer, final_answer));

  // A replay of the edits up to the reported version answers exactly as the batch did.
  Server replay;
  replay.Start();
  for (uint64_t v = 1; v <= snapshot_answer.version(); ++v) ASSERT_EQ(replay.Dig(digs[v - 1]), v);
  const v1::QueryBatchResponse replayed = replay.RunBatch(batch);
  EXPECT_EQ(replayed.version(), snapshot_answer.version());
  EXPECT_TRUE(SameResults(snapshot_answer, replayed));
}

}  // namespace
}  // namespace voxcol
