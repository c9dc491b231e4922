// Bodies through the real server (issue 42), continued: the part a ray reports against an
// independent ray-sphere/capsule/box oracle on seeded random rays, OTHER_PART, every bad field
// of UpdateBodies and of the body filter named, all-or-nothing batches, the limits' flags and the
// body metrics.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tests/integration/body_oracle.h"
#include "tests/integration/http_get.h"
#include "tests/integration/proto_values.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/body_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::D3;
using testing::kNoHit;
using testing::ProtoVec;
using testing::YawPose;

struct Server {
  testing::TempDir dir;
  testing::ServerProcess process;
  std::unique_ptr<v1::QueryService::Stub> query;
  std::unique_ptr<v1::BodyService::Stub> bodies;

  bool Start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--data_dir=" + dir.path() + "/data",
                                     "--world_size=128,96,128", "--seed=3", "--nav=false"};
    args.insert(args.end(), extra.begin(), extra.end());
    if (!process.Start(VOXCOL_SERVER_PATH, args, dir.path())) return false;
    auto channel = grpc::CreateChannel(process.address(), grpc::InsecureChannelCredentials());
    query = v1::QueryService::NewStub(channel);
    bodies = v1::BodyService::NewStub(channel);
    return true;
  }
  grpc::Status Update(const v1::UpdateBodiesRequest& request) {
    grpc::ClientContext context;
    v1::UpdateBodiesResponse response;
    return bodies->UpdateBodies(&context, request, &response);
  }
  v1::ListBodiesResponse List() {
    grpc::ClientContext context;
    v1::ListBodiesResponse response;
    EXPECT_TRUE(bodies->ListBodies(&context, v1::ListBodiesRequest(), &response).ok());
    return response;
  }
  grpc::Status Ray(const v1::RaycastRequest& request, v1::RaycastResponse* out) {
    grpc::ClientContext context;
    return query->Raycast(&context, request, out);
  }
};

// The humanoid of the oracle test, in its body frame: head sphere (1), torso capsule (2), an arm
// box (3), a leg capsule (4). Offsets only (no part rotations); the body turns about +Y.
struct PartSpec {
  uint32_t id;
  char kind;  // 's'phere, 'c'apsule, 'b'ox
  D3 offset;
  double a, b, c;  // sphere: r; capsule: half height, r; box: half extents
};
const PartSpec kParts[] = {{1, 's', {0, 0.75, 0}, 0.15, 0, 0},
                           {2, 'c', {0, 0.1, 0}, 0.3, 0.22, 0},
                           {3, 'b', {0.32, 0.1, 0}, 0.07, 0.3, 0.07},
                           {4, 'c', {0.1, -0.6, 0}, 0.35, 0.1, 0}};

v1::BodyCreate Humanoid(uint64_t id, const YawPose& pose) {
  v1::BodyCreate b;
  b.set_id(id);
  *b.mutable_position() = ProtoVec(pose.position.x, pose.position.y, pose.position.z);
  b.mutable_rotation()->set_w(float(std::cos(pose.angle / 2)));
  b.mutable_rotation()->set_y(float(std::sin(pose.angle / 2)));
  for (const PartSpec& p : kParts) {
    v1::BodyPart* part = b.add_parts();
    part->set_part_id(p.id);
    *part->mutable_position() = ProtoVec(p.offset.x, p.offset.y, p.offset.z);
    v1::Shape* shape = part->mutable_shape();
    if (p.kind == 's') shape->mutable_sphere()->set_radius(float(p.a));
    if (p.kind == 'c') {
      shape->mutable_capsule()->set_half_height(float(p.a));
      shape->mutable_capsule()->set_radius(float(p.b));
    }
    if (p.kind == 'b') *shape->mutable_box()->mutable_half_extents() = ProtoVec(p.a, p.b, p.c);
  }
  return b;
}

struct OracleHit {
  uint32_t part = 0;  // 0: miss
  double t = kNoHit;
};

