// MoveCharacters on the server side: the wire <-> core conversion of moves, settings and results
// (server/convert/convert.h) and RunMoveCharacters (server/exec/query_ops.h) on an analytic world:
// rock below y = -8, a lake of water -8 <= y < -4 where x >= 16. Bad moves are INVALID_ARGUMENT
// naming the field with its index.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <memory>

#include "server/convert/convert.h"
#include "server/exec/query_ops.h"
#include "tests/core/test_worlds.h"
#include "tests/server/lake_world.h"
#include "tests/server/server_test_util.h"

namespace voxcol::server {
namespace {

using test_util::ExpectInvalid;
using test_util::ExpectVec;
using test_util::V;

using test_util::kGround;
using test_util::kLake;
using test_util::kLakeX;
constexpr float kRadius = 0.4f;
constexpr float kHalfHeight = 0.5f;

v1::CharacterMove Move(const v1::Vec3& position, const v1::Vec3& displacement) {
  v1::CharacterMove move;
  move.set_radius(kRadius);
  move.set_half_height(kHalfHeight);
  *move.mutable_position() = position;
  *move.mutable_displacement() = displacement;
  return move;
}

TEST(MoveCharactersConvertTest, ZeroSettingsTakeTheCoreDefaults) {
  CharacterMove move;
  ASSERT_TRUE(FromProto(Move(V(1, 2, 3), V(0.5f, -1, 0)), QueryLimits{}, &move).ok());
  const CharacterSettings defaults;
  EXPECT_EQ(move.radius, kRadius);
  EXPECT_EQ(move.half_height, kHalfHeight);
  ExpectVec(move.position, Vec3(1, 2, 3));
  ExpectVec(move.displacement, Vec3(0.5f, -1, 0));
  EXPECT_EQ(move.settings.step_offset, defaults.step_offset);
  EXPECT_EQ(move.settings.slope_limit_degrees, defaults.slope_limit_degrees);
  EXPECT_EQ(move.settings.snap_distance, defaults.snap_distance);
  EXPECT_EQ(move.settings.max_slide_iterations, defaults.max_slide_iterations);
  EXPECT_EQ(move.settings.skin_width, defaults.skin_width);
  EXPECT_EQ(move.settings.swim_threshold, defaults.swim_threshold);
}

TEST(MoveCharactersConvertTest, SetSettingsRoundTrip) {
  CharacterSettings want;
  want.step_offset = 0.3f;
  want.slope_limit_degrees = 30;
  want.snap_distance = 0.1f;
  want.max_slide_iterations = 7;
  want.skin_width = 0.05f;
  want.swim_threshold = 0.8f;
  v1::CharacterMove wire = Move(V(0, 0, 0), V(0, 0, 0));
  ToProto(want, wire.mutable_settings());
  CharacterMove move;
  ASSERT_TRUE(FromProto(wire, QueryLimits{}, &move).ok());
  EXPECT_EQ(move.settings.step_offset, want.step_offset);
  EXPECT_EQ(move.settings.slope_limit_degrees, want.slope_limit_degrees);
  EXPECT_EQ(move.settings.snap_distance, want.snap_distance);
  EXPECT_EQ(move.settings.max_slide_iterations, want.max_slide_iterations);
  EXPECT_EQ(move.settings.skin_width, want.skin_width);
  EXPECT_EQ(move.settings.swim_threshold, want.swim_threshold);
}

TEST(MoveCharactersConvertTest, CapsuleSizesAreCheckedWithTheirWireNames) {
  QueryLimits limits;
  limits.max_shape_extent = 4;
  CharacterMove move;
  v1::CharacterMove wire = Move(V(0, 0, 0), V(0, 0, 0));
  wire.set_radius(0);
  ExpectInvalid(FromProto(wire, limits, &move), "radius");
  wire.set_radius(std::numeric_limits<float>::quiet_NaN());
  ExpectInvalid(FromProto(wire, limits, &move), "radius");
  wire.set_radius(0.5f);
  wire.set_half_height(-1);
  ExpectInvalid(FromProto(wire, limits, &move), "half_height");
  wire.set_half_height(3.75f);  // each within the limit, together above it
  ExpectInvalid(FromProto(wire, limits, &move), "half_height");
  wire.set_half_height(0);  // a sphere-like capsule is fine
  EXPECT_TRUE(FromProto(wire, limits, &move).ok());
}

TEST(MoveCharactersConvertTest, ResultCarriesEveryField) {
  CharacterResult r;
  r.position = Vec3(1, 2, 3);
  r.ground = GroundState::kOnSteepSlope;
  r.ground_normal = Vec3(0.6f, 0.8f, 0);
  r.ground_material = kMaterialRock;
  r.collisions = kCollisionSides | kCollisionDown;
  r.recovered = true;
  r.stepped = true;
  r.touched_materials = {2, 4};
  r.swimming = true;
  r.submerged_fraction = 0.75f;
  v1::CharacterResult out;
  ToProto(r, 42, &out);
  EXPECT_EQ(out.client_id(), 42u);
  ExpectVec(out.position(), r.position);
  EXPECT_EQ(out.ground(), v1::GROUND_STATE_ON_STEEP_SLOPE);
  ExpectVec(out.ground_normal(), r.ground_normal);
  EXPECT_EQ(out.ground_material(), kMaterialRock);
  EXPECT_EQ(out.collision_flags(),
            uint32_t(v1::CHARACTER_COLLISION_SIDES) | uint32_t(v1::CHARACTER_COLLISION_DOWN));
  EXPECT_TRUE(out.recovered());
  EXPECT_TRUE(out.stepped());
  ASSERT_EQ(out.touched_materials_size(), 2);
  EXPECT_EQ(out.touched_materials(0), 2u);
  EXPECT_EQ(out.touched_materials(1), 4u);
  EXPECT_TRUE(out.swimming());
  EXPECT_FLOAT_EQ(out.submerged_fraction(), 0.75f);

  CharacterResult airborne;
  v1::CharacterResult air;
  ToProto(airborne, 7, &air);
  EXPECT_EQ(air.ground(), v1::GROUND_STATE_AIRBORNE);
  EXPECT_FALSE(air.has_ground_normal());
  EXPECT_EQ(air.collision_flags(), 0u);
}

using MoveCharactersOpsTest = test_util::LakeWorldTest;

TEST_F(MoveCharactersOpsTest, DroppedCapsuleLandsAndStays) {
  const float rest = kGround + kRadius + kHalfHeight;  // centre height standing on the rock
  v1::Vec3 position = V(0, rest + 2, 0);
  v1::CharacterResult last;
  uint64_t triangles = 0;
  for (int tick = 0; tick < 20; ++tick) {
    v1::MoveCharactersRequest request;
    *request.add_moves() = Move(position, V(0, -0.5f, 0));
    request.mutable_moves(0)->set_client_id(9);
    request.set_include_stats(true);
    v1::MoveCharactersResponse response;
    ASSERT_TRUE(RunMoveCharacters(engine_, limits_, request, &response).ok());
    ASSERT_EQ(response.results_size(), 1);
    last = response.results(0);
    EXPECT_EQ(last.client_id(), 9u);
    EXPECT_GE(last.position().y(), rest - 0.01f) << "tick " << tick;  // never sinks in
    triangles += response.stats().triangles_tested();
    position = last.position();
  }
  EXPECT_GT(triangles, 0u);  // include_stats: the landing tested the ground's triangles
  EXPECT_EQ(last.ground(), v1::GROUND_STATE_ON_GROUND);
  EXPECT_NEAR(last.position().y(), rest, 0.05f);
  EXPECT_NEAR(last.position().x(), 0, 1e-4f);
  EXPECT_NEAR(last.ground_normal().y(), 1, 1e-3f);
  EXPECT_EQ(last.ground_material(), kMaterialRock);
  EXPECT_TRUE(last.collision_flags() & v1::CHARACTER_COLLISION_DOWN);
  EXPECT_FALSE(last.swimming());
}

TEST_F(MoveCharactersOpsTest, ResultsInRequestOrderWithWaterState) {
  v1::MoveCharactersRequest request;
  *request.add_moves() = Move(V(kLakeX + 8, kLake - 2, 0), V(0, 0, 0));  // deep in the lake
  *request.add_moves() = Move(V(-8, 0, 0), V(0, -0.1f, 0));              // in the air
  request.mutable_moves(0)->set_client_id(1);
  request.mutable_moves(1)->set_client_id(2);
  v1::MoveCharactersResponse response;
  ASSERT_TRUE(RunMoveCharacters(engine_, limits_, request, &response).ok());
  ASSERT_EQ(response.results_size(), 2);
  EXPECT_EQ(response.results(0).client_id(), 1u);
  EXPECT_TRUE(response.results(0).swimming());
  EXPECT_GT(response.results(0).submerged_fraction(), 0.9f);
  EXPECT_EQ(response.results(1).client_id(), 2u);
  EXPECT_EQ(response.results(1).ground(), v1::GROUND_STATE_AIRBORNE);
  EXPECT_NEAR(response.results(1).position().y(), -0.1f, 1e-4f);
  EXPECT_FALSE(response.has_stats());
}

TEST_F(MoveCharactersOpsTest, BadMovesNameTheFieldWithItsIndex) {
  auto run = [&](const v1::MoveCharactersRequest& request) {
    v1::MoveCharactersResponse response;
    absl::Status status = RunMoveCharacters(engine_, limits_, request, &response);
    if (!status.ok()) {
      EXPECT_EQ(response.results_size(), 0);
    }
    return status;
  };
  v1::MoveCharactersRequest request;
  for (int i = 0; i < 4; ++i) *request.add_moves() = Move(V(0, 0, 0), V(0, -0.1f, 0));
  ASSERT_TRUE(run(request).ok());

  v1::MoveCharactersRequest bad = request;
  bad.mutable_moves(3)->mutable_settings()->set_slope_limit_degrees(95);
  ExpectInvalid(run(bad), "moves[3].settings.slope_limit_degrees");
  bad = request;
  bad.mutable_moves(1)->set_radius(-1);
  ExpectInvalid(run(bad), "moves[1].radius");
  bad = request;
  *bad.mutable_moves(2)->mutable_position() = V(0, 1000, 0);
  ExpectInvalid(run(bad), "moves[2].position");
  bad = request;
  *bad.mutable_moves(0)->mutable_displacement() = V(std::nanf(""), 0, 0);
  ExpectInvalid(run(bad), "moves[0].displacement");
  bad = request;
  bad.mutable_moves(2)->mutable_settings()->set_max_slide_iterations(17);
  ExpectInvalid(run(bad), "moves[2].settings.max_slide_iterations");

  limits_.max_characters_per_request = 3;
  absl::Status too_many = run(request);
  ExpectInvalid(too_many, "moves");
  EXPECT_NE(too_many.message().find("--max_characters_per_request"), std::string::npos);
}

TEST_F(MoveCharactersOpsTest, InterruptStopsTheRequest) {
  v1::MoveCharactersRequest request;
  *request.add_moves() = Move(V(0, kGround + 1.5f, 0), V(1, -0.5f, 0));
  std::atomic<bool> cancelled{true};
  QueryInterrupt interrupt;
  interrupt.cancelled = &cancelled;
  v1::MoveCharactersResponse response;
  absl::Status status = RunMoveCharacters(engine_, limits_, request, &response, interrupt);
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_EQ(response.results_size(), 0);
}

// The server's work budget reaches every shape query of a move: a budget below what landing on
// the ground needs stops the request with RESOURCE_EXHAUSTED naming the flag.
TEST_F(MoveCharactersOpsTest, WorkBudgetAppliesToMoves) {
  v1::MoveCharactersRequest request;
  *request.add_moves() = Move(V(0, kGround + kRadius + kHalfHeight + 0.5f, 0), V(1, -1, 0));
  v1::MoveCharactersResponse response;
  ASSERT_TRUE(RunMoveCharacters(engine_, limits_, request, &response).ok());
  ServiceLimits tight = limits_;
  tight.query.max_query_triangles = 1;
  response.Clear();
  absl::Status status = RunMoveCharacters(engine_, tight, request, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_NE(status.message().find("--max_query_triangles=1"), std::string::npos) << status;
  EXPECT_EQ(response.results_size(), 0);
}

}  // namespace
}  // namespace voxcol::server
