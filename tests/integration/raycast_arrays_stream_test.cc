// Packed raycasts (QueryBatchRequest.raycasts) through the real server's Query stream: the same
// rays sent as packed arrays and as RaycastRequest queries in one batch get the same answers, a
// tick's packed rays see the tick's own edit, and bad arrays fail as documented while the stream
// goes on.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "absl/strings/match.h"
#include "tests/integration/query_batch_client.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using Stream = grpc::ClientReaderWriter<v1::QueryBatchRequest, v1::QueryBatchResponse>;

void AddRay(float x, float y, float z, float dx, float dy, float dz, v1::RaycastArrays* arrays) {
  for (float v : {x, y, z}) arrays->add_origins(v);
  for (float v : {dx, dy, dz}) arrays->add_directions(v);
}

class RaycastArraysStreamTest : public ::testing::Test {
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

  testing::TempDir dir_;
  testing::ServerProcess server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::QueryService::Stub> query_;
};

// 2,000 random rays over the cave world (world box -64..64 x -48..48 x -64..64), each sent both
// ways in the same batch, so both read the same version: every field the arrays carry is equal.
TEST_F(RaycastArraysStreamTest, PackedRaysEqualTheSameRaycastQueries) {
  v1::QueryBatchRequest batch;
  v1::RaycastArrays* arrays = batch.mutable_raycasts();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> xz(-63, 63), y(-47, 47), unit(-1, 1), length(1, 120);
  constexpr int kRays = 2000;
  for (int i = 0; i < kRays; ++i) {
    AddRay(xz(rng), y(rng), xz(rng), unit(rng), unit(rng), unit(rng), arrays);
    arrays->add_max_distances(length(rng));
    v1::QueryRequest* q = batch.add_queries();
    q->set_client_id(i);
    v1::RaycastRequest* r = q->mutable_raycast();
    r->mutable_origin()->set_x(arrays->origins(3 * i));
    r->mutable_origin()->set_y(arrays->origins(3 * i + 1));
    r->mutable_origin()->set_z(arrays->origins(3 * i + 2));
    r->mutable_direction()->set_x(arrays->directions(3 * i));
    r->mutable_direction()->set_y(arrays->directions(3 * i + 1));
    r->mutable_direction()->set_z(arrays->directions(3 * i + 2));
    r->set_max_distance(arrays->max_distances(i));
  }
  const v1::QueryBatchResponse response = testing::RunOneBatch(*query_, batch);
  ASSERT_EQ(response.code(), 0) << response.message();
  ASSERT_EQ(response.results_size(), kRays);
  const v1::RaycastArrayResults& packed = response.raycasts();
  ASSERT_EQ(packed.codes_size(), kRays);
  ASSERT_EQ(packed.positions_size(), 3 * kRays);
  int hits = 0;
  for (int i = 0; i < kRays; ++i) {
    SCOPED_TRACE(i);
    const v1::QueryResult& one = response.results(i);
    ASSERT_EQ(one.code(), 0) << one.message();
    EXPECT_EQ(packed.codes(i), 0);
    const v1::RaycastResponse& want = one.raycast();
    EXPECT_EQ((packed.flags(i) & v1::RAYCAST_FLAG_HIT) != 0, want.hit());
    if (!want.hit()) continue;
    ++hits;
    EXPECT_EQ((packed.flags(i) & v1::RAYCAST_FLAG_STARTED_INSIDE) != 0, want.started_inside());
    EXPECT_EQ(packed.distances(i), want.first().distance());
    EXPECT_EQ(packed.positions(3 * i + 1), want.first().position().y());
    EXPECT_EQ(packed.normals(3 * i), want.first().normal().x());
    EXPECT_EQ(packed.materials(i), want.first().material());
    EXPECT_EQ(packed.voxels(3 * i + 2), want.first().voxel().z());
  }
  EXPECT_GT(hits, 200);
  EXPECT_LT(hits, kRays - 200);
}

