// Packed raycasts (QueryBatchRequest.raycasts, server/exec/query_ops.h RunRaycastArrays) on the
// lake world (tests/server/lake_world.h: rock below y = -8, the plane y = -8 its smooth surface;
// water up to y = -4 where x >= 16). Downward rays are checked against the plane in closed form;
// random rays against the same rays sent one RaycastRequest each, field by field; bad arrays and
// bad rays name their field.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>

#include "server/exec/query_batch.h"
#include "server/exec/query_ops.h"
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

class RaycastArraysTest : public test_util::LakeWorldTest {
 protected:
  static void AddRay(const Vec3& origin, const Vec3& direction, v1::RaycastArrays* arrays) {
    for (int a = 0; a < 3; ++a) {
      arrays->add_origins(origin[a]);
      arrays->add_directions(direction[a]);
    }
  }
};

// Straight down from height h the ray meets the plane y = -8 at distance h + 8, normal +y, and
// the hit position is the origin moved down by that distance; a ray too short misses.
TEST_F(RaycastArraysTest, DownwardRaysHitThePlaneWhereItIs) {
  v1::RaycastArrays arrays;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> xz(-30, 15), height(-7.5f, 30);
  std::vector<Vec3> origins;
  for (int i = 0; i < 200; ++i) {
    origins.push_back(Vec3(xz(rng), height(rng), xz(rng)));
    AddRay(origins.back(), Vec3(0, -1, 0), &arrays);
    arrays.add_max_distances(i % 10 == 0 ? 0.25f : 100);  // every tenth ray stops short
  }
  v1::RaycastArrayResults out;
  ASSERT_TRUE(RunRaycastArrays(engine_, limits_, arrays, &out).ok());
  ASSERT_EQ(out.codes_size(), 200);
  ASSERT_EQ(out.positions_size(), 600);
  for (int i = 0; i < 200; ++i) {
    const float expected = origins[i].y - kGround;
    const bool reaches = (i % 10 == 0 ? 0.25f : 100.0f) >= expected;
    EXPECT_EQ(out.codes(i), 0) << i;
    ASSERT_EQ((out.flags(i) & v1::RAYCAST_FLAG_HIT) != 0, reaches) << i;
    if (!reaches) {
      EXPECT_EQ(out.distances(i), 0) << i;
      continue;
    }
    EXPECT_EQ(out.flags(i), v1::RAYCAST_FLAG_HIT | v1::RAYCAST_FLAG_FRONT_FACE) << i;
    EXPECT_NEAR(out.distances(i), expected, 1e-4f) << i;
    EXPECT_NEAR(out.positions(3 * i), origins[i].x, 1e-5f) << i;
    EXPECT_NEAR(out.positions(3 * i + 1), kGround, 1e-4f) << i;
    EXPECT_NEAR(out.positions(3 * i + 2), origins[i].z, 1e-5f) << i;
    EXPECT_NEAR(out.normals(3 * i + 1), 1, 1e-4f) << i;
    EXPECT_EQ(out.materials(i), uint32_t(kMaterialRock)) << i;
  }
}

