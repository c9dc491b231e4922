// End to end: Sweep, Contacts and exact Overlap on the real server, unary, in a Query
// stream batch and through the CLI.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "tests/integration/cli_fixture.h"
#include "tests/integration/http_get.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::CommandResult;
using Stream = grpc::ClientReaderWriter<v1::QueryBatchRequest, v1::QueryBatchResponse>;

constexpr float kTop = 46.0f;  // start height of the downward probes (the world spans y -48..48)

void Set(v1::Vec3* v, float x, float y, float z) {
  v->set_x(x);
  v->set_y(y);
  v->set_z(z);
}

v1::PosedShape Sphere(float radius, float x, float y, float z) {
  v1::PosedShape s;
  s.mutable_shape()->mutable_sphere()->set_radius(radius);
  Set(s.mutable_position(), x, y, z);
  return s;
}

v1::PosedShape Capsule(float half_height, float radius, float x, float y, float z) {
  v1::PosedShape s;
  s.mutable_shape()->mutable_capsule()->set_half_height(half_height);
  s.mutable_shape()->mutable_capsule()->set_radius(radius);
  Set(s.mutable_position(), x, y, z);
  return s;
}

v1::SweepRequest Down(const v1::PosedShape& shape, float distance) {
  v1::SweepRequest r;
  *r.mutable_shape() = shape;
  Set(r.mutable_direction(), 0, -1, 0);
  r.set_distance(distance);
  return r;
}

// A point of flat ground: where the downward ray hits, and its distance from kTop.
struct Ground {
  float x, z, distance;
  v1::Vec3 position;
};

class ShapeQueryTest : public testing::CliFixture {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(
        VOXCOL_SERVER_PATH,
        {"--data_dir=" + dir_.path() + "/data", "--seed=77", "--world_size=128,96,128",
         "--max_shape_extent=20", "--max_sweep_distance=100"},
        dir_.path()))
        << server_.Log();
    query_ = v1::QueryService::NewStub(
        grpc::CreateChannel(server_.address(), grpc::InsecureChannelCredentials()));
  }

  v1::RaycastResponse RayDown(float x, float z) {
    v1::RaycastRequest r;
    Set(r.mutable_origin(), x, kTop, z);
    Set(r.mutable_direction(), 0, -1, 0);
    r.set_max_distance(95);
    grpc::ClientContext context;
    v1::RaycastResponse response;
    EXPECT_TRUE(query_->Raycast(&context, r, &response).ok());
    return response;
  }

  // Up to `count` grid points where the ground is flat over a 1.2 x 1.2 footprint: the downward
  // rays at the centre and +-0.6 in x and z hit within 0.05 of each other, with normals near up.
  std::vector<Ground> FlatGround(int count) {
    std::vector<Ground> out;
    for (float x = -50.5f; x < 50 && int(out.size()) < count; x += 7) {
      for (float z = -50.5f; z < 50 && int(out.size()) < count; z += 9) {
        v1::RaycastResponse c = RayDown(x, z);
        if (!c.hit() || c.first().normal().y() < 0.98f) continue;
        bool flat = true;
        const float offsets[4][2] = {{0.6f, 0}, {-0.6f, 0}, {0, 0.6f}, {0, -0.6f}};
        for (const auto& o : offsets) {
          v1::RaycastResponse n = RayDown(x + o[0], z + o[1]);
          flat = flat && n.hit() &&
                 std::fabs(n.first().distance() - c.first().distance()) < 0.05f &&
                 n.first().normal().y() > 0.98f;
        }
        if (flat) out.push_back({x, z, c.first().distance(), c.first().position()});
      }
    }
    return out;
  }

  std::unique_ptr<v1::QueryService::Stub> query_;
};