// The first part the ray meets, every part grown by `grow` (world units).
OracleHit Oracle(const YawPose& pose, D3 o, D3 d, double grow) {
  const D3 lo = pose.ToLocal(o), ld = pose.RotateInverse(d);
  OracleHit best;
  for (const PartSpec& p : kParts) {
    const D3 po = lo - p.offset;
    double t = kNoHit;
    if (p.kind == 's') t = testing::RaySphere(po, ld, {0, 0, 0}, p.a + grow);
    if (p.kind == 'c') t = testing::RayCapsule(po, ld, p.a, p.b + grow);
    if (p.kind == 'b') t = testing::RayBox(po, ld, {p.a + grow, p.b + grow, p.c + grow});
    if (t < best.t) best = {p.id, t};
  }
  return best;
}

TEST(BodyParts, ReportedPartIsTheOneTheRayMeetsFirstPerAnIndependentOracle) {
  Server s;
  ASSERT_TRUE(s.Start()) << s.process.Log();
  const YawPose pose{0.6, {0, 40, 0}};
  v1::UpdateBodiesRequest create;
  create.set_tick(1);
  *create.add_create() = Humanoid(5, pose);
  grpc::Status status = s.Update(create);
  ASSERT_TRUE(status.ok()) << status.error_message();

  std::mt19937 rng(42);
  std::uniform_real_distribution<double> unit(-1, 1);
  int compared = 0, hits = 0, by_part[5] = {};
  for (int i = 0; i < 300; ++i) {
    // From 3 units away in a random direction toward a random point near the body.
    D3 from{unit(rng), unit(rng), unit(rng)};
    from = from * (3 / std::sqrt(testing::Dot(from, from)));
    const D3 aim{0.4 * unit(rng), 40 + 1.0 * unit(rng), 0.4 * unit(rng)};
    from = from + D3{0, 40, 0};
    // The oracle sees the floats the server receives.
    const v1::Vec3 wire_o = ProtoVec(from.x, from.y, from.z);
    const D3 o{wire_o.x(), wire_o.y(), wire_o.z()};
    D3 d = aim - o;
    const v1::Vec3 wire_d = ProtoVec(d.x, d.y, d.z);
    d = {wire_d.x(), wire_d.y(), wire_d.z()};
    d = d * (1 / std::sqrt(testing::Dot(d, d)));
    // Grazing rays and near ties are ambiguous in float: skip those the oracle itself cannot
    // settle (a different answer with every part 1e-4 thinner or thicker).
    const OracleHit thin = Oracle(pose, o, d, -1e-4), thick = Oracle(pose, o, d, 1e-4);
    if (thin.part != thick.part) continue;
    const OracleHit want = Oracle(pose, o, d, 0);
    v1::RaycastRequest ray;
    *ray.mutable_origin() = wire_o;
    *ray.mutable_direction() = wire_d;
    ray.set_max_distance(10);
    ray.mutable_body_filter()->set_scope(v1::BODY_SCOPE_BODIES);
    v1::RaycastResponse got;
    status = s.Ray(ray, &got);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ++compared;
    ASSERT_EQ(got.hit(), want.part != 0) << "ray " << i << ": " << got.DebugString();
    if (want.part == 0) continue;
    ++hits;
    ++by_part[want.part];
    EXPECT_EQ(got.body().part_id(), want.part) << "ray " << i;
    EXPECT_NEAR(got.first().distance(), want.t, 2e-3) << "ray " << i;
  }
  EXPECT_GE(compared, 280);
  EXPECT_GE(hits, 100);
  for (int part = 1; part <= 4; ++part) EXPECT_GE(by_part[part], 5) << "part " << part;

  // ValidateHit: a shot at the torso's height from -x meets the torso (2) before the arm (3).
  v1::ValidateHitRequest shot;
  *shot.mutable_origin() = ProtoVec(-20, 40.1, 0);
  *shot.mutable_direction() = ProtoVec(1, 0, 0);
  shot.mutable_target_body()->set_body_id(5);
  shot.mutable_target_body()->set_part_id(1);
  shot.mutable_target_body()->set_tick(1);
  const OracleHit torso = Oracle(pose, {-20, 40.1f, 0}, {1, 0, 0}, 0);
  ASSERT_EQ(torso.part, 2u);
  v1::ValidateHitResponse verdict;
  grpc::ClientContext context;
  ASSERT_TRUE(s.query->ValidateHit(&context, shot, &verdict).ok());
  EXPECT_EQ(verdict.verdict(), v1::HIT_VERDICT_OTHER_PART) << verdict.DebugString();
  EXPECT_EQ(verdict.body().part_id(), 2u);
  EXPECT_NEAR(verdict.hit().distance(), torso.t, 2e-3);
  shot.mutable_target_body()->set_part_id(2);
  grpc::ClientContext context2;
  ASSERT_TRUE(s.query->ValidateHit(&context2, shot, &verdict).ok());
  EXPECT_EQ(verdict.verdict(), v1::HIT_VERDICT_CONFIRMED);
}

