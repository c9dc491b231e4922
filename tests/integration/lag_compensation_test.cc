// Lag compensation end to end (issue 19) against the real server: ValidateHit judges shots at the
// version the client saw (a wall built since is ignored, a tunnel dug since still blocks), queries
// and batches read past versions through read_at, and versions outside the window are OUT_OF_RANGE
// naming the oldest readable one.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/integration/proto_values.h"
#include "tests/integration/query_batch_client.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::ProtoVec;

struct Server {
  testing::TempDir dir;
  testing::ServerProcess process;
  std::unique_ptr<v1::QueryService::Stub> query;
  std::unique_ptr<v1::EditService::Stub> edit;

  void Start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--data_dir=" + dir.path() + "/data",
                                     "--world_size=128,96,128", "--seed=3", "--query_threads=2"};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(process.Start(VOXCOL_SERVER_PATH, args, dir.path())) << process.Log();
    auto channel = grpc::CreateChannel(process.address(), grpc::InsecureChannelCredentials());
    query = v1::QueryService::NewStub(channel);
    edit = v1::EditService::NewStub(channel);
  }
  // A ball of `material` (2: rock) or, with material 0, a carve. Returns the new version.
  uint64_t Ball(const v1::Vec3& center, float radius, uint32_t material) {
    v1::FillBallRequest ball;
    *ball.mutable_center() = center;
    ball.set_radius(radius);
    ball.set_material(material);
    ball.set_mode(material == 0 ? v1::EDIT_MODE_SUBTRACT : v1::EDIT_MODE_ADD);
    grpc::ClientContext context;
    v1::EditAck ack;
    grpc::Status status = edit->FillBall(&context, ball, &ack);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return ack.version();
  }
  grpc::Status Validate(const v1::ValidateHitRequest& request, v1::ValidateHitResponse* out) {
    grpc::ClientContext context;
    return query->ValidateHit(&context, request, out);
  }
  v1::RaycastResponse Ray(const v1::Vec3& origin, const v1::Vec3& dir, float distance,
                          const uint64_t* at_version, grpc::Status* status) {
    v1::RaycastRequest request;
    *request.mutable_origin() = origin;
    *request.mutable_direction() = dir;
    request.set_max_distance(distance);
    if (at_version) request.mutable_read_at()->set_at_version(*at_version);
    return Ray(request, status);
  }
  v1::RaycastResponse Ray(const v1::RaycastRequest& request, grpc::Status* status) {
    grpc::ClientContext context;
    v1::RaycastResponse response;
    *status = query->Raycast(&context, request, &response);
    return response;
  }
};

// A shot along +x from `from` toward a target `length` away.
v1::ValidateHitRequest Shot(const v1::Vec3& from, float length, uint64_t version) {
  v1::ValidateHitRequest shot;
  *shot.mutable_origin() = from;
  *shot.mutable_direction() = ProtoVec(1, 0, 0);
  *shot.mutable_target_point() = ProtoVec(from.x() + length, from.y(), from.z());
  shot.mutable_read_at()->set_at_version(version);
  shot.set_tolerance(0.25f);
  return shot;
}