TEST_F(ShapeQueryTest, SphereSweptDownStopsWhereTheRaySays) {
  std::vector<Ground> ground = FlatGround(3);
  ASSERT_FALSE(ground.empty()) << "no flat ground found in the test world";
  const float radius = 0.5f;
  for (const Ground& g : ground) {
    v1::SweepRequest request = Down(Sphere(radius, g.x, kTop, g.z), 95);
    request.set_include_stats(true);
    grpc::ClientContext context;
    v1::SweepResponse r;
    ASSERT_TRUE(query_->Sweep(&context, request, &r).ok());
    ASSERT_TRUE(r.hit()) << g.x << "," << g.z;
    EXPECT_FALSE(r.initial_overlap());
    // On flat ground (normals within 11 degrees of up, +-0.05 voxel over the footprint) the sphere
    // stops with its lowest point on the ground: radius above where the ray stopped, within 0.012
    // (measured up to 0.0036). A sweep that ignored the radius would stop `radius` later.
    const float expected = g.distance - radius;
    std::printf("sphere swept down: stopped at %.4f, ray minus radius %.4f (window %.2f)\n",
                r.first().distance(), expected, 0.012f);
    EXPECT_NEAR(r.first().distance(), expected, 0.012f);
    EXPECT_GT(r.first().normal().y(), 0.9f);
    EXPECT_NEAR(r.first().shape_position().y(), kTop - r.first().distance(), 1e-3f);
    EXPECT_GE(r.first().triangle(), 0);
    EXPECT_GT(r.stats().triangles_tested(), 0u);
    // A sweep that stops short of the ground misses.
    grpc::ClientContext short_context;
    v1::SweepResponse miss;
    ASSERT_TRUE(
        query_->Sweep(&short_context, Down(Sphere(radius, g.x, kTop, g.z), g.distance - 2), &miss)
            .ok());
    EXPECT_FALSE(miss.hit());
  }
}

TEST_F(ShapeQueryTest, CapsuleSunkIntoTheGroundGetsContactsAndOverlaps) {
  std::vector<Ground> ground = FlatGround(1);
  ASSERT_FALSE(ground.empty());
  const Ground& g = ground[0];
  const float half_height = 0.9f, radius = 0.4f, sink = 0.1f;
  v1::PosedShape capsule = Capsule(half_height, radius, g.position.x(),
                                   g.position.y() + half_height + radius - sink, g.position.z());
  v1::ContactsRequest request;
  *request.mutable_shape() = capsule;
  grpc::ClientContext context;
  v1::ContactsResponse r;
  ASSERT_TRUE(query_->Contacts(&context, request, &r).ok());
  ASSERT_GT(r.chunks_size(), 0);
  float deepest = 0;
  for (const v1::ChunkContacts& c : r.chunks()) {
    EXPECT_LE(c.points_size(), 4);
    for (const v1::Contact& p : c.points()) {
      deepest = std::max(deepest, p.depth());
      EXPECT_GT(p.normal().y(), 0.9f);
    }
  }
  EXPECT_GT(deepest, 0.0f);
  EXPECT_LT(deepest, 3 * sink);
  EXPECT_FALSE(r.buried());
  EXPECT_TRUE(r.has_water());  // asked for (skip_water unset)

  // The same pose overlaps exactly, with its penetration; lifted clear, it does not.
  v1::OverlapRequest overlap;
  *overlap.mutable_shape() = capsule;
  overlap.set_include_penetration(true);
  grpc::ClientContext overlap_context;
  v1::OverlapResponse o;
  ASSERT_TRUE(query_->Overlap(&overlap_context, overlap, &o).ok());
  EXPECT_TRUE(o.touches_solid());
  EXPECT_GT(o.penetration().depth(), 0.0f);
  EXPECT_GT(o.penetration().normal().y(), 0.9f);
  overlap.mutable_shape()->mutable_position()->set_y(g.position.y() + half_height + radius + 0.3f);
  grpc::ClientContext clear_context;
  ASSERT_TRUE(query_->Overlap(&clear_context, overlap, &o).ok());
  EXPECT_FALSE(o.touches_solid());
  EXPECT_FALSE(o.has_penetration());

  // Started inside the ground, a sweep reports the initial overlap instead of sweeping.
  v1::SweepRequest sweep = Down(capsule, 5);
  grpc::ClientContext sweep_context;
  v1::SweepResponse s;
  ASSERT_TRUE(query_->Sweep(&sweep_context, sweep, &s).ok());
  EXPECT_TRUE(s.hit());
  EXPECT_TRUE(s.initial_overlap());
  EXPECT_GT(s.penetration().depth(), 0.0f);
  EXPECT_GT(s.penetration().normal().y(), 0.9f);
}