// A one-part body (a sphere of `radius`) at x = `x`.
v1::BodyCreate Ball(uint64_t id, double x, float radius = 0.5f) {
  v1::BodyCreate b;
  b.set_id(id);
  *b.mutable_position() = ProtoVec(x, 40, 0);
  v1::BodyPart* p = b.add_parts();
  p->set_part_id(1);
  p->mutable_shape()->mutable_sphere()->set_radius(radius);
  return b;
}

// Expects `status` to be `code` with `text` in its message.
void ExpectError(const grpc::Status& status, grpc::StatusCode code, const std::string& text) {
  EXPECT_EQ(status.error_code(), code) << status.error_message();
  EXPECT_NE(status.error_message().find(text), std::string::npos)
      << "want \"" << text << "\" in: " << status.error_message();
}

TEST(BodyParts, EveryBadFieldOfABatchIsNamedAndNothingIsApplied) {
  Server s;
  ASSERT_TRUE(s.Start({"--max_bodies=3", "--max_parts_per_body=2"})) << s.process.Log();
  v1::UpdateBodiesRequest r;
  r.set_tick(10);
  *r.add_create() = Ball(1, 0);
  *r.add_create() = Ball(2, 3);
  r.mutable_create(1)->mutable_parts(0)->mutable_shape()->mutable_capsule()->set_radius(0);
  ExpectError(s.Update(r), grpc::StatusCode::INVALID_ARGUMENT,
              "create[1].parts[0].shape.capsule.radius");
  EXPECT_FALSE(s.List().has_ticks());  // all or nothing: body 1 was not created either
  *r.mutable_create(1) = Ball(2, 3);
  r.mutable_create(1)->mutable_parts(0)->mutable_shape()->clear_kind();
  ExpectError(s.Update(r), grpc::StatusCode::INVALID_ARGUMENT, "create[1].parts[0].shape: one of");
  *r.mutable_create(1) = Ball(2, 3);
  r.mutable_create(1)->mutable_rotation()->set_w(2);
  ExpectError(s.Update(r), grpc::StatusCode::INVALID_ARGUMENT, "create[1].rotation");
  *r.mutable_create(1) = Ball(2, 3);
  r.mutable_create(1)->clear_parts();
  ExpectError(s.Update(r), grpc::StatusCode::INVALID_ARGUMENT, "create[1].parts");
  *r.mutable_create(1) = Ball(2, 3);
  *r.mutable_create(1)->add_parts() = r.create(1).parts(0);
  *r.mutable_create(1)->add_parts() = r.create(1).parts(0);
  ExpectError(s.Update(r), grpc::StatusCode::RESOURCE_EXHAUSTED, "max_parts_per_body 2");
  *r.mutable_create(1) = Ball(2, 3);
  r.add_remove(77);
  ExpectError(s.Update(r), grpc::StatusCode::NOT_FOUND, "remove[0]: no body 77");
  r.clear_remove();
  ASSERT_TRUE(s.Update(r).ok());
  EXPECT_EQ(s.List().bodies_size(), 2);

  v1::UpdateBodiesRequest next;
  next.set_tick(10);
  ExpectError(s.Update(next), grpc::StatusCode::INVALID_ARGUMENT, "tick: 10 is not after");
  next.set_tick(11);
  *next.add_create() = Ball(1, 0);
  ExpectError(s.Update(next), grpc::StatusCode::ALREADY_EXISTS, "create[0].id: body 1");
  next.clear_create();
  next.add_move()->set_id(42);
  ExpectError(s.Update(next), grpc::StatusCode::NOT_FOUND, "move[0].id: no body 42");
  next.mutable_move(0)->set_id(1);
  next.mutable_move(0)->mutable_rotation()->set_x(0.5f);
  ExpectError(s.Update(next), grpc::StatusCode::INVALID_ARGUMENT, "move[0].rotation");
  next.clear_move();
  *next.add_create() = Ball(3, 6);
  *next.add_create() = Ball(4, 9);
  ExpectError(s.Update(next), grpc::StatusCode::RESOURCE_EXHAUSTED, "max_bodies 3");
  next.set_world("nope");
  ExpectError(s.Update(next), grpc::StatusCode::NOT_FOUND, "world");
}

