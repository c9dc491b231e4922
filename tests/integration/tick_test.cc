// The tick (QueryBatchRequest.edits): a batch's edits are applied first and its queries answer on
// exactly the version they produced, also while other clients edit; a batch whose edits fail
// answers no query.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "tests/integration/proto_values.h"
#include "tests/integration/query_batch_client.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::SetVec;

constexpr float kY = -20.0f;  // the tunnel's height: underground in the default cave world

// A box of `material` (0 = air) centred at (cx, kY, 0): x from x0 to x1, 6 voxels high and deep.
v1::EditPrimitive Box(float x0, float x1, uint32_t material) {
  v1::EditPrimitive p;
  v1::FillBlock* block = p.mutable_fill_block();
  SetVec(block->mutable_center(), (x0 + x1) / 2, kY, 0);
  SetVec(block->mutable_size(), x1 - x0, 6, 6);
  block->set_material(material);
  block->set_mode(v1::EDIT_MODE_SET);
  return p;
}

// A ray along +x through the tunnel's axis, from x = 0, 25 long.
v1::QueryRequest RayAlongTunnel(uint64_t id) {
  v1::QueryRequest q;
  q.set_client_id(id);
  v1::RaycastRequest* ray = q.mutable_raycast();
  SetVec(ray->mutable_origin(), 0.0f, kY, 0.0f);
  SetVec(ray->mutable_direction(), 1, 0, 0);
  ray->set_max_distance(25);
  return q;
}

class TickTest : public ::testing::Test {
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

  v1::QueryBatchResponse Run(const v1::QueryBatchRequest& batch) {
    return testing::RunOneBatch(*query_, batch);
  }

  testing::TempDir dir_;
  testing::ServerProcess server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::QueryService::Stub> query_;
};

TEST_F(TickTest, QueriesSeeTheBatchsOwnEditsAtExactlyTheirVersion) {
  // Another client edits elsewhere all the time, so "the newest version" moves under the ticks.
  std::atomic<bool> stop{false};
  std::thread other([&] {
    auto edit = v1::EditService::NewStub(channel_);
    for (int i = 0; !stop.load(); ++i) {
      v1::FillBallRequest ball;
      SetVec(ball.mutable_center(), -40.0f, 10.0f + float(i % 3), 40.0f);
      ball.set_radius(3);
      ball.set_material(i % 2 == 0 ? 2 : 0);
      grpc::ClientContext context;
      v1::EditAck ack;
      ASSERT_TRUE(edit->FillBall(&context, ball, &ack).ok());
    }
  });
  for (int round = 0; round < 5; ++round) {
    // Tick 1: dig a tunnel along the ray and build a wall across it at x = 10..12.
    v1::QueryBatchRequest build;
    build.set_batch_id(1);
    *build.mutable_edits()->add_primitives() = Box(-4, 30, 0);
    *build.mutable_edits()->add_primitives() = Box(10, 12, 2);
    *build.add_queries() = RayAlongTunnel(7);
    v1::QueryBatchResponse built = Run(build);
    ASSERT_EQ(built.code(), 0) << built.message();
    EXPECT_EQ(built.version(), built.edit_ack().version());  // exactly the tick's version
    ASSERT_EQ(built.results_size(), 1);
    const v1::RaycastResponse& hit = built.results(0).raycast();
    ASSERT_TRUE(hit.has_first()) << "the ray must stop at the new wall";
    EXPECT_NEAR(hit.first().distance(), 10.0f, 0.75f);
    EXPECT_LT(hit.first().normal().x(), -0.9f);  // the wall's face, toward the ray

    // Tick 2: dig the wall out again; the same ray now runs the tunnel without a hit.
    v1::QueryBatchRequest dig;
    dig.set_batch_id(2);
    *dig.mutable_edits()->add_primitives() = Box(8, 14, 0);
    *dig.add_queries() = RayAlongTunnel(8);
    v1::QueryBatchResponse dug = Run(dig);
    ASSERT_EQ(dug.code(), 0) << dug.message();
    EXPECT_EQ(dug.version(), dug.edit_ack().version());
    EXPECT_GT(dug.version(), built.version());
    ASSERT_EQ(dug.results_size(), 1);
    EXPECT_FALSE(dug.results(0).raycast().has_first())
        << "hit at " << dug.results(0).raycast().first().distance();
  }
  stop = true;
  other.join();
}

TEST_F(TickTest, ABatchWhoseEditsFailAnswersNoQuery) {
  // A bad primitive: INVALID_ARGUMENT naming the field under "edits.", no results, no new version.
  v1::QueryBatchRequest bad;
  bad.set_batch_id(3);
  *bad.mutable_edits()->add_primitives() = Box(-4, 30, 0);
  v1::EditPrimitive* broken = bad.mutable_edits()->add_primitives();
  SetVec(broken->mutable_fill_ball()->mutable_center(), 0, kY, 0);
  broken->mutable_fill_ball()->set_radius(-1);
  *bad.add_queries() = RayAlongTunnel(9);
  v1::QueryBatchResponse refused = Run(bad);
  EXPECT_EQ(refused.code(), int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(refused.message().find("edits.primitives[1]"), std::string::npos) << refused.message();
  EXPECT_EQ(refused.results_size(), 0);
  EXPECT_FALSE(refused.has_edit_ack());

  // A violated expected_version: FAILED_PRECONDITION, no results.
  v1::QueryBatchRequest stale;
  stale.set_batch_id(4);
  *stale.mutable_edits()->add_primitives() = Box(-4, 30, 0);
  stale.mutable_edits()->set_expected_version(12345);
  *stale.add_queries() = RayAlongTunnel(10);
  v1::QueryBatchResponse precondition = Run(stale);
  EXPECT_EQ(precondition.code(), int(grpc::StatusCode::FAILED_PRECONDITION));
  EXPECT_EQ(precondition.results_size(), 0);

  // Nothing was applied: the world is still at version 0.
  v1::QueryBatchRequest probe;
  probe.set_batch_id(5);
  *probe.add_queries() = RayAlongTunnel(11);
  EXPECT_EQ(Run(probe).version(), 0u);
}

TEST_F(TickTest, ARetriedTickIsAppliedOnce) {
  v1::QueryBatchRequest tick;
  tick.set_batch_id(6);
  *tick.mutable_edits()->add_primitives() = Box(-4, 30, 0);
  tick.mutable_edits()->set_idempotency_key("tick-42");
  *tick.add_queries() = RayAlongTunnel(12);
  v1::QueryBatchResponse first = Run(tick);
  ASSERT_EQ(first.code(), 0) << first.message();
  EXPECT_FALSE(first.edit_ack().replayed());
  v1::QueryBatchResponse again = Run(tick);
  ASSERT_EQ(again.code(), 0) << again.message();
  EXPECT_TRUE(again.edit_ack().replayed());
  EXPECT_EQ(again.edit_ack().version(), first.edit_ack().version());
  EXPECT_EQ(again.version(), first.version());  // nothing new was applied
}

}  // namespace
}  // namespace voxcol