// Random rays in both modes, with and without stopping at water, equal the same rays sent as
// RaycastRequest one by one in every field the arrays carry.
TEST_F(RaycastArraysTest, EveryRayEqualsTheSameRaycastRequest) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> coord(-31.5f, 31.5f), unit(-1, 1), length(0.5f, 80);
  for (v1::RaycastMode mode : {v1::RAYCAST_MODE_SMOOTH, v1::RAYCAST_MODE_BLOCKY}) {
    for (v1::WaterMode water : {v1::WATER_MODE_PASS_THROUGH, v1::WATER_MODE_STOP_AT_SURFACE}) {
      v1::RaycastArrays arrays;
      arrays.set_mode(mode);
      arrays.set_water_mode(water);
      for (int i = 0; i < 300; ++i) {
        AddRay(Vec3(coord(rng), coord(rng), coord(rng)), Vec3(unit(rng), unit(rng), unit(rng)),
               &arrays);
        arrays.add_max_distances(length(rng));
      }
      v1::RaycastArrayResults out;
      ASSERT_TRUE(RunRaycastArrays(engine_, limits_, arrays, &out).ok());
      int hits = 0, inside = 0;
      for (int i = 0; i < 300; ++i) {
        v1::RaycastRequest one;
        one.set_mode(mode);
        one.set_water_mode(water);
        *one.mutable_origin() =
            V(arrays.origins(3 * i), arrays.origins(3 * i + 1), arrays.origins(3 * i + 2));
        *one.mutable_direction() =
            V(arrays.directions(3 * i), arrays.directions(3 * i + 1), arrays.directions(3 * i + 2));
        one.set_max_distance(arrays.max_distances(i));
        v1::RaycastResponse want;
        ASSERT_TRUE(RunRaycast(engine_, limits_, one, &want).ok());
        SCOPED_TRACE(::testing::Message() << "ray " << i << " mode " << mode << " water " << water);
        EXPECT_EQ(out.codes(i), 0);
        EXPECT_EQ((out.flags(i) & v1::RAYCAST_FLAG_HIT) != 0, want.hit());
        if (!want.hit()) continue;
        ++hits;
        inside += want.started_inside();
        EXPECT_EQ((out.flags(i) & v1::RAYCAST_FLAG_STARTED_INSIDE) != 0, want.started_inside());
        EXPECT_EQ((out.flags(i) & v1::RAYCAST_FLAG_FRONT_FACE) != 0, want.first().front_face());
        EXPECT_EQ(out.distances(i), want.first().distance());
        EXPECT_EQ(out.positions(3 * i), want.first().position().x());
        EXPECT_EQ(out.positions(3 * i + 1), want.first().position().y());
        EXPECT_EQ(out.positions(3 * i + 2), want.first().position().z());
        EXPECT_EQ(out.normals(3 * i), want.first().normal().x());
        EXPECT_EQ(out.normals(3 * i + 1), want.first().normal().y());
        EXPECT_EQ(out.normals(3 * i + 2), want.first().normal().z());
        EXPECT_EQ(out.materials(i), want.first().material());
        EXPECT_EQ(out.voxels(3 * i), want.first().voxel().x());
        EXPECT_EQ(out.voxels(3 * i + 1), want.first().voxel().y());
        EXPECT_EQ(out.voxels(3 * i + 2), want.first().voxel().z());
      }
      // The sample covers hits, misses and origins inside the rock.
      EXPECT_GT(hits, 30);
      EXPECT_LT(hits, 290);
      EXPECT_GT(inside, 10);
    }
  }
}

// Arrays whose lengths do not fit together, or an unknown mode, fail as a whole naming the field.
TEST_F(RaycastArraysTest, MalformedArraysNameTheField) {
  v1::RaycastArrays good;
  AddRay(Vec3(0, 10, 0), Vec3(0, -1, 0), &good);
  AddRay(Vec3(1, 10, 0), Vec3(0, -1, 0), &good);
  good.add_max_distances(50);
  v1::RaycastArrayResults out;
  ASSERT_TRUE(RunRaycastArrays(engine_, limits_, good, &out).ok());

  v1::RaycastArrays bad = good;
  bad.add_origins(1);
  ExpectInvalid(RunRaycastArrays(engine_, limits_, bad, &out), "raycasts.origins");
  bad = good;
  bad.mutable_directions()->RemoveLast();
  ExpectInvalid(RunRaycastArrays(engine_, limits_, bad, &out), "raycasts.directions");
  bad = good;
  bad.add_max_distances(50);
  bad.add_max_distances(50);  // 3 values for 2 rays
  ExpectInvalid(RunRaycastArrays(engine_, limits_, bad, &out), "raycasts.max_distances");
  bad = good;
  bad.clear_max_distances();
  ExpectInvalid(RunRaycastArrays(engine_, limits_, bad, &out), "raycasts.max_distances");
  bad = good;
  bad.set_mode(v1::RaycastMode(42));
  ExpectInvalid(RunRaycastArrays(engine_, limits_, bad, &out), "raycasts.mode");
  bad = good;
  bad.set_water_mode(v1::WaterMode(42));
  ExpectInvalid(RunRaycastArrays(engine_, limits_, bad, &out), "raycasts.water_mode");
  // No rays at all is an empty answer, not an error.
  v1::RaycastArrayResults empty;
  ASSERT_TRUE(RunRaycastArrays(engine_, limits_, v1::RaycastArrays(), &empty).ok());
  EXPECT_EQ(empty.codes_size(), 0);
}

