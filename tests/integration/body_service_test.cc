// Bodies through the real server (issue 42): UpdateBodies tick batches, rays with a body filter at
// a tick, ValidateHit on a body part with terrain and bodies both rewound, the body window's
// OUT_OF_RANGE, every bad field named, the flags' start-up errors. Analytic scenes high in the
// sky (nothing but what the test builds) and an independent ray oracle (body_oracle.h).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tests/integration/body_oracle.h"
#include "tests/integration/proto_values.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/body_service.grpc.pb.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::D3;
using testing::kNoHit;
using testing::ProtoVec;
using testing::YawPose;

// A standing capsule (part 1): segment half height 0.9, radius 0.4, at `x, y, z`.
v1::BodyCreate Capsule(uint64_t id, double x, double y, double z) {
  v1::BodyCreate b;
  b.set_id(id);
  b.set_owner(1000 + id);
  *b.mutable_position() = ProtoVec(x, y, z);
  v1::BodyPart* p = b.add_parts();
  p->set_part_id(1);
  p->mutable_shape()->mutable_capsule()->set_half_height(0.9f);
  p->mutable_shape()->mutable_capsule()->set_radius(0.4f);
  return b;
}

v1::BodyMove Move(uint64_t id, double x, double y, double z) {
  v1::BodyMove m;
  m.set_id(id);
  *m.mutable_position() = ProtoVec(x, y, z);
  return m;
}

struct BodyServer {
  testing::TempDir dir;
  testing::ServerProcess process;
  std::unique_ptr<v1::QueryService::Stub> query;
  std::unique_ptr<v1::EditService::Stub> edit;
  std::unique_ptr<v1::BodyService::Stub> bodies;

  void Start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--data_dir=" + dir.path() + "/data",
                                     "--world_size=128,96,128", "--seed=3", "--nav=false"};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(process.Start(VOXCOL_SERVER_PATH, args, dir.path())) << process.Log();
    auto channel = grpc::CreateChannel(process.address(), grpc::InsecureChannelCredentials());
    query = v1::QueryService::NewStub(channel);
    edit = v1::EditService::NewStub(channel);
    bodies = v1::BodyService::NewStub(channel);
  }
  grpc::Status Update(const v1::UpdateBodiesRequest& request,
                      v1::UpdateBodiesResponse* out = nullptr) {
    grpc::ClientContext context;
    v1::UpdateBodiesResponse response;
    return bodies->UpdateBodies(&context, request, out ? out : &response);
  }
  // Applies `tick` with the given creates and moves; fails the test on an error.
  void Tick(int64_t tick, std::vector<v1::BodyCreate> create, std::vector<v1::BodyMove> move = {}) {
    v1::UpdateBodiesRequest r;
    r.set_tick(tick);
    for (auto& c : create) *r.add_create() = c;
    for (auto& m : move) *r.add_move() = m;
    grpc::Status s = Update(r);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  uint64_t Ball(const v1::Vec3& center, float radius) {
    v1::FillBallRequest ball;
    *ball.mutable_center() = center;
    ball.set_radius(radius);
    ball.set_material(2);
    ball.set_mode(v1::EDIT_MODE_ADD);
    grpc::ClientContext context;
    v1::EditAck ack;
    grpc::Status status = edit->FillBall(&context, ball, &ack);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return ack.version();
  }
  v1::RaycastResponse Ray(const v1::RaycastRequest& request, grpc::Status* status) {
    grpc::ClientContext context;
    v1::RaycastResponse response;
    *status = query->Raycast(&context, request, &response);
    return response;
  }
  grpc::Status Validate(const v1::ValidateHitRequest& request, v1::ValidateHitResponse* out) {
    grpc::ClientContext context;
    return query->ValidateHit(&context, request, out);
  }
};