TEST(LagCompensation, ShotThroughASinceBuiltWallIsConfirmedAtItsVersionAndBlockedNow) {
  Server s;
  ASSERT_NO_FATAL_FAILURE(s.Start());
  // High in the sky: nothing between the shooter and the target yet.
  const v1::Vec3 from = ProtoVec(-30, 40, 0);
  grpc::Status status;
  v1::RaycastResponse clear = s.Ray(from, ProtoVec(1, 0, 0), 60, nullptr, &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_FALSE(clear.hit()) << "the test needs open sky at y=40";
  const uint64_t fired_at = clear.version();
  const uint64_t built = s.Ball(ProtoVec(0, 40, 0), 4, 2);  // the wall, built after the shot
  ASSERT_GT(built, fired_at);

  v1::ValidateHitResponse then, now;
  ASSERT_TRUE(s.Validate(Shot(from, 60, fired_at), &then).ok());
  EXPECT_EQ(then.verdict(), v1::HIT_VERDICT_CONFIRMED);
  EXPECT_FALSE(then.server_hit());
  EXPECT_EQ(then.version(), fired_at);
  ASSERT_TRUE(s.Validate(Shot(from, 60, built), &now).ok());
  EXPECT_EQ(now.verdict(), v1::HIT_VERDICT_BLOCKED_BY_TERRAIN);
  ASSERT_TRUE(now.server_hit());
  // The wall's near face is at x = -4 (the ball's surface), 26 units from the shooter.
  EXPECT_NEAR(now.hit().distance(), 26.0f, 0.75f);
  EXPECT_NEAR(now.discrepancy(), 60.0f - now.hit().distance(), 1e-3f);

  // A claimed terrain hit on the wall: right now, but nothing was there when the client fired.
  v1::ValidateHitRequest claim = Shot(from, 0, built);
  *claim.mutable_claimed_hit() = ProtoVec(-4, 40, 0);
  claim.set_tolerance(0.75f);
  ASSERT_TRUE(s.Validate(claim, &now).ok());
  EXPECT_EQ(now.verdict(), v1::HIT_VERDICT_CONFIRMED) << now.DebugString();
  EXPECT_LE(now.discrepancy(), 0.75f);
  claim.mutable_read_at()->set_at_version(fired_at);
  ASSERT_TRUE(s.Validate(claim, &then).ok());
  EXPECT_EQ(then.verdict(), v1::HIT_VERDICT_NO_TERRAIN_AT_CLAIM);

  // The unary raycast at the old version agrees with the verdicts.
  v1::RaycastResponse past = s.Ray(from, ProtoVec(1, 0, 0), 60, &fired_at, &status);
  ASSERT_TRUE(status.ok());
  EXPECT_FALSE(past.hit());
  EXPECT_EQ(past.version(), fired_at);
}

TEST(LagCompensation, ShotThroughASinceDugTunnelIsBlockedAtItsVersionAndConfirmedNow) {
  Server s;
  ASSERT_NO_FATAL_FAILURE(s.Start());
  // A solid block in the sky, then a tunnel through it along the shot.
  const v1::Vec3 from = ProtoVec(-30, 36, 8);
  s.Ball(ProtoVec(0, 36, 8), 8, 2);
  grpc::Status status;
  v1::RaycastResponse solid = s.Ray(from, ProtoVec(1, 0, 0), 60, nullptr, &status);
  ASSERT_TRUE(status.ok());
  ASSERT_TRUE(solid.hit());
  const uint64_t fired_at = solid.version();
  uint64_t dug = 0;
  for (float x = -10; x <= 10; x += 2) dug = s.Ball(ProtoVec(x, 36, 8), 2.5f, 0);
  ASSERT_GT(dug, fired_at);

  v1::ValidateHitResponse then, now;
  ASSERT_TRUE(s.Validate(Shot(from, 60, fired_at), &then).ok());
  EXPECT_EQ(then.verdict(), v1::HIT_VERDICT_BLOCKED_BY_TERRAIN);
  ASSERT_TRUE(then.server_hit());
  EXPECT_NEAR(then.hit().distance(), 22.0f, 0.75f);  // the block's face at x = -8
  EXPECT_EQ(then.version(), fired_at);
  ASSERT_TRUE(s.Validate(Shot(from, 60, dug), &now).ok());
  EXPECT_EQ(now.verdict(), v1::HIT_VERDICT_CONFIRMED) << now.DebugString();
  EXPECT_FALSE(now.server_hit());

  // A whole batch at the old version sees the block; the same batch now does not.
  v1::QueryBatchRequest batch;
  auto* ray = batch.add_queries()->mutable_raycast();
  *ray->mutable_origin() = from;
  *ray->mutable_direction() = ProtoVec(1, 0, 0);
  ray->set_max_distance(60);
  batch.mutable_read_at()->set_at_version(fired_at);
  v1::QueryBatchResponse old_batch = testing::RunOneBatch(*s.query, batch);
  ASSERT_EQ(old_batch.code(), 0) << old_batch.message();
  EXPECT_EQ(old_batch.version(), fired_at);
  ASSERT_EQ(old_batch.results_size(), 1);
  EXPECT_TRUE(old_batch.results(0).raycast().hit());
  batch.clear_read_at();
  v1::QueryBatchResponse new_batch = testing::RunOneBatch(*s.query, batch);
  EXPECT_EQ(new_batch.version(), dug);
  EXPECT_FALSE(new_batch.results(0).raycast().hit());
  // A query's own read_at inside a current batch reads its version alone.
  ray->mutable_read_at()->set_at_version(fired_at);
  batch.add_queries()->mutable_raycast()->CopyFrom(*ray);
  batch.mutable_queries(1)->mutable_raycast()->clear_read_at();
  v1::QueryBatchResponse mixed = testing::RunOneBatch(*s.query, batch);
  ASSERT_EQ(mixed.results_size(), 2);
  EXPECT_TRUE(mixed.results(0).raycast().hit());
  EXPECT_EQ(mixed.results(0).raycast().version(), fired_at);
  EXPECT_FALSE(mixed.results(1).raycast().hit());
}

// read_at by server time: the test shares the server's clock (same host), so a time taken between
// two edits names the version the first produced. A wall built after time `before` is absent in a
// raycast, a batch and a ValidateHit read at `before` and present at `after`; a time in the
// future is OUT_OF_RANGE naming the field.
TEST(LagCompensation, ReadAtServerTimeReadsTheVersionCurrentAtThatTime) {
  Server s;
  ASSERT_NO_FATAL_FAILURE(s.Start());
  const v1::Vec3 from = ProtoVec(-30, 44, -12);
  grpc::Status status;
  const uint64_t first = s.Ball(ProtoVec(20, 44, 30), 2, 2);  // an edit elsewhere: version 1
  absl::SleepFor(absl::Milliseconds(30));
  const int64_t before = absl::ToUnixMicros(absl::Now());
  absl::SleepFor(absl::Milliseconds(30));
  const uint64_t built = s.Ball(ProtoVec(0, 44, -12), 4, 2);  // the wall
  ASSERT_EQ(built, first + 1);
  absl::SleepFor(absl::Milliseconds(30));
  const int64_t after = absl::ToUnixMicros(absl::Now());

  v1::RaycastRequest ray;
  *ray.mutable_origin() = from;
  *ray.mutable_direction() = ProtoVec(1, 0, 0);
  ray.set_max_distance(60);
  ray.mutable_read_at()->set_at_server_time_micros(before);
  v1::RaycastResponse then = s.Ray(ray, &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(then.hit());
  EXPECT_EQ(then.version(), first);
  ray.mutable_read_at()->set_at_server_time_micros(after);
  v1::RaycastResponse now = s.Ray(ray, &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(now.hit());
  EXPECT_EQ(now.version(), built);

  // The same through a batch's read_at and through ValidateHit.
  v1::QueryBatchRequest batch;
  *batch.add_queries()->mutable_raycast() = ray;
  batch.mutable_queries(0)->mutable_raycast()->clear_read_at();
  batch.mutable_read_at()->set_at_server_time_micros(before);
  v1::QueryBatchResponse old_batch = testing::RunOneBatch(*s.query, batch);
  ASSERT_EQ(old_batch.code(), 0) << old_batch.message();
  EXPECT_EQ(old_batch.version(), first);
  ASSERT_EQ(old_batch.results_size(), 1);
  EXPECT_FALSE(old_batch.results(0).raycast().hit());
  v1::ValidateHitRequest shot = Shot(from, 60, 0);
  shot.mutable_read_at()->set_at_server_time_micros(before);
  v1::ValidateHitResponse verdict;
  ASSERT_TRUE(s.Validate(shot, &verdict).ok());
  EXPECT_EQ(verdict.verdict(), v1::HIT_VERDICT_CONFIRMED);
  EXPECT_EQ(verdict.version(), first);
  shot.mutable_read_at()->set_at_server_time_micros(after);
  ASSERT_TRUE(s.Validate(shot, &verdict).ok());
  EXPECT_EQ(verdict.verdict(), v1::HIT_VERDICT_BLOCKED_BY_TERRAIN);

  ray.mutable_read_at()->set_at_server_time_micros(after + 60'000'000);
  s.Ray(ray, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_NE(status.error_message().find("read_at.at_server_time_micros"), std::string::npos)
      << status.error_message();
}

TEST(LagCompensation, VersionsOutsideTheWindowAreOutOfRangeNamingTheOldest) {
  Server s;
  ASSERT_NO_FATAL_FAILURE(s.Start({"--history_window_ms=0", "--history_versions=3"}));
  uint64_t last = 0;
  for (int i = 0; i < 6; ++i) last = s.Ball(ProtoVec(float(i * 6 - 20), 30, -20), 2, 2);
  ASSERT_EQ(last, 6u);
  v1::ValidateHitResponse response;
  grpc::Status status = s.Validate(Shot(ProtoVec(-30, 30, -20), 10, 1), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_NE(status.error_message().find("read_at.at_version"), std::string::npos);
  EXPECT_NE(status.error_message().find("oldest readable version is 3"), std::string::npos)
      << status.error_message();
  EXPECT_TRUE(s.Validate(Shot(ProtoVec(-30, 30, -20), 10, 3), &response).ok());
  const uint64_t future = 7;
  s.Ray(ProtoVec(0, 40, 0), ProtoVec(1, 0, 0), 10, &future, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  // Bad claims name their field.
  v1::ValidateHitRequest bad = Shot(ProtoVec(-30, 30, -20), 10, last);
  bad.set_tolerance(-1);
  status = s.Validate(bad, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("tolerance"), std::string::npos);
  bad = Shot(ProtoVec(-30, 30, -20), 10, last);
  bad.clear_claim();
  status = s.Validate(bad, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace voxcol