// A bad ray fails alone with its code; the message names the first bad ray's element; the rays
// around it are answered.
TEST_F(RaycastArraysTest, ABadRayFailsAloneNamingItsElement) {
  v1::RaycastArrays arrays;
  AddRay(Vec3(0, 10, 0), Vec3(0, -1, 0), &arrays);
  AddRay(Vec3(0, 40, 0), Vec3(0, -1, 0), &arrays);  // outside the world (y < 32)
  AddRay(Vec3(0, 10, 0), Vec3(0, 0, 0), &arrays);   // no direction
  AddRay(Vec3(2, 10, 0), Vec3(0, -1, 0), &arrays);
  for (float d : {50.0f, 50.0f, 50.0f, -1.0f}) arrays.add_max_distances(d);
  v1::RaycastArrayResults out;
  ASSERT_TRUE(RunRaycastArrays(engine_, limits_, arrays, &out).ok());
  EXPECT_EQ(out.codes(0), 0);
  EXPECT_EQ(out.codes(1), int(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(out.codes(2), int(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(out.codes(3), int(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(absl::StartsWith(out.message(), "raycasts.origins[1]: origin")) << out.message();
  EXPECT_NE(out.flags(0) & v1::RAYCAST_FLAG_HIT, 0u);
  for (int i = 1; i < 4; ++i) EXPECT_EQ(out.flags(i), 0u) << i;

  // The other fields name their element too, and one max_distances value is element 0.
  v1::RaycastArrays one;
  AddRay(Vec3(0, 10, 0), Vec3(0, 0, 0), &one);
  one.add_max_distances(5);
  ASSERT_TRUE(RunRaycastArrays(engine_, limits_, one, &out).ok());
  EXPECT_TRUE(absl::StartsWith(out.message(), "raycasts.directions[0]: direction"))
      << out.message();
  one.set_directions(0, 1);
  AddRay(Vec3(0, 10, 0), Vec3(0, -1, 0), &one);
  one.set_max_distances(0, 1e9f);
  v1::RaycastArrayResults two;
  ASSERT_TRUE(RunRaycastArrays(engine_, limits_, one, &two).ok());
  EXPECT_TRUE(absl::StartsWith(two.message(), "raycasts.max_distances[0]: max_distance"))
      << two.message();
}

// In a batch: the rays count against the batch limit, a malformed array fails the batch before
// anything runs, and a passed deadline answers nothing.
TEST_F(RaycastArraysTest, BatchLimitsMalformedArraysAndDeadlinesFailTheBatch) {
  v1::QueryBatchRequest batch;
  batch.set_batch_id(7);
  for (int i = 0; i < 3; ++i)
    AddRay(Vec3(float(i), 10, 0), Vec3(0, -1, 0), batch.mutable_raycasts());
  batch.mutable_raycasts()->add_max_distances(50);
  *batch.add_queries()->mutable_raycast()->mutable_origin() = V(0, 10, 0);
  batch.mutable_queries(0)->mutable_raycast()->set_max_distance(50);
  *batch.mutable_queries(0)->mutable_raycast()->mutable_direction() = V(0, -1, 0);

  BatchLimits limits;
  v1::QueryBatchResponse response;
  ExecuteBatch(engine_, limits_, limits, batch, absl::InfiniteFuture(), nullptr, &response);
  ASSERT_EQ(response.code(), 0) << response.message();
  EXPECT_EQ(response.batch_id(), 7u);
  EXPECT_EQ(response.results_size(), 1);
  ASSERT_EQ(response.raycasts().distances_size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(response.raycasts().distances(i), 18, 1e-4f);
  EXPECT_EQ(response.results(0).raycast().first().distance(), response.raycasts().distances(0));

  limits.max_queries = 3;  // 1 query + 3 rays
  response.Clear();
  ExecuteBatch(engine_, limits_, limits, batch, absl::InfiniteFuture(), nullptr, &response);
  EXPECT_EQ(response.code(), int(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(absl::StartsWith(response.message(), "queries and raycasts: 4 queries"))
      << response.message();
  EXPECT_FALSE(response.has_raycasts());

  v1::QueryBatchRequest malformed = batch;
  malformed.mutable_raycasts()->add_directions(0);
  response.Clear();
  ExecuteBatch(engine_, limits_, BatchLimits{}, malformed, absl::InfiniteFuture(), nullptr,
               &response);
  EXPECT_EQ(response.code(), int(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(absl::StartsWith(response.message(), "raycasts.directions")) << response.message();
  EXPECT_EQ(response.results_size(), 0);

  response.Clear();
  ExecuteBatch(engine_, limits_, BatchLimits{}, batch, absl::Now() - absl::Seconds(1), nullptr,
               &response);
  EXPECT_EQ(response.code(), int(absl::StatusCode::kDeadlineExceeded));
  EXPECT_FALSE(response.has_raycasts());
}

}  // namespace
}  // namespace voxcol::server