// A ray with a body filter; `tick` < 0 leaves the filter's tick unset (the latest).
v1::RaycastRequest BodyRay(const v1::Vec3& origin, const v1::Vec3& dir, float length, int64_t tick,
                           v1::BodyScope scope = v1::BODY_SCOPE_TERRAIN_AND_BODIES) {
  v1::RaycastRequest r;
  *r.mutable_origin() = origin;
  *r.mutable_direction() = dir;
  r.set_max_distance(length);
  r.mutable_body_filter()->set_scope(scope);
  if (tick >= 0) r.mutable_body_filter()->set_tick(tick);
  return r;
}

// A shot along +x from `from` claiming body `id`'s part `part` at `tick`, terrain at `version`.
v1::ValidateHitRequest BodyShot(const v1::Vec3& from, uint64_t id, uint32_t part, int64_t tick,
                                uint64_t version) {
  v1::ValidateHitRequest shot;
  *shot.mutable_origin() = from;
  *shot.mutable_direction() = ProtoVec(1, 0, 0);
  shot.mutable_target_body()->set_body_id(id);
  shot.mutable_target_body()->set_part_id(part);
  shot.mutable_target_body()->set_tick(tick);
  shot.mutable_read_at()->set_at_version(version);
  return shot;
}

TEST(BodyService, MovingCapsuleIsHitAtItsTickAndMissedTenTicksLater) {
  BodyServer s;
  ASSERT_NO_FATAL_FAILURE(s.Start());
  // Tick 100: the capsule stands at x = 0; it then walks +x 0.5 per tick (x = 5 at tick 110).
  ASSERT_NO_FATAL_FAILURE(s.Tick(100, {Capsule(7, 0, 40, 0)}));
  for (int t = 101; t <= 110; ++t) {
    ASSERT_NO_FATAL_FAILURE(s.Tick(t, {}, {Move(7, 0.5 * (t - 100), 40, 0)}));
  }
  // A ray along +z through x = 0 at the capsule's mid height, starting 20 before it.
  grpc::Status status;
  v1::RaycastResponse then =
      s.Ray(BodyRay(ProtoVec(0, 40, -20), ProtoVec(0, 0, 1), 40, 100), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(then.hit());
  EXPECT_EQ(then.first_kind(), v1::HIT_KIND_BODY);
  EXPECT_EQ(then.body().body_id(), 7u);
  EXPECT_EQ(then.body().part_id(), 1u);
  EXPECT_EQ(then.body().owner(), 1007u);
  EXPECT_EQ(then.body().tick(), 100);
  // The cylinder's side at z = -0.4: 19.6 along the ray, normal -z.
  EXPECT_NEAR(then.first().distance(), 19.6f, 1e-3f);
  EXPECT_NEAR(then.first().normal().z(), -1.0f, 1e-3f);

  v1::RaycastResponse later =
      s.Ray(BodyRay(ProtoVec(0, 40, -20), ProtoVec(0, 0, 1), 40, 110), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(later.hit()) << later.DebugString();
  EXPECT_EQ(later.first_kind(), v1::HIT_KIND_UNSPECIFIED);
  // Unset tick: the latest (110) as well; and the ray through x = 5 meets it there.
  v1::RaycastResponse latest =
      s.Ray(BodyRay(ProtoVec(0, 40, -20), ProtoVec(0, 0, 1), 40, -1), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(latest.hit());
  v1::RaycastResponse moved =
      s.Ray(BodyRay(ProtoVec(5, 40, -20), ProtoVec(0, 0, 1), 40, -1), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(moved.first_kind(), v1::HIT_KIND_BODY);
  EXPECT_EQ(moved.body().tick(), 110);
}

TEST(BodyService, HistoryBeyondTheWindowIsOutOfRangeNamingTheOldestTick) {
  BodyServer s;
  ASSERT_NO_FATAL_FAILURE(s.Start({"--body_history_ticks=20"}));
  ASSERT_NO_FATAL_FAILURE(s.Tick(100, {Capsule(1, 0, 40, 0)}));
  for (int t = 101; t <= 130; ++t) ASSERT_NO_FATAL_FAILURE(s.Tick(t, {}));
  // 20 ticks kept, the latest (130) included: 111..130.
  grpc::Status status;
  s.Ray(BodyRay(ProtoVec(0, 40, -20), ProtoVec(0, 0, 1), 40, 110), &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_NE(status.error_message().find("body_filter.tick"), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("oldest body tick kept, 111"), std::string::npos)
      << status.error_message();
  v1::RaycastResponse oldest =
      s.Ray(BodyRay(ProtoVec(0, 40, -20), ProtoVec(0, 0, 1), 40, 111), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(oldest.first_kind(), v1::HIT_KIND_BODY);
  s.Ray(BodyRay(ProtoVec(0, 40, -20), ProtoVec(0, 0, 1), 40, 131), &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_NE(status.error_message().find("latest body tick 130"), std::string::npos);
  // ValidateHit names its own field.
  v1::ValidateHitResponse verdict;
  status = s.Validate(BodyShot(ProtoVec(-20, 40, 0), 1, 1, 105, 0), &verdict);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_NE(status.error_message().find("target_body.tick: 105"), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("111"), std::string::npos) << status.error_message();
}

TEST(BodyService, TargetBehindASinceBuiltWallIsConfirmedAtTheShotsVersionAndTickAndBlockedNow) {
  BodyServer s;
  ASSERT_NO_FATAL_FAILURE(s.Start());
  const v1::Vec3 from = ProtoVec(-30, 40, 0);
  // Tick 100: the target at x = 0 on the shot; then it steps 5 units aside (z = 5) by tick 105.
  ASSERT_NO_FATAL_FAILURE(s.Tick(100, {Capsule(9, 0, 40, 0)}));
  for (int t = 101; t <= 105; ++t)
    ASSERT_NO_FATAL_FAILURE(s.Tick(t, {}, {Move(9, 0, 40, t - 100)}));
  grpc::Status status;
  v1::RaycastResponse sky =
      s.Ray(BodyRay(from, ProtoVec(1, 0, 0), 60, 0, v1::BODY_SCOPE_TERRAIN), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_FALSE(sky.hit()) << "the test needs open sky at y=40";
  const uint64_t fired_at = sky.version();
  const uint64_t built = s.Ball(ProtoVec(-10, 40, 0), 3);  // a wall between, built after the shot
  ASSERT_GT(built, fired_at);

  v1::ValidateHitResponse then;
  ASSERT_TRUE(s.Validate(BodyShot(from, 9, 1, 100, fired_at), &then).ok());
  EXPECT_EQ(then.verdict(), v1::HIT_VERDICT_CONFIRMED) << then.DebugString();
  EXPECT_EQ(then.first_kind(), v1::HIT_KIND_BODY);
  EXPECT_EQ(then.body().body_id(), 9u);
  EXPECT_NEAR(then.hit().distance(), 29.6f, 1e-3f);  // the capsule's side at x = -0.4
  EXPECT_NEAR(then.claim_distance(), 29.6f, 1e-3f);
  EXPECT_EQ(then.version(), fired_at);

  v1::ValidateHitResponse now;
  ASSERT_TRUE(s.Validate(BodyShot(from, 9, 1, 100, built), &now).ok());
  EXPECT_EQ(now.verdict(), v1::HIT_VERDICT_BLOCKED_BY_TERRAIN) << now.DebugString();
  EXPECT_EQ(now.first_kind(), v1::HIT_KIND_TERRAIN);
  // The wall's near face at x = -13: 17 from the shooter.
  EXPECT_NEAR(now.hit().distance(), 17.0f, 0.75f);
  EXPECT_NEAR(now.discrepancy(), 29.6f - now.hit().distance(), 1e-3f);

  // Bodies at the claim's tick, not the latest: at tick 105 the target has left the shot.
  v1::ValidateHitResponse moved;
  ASSERT_TRUE(s.Validate(BodyShot(from, 9, 1, 105, fired_at), &moved).ok());
  EXPECT_EQ(moved.verdict(), v1::HIT_VERDICT_NOT_ON_SHOT) << moved.DebugString();
  // Tick 103: 3 units aside, still off the shot (radius 0.4); tick 100 is the one on it.
  ASSERT_TRUE(s.Validate(BodyShot(from, 9, 1, 103, fired_at), &moved).ok());
  EXPECT_EQ(moved.verdict(), v1::HIT_VERDICT_NOT_ON_SHOT) << moved.DebugString();
}

TEST(BodyService, BodyRayIsClippedAtTheTerrainHit) {
  BodyServer s;
  ASSERT_NO_FATAL_FAILURE(s.Start());
  s.Ball(ProtoVec(-10, 40, 0), 3);  // a wall from x = -13 to -7 on the ray
  ASSERT_NO_FATAL_FAILURE(s.Tick(1, {Capsule(4, 0, 40, 0)}));
  grpc::Status status;
  v1::RaycastResponse both =
      s.Ray(BodyRay(ProtoVec(-30, 40, 0), ProtoVec(1, 0, 0), 60, 1), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(both.first_kind(), v1::HIT_KIND_TERRAIN) << both.DebugString();
  EXPECT_FALSE(both.has_body());
  EXPECT_NEAR(both.first().distance(), 17.0f, 0.75f);
  // Bodies only: the terrain is not read, the body behind the wall is the answer.
  v1::RaycastResponse only = s.Ray(
      BodyRay(ProtoVec(-30, 40, 0), ProtoVec(1, 0, 0), 60, 1, v1::BODY_SCOPE_BODIES), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(only.first_kind(), v1::HIT_KIND_BODY);
  EXPECT_NEAR(only.first().distance(), 29.6f, 1e-3f);
  // From behind the wall the body is first; ignore_ids hides it.
  v1::RaycastRequest near = BodyRay(ProtoVec(-5, 40, 0), ProtoVec(1, 0, 0), 60, 1);
  v1::RaycastResponse close = s.Ray(near, &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(close.first_kind(), v1::HIT_KIND_BODY);
  EXPECT_NEAR(close.first().distance(), 4.6f, 1e-3f);
  near.mutable_body_filter()->add_ignore_ids(4);
  EXPECT_FALSE(s.Ray(near, &status).hit());
  // A layer mask that does not match the body's layer (1) hides it too.
  near.mutable_body_filter()->clear_ignore_ids();
  near.mutable_body_filter()->set_layer_mask(2);
  EXPECT_FALSE(s.Ray(near, &status).hit());
}

TEST(BodyService, AnotherBodyInFrontBlocksTheShotAndIsNamed) {
  BodyServer s;
  ASSERT_NO_FATAL_FAILURE(s.Start());
  // Shooter 1 at the origin of the shot, a bystander 2 at x = -10, the target 3 at x = 0.
  ASSERT_NO_FATAL_FAILURE(
      s.Tick(5, {Capsule(1, -30, 40, 0), Capsule(2, -10, 40, 0), Capsule(3, 0, 40, 0)}));
  v1::ValidateHitRequest shot = BodyShot(ProtoVec(-30, 40, 0), 3, 1, 5, 0);
  shot.clear_read_at();
  shot.mutable_target_body()->add_ignore_ids(1);  // the shooter stands inside its own capsule
  v1::ValidateHitResponse r;
  ASSERT_TRUE(s.Validate(shot, &r).ok());
  EXPECT_EQ(r.verdict(), v1::HIT_VERDICT_BLOCKED_BY_BODY) << r.DebugString();
  EXPECT_EQ(r.body().body_id(), 2u);
  EXPECT_NEAR(r.hit().distance(), 19.6f, 1e-3f);
  EXPECT_NEAR(r.claim_distance(), 29.6f, 1e-3f);
  // Without ignoring the shooter, its own capsule (it starts inside) blocks at distance 0.
  shot.mutable_target_body()->clear_ignore_ids();
  ASSERT_TRUE(s.Validate(shot, &r).ok());
  EXPECT_EQ(r.verdict(), v1::HIT_VERDICT_BLOCKED_BY_BODY);
  EXPECT_EQ(r.body().body_id(), 1u);
  // The bystander itself, claimed: confirmed. A body that does not exist: NOT_FOUND.
  shot.mutable_target_body()->add_ignore_ids(1);
  shot.mutable_target_body()->set_body_id(2);
  ASSERT_TRUE(s.Validate(shot, &r).ok());
  EXPECT_EQ(r.verdict(), v1::HIT_VERDICT_CONFIRMED);
  shot.mutable_target_body()->set_body_id(99);
  grpc::Status status = s.Validate(shot, &r);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(status.error_message().find("target_body.body_id: no body 99"), std::string::npos)
      << status.error_message();
}

// Overlap with a body filter: a sphere beside the capsule's axis overlaps it exactly when the
// distance from its centre to the axis segment is at most the sum of the radii (closed form).
TEST(BodyService, OverlapListsTheBodyPartsAtTheFiltersTick) {
  BodyServer s;
  ASSERT_NO_FATAL_FAILURE(s.Start());
  ASSERT_NO_FATAL_FAILURE(s.Tick(1, {Capsule(7, 0, 40, 0)}));
  ASSERT_NO_FATAL_FAILURE(s.Tick(2, {}, {Move(7, 5, 40, 0)}));
  auto overlap = [&](double x, double y, float radius, int64_t tick, v1::BodyScope scope,
                     grpc::Status* status) {
    v1::OverlapRequest r;
    r.mutable_shape()->mutable_shape()->mutable_sphere()->set_radius(radius);
    *r.mutable_shape()->mutable_position() = ProtoVec(x, y, 0);
    r.mutable_body_filter()->set_scope(scope);
    r.mutable_body_filter()->set_tick(tick);
    grpc::ClientContext context;
    v1::OverlapResponse out;
    *status = s.query->Overlap(&context, r, &out);
    return out;
  };
  grpc::Status status;
  // Capsule: axis x = 0, y in [39.1, 40.9], radius 0.4. A sphere of 0.5 at x = 0.85: 0.85 <= 0.9.
  v1::OverlapResponse at1 = overlap(0.85, 40, 0.5f, 1, v1::BODY_SCOPE_TERRAIN_AND_BODIES, &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(at1.bodies_size(), 1) << at1.DebugString();
  EXPECT_EQ(at1.bodies(0).body_id(), 7u);
  EXPECT_EQ(at1.bodies(0).part_id(), 1u);
  EXPECT_EQ(at1.bodies(0).tick(), 1);
  EXPECT_FALSE(at1.touches_solid());  // open sky
  // 0.95 > 0.9: apart. Above the segment's end (y 41.3): distance to (0, 40.9) is 0.4 + 0.5 - 0.05.
  EXPECT_EQ(overlap(0.95, 40, 0.5f, 1, v1::BODY_SCOPE_BODIES, &status).bodies_size(), 0);
  EXPECT_EQ(overlap(0, 41.75, 0.5f, 1, v1::BODY_SCOPE_BODIES, &status).bodies_size(), 1);
  EXPECT_EQ(overlap(0, 41.85, 0.5f, 1, v1::BODY_SCOPE_BODIES, &status).bodies_size(), 0);
  // Tick 2: the capsule moved to x = 5.
  EXPECT_EQ(overlap(0.85, 40, 0.5f, 2, v1::BODY_SCOPE_BODIES, &status).bodies_size(), 0);
  EXPECT_EQ(overlap(5.85, 40, 0.5f, 2, v1::BODY_SCOPE_BODIES, &status).bodies_size(), 1);
  overlap(0.85, 40, 0.5f, 0, v1::BODY_SCOPE_BODIES, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_NE(status.error_message().find("body_filter.tick"), std::string::npos);
}

}  // namespace
}  // namespace voxcol