// A tick that digs a hole under a downward ray answers its packed ray on the edit's version: the
// ray goes deeper than before the dig, by at least the hole's depth.
TEST_F(RaycastArraysStreamTest, ATicksPackedRaysSeeItsEdit) {
  v1::QueryBatchRequest look;
  AddRay(0.5f, 47, 0.5f, 0, -1, 0, look.mutable_raycasts());
  look.mutable_raycasts()->add_max_distances(200);
  const v1::QueryBatchResponse before = testing::RunOneBatch(*query_, look);
  ASSERT_EQ(before.code(), 0) << before.message();
  ASSERT_NE(before.raycasts().flags(0) & v1::RAYCAST_FLAG_HIT, 0u) << "the ray must hit ground";
  const float ground = before.raycasts().positions(1);

  v1::QueryBatchRequest tick = look;
  v1::FillBallRequest* ball = tick.mutable_edits()->add_primitives()->mutable_fill_ball();
  ball->mutable_center()->set_x(0.5f);
  ball->mutable_center()->set_y(ground);
  ball->mutable_center()->set_z(0.5f);
  ball->set_radius(4);
  ball->set_material(0);
  const v1::QueryBatchResponse after = testing::RunOneBatch(*query_, tick);
  ASSERT_EQ(after.code(), 0) << after.message();
  EXPECT_EQ(after.version(), after.edit_ack().version());
  EXPECT_GT(after.version(), before.version());
  // The hole reaches 4 below the old ground point; the ray now stops at its bottom or beyond.
  const bool hit = (after.raycasts().flags(0) & v1::RAYCAST_FLAG_HIT) != 0;
  if (hit) {
    EXPECT_LT(after.raycasts().positions(1), ground - 3.5f);
  }
}

// Malformed arrays fail their batch with INVALID_ARGUMENT naming the field, a bad ray fails
// alone, and the stream answers the next batch.
TEST_F(RaycastArraysStreamTest, BadArraysFailTheirBatchAndTheStreamGoesOn) {
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = query_->Query(&context);
  v1::QueryBatchRequest malformed;
  malformed.set_batch_id(1);
  AddRay(0, 40, 0, 0, -1, 0, malformed.mutable_raycasts());
  malformed.mutable_raycasts()->add_origins(1);  // 4 floats
  v1::QueryBatchRequest bad_ray;
  bad_ray.set_batch_id(2);
  AddRay(0, 40, 0, 0, -1, 0, bad_ray.mutable_raycasts());
  AddRay(500, 40, 0, 0, -1, 0, bad_ray.mutable_raycasts());  // outside the world
  bad_ray.mutable_raycasts()->add_max_distances(100);
  ASSERT_TRUE(stream->Write(malformed));
  ASSERT_TRUE(stream->Write(bad_ray));
  stream->WritesDone();
  v1::QueryBatchResponse response;
  int answered = 0;
  while (stream->Read(&response)) {
    ++answered;
    if (response.batch_id() == 1) {
      EXPECT_EQ(response.code(), int(grpc::StatusCode::INVALID_ARGUMENT));
      EXPECT_TRUE(absl::StartsWith(response.message(), "raycasts.origins")) << response.message();
      EXPECT_FALSE(response.has_raycasts());
    } else {
      ASSERT_EQ(response.code(), 0) << response.message();
      ASSERT_EQ(response.raycasts().codes_size(), 2);
      EXPECT_EQ(response.raycasts().codes(0), 0);
      EXPECT_EQ(response.raycasts().codes(1), int(grpc::StatusCode::INVALID_ARGUMENT));
      EXPECT_TRUE(absl::StartsWith(response.raycasts().message(), "raycasts.origins[1]:"))
          << response.raycasts().message();
    }
  }
  EXPECT_EQ(answered, 2);
  EXPECT_TRUE(stream->Finish().ok());
}

}  // namespace
}  // namespace voxcol
