// server/exec/query_ops.h end to end: proto request in, proto response out, on an analytic world.
// Rock fills every voxel below y = -8 (the smooth surface is the plane y = -8), and a lake of
// water fills -8 <= y < -4 where x >= 16 (its surface is the plane y = -4). Bad requests must be
// INVALID_ARGUMENT with the offending field first in the message.
#include "server/exec/query_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "server/convert/convert.h"
#include "tests/core/test_worlds.h"
#include "tests/server/lake_world.h"
#include "tests/server/server_test_util.h"

namespace voxcol::server {
namespace {

using test_util::ExpectInvalid;
using test_util::V;

using test_util::kGround;
using test_util::kLake;
using test_util::kLakeX;

void ExpectUp(const v1::Vec3& normal, float tolerance) {
  EXPECT_NEAR(normal.x(), 0, tolerance);
  EXPECT_NEAR(normal.y(), 1, tolerance);
  EXPECT_NEAR(normal.z(), 0, tolerance);
}

class QueryOpsTest : public test_util::LakeWorldTest {
 protected:
  // A posed sphere of `radius` at `position`.
  static v1::PosedShape Sphere(float radius, const v1::Vec3& position) {
    v1::PosedShape posed;
    posed.mutable_shape()->mutable_sphere()->set_radius(radius);
    *posed.mutable_position() = position;
    return posed;
  }
};

// ---- Raycast.

v1::RaycastRequest DownRay(float x, float z) {
  v1::RaycastRequest request;
  *request.mutable_origin() = V(x, 10, z);
  *request.mutable_direction() = V(0, -1, 0);
  request.set_max_distance(100);
  return request;
}

// Direction length is irrelevant: a 1e30-long direction hits exactly where a unit one does (in
// float its squared length overflows), and so does a 1e-30-long one.
// The interrupt the service passes (the call's deadline, the stream's cancellation) reaches the
// shape queries: with a deadline already passed they stop with DEADLINE_EXCEEDED instead of
// answering.
TEST_F(QueryOpsTest, ShapeQueriesStopAtAPassedDeadline) {
  QueryInterrupt passed;
  passed.deadline = absl::Now() - absl::Seconds(1);
  v1::PosedShape shape;
  shape.mutable_shape()->mutable_sphere()->set_radius(4);
  *shape.mutable_position() = V(0.3f, kGround + 1, -0.6f);
  v1::ContactsRequest contacts;
  *contacts.mutable_shape() = shape;
  v1::ContactsResponse contacts_response;
  EXPECT_EQ(RunContacts(engine_, limits_, contacts, &contacts_response, passed).code(),
            absl::StatusCode::kDeadlineExceeded);
  v1::OverlapRequest overlap;
  *overlap.mutable_shape() = shape;
  v1::OverlapResponse overlap_response;
  EXPECT_EQ(RunOverlap(engine_, limits_, overlap, &overlap_response, passed).code(),
            absl::StatusCode::kDeadlineExceeded);
  v1::SweepRequest sweep;
  *sweep.mutable_shape() = shape;
  *sweep.mutable_direction() = V(1, 0, 0);
  sweep.set_distance(10);
  v1::SweepResponse sweep_response;
  EXPECT_EQ(RunSweep(engine_, limits_, sweep, &sweep_response, passed).code(),
            absl::StatusCode::kDeadlineExceeded);
  // Without the interrupt the same contacts answer.
  EXPECT_TRUE(RunContacts(engine_, limits_, contacts, &contacts_response).ok());
}

// The work budget (--max_query_triangles): a sphere sunk in the ground past it fails with
// RESOURCE_EXHAUSTED naming the budget and its flag, in every shape query, and the gRPC status is
// RESOURCE_EXHAUSTED too; within the default budget the same requests answer.
TEST_F(QueryOpsTest, ShapeQueriesPastTheWorkBudgetAreResourceExhausted) {
  const v1::PosedShape shape = Sphere(12, V(0.3f, kGround + 2, -0.6f));
  v1::ContactsRequest contacts;
  *contacts.mutable_shape() = shape;
  contacts.set_include_stats(true);
  v1::ContactsResponse contacts_response;
  ASSERT_TRUE(RunContacts(engine_, limits_, contacts, &contacts_response).ok());
  // The ground under the sphere has a few hundred triangles: a budget of 50 is too small.
  ASSERT_GT(contacts_response.stats().triangles_tested(), 100u);
  v1::OverlapRequest overlap;
  *overlap.mutable_shape() = shape;
  v1::OverlapResponse overlap_response;
  ASSERT_TRUE(RunOverlap(engine_, limits_, overlap, &overlap_response).ok());
  v1::SweepRequest sweep;
  *sweep.mutable_shape() = Sphere(12, V(0.3f, kGround + 14, -0.6f));
  *sweep.mutable_direction() = V(0, -1, 0);
  sweep.set_distance(20);
  v1::SweepResponse sweep_response;
  ASSERT_TRUE(RunSweep(engine_, limits_, sweep, &sweep_response).ok());
  ASSERT_TRUE(sweep_response.hit());

  ServiceLimits tight = limits_;
  tight.query.max_query_triangles = 50;
  const absl::Status statuses[] = {RunContacts(engine_, tight, contacts, &contacts_response),
                                   RunOverlap(engine_, tight, overlap, &overlap_response),
                                   RunSweep(engine_, tight, sweep, &sweep_response)};
  for (const absl::Status& status : statuses) {
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
    EXPECT_NE(status.message().find("--max_query_triangles=50"), std::string::npos) << status;
    EXPECT_EQ(ToGrpcStatus(status).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  }
}

TEST_F(QueryOpsTest, RaycastDirectionOfAnyLengthHitsLikeAUnitOne) {
  v1::RaycastRequest unit = DownRay(0.3f, -0.6f);
  v1::RaycastResponse expected;
  ASSERT_TRUE(RunRaycast(engine_, limits_, unit, &expected).ok());
  ASSERT_TRUE(expected.hit());
  for (float scale : {1e30f, 1e-30f}) {
    v1::RaycastRequest request = unit;
    *request.mutable_direction() = V(0, -scale, 0);
    v1::RaycastResponse response;
    ASSERT_TRUE(RunRaycast(engine_, limits_, request, &response).ok()) << scale;
    ASSERT_TRUE(response.hit()) << scale;
    EXPECT_EQ(response.first().distance(), expected.first().distance()) << scale;
  }
  // Sweeps too.
  v1::SweepRequest sweep;
  sweep.mutable_shape()->mutable_shape()->mutable_sphere()->set_radius(0.5f);
  *sweep.mutable_shape()->mutable_position() = V(0.3f, 10, -0.6f);
  *sweep.mutable_direction() = V(0, -1e30f, 0);
  sweep.set_distance(100);
  v1::SweepResponse swept;
  ASSERT_TRUE(RunSweep(engine_, limits_, sweep, &swept).ok());
  ASSERT_TRUE(swept.hit());
  EXPECT_NEAR(swept.first().distance(), 10 - kGround - 0.5f, 1e-2f);
}

TEST_F(QueryOpsTest, RaycastDownHitsTheGroundAtItsHeight) {
  v1::RaycastRequest request = DownRay(0.3f, -0.6f);
  request.set_include_stats(true);
  v1::RaycastResponse response;
  ASSERT_TRUE(RunRaycast(engine_, limits_, request, &response).ok());
  ASSERT_TRUE(response.hit());
  EXPECT_FALSE(response.started_inside());
  const v1::RaycastHit& first = response.first();
  EXPECT_NEAR(first.distance(), 10 - kGround, 1e-3f);
  EXPECT_NEAR(first.position().y(), kGround, 1e-3f);
  EXPECT_NEAR(first.position().x(), 0.3f, 1e-5f);
  EXPECT_NEAR(first.position().z(), -0.6f, 1e-5f);
  ExpectUp(first.normal(), 1e-3f);
  EXPECT_EQ(first.material(), kMaterialRock);
  EXPECT_GE(first.triangle(), 0);  // smooth by default
  EXPECT_EQ(response.hits_size(), 0);
  ASSERT_TRUE(response.has_stats());
  EXPECT_GT(response.stats().chunks_visited(), 0u);
}

TEST_F(QueryOpsTest, BlockyRaycastHitsTheTopFaceOfTheTopRockVoxel) {
  v1::RaycastRequest request = DownRay(0.3f, -0.6f);
  request.set_mode(v1::RAYCAST_MODE_BLOCKY);
  v1::RaycastResponse response;
  ASSERT_TRUE(RunRaycast(engine_, limits_, request, &response).ok());
  ASSERT_TRUE(response.hit());
  EXPECT_NEAR(response.first().distance(), 10 - kGround, 1e-4f);
  EXPECT_EQ(response.first().voxel().x(), 0);
  EXPECT_EQ(response.first().voxel().y(), int(kGround) - 1);
  EXPECT_EQ(response.first().voxel().z(), -1);
  EXPECT_EQ(response.first().triangle(), -1);
}

TEST_F(QueryOpsTest, RaycastAllHitsListsTheOneCrossing) {
  v1::RaycastRequest request = DownRay(0.3f, -0.6f);
  request.set_max_distance(25);  // ends inside the rock: one entry, no exit
  request.set_all_hits(true);
  v1::RaycastResponse response;
  ASSERT_TRUE(RunRaycast(engine_, limits_, request, &response).ok());
  ASSERT_TRUE(response.hit());
  ASSERT_EQ(response.hits_size(), 1);
  EXPECT_EQ(response.hits(0).distance(), response.first().distance());
  EXPECT_TRUE(response.hits(0).front_face());
}

TEST_F(QueryOpsTest, RaycastStopsAtTheLakeSurfaceOnlyWhenAsked) {
  v1::RaycastRequest request = DownRay(kLakeX + 4.3f, 0.4f);
  v1::RaycastResponse through;
  ASSERT_TRUE(RunRaycast(engine_, limits_, request, &through).ok());
  ASSERT_TRUE(through.hit());
  EXPECT_NEAR(through.first().distance(), 10 - kGround, 1e-3f);

  request.set_water_mode(v1::WATER_MODE_STOP_AT_SURFACE);
  v1::RaycastResponse stop;
  ASSERT_TRUE(RunRaycast(engine_, limits_, request, &stop).ok());
  ASSERT_TRUE(stop.hit());
  EXPECT_NEAR(stop.first().distance(), 10 - kLake, 1e-3f);
  EXPECT_EQ(stop.first().material(), kMaterialWater);
}

TEST_F(QueryOpsTest, RaycastMissesWhenTheGroundIsOutOfReach) {
  v1::RaycastRequest request = DownRay(0.3f, -0.6f);
  request.set_max_distance(10 - kGround - 0.5f);
  v1::RaycastResponse response;
  ASSERT_TRUE(RunRaycast(engine_, limits_, request, &response).ok());
  EXPECT_FALSE(response.hit());
  EXPECT_FALSE(response.has_first());
}

TEST_F(QueryOpsTest, BadRaycastsNameTheField) {
  v1::RaycastResponse response;
  v1::RaycastRequest request = DownRay(0.3f, -0.6f);
  *request.mutable_direction() = V(0, 0, 0);
  ExpectInvalid(RunRaycast(engine_, limits_, request, &response), "direction");
  request = DownRay(0.3f, -0.6f);
  request.set_max_distance(0);
  ExpectInvalid(RunRaycast(engine_, limits_, request, &response), "max_distance");
  request.set_max_distance(limits_.query.max_ray_distance * 2);
  ExpectInvalid(RunRaycast(engine_, limits_, request, &response), "max_distance");
  request = DownRay(0.3f, -0.6f);
  *request.mutable_origin() = V(0, 100, 0);  // above the world
  ExpectInvalid(RunRaycast(engine_, limits_, request, &response), "origin");
  request.mutable_origin()->set_y(std::nanf(""));
  ExpectInvalid(RunRaycast(engine_, limits_, request, &response), "origin");
  request = DownRay(0.3f, -0.6f);
  request.set_water_mode(static_cast<v1::WaterMode>(7));
  ExpectInvalid(RunRaycast(engine_, limits_, request, &response), "water_mode");
  EXPECT_FALSE(response.hit());  // nothing was answered
}

// ---- Sweep.

v1::SweepRequest DownSweep(const v1::PosedShape& shape, float distance) {
  v1::SweepRequest request;
  *request.mutable_shape() = shape;
  *request.mutable_direction() = V(0, -3, 0);  // any length
  request.set_distance(distance);
  return request;
}

TEST_F(QueryOpsTest, SphereSweptDownStopsOneRadiusAboveTheGround) {
  const float radius = 1.25f, start_y = 5;
  v1::SweepRequest request = DownSweep(Sphere(radius, V(0.3f, start_y, 0.7f)), 40);
  v1::SweepResponse response;
  ASSERT_TRUE(RunSweep(engine_, limits_, request, &response).ok());
  ASSERT_TRUE(response.hit());
  EXPECT_FALSE(response.initial_overlap());
  const v1::SweepHit& first = response.first();
  const float expected = start_y - radius - kGround;
  EXPECT_NEAR(first.distance(), expected, 0.01f);
  EXPECT_NEAR(first.position().y(), kGround, 0.01f);
  ExpectUp(first.normal(), 0.01f);
  // Where the shape's centre is at the hit: start + distance * unit direction.
  EXPECT_FLOAT_EQ(first.shape_position().x(), 0.3f);
  EXPECT_NEAR(first.shape_position().y(), start_y - first.distance(), 1e-5f);
  EXPECT_FLOAT_EQ(first.shape_position().z(), 0.7f);
  EXPECT_NEAR(first.shape_position().y(), kGround + radius, 0.01f);
}

TEST_F(QueryOpsTest, SweepFromInsideTheGroundReportsTheInitialOverlap) {
  // Sunk by 0.4: the way out is 0.4 up.
  v1::SweepRequest request = DownSweep(Sphere(1, V(2.1f, kGround + 0.6f, 3.3f)), 5);
  *request.mutable_direction() = V(1, 0, 0);
  v1::SweepResponse response;
  ASSERT_TRUE(RunSweep(engine_, limits_, request, &response).ok());
  ASSERT_TRUE(response.hit());
  EXPECT_TRUE(response.initial_overlap());
  ASSERT_TRUE(response.has_penetration());
  EXPECT_NEAR(response.penetration().depth(), 0.4f, 0.05f);
  ExpectUp(response.penetration().normal(), 0.1f);
}

TEST_F(QueryOpsTest, SweepShortOfTheGroundMisses) {
  v1::SweepRequest request = DownSweep(Sphere(1, V(0.3f, 5, 0.7f)), 5);
  v1::SweepResponse response;
  ASSERT_TRUE(RunSweep(engine_, limits_, request, &response).ok());
  EXPECT_FALSE(response.hit());
}

TEST_F(QueryOpsTest, BadSweepsNameTheField) {
  v1::SweepResponse response;
  v1::SweepRequest request = DownSweep(Sphere(1, V(0, 40, 0)), 10);  // above the world
  ExpectInvalid(RunSweep(engine_, limits_, request, &response), "shape.position");
  request = DownSweep(Sphere(1, V(0, 5, 0)), 10);
  *request.mutable_direction() = V(0, 0, 0);
  ExpectInvalid(RunSweep(engine_, limits_, request, &response), "direction");
  request = DownSweep(Sphere(1, V(0, 5, 0)), -1);
  ExpectInvalid(RunSweep(engine_, limits_, request, &response), "distance");
  request = DownSweep(Sphere(1, V(0, 5, 0)), limits_.query.max_sweep_distance + 1);
  ExpectInvalid(RunSweep(engine_, limits_, request, &response), "distance");
  request = DownSweep(Sphere(0, V(0, 5, 0)), 10);
  ExpectInvalid(RunSweep(engine_, limits_, request, &response), "shape.shape.sphere.radius");
  request = DownSweep(Sphere(1, V(0, 5, 0)), 10);
  request.mutable_shape()->mutable_rotation()->set_w(2);
  ExpectInvalid(RunSweep(engine_, limits_, request, &response), "shape.rotation");
  request = DownSweep(Sphere(1, V(0, 5, 0)), 10);
  request.mutable_shape()->mutable_shape()->clear_kind();
  ExpectInvalid(RunSweep(engine_, limits_, request, &response), "shape.shape");
  request = DownSweep(Sphere(1, V(0, 5, 0)), 10);
  request.set_collection(static_cast<v1::HitCollection>(9));
  ExpectInvalid(RunSweep(engine_, limits_, request, &response), "collection");
}

// ---- Overlap.

TEST_F(QueryOpsTest, OverlapOfASunkSphereTouchesSolidWithItsDepth) {
  v1::OverlapRequest request;
  *request.mutable_shape() = Sphere(2, V(0.3f, kGround + 0.5f, 0.7f));  // 1.5 into the rock
  request.set_include_penetration(true);
  v1::OverlapResponse response;
  ASSERT_TRUE(RunOverlap(engine_, limits_, request, &response).ok());
  EXPECT_TRUE(response.touches_solid());
  EXPECT_FALSE(response.touches_water());
  ASSERT_GT(response.chunks_size(), 0);
  for (const v1::TouchedChunk& c : response.chunks()) EXPECT_TRUE(c.solid());
  ASSERT_TRUE(response.has_penetration());
  EXPECT_NEAR(response.penetration().depth(), 1.5f, 0.05f);
  ExpectUp(response.penetration().normal(), 0.05f);
}

TEST_F(QueryOpsTest, OverlapInTheAirTouchesNothing) {
  v1::OverlapRequest request;
  *request.mutable_shape() = Sphere(2, V(0.3f, kGround + 2.5f, 0.7f));
  request.set_include_penetration(true);
  v1::OverlapResponse response;
  ASSERT_TRUE(RunOverlap(engine_, limits_, request, &response).ok());
  EXPECT_FALSE(response.touches_solid());
  EXPECT_FALSE(response.touches_water());
  EXPECT_EQ(response.chunks_size(), 0);
  EXPECT_FALSE(response.has_penetration());
}

TEST_F(QueryOpsTest, OverlapInTheLakeTouchesWater) {
  v1::OverlapRequest request;
  *request.mutable_shape() = Sphere(1, V(kLakeX + 6.3f, kLake - 1.5f, 0.7f));
  v1::OverlapResponse response;
  ASSERT_TRUE(RunOverlap(engine_, limits_, request, &response).ok());
  EXPECT_FALSE(response.touches_solid());
  EXPECT_TRUE(response.touches_water());
}

TEST_F(QueryOpsTest, BadOverlapsNameTheField) {
  v1::OverlapRequest request;
  *request.mutable_shape() = Sphere(1, V(0, 5, 0));
  v1::BoxShape* box = request.mutable_shape()->mutable_shape()->mutable_box();
  *box->mutable_half_extents() = V(-1, 1, 1);
  v1::OverlapResponse response;
  ExpectInvalid(RunOverlap(engine_, limits_, request, &response), "shape.shape.box.half_extents");
  *box->mutable_half_extents() = V(1, 1, limits_.query.max_shape_extent + 1);
  ExpectInvalid(RunOverlap(engine_, limits_, request, &response), "shape.shape.box.half_extents");
  request.mutable_shape()->mutable_shape()->mutable_hull();  // no points
  ExpectInvalid(RunOverlap(engine_, limits_, request, &response), "shape.shape.hull.points");
  *request.mutable_shape() = Sphere(1, V(std::nanf(""), 5, 0));
  ExpectInvalid(RunOverlap(engine_, limits_, request, &response), "shape.position");
}

// ---- Contacts.

TEST_F(QueryOpsTest, ContactsOfASunkSphereHaveItsDepthAndPointUp) {
  v1::ContactsRequest request;
  *request.mutable_shape() = Sphere(1, V(0.3f, kGround + 0.75f, 0.7f));  // 0.25 into the rock
  v1::ContactsResponse response;
  ASSERT_TRUE(RunContacts(engine_, limits_, request, &response).ok());
  ASSERT_GT(response.chunks_size(), 0);
  float deepest = -1;
  for (const v1::ChunkContacts& chunk : response.chunks()) {
    for (const v1::Contact& p : chunk.points()) {
      ExpectUp(p.normal(), 0.05f);
      EXPECT_NEAR(p.position().y(), kGround, 0.05f);
      deepest = std::max(deepest, p.depth());
    }
  }
  EXPECT_NEAR(deepest, 0.25f, 0.05f);  // depth > 0 is penetration
  EXPECT_FALSE(response.buried());
  ASSERT_TRUE(response.has_water());
  EXPECT_FALSE(response.water().in_water());
}

TEST_F(QueryOpsTest, ContactsWithinTheMarginHaveNegativeDepth) {
  v1::ContactsRequest request;
  *request.mutable_shape() = Sphere(1, V(0.3f, kGround + 1.2f, 0.7f));  // 0.2 above the rock
  v1::ContactsResponse none;
  ASSERT_TRUE(RunContacts(engine_, limits_, request, &none).ok());
  EXPECT_EQ(none.chunks_size(), 0);

  request.set_margin(0.5f);
  v1::ContactsResponse response;
  ASSERT_TRUE(RunContacts(engine_, limits_, request, &response).ok());
  ASSERT_GT(response.chunks_size(), 0);
  ASSERT_GT(response.chunks(0).points_size(), 0);
  EXPECT_NEAR(response.chunks(0).points(0).depth(), -0.2f, 0.05f);
}

TEST_F(QueryOpsTest, ContactsReportTheLakeUnlessSkipped) {
  v1::ContactsRequest request;
  *request.mutable_shape() = Sphere(1, V(kLakeX + 6.3f, kLake, 0.7f));  // centred on the surface
  v1::ContactsResponse response;
  ASSERT_TRUE(RunContacts(engine_, limits_, request, &response).ok());
  EXPECT_EQ(response.chunks_size(), 0);
  ASSERT_TRUE(response.has_water());
  EXPECT_TRUE(response.water().in_water());
  EXPECT_NEAR(response.water().submerged_fraction(), 0.5f, 0.05f);
  EXPECT_NEAR(response.water().surface_height(), kLake, 0.01f);
  EXPECT_LT(response.water().center_of_buoyancy().y(), kLake);

  request.set_skip_water(true);
  v1::ContactsResponse dry;
  ASSERT_TRUE(RunContacts(engine_, limits_, request, &dry).ok());
  EXPECT_FALSE(dry.has_water());
}

TEST_F(QueryOpsTest, BadContactsNameTheField) {
  v1::ContactsRequest request;
  *request.mutable_shape() = Sphere(1, V(0, 5, 0));
  request.set_margin(-1);
  v1::ContactsResponse response;
  ExpectInvalid(RunContacts(engine_, limits_, request, &response), "margin");
  request.set_margin(limits_.query.max_shape_extent + 1);
  ExpectInvalid(RunContacts(engine_, limits_, request, &response), "margin");
  request.set_margin(0);
  request.mutable_shape()->mutable_shape()->mutable_capsule()->set_radius(1);
  request.mutable_shape()->mutable_shape()->mutable_capsule()->set_half_height(-1);
  ExpectInvalid(RunContacts(engine_, limits_, request, &response),
                "shape.shape.capsule.half_height");
  request.mutable_shape()->clear_shape();
  ExpectInvalid(RunContacts(engine_, limits_, request, &response), "shape.shape");
}

// ---- Probe.

v1::ProbeRequest BoxProbe(const v1::Vec3& center, const v1::Vec3& half_extents) {
  v1::ProbeRequest request;
  *request.mutable_box()->mutable_center() = center;
  *request.mutable_box()->mutable_half_extents() = half_extents;
  return request;
}

// The probe is conservative (core/broadphase/probe.h): it grows the query by one voxel and answers
// from the masks, the occupancy dilated by one voxel, so the air layer y = kGround right above the
// rock may touch solid too.
TEST_F(QueryOpsTest, ProbeAtTheGroundMayTouchSolidAndListsTheVoxels) {
  // Spans x, z in [-0.5, 1.5] and y in [-9, -7]; grown: voxels -2..2 and -10..-7.
  v1::ProbeRequest request = BoxProbe(V(0.5f, kGround, 0.5f), V(1, 1, 1));
  request.set_include_voxels(true);
  request.set_include_stats(true);
  v1::ProbeResponse response;
  ASSERT_TRUE(RunProbe(engine_, limits_, request, &response).ok());
  EXPECT_TRUE(response.may_touch_solid());
  EXPECT_FALSE(response.may_touch_water());
  ASSERT_GT(response.chunks_size(), 0);
  ASSERT_GT(response.voxels_size(), 0);
  bool rock = false, dilated = false;
  for (const v1::TouchedVoxel& v : response.voxels()) {
    EXPECT_TRUE(v.solid());
    EXPECT_FALSE(v.water());
    EXPECT_LE(v.voxel().y(), kGround);  // at most one voxel above the rock
    EXPECT_GE(v.voxel().y(), kGround - 2);
    EXPECT_GE(v.voxel().x(), -2);
    EXPECT_LE(v.voxel().x(), 2);
    rock |= v.voxel().y() == kGround - 1;
    dilated |= v.voxel().y() == kGround;
  }
  EXPECT_TRUE(rock);
  EXPECT_TRUE(dilated);
  EXPECT_FALSE(response.voxels_truncated());
  ASSERT_TRUE(response.has_stats());
  EXPECT_GT(response.stats().chunks_visited(), 0u);
}

TEST_F(QueryOpsTest, ProbeTwoVoxelsAboveTheGroundMayTouchNothing) {
  v1::ProbeRequest request = BoxProbe(V(0.5f, kGround + 2.5f, 0.5f), V(0.4f, 0.4f, 0.4f));
  v1::ProbeResponse response;
  ASSERT_TRUE(RunProbe(engine_, limits_, request, &response).ok());
  EXPECT_FALSE(response.may_touch_solid());
  EXPECT_FALSE(response.may_touch_water());
}

TEST_F(QueryOpsTest, ProbeMaxVoxelsTruncates) {
  v1::ProbeRequest request = BoxProbe(V(0.5f, kGround, 0.5f), V(3, 3, 3));
  request.set_include_voxels(true);
  request.set_max_voxels(2);
  v1::ProbeResponse response;
  ASSERT_TRUE(RunProbe(engine_, limits_, request, &response).ok());
  EXPECT_EQ(response.voxels_size(), 2);
  EXPECT_TRUE(response.voxels_truncated());
}

TEST_F(QueryOpsTest, ProbeInTheAirMayTouchNothing) {
  v1::ProbeRequest request;
  *request.mutable_sphere()->mutable_center() = V(0.5f, 10, 0.5f);
  request.mutable_sphere()->set_radius(3);
  v1::ProbeResponse response;
  ASSERT_TRUE(RunProbe(engine_, limits_, request, &response).ok());
  EXPECT_FALSE(response.may_touch_solid());
  EXPECT_FALSE(response.may_touch_water());
}

TEST_F(QueryOpsTest, ProbeInTheLakeMayTouchWater) {
  v1::ProbeRequest request = BoxProbe(V(kLakeX + 6.5f, kLake - 1.5f, 0.5f), V(0.5f, 0.5f, 0.5f));
  v1::ProbeResponse response;
  ASSERT_TRUE(RunProbe(engine_, limits_, request, &response).ok());
  EXPECT_TRUE(response.may_touch_water());
  EXPECT_FALSE(response.may_touch_solid());
}

TEST_F(QueryOpsTest, BadProbesNameTheField) {
  v1::ProbeResponse response;
  ExpectInvalid(RunProbe(engine_, limits_, BoxProbe(V(0, 0, 0), V(-1, 1, 1)), &response),
                "box.half_extents.x");
  ExpectInvalid(RunProbe(engine_, limits_, BoxProbe(V(0, 0, 0), V(1, 1, 1e6f)), &response),
                "box.half_extents.z");
  ExpectInvalid(RunProbe(engine_, limits_, BoxProbe(V(0, 99, 0), V(1, 1, 1)), &response),
                "box.center");
  v1::ProbeRequest sphere;
  *sphere.mutable_sphere()->mutable_center() = V(0, 0, 0);
  sphere.mutable_sphere()->set_radius(std::nanf(""));
  ExpectInvalid(RunProbe(engine_, limits_, sphere, &response), "sphere.radius");
  ExpectInvalid(RunProbe(engine_, limits_, v1::ProbeRequest(), &response), "shape");
  v1::ProbeRequest many = BoxProbe(V(0, 0, 0), V(1, 1, 1));
  many.set_include_voxels(true);
  many.set_max_voxels(limits_.query.max_probe_voxels + 1);
  ExpectInvalid(RunProbe(engine_, limits_, many, &response), "max_voxels");
}

}  // namespace
}  // namespace voxcol::server