TEST(BodyParts, BadFiltersAreNamed) {
  Server s;
  ASSERT_TRUE(s.Start()) << s.process.Log();
  v1::RaycastRequest ray;
  *ray.mutable_origin() = ProtoVec(-5, 40, 0);
  *ray.mutable_direction() = ProtoVec(1, 0, 0);
  ray.set_max_distance(20);
  ray.mutable_body_filter();
  v1::RaycastResponse out;
  ExpectError(s.Ray(ray, &out), grpc::StatusCode::OUT_OF_RANGE,
              "body_filter.tick: no body batch has been applied yet");
  v1::UpdateBodiesRequest r;
  r.set_tick(1);
  *r.add_create() = Ball(1, 0);
  ASSERT_TRUE(s.Update(r).ok());
  ASSERT_TRUE(s.Ray(ray, &out).ok());
  EXPECT_EQ(out.first_kind(), v1::HIT_KIND_BODY);
  EXPECT_NEAR(out.first().distance(), 4.5f, 1e-4f);
  ray.set_all_hits(true);
  ExpectError(s.Ray(ray, &out), grpc::StatusCode::INVALID_ARGUMENT, "all_hits");
  ray.set_all_hits(false);
  for (int i = 0; i < 65; ++i) ray.mutable_body_filter()->add_ignore_ids(100 + i);
  ExpectError(s.Ray(ray, &out), grpc::StatusCode::INVALID_ARGUMENT,
              "body_filter.ignore_ids: 65 ids, at most 64");
  ray.mutable_body_filter()->clear_ignore_ids();
  ray.mutable_body_filter()->set_scope(static_cast<v1::BodyScope>(17));
  ExpectError(s.Ray(ray, &out), grpc::StatusCode::INVALID_ARGUMENT, "body_filter.scope");
  // Terrain only: no body is read, even without a valid tick.
  ray.mutable_body_filter()->set_scope(v1::BODY_SCOPE_TERRAIN);
  ray.mutable_body_filter()->set_tick(-5);
  ASSERT_TRUE(s.Ray(ray, &out).ok());
  EXPECT_FALSE(out.hit());
}

TEST(BodyParts, BadLimitFlagsStopTheServerNamingTheFlag) {
  for (const char* text : {"--body_history_ticks=0", "--max_bodies=0", "--max_parts_per_body=-1",
                           "--max_body_history_mb=0"}) {
    const std::string flag = text;
    Server s;
    EXPECT_FALSE(s.Start({flag})) << flag;
    const std::string name = flag.substr(0, flag.find('='));
    EXPECT_NE(s.process.Log().find(name), std::string::npos) << flag << ": " << s.process.Log();
  }
}