TEST_F(ShapeQueryTest, BatchMixesRaycastOverlapSweepAndContacts) {
  std::vector<Ground> ground = FlatGround(1);
  ASSERT_FALSE(ground.empty());
  const Ground& g = ground[0];
  v1::PosedShape capsule =
      Capsule(0.9f, 0.4f, g.position.x(), g.position.y() + 1.2f, g.position.z());
  v1::QueryBatchRequest batch;
  batch.set_batch_id(3);
  {
    v1::QueryRequest* q = batch.add_queries();
    q->set_client_id(1);
    Set(q->mutable_raycast()->mutable_origin(), g.x, kTop, g.z);
    Set(q->mutable_raycast()->mutable_direction(), 0, -1, 0);
    q->mutable_raycast()->set_max_distance(95);
  }
  {
    v1::QueryRequest* q = batch.add_queries();
    q->set_client_id(2);
    *q->mutable_sweep() = Down(Sphere(0.5f, g.x, kTop, g.z), 95);
  }
  {
    v1::QueryRequest* q = batch.add_queries();
    q->set_client_id(3);
    *q->mutable_contacts()->mutable_shape() = capsule;
  }
  {
    v1::QueryRequest* q = batch.add_queries();
    q->set_client_id(4);
    *q->mutable_overlap()->mutable_shape() = capsule;
  }
  {
    v1::QueryRequest* q = batch.add_queries();  // bad: zero direction
    q->set_client_id(5);
    *q->mutable_sweep() = Down(Sphere(0.5f, g.x, kTop, g.z), 95);
    Set(q->mutable_sweep()->mutable_direction(), 0, 0, 0);
  }
  {
    v1::QueryRequest* q = batch.add_queries();  // bad: no shape kind
    q->set_client_id(6);
    q->mutable_contacts()->mutable_shape()->mutable_position()->set_y(10);
  }
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = query_->Query(&context);
  ASSERT_TRUE(stream->Write(batch));
  v1::QueryBatchResponse response;
  ASSERT_TRUE(stream->Read(&response));
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(response.code(), 0) << response.message();
  ASSERT_EQ(response.results_size(), 6);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(response.results(i).code(), 0) << response.results(i).message();
  EXPECT_TRUE(response.results(0).raycast().hit());
  const v1::SweepResponse& sweep = response.results(1).sweep();
  ASSERT_TRUE(sweep.hit());
  EXPECT_LE(sweep.first().distance(), g.distance + 1e-3f);
  EXPECT_GE(sweep.first().distance(), g.distance - 0.6f);
  int points = 0;
  for (const v1::ChunkContacts& c : response.results(2).contacts().chunks())
    points += c.points_size();
  EXPECT_GT(points, 0);
  EXPECT_TRUE(response.results(3).overlap().touches_solid());
  EXPECT_EQ(response.results(4).code(), int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(response.results(4).message().find("direction"), std::string::npos)
      << response.results(4).message();
  EXPECT_EQ(response.results(5).code(), int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(response.results(5).message().find("shape.shape"), std::string::npos)
      << response.results(5).message();

  // Per-kind query counters include the new kinds.
  const std::string metrics = testing::HttpGet(server_.metrics_port(), "/metrics");
  EXPECT_GE(testing::MetricValue(metrics, "voxcol_queries_total{kind=\"sweep\"}"), 2) << metrics;
  EXPECT_GE(testing::MetricValue(metrics, "voxcol_queries_total{kind=\"contacts\"}"), 2) << metrics;
}

TEST_F(ShapeQueryTest, BadInputIsInvalidArgumentNamingTheField) {
  struct SweepCase {
    const char* name;
    v1::SweepRequest request;
    const char* field;
  };
  std::vector<SweepCase> cases;
  const v1::SweepRequest good = Down(Sphere(0.5f, 0.5f, 40, 0.5f), 50);
  {
    v1::SweepRequest r = good;
    r.mutable_shape()->clear_shape();
    cases.push_back(
        {"missing shape", r, "shape.shape: one of sphere, capsule, box, hull is required"});
  }
  {
    v1::SweepRequest r;
    Set(r.mutable_direction(), 0, -1, 0);
    r.set_distance(1);
    cases.push_back({"no posed shape at all", r, "shape.shape"});
  }
  {
    v1::SweepRequest r = good;
    r.mutable_shape()->mutable_shape()->mutable_sphere()->set_radius(NAN);
    cases.push_back({"NaN radius", r, "shape.shape.sphere.radius"});
  }
  {
    v1::SweepRequest r = good;
    r.mutable_shape()->mutable_shape()->mutable_sphere()->set_radius(
        21);  // above --max_shape_extent
    cases.push_back({"radius above the limit", r, "shape.shape.sphere.radius"});
  }
  {
    v1::SweepRequest r = good;
    Set(r.mutable_direction(), 0, 0, 0);
    cases.push_back({"zero direction", r, "direction"});
  }
  {
    v1::SweepRequest r = good;
    Set(r.mutable_direction(), 0, INFINITY, 0);
    cases.push_back({"infinite direction", r, "direction"});
  }
  {
    v1::SweepRequest r = good;
    r.set_distance(-1);
    cases.push_back({"negative distance", r, "distance"});
  }
  {
    v1::SweepRequest r = good;
    r.set_distance(101);  // --max_sweep_distance=100
    cases.push_back({"distance above the limit", r, "max_sweep_distance"});
  }
  {
    v1::SweepRequest r = good;
    v1::Quat* q = r.mutable_shape()->mutable_rotation();
    q->set_w(1);
    q->set_x(0.1f);
    cases.push_back({"non-unit rotation", r, "shape.rotation"});
  }
  {
    v1::SweepRequest r = good;
    v1::ConvexHullShape* hull = r.mutable_shape()->mutable_shape()->mutable_hull();
    for (int i = 0; i < 65; ++i)
      Set(hull->add_points(), std::cos(i * 0.1f), std::sin(i * 0.3f), std::cos(i * 0.7f));
    cases.push_back({"hull with 65 points", r, "shape.shape.hull.points"});
  }
  {
    v1::SweepRequest r = good;
    Set(r.mutable_shape()->mutable_position(), 0, 500, 0);
    cases.push_back({"position outside the world", r, "shape.position"});
  }
  {
    v1::SweepRequest r = good;
    r.set_collection(v1::HitCollection(42));
    cases.push_back({"unknown collection", r, "collection"});
  }
  for (const SweepCase& c : cases) {
    grpc::ClientContext context;
    v1::SweepResponse response;
    grpc::Status status = query_->Sweep(&context, c.request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.name;
    EXPECT_NE(status.error_message().find(c.field), std::string::npos)
        << c.name << ": " << status.error_message();
  }

  // Contacts: margin and the shape; Overlap names the shape field.
  struct ContactsCase {
    const char* name;
    float margin;
    const char* field;
  } margins[] = {{"negative margin", -0.1f, "margin"},
                 {"NaN margin", NAN, "margin"},
                 {"margin above the limit", 21, "margin"}};
  for (const ContactsCase& c : margins) {
    v1::ContactsRequest request;
    *request.mutable_shape() = Sphere(0.5f, 0.5f, 40, 0.5f);
    request.set_margin(c.margin);
    grpc::ClientContext context;
    v1::ContactsResponse response;
    grpc::Status status = query_->Contacts(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.name;
    EXPECT_NE(status.error_message().find(c.field), std::string::npos)
        << c.name << ": " << status.error_message();
  }
  {
    v1::ContactsRequest request;
    *request.mutable_shape() = Capsule(-1, 0.5f, 0.5f, 40, 0.5f);
    grpc::ClientContext context;
    v1::ContactsResponse response;
    grpc::Status status = query_->Contacts(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("shape.shape.capsule.half_height"), std::string::npos)
        << status.error_message();
  }
  {
    v1::OverlapRequest request;
    *request.mutable_shape() = Sphere(0.5f, 0.5f, 40, 0.5f);
    request.mutable_shape()->mutable_rotation()->set_w(2);
    grpc::ClientContext context;
    v1::OverlapResponse response;
    grpc::Status status = query_->Overlap(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("shape.rotation"), std::string::npos)
        << status.error_message();
  }

  // The server keeps serving, and a rotation within 1e-3 of unit length is accepted.
  EXPECT_TRUE(server_.Running());
  v1::SweepRequest near_unit = good;
  near_unit.mutable_shape()->mutable_rotation()->set_w(1.0005f);
  grpc::ClientContext context;
  v1::SweepResponse response;
  grpc::Status status = query_->Sweep(&context, near_unit, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(ShapeQueryTest, CliSweepContactsAndExactOverlapPrintHits) {
  std::vector<Ground> ground = FlatGround(1);
  ASSERT_FALSE(ground.empty());
  const Ground& g = ground[0];
  const std::string top =
      std::to_string(g.x) + "," + std::to_string(kTop) + "," + std::to_string(g.z);
  CommandResult sweep =
      Cli({"sweep", "--shape=sphere", "--radius=0.5", "--position=" + top, "--distance=95"});
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_EQ(sweep.out.rfind("hit  distance ", 0), 0u) << sweep.out;
  auto json = CliJson<v1::SweepResponse>(
      {"sweep", "--shape=box", "--half_extents=0.4,0.4,0.4", "--rotation=0.9238795,0,0.3826834,0",
       "--position=" + top, "--direction=0,-2,0", "--distance=95", "--collection=all"});
  EXPECT_TRUE(json.hit());
  EXPECT_GE(json.hits_size(), 1);
  auto hull = CliJson<v1::SweepResponse>(
      {"sweep", "--shape=hull", "--points=0,0.5,0;0.5,-0.5,0;-0.5,-0.5,0.3;0,0,-0.5",
       "--position=" + top, "--distance=95", "--collection=any"});
  EXPECT_TRUE(hull.hit());

  const float y = g.position.y() + 0.9f + 0.4f - 0.1f;
  const std::string sunk = std::to_string(g.position.x()) + "," + std::to_string(y) + "," +
                           std::to_string(g.position.z());
  CommandResult contacts = Cli({"contacts", "--shape=capsule", "--half_height=0.9", "--radius=0.4",
                                "--position=" + sunk, "--margin=0.05"});
  EXPECT_EQ(contacts.exit_code, 0) << contacts.err;
  EXPECT_NE(contacts.out.rfind("0 contact points", 0), 0u) << contacts.out;
  EXPECT_NE(contacts.out.find(" contact point"), std::string::npos) << contacts.out;
  EXPECT_NE(contacts.out.find("depth "), std::string::npos) << contacts.out;
  auto cj = CliJson<v1::ContactsResponse>({"contacts", "--shape=capsule", "--half_height=0.9",
                                           "--radius=0.4", "--position=" + sunk, "--skip_water"});
  EXPECT_GT(cj.chunks_size(), 0);
  EXPECT_FALSE(cj.has_water());

  CommandResult overlap = Cli({"overlap", "--shape=capsule", "--half_height=0.9", "--radius=0.4",
                               "--position=" + sunk, "--penetration"});
  EXPECT_EQ(overlap.exit_code, 0) << overlap.err;
  EXPECT_NE(overlap.out.find("solid yes"), std::string::npos) << overlap.out;
  EXPECT_NE(overlap.out.find("deepest penetration depth"), std::string::npos) << overlap.out;

  // Bad input from the CLI: the server's message names the field; a usage error exits 2.
  CommandResult bad =
      Cli({"sweep", "--shape=sphere", "--radius=0.5", "--position=" + top, "--distance=-3"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("INVALID_ARGUMENT"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("distance"), std::string::npos) << bad.err;
  CommandResult usage = Cli({"contacts", "--shape=cone", "--position=" + sunk});
  EXPECT_EQ(usage.exit_code, 2);
}

}  // namespace
}  // namespace voxcol
