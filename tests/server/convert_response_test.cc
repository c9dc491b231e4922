// server/convert/convert.h, core -> wire: every query result, field by field, from hand-built core
// results.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "server/convert/convert.h"
#include "tests/server/server_test_util.h"

namespace voxcol::server {
namespace {

using test_util::ExpectInt3;
using test_util::ExpectInvalid;
using test_util::ExpectVec;
using test_util::V;

// ---- Results.

RaycastHit MakeRaycastHit(float distance, bool front_face) {
  RaycastHit hit;
  hit.hit = true;
  hit.distance = distance;
  hit.position = {1, distance, 3};
  hit.normal = {0, 1, 0};
  hit.front_face = front_face;
  hit.voxel = {4, 5, 6};
  hit.value = Voxel{kMaterialRock, 200};
  hit.chunk = {-1, 0, 2};
  hit.triangle = 17;
  return hit;
}

TEST(RaycastToProto, FirstHitAndEveryCrossing) {
  std::vector<RaycastHit> all = {MakeRaycastHit(2, true), MakeRaycastHit(5, false)};
  v1::RaycastResponse response;
  ToProto(all[0], &all, &response);
  EXPECT_TRUE(response.hit());
  EXPECT_FALSE(response.started_inside());
  const v1::RaycastHit& first = response.first();
  EXPECT_EQ(first.distance(), 2);
  ExpectVec(first.position(), {1, 2, 3});
  ExpectVec(first.normal(), {0, 1, 0});
  EXPECT_EQ(first.material(), kMaterialRock);
  EXPECT_EQ(first.occupancy(), 200u);
  ExpectInt3(first.voxel(), {4, 5, 6});
  ExpectInt3(first.chunk(), {-1, 0, 2});
  EXPECT_EQ(first.triangle(), 17);
  EXPECT_TRUE(first.front_face());
  ASSERT_EQ(response.hits_size(), 2);
  EXPECT_EQ(response.hits(0).distance(), 2);
  EXPECT_EQ(response.hits(1).distance(), 5);
  EXPECT_FALSE(response.hits(1).front_face());
}

TEST(RaycastToProto, WithoutAllHitsOnlyTheFirst) {
  RaycastHit hit = MakeRaycastHit(3, true);
  hit.started_inside = true;
  v1::RaycastResponse response;
  ToProto(hit, nullptr, &response);
  EXPECT_TRUE(response.hit());
  EXPECT_TRUE(response.started_inside());
  EXPECT_EQ(response.first().distance(), 3);
  EXPECT_EQ(response.hits_size(), 0);
}

TEST(RaycastToProto, MissHasNoFirstHit) {
  v1::RaycastResponse response;
  std::vector<RaycastHit> none;
  ToProto(RaycastHit{}, &none, &response);
  EXPECT_FALSE(response.hit());
  EXPECT_FALSE(response.has_first());
  EXPECT_EQ(response.hits_size(), 0);
}

SweepHit MakeSweepHit(float distance) {
  SweepHit hit;
  hit.distance = distance;
  hit.position = {7, 8, 9};
  hit.normal = {0, 0, 1};
  hit.material = kMaterialRock;
  hit.chunk = {1, -2, 3};
  hit.triangle = 42;
  return hit;
}

TEST(SweepToProto, ShapePositionIsStartPlusDistanceAlongTheUnitDirection) {
  ConvexShape sphere = MakeSphere(1);
  SweepInput input;
  input.shape = PosedShape{&sphere, {}};
  input.shape.pose.translation = {1, 2, 3};
  input.direction = {0, 0, -2};  // not unit: the distance is along the normalized direction
  input.distance = 10;
  SweepResult result;
  result.hit = true;
  result.first = MakeSweepHit(1.5f);
  result.hits = {MakeSweepHit(1.5f), MakeSweepHit(4)};
  result.hits_truncated = true;
  v1::SweepResponse response;
  ToProto(result, input, &response);
  EXPECT_TRUE(response.hit());
  EXPECT_FALSE(response.initial_overlap());
  EXPECT_FALSE(response.has_penetration());
  const v1::SweepHit& first = response.first();
  EXPECT_EQ(first.distance(), 1.5f);
  ExpectVec(first.position(), {7, 8, 9});
  ExpectVec(first.normal(), {0, 0, 1});
  EXPECT_EQ(first.material(), kMaterialRock);
  ExpectInt3(first.chunk(), {1, -2, 3});
  EXPECT_EQ(first.triangle(), 42);
  ExpectVec(first.shape_position(), {1, 2, 1.5f});
  ASSERT_EQ(response.hits_size(), 2);
  ExpectVec(response.hits(1).shape_position(), {1, 2, -1});
  EXPECT_TRUE(response.hits_truncated());
}

TEST(SweepToProto, InitialOverlapCarriesThePenetration) {
  ConvexShape sphere = MakeSphere(1);
  SweepInput input;
  input.shape = PosedShape{&sphere, {}};
  input.direction = {1, 0, 0};
  SweepResult result;
  result.hit = true;
  result.initial_overlap = true;
  result.penetration = Penetration{0.25f, {0, 1, 0}, {5, 6, 7}};
  v1::SweepResponse response;
  ToProto(result, input, &response);
  EXPECT_TRUE(response.initial_overlap());
  ASSERT_TRUE(response.has_penetration());
  EXPECT_EQ(response.penetration().depth(), 0.25f);
  ExpectVec(response.penetration().normal(), {0, 1, 0});
  ExpectVec(response.penetration().position(), {5, 6, 7});
}

TEST(SweepToProto, MissHasNoHit) {
  ConvexShape sphere = MakeSphere(1);
  SweepInput input;
  input.shape = PosedShape{&sphere, {}};
  input.direction = {1, 0, 0};
  v1::SweepResponse response;
  ToProto(SweepResult{}, input, &response);
  EXPECT_FALSE(response.hit());
  EXPECT_FALSE(response.has_first());
  EXPECT_EQ(response.hits_size(), 0);
}

TEST(OverlapToProto, PenetrationOnlyWhenAskedAndTouchingSolid) {
  OverlapResult result;
  result.touches_solid = true;
  result.touches_water = true;
  result.chunks = {{{0, -1, 0}, kClassSolid}, {{1, -1, 0}, kClassSolid | kClassWater}};
  result.penetration = Penetration{0.5f, {0, 1, 0}, {1, 2, 3}};
  v1::OverlapResponse response;
  ToProto(result, /*include_penetration=*/true, &response);
  EXPECT_TRUE(response.touches_solid());
  EXPECT_TRUE(response.touches_water());
  ASSERT_EQ(response.chunks_size(), 2);
  ExpectInt3(response.chunks(0).chunk(), {0, -1, 0});
  EXPECT_TRUE(response.chunks(0).solid());
  EXPECT_FALSE(response.chunks(0).water());
  EXPECT_TRUE(response.chunks(1).solid());
  EXPECT_TRUE(response.chunks(1).water());
  ASSERT_TRUE(response.has_penetration());
  EXPECT_EQ(response.penetration().depth(), 0.5f);

  v1::OverlapResponse without;
  ToProto(result, /*include_penetration=*/false, &without);
  EXPECT_FALSE(without.has_penetration());
  result.touches_solid = false;
  v1::OverlapResponse water_only;
  ToProto(result, /*include_penetration=*/true, &water_only);
  EXPECT_FALSE(water_only.has_penetration());
}

TEST(ContactsToProto, PointsOfEachChunkWithTheirDepthSign) {
  ContactsResult result;
  ChunkContacts chunk;
  chunk.chunk = {2, -1, 0};
  chunk.count = 2;
  chunk.points[0] = Contact{{1, 2, 3}, {0, 1, 0}, 0.125f, kMaterialRock, 5};
  chunk.points[1] = Contact{{4, 5, 6}, {1, 0, 0}, -0.25f, 4, 6};  // separated, within the margin
  chunk.points[2] = Contact{{9, 9, 9}, {0, 1, 0}, 9, 9, 9};       // beyond count: not sent
  result.chunks.push_back(chunk);
  v1::ContactsResponse response;
  ToProto(result, /*include_water=*/false, &response);
  ASSERT_EQ(response.chunks_size(), 1);
  ExpectInt3(response.chunks(0).chunk(), {2, -1, 0});
  ASSERT_EQ(response.chunks(0).points_size(), 2);
  const v1::Contact& a = response.chunks(0).points(0);
  ExpectVec(a.position(), {1, 2, 3});
  ExpectVec(a.normal(), {0, 1, 0});
  EXPECT_EQ(a.depth(), 0.125f);
  EXPECT_EQ(a.material(), kMaterialRock);
  EXPECT_EQ(a.triangle(), 5);
  EXPECT_EQ(response.chunks(0).points(1).depth(), -0.25f);
  EXPECT_EQ(response.chunks(0).points(1).triangle(), 6);
  EXPECT_FALSE(response.buried());
  EXPECT_FALSE(response.has_penetration());
  EXPECT_FALSE(response.has_water());
}

TEST(ContactsToProto, BuriedCarriesThePenetration) {
  ContactsResult result;
  result.buried = true;
  result.penetration = Penetration{3, {0, 1, 0}, {1, 1, 1}};
  v1::ContactsResponse response;
  ToProto(result, /*include_water=*/false, &response);
  EXPECT_TRUE(response.buried());
  ASSERT_TRUE(response.has_penetration());
  EXPECT_EQ(response.penetration().depth(), 3);
  ExpectVec(response.penetration().position(), {1, 1, 1});
}

TEST(ContactsToProto, WaterContact) {
  ContactsResult result;
  result.water = WaterContact{true, 0.5f, 2.0f, -4, {1, -4.5f, 2}};
  v1::ContactsResponse response;
  ToProto(result, /*include_water=*/true, &response);
  ASSERT_TRUE(response.has_water());
  EXPECT_TRUE(response.water().in_water());
  EXPECT_EQ(response.water().submerged_fraction(), 0.5f);
  EXPECT_EQ(response.water().submerged_volume(), 2.0f);
  EXPECT_EQ(response.water().surface_height(), -4);
  ExpectVec(response.water().center_of_buoyancy(), {1, -4.5f, 2});

  result.water = WaterContact{};
  v1::ContactsResponse dry;
  ToProto(result, /*include_water=*/true, &dry);
  ASSERT_TRUE(dry.has_water());
  EXPECT_FALSE(dry.water().in_water());
  EXPECT_FALSE(dry.water().has_center_of_buoyancy());
}

TEST(ProbeToProto, TouchedChunksAndVoxelsWithTheirClasses) {
  ProbeResult result;
  result.may_touch_solid = true;
  result.may_touch_water = true;
  result.chunks = {{{0, 0, 0}, kClassSolid}, {{0, 0, 1}, kClassWater}};
  result.voxels = {{{1, 2, 3}, kClassSolid | kClassWater}, {{4, 5, 6}, kClassWater}};
  result.voxels_truncated = true;
  v1::ProbeResponse response;
  ToProto(result, &response);
  EXPECT_TRUE(response.may_touch_solid());
  EXPECT_TRUE(response.may_touch_water());
  ASSERT_EQ(response.chunks_size(), 2);
  EXPECT_TRUE(response.chunks(0).solid());
  EXPECT_FALSE(response.chunks(0).water());
  ExpectInt3(response.chunks(1).chunk(), {0, 0, 1});
  EXPECT_FALSE(response.chunks(1).solid());
  EXPECT_TRUE(response.chunks(1).water());
  ASSERT_EQ(response.voxels_size(), 2);
  ExpectInt3(response.voxels(0).voxel(), {1, 2, 3});
  EXPECT_TRUE(response.voxels(0).solid());
  EXPECT_TRUE(response.voxels(0).water());
  ExpectInt3(response.voxels(1).voxel(), {4, 5, 6});
  EXPECT_FALSE(response.voxels(1).solid());
  EXPECT_TRUE(response.voxels(1).water());
  EXPECT_TRUE(response.voxels_truncated());
}

TEST(StatsToProto, EveryCounter) {
  QueryStats stats;
  stats.voxels_visited = 1;
  stats.chunks_visited = 2;
  stats.tree_nodes_visited = 3;
  stats.triangles_tested = 4;
  stats.cache_builds = 5;
  v1::QueryStats out;
  ToProto(stats, &out);
  EXPECT_EQ(out.voxels_visited(), 1u);
  EXPECT_EQ(out.chunks_visited(), 2u);
  EXPECT_EQ(out.tree_nodes_visited(), 3u);
  EXPECT_EQ(out.triangles_tested(), 4u);
  EXPECT_EQ(out.cache_builds(), 5u);
}

// ---- Whole messages to and from gRPC byte buffers.

v1::QueryBatchResponse MakeBatchResponse(int results) {
  v1::QueryBatchResponse response;
  response.set_batch_id(42);
  response.set_version(7);
  for (int i = 0; i < results; ++i) {
    v1::QueryResult* r = response.add_results();
    r->set_client_id(uint64_t(i));
    ToProto(MakeRaycastHit(float(i) * 0.5f, i % 2 == 0), nullptr, r->mutable_raycast());
  }
  return response;
}

TEST(ConvertWireTest, SerializedBufferIsOneSliceOfTheStandardBytes) {
  const v1::QueryBatchResponse response = MakeBatchResponse(300);
  grpc::ByteBuffer buffer;
  ASSERT_TRUE(SerializeToByteBuffer(response, &buffer).ok());
  grpc::Slice slice;
  ASSERT_TRUE(buffer.TrySingleSlice(&slice).ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(slice.begin()), slice.size()),
            response.SerializeAsString());
}

TEST(ConvertWireTest, ParsesOneSliceAndManySlicesAlike) {
  const std::string bytes = MakeBatchResponse(300).SerializeAsString();
  grpc::Slice one(bytes);
  grpc::ByteBuffer single(&one, 1);
  // The same bytes cut at arbitrary places, as the transport delivers a large message.
  std::vector<grpc::Slice> pieces;
  for (size_t at = 0; at < bytes.size(); at += 997) pieces.emplace_back(bytes.substr(at, 997));
  grpc::ByteBuffer split(pieces.data(), pieces.size());
  for (grpc::ByteBuffer* buffer : {&single, &split}) {
    google::protobuf::Arena arena;
    auto* parsed = google::protobuf::Arena::CreateMessage<v1::QueryBatchResponse>(&arena);
    ASSERT_TRUE(ParseFromByteBuffer(buffer, parsed).ok());
    EXPECT_EQ(parsed->SerializeAsString(), bytes);
  }
}

TEST(ConvertWireTest, BytesThatAreNotTheMessageAreInvalidArgument) {
  const std::string garbage("\x0a\xff", 2);  // field 1 length-delimited, truncated length
  grpc::Slice slice(garbage);
  grpc::ByteBuffer single(&slice, 1);
  grpc::Slice halves[] = {grpc::Slice(garbage.substr(0, 1)), grpc::Slice(garbage.substr(1))};
  grpc::ByteBuffer split(halves, 2);
  for (grpc::ByteBuffer* buffer : {&single, &split}) {
    v1::QueryBatchRequest request;
    absl::Status status = ParseFromByteBuffer(buffer, &request);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("voxcol.v1.QueryBatchRequest"), std::string::npos)
        << status.message();
  }
}

}  // namespace
}  // namespace voxcol::server