TEST(BodyParts, MetricsCountBodiesUpdatesAndHistoryBytes) {
  Server s;
  ASSERT_TRUE(s.Start()) << s.process.Log();
  v1::UpdateBodiesRequest r;
  r.set_tick(1);
  *r.add_create() = Ball(1, 0);
  *r.add_create() = Ball(2, 3);
  ASSERT_TRUE(s.Update(r).ok());
  ASSERT_FALSE(s.Update(r).ok());  // the same tick again: refused
  const std::string text = testing::HttpGet(s.process.metrics_port(), "/metrics");
  EXPECT_EQ(testing::MetricValue(text, "voxcol_bodies{world=\"default\"}"), 2) << text;
  EXPECT_GT(testing::MetricValue(text, "voxcol_body_history_bytes{world=\"default\"}"), 0);
  EXPECT_EQ(testing::MetricValue(text, "voxcol_body_updates_total{result=\"applied\"}"), 1);
  EXPECT_EQ(testing::MetricValue(text, "voxcol_body_updates_total{result=\"refused\"}"), 1);
  EXPECT_EQ(s.List().history_bytes(),
            int64_t(testing::MetricValue(text, "voxcol_body_history_bytes{world=\"default\"}")));
}

// Replicas keep their own bodies (docs/bodies.md): a replica accepts UpdateBodies and answers
// body queries for the bodies sent to it; the primary does not see them (nor the reverse).
TEST(BodyParts, AReplicaKeepsItsOwnBodies) {
  Server primary;
  ASSERT_TRUE(primary.Start()) << primary.process.Log();
  testing::TempDir replica_dir;
  testing::ServerProcess replica_process;
  ASSERT_TRUE(replica_process.Start(
      VOXCOL_SERVER_PATH,
      {"--data_dir=" + replica_dir.path() + "/data", "--replica_of=" + primary.process.address()},
      replica_dir.path()))
      << replica_process.Log();
  auto channel = grpc::CreateChannel(replica_process.address(), grpc::InsecureChannelCredentials());
  auto replica_bodies = v1::BodyService::NewStub(channel);
  auto replica_query = v1::QueryService::NewStub(channel);

  v1::UpdateBodiesRequest on_replica;
  on_replica.set_tick(50);
  *on_replica.add_create() = Ball(1, 0);
  grpc::ClientContext c1;
  v1::UpdateBodiesResponse applied;
  grpc::Status status = replica_bodies->UpdateBodies(&c1, on_replica, &applied);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(applied.body_count(), 1);
  v1::UpdateBodiesRequest on_primary;
  on_primary.set_tick(7);
  *on_primary.add_create() = Ball(2, 0);
  ASSERT_TRUE(primary.Update(on_primary).ok());

  v1::RaycastRequest ray;
  *ray.mutable_origin() = ProtoVec(-5, 40, 0);
  *ray.mutable_direction() = ProtoVec(1, 0, 0);
  ray.set_max_distance(20);
  ray.mutable_body_filter()->set_scope(v1::BODY_SCOPE_BODIES);
  grpc::ClientContext c2;
  v1::RaycastResponse seen;
  status = replica_query->Raycast(&c2, ray, &seen);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(seen.body().body_id(), 1u) << seen.DebugString();
  EXPECT_EQ(seen.body().tick(), 50);
  v1::RaycastResponse primary_seen;
  ASSERT_TRUE(primary.Ray(ray, &primary_seen).ok());
  EXPECT_EQ(primary_seen.body().body_id(), 2u) << primary_seen.DebugString();
  EXPECT_EQ(primary_seen.body().tick(), 7);
}

}  // namespace
}  // namespace voxcol
