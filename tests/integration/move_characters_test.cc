// MoveCharacters against the real server: a capsule dropped above a floor that an edit built lands
// on it and stays, through the unary RPC and through Query batches (the first a tick: the edit and
// the move in one batch). Bad moves are INVALID_ARGUMENT naming the field, and the server goes on
// serving.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/integration/proto_values.h"
#include "tests/integration/query_batch_client.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::SetVec;

// An underground room of the default cave world, dug out by the edit: x and z in [-6, 6], y from
// the floor (rock below kFloor) up to kFloor + 12.
constexpr float kFloor = -25.0f;
constexpr float kRadius = 0.4f;
constexpr float kHalfHeight = 0.5f;
constexpr float kRest =
    kFloor + kRadius + kHalfHeight;  // the centre's height standing on the floor

v1::EditPrimitive Block(float y0, float y1, uint32_t material) {
  v1::EditPrimitive p;
  v1::FillBlock* block = p.mutable_fill_block();
  SetVec(block->mutable_center(), 0, (y0 + y1) / 2, 0);
  SetVec(block->mutable_size(), 12, y1 - y0, 12);
  block->set_material(material);
  block->set_mode(v1::EDIT_MODE_SET);
  return p;
}

// The room: air above the floor, rock under it.
void AddRoom(v1::ApplyEditsRequest* edits) {
  *edits->add_primitives() = Block(kFloor, kFloor + 12, 0);
  *edits->add_primitives() = Block(kFloor - 4, kFloor, 2);
}

// One falling step of the capsule at `position`.
v1::MoveCharactersRequest Fall(const v1::Vec3& position) {
  v1::MoveCharactersRequest request;
  v1::CharacterMove* move = request.add_moves();
  move->set_client_id(77);
  move->set_radius(kRadius);
  move->set_half_height(kHalfHeight);
  *move->mutable_position() = position;
  SetVec(move->mutable_displacement(), 0, -0.5f, 0);
  return request;
}

// The capsule fell from 6 above the floor and rested for the last ticks of `path`.
void ExpectLandedAndStayed(const std::vector<v1::CharacterResult>& path) {
  ASSERT_EQ(path.size(), 30u);
  for (const v1::CharacterResult& r : path) {
    EXPECT_EQ(r.client_id(), 77u);
    EXPECT_GT(r.position().y(), kFloor + kRadius) << "sank into the floor";
    EXPECT_NEAR(r.position().x(), 0, 1e-3f);
    EXPECT_NEAR(r.position().z(), 0, 1e-3f);
  }
  EXPECT_EQ(path[0].ground(), v1::GROUND_STATE_AIRBORNE);
  const v1::CharacterResult& landed = path[20];
  EXPECT_EQ(landed.ground(), v1::GROUND_STATE_ON_GROUND);
  EXPECT_NEAR(landed.position().y(), kRest, 0.6f);  // the smooth floor lies within a voxel
  EXPECT_GT(landed.ground_normal().y(), 0.9f);
  EXPECT_EQ(landed.ground_material(), 2u);
  for (size_t i = 21; i < path.size(); ++i) {
    EXPECT_EQ(path[i].ground(), v1::GROUND_STATE_ON_GROUND) << "tick " << i;
    EXPECT_NEAR(path[i].position().y(), landed.position().y(), 1e-3f) << "tick " << i;
  }
}

class MoveCharactersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH,
                              {"--data_dir=" + dir_.path() + "/data", "--world_size=128,96,128",
                               "--query_threads=2", "--max_characters_per_request=4"},
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

TEST_F(MoveCharactersTest, UnaryCapsuleLandsOnAnEditedFloorAndStays) {
  auto edit = v1::EditService::NewStub(channel_);
  v1::ApplyEditsRequest room;
  AddRoom(&room);
  grpc::ClientContext edit_context;
  v1::EditAck ack;
  ASSERT_TRUE(edit->ApplyEdits(&edit_context, room, &ack).ok());

  std::vector<v1::CharacterResult> path;
  v1::Vec3 position;
  SetVec(&position, 0, kFloor + 6, 0);
  for (int tick = 0; tick < 30; ++tick) {
    grpc::ClientContext context;
    v1::MoveCharactersResponse response;
    grpc::Status status = query_->MoveCharacters(&context, Fall(position), &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(response.results_size(), 1);
    EXPECT_GE(response.version(), ack.version());
    path.push_back(response.results(0));
    position = response.results(0).position();
  }
  ExpectLandedAndStayed(path);
}

TEST_F(MoveCharactersTest, TickBatchEditsAndMovesTogether) {
  std::vector<v1::CharacterResult> path;
  v1::Vec3 position;
  SetVec(&position, 0, kFloor + 6, 0);
  for (int tick = 0; tick < 30; ++tick) {
    v1::QueryBatchRequest batch;
    batch.set_batch_id(uint64_t(tick));
    if (tick == 0) AddRoom(batch.mutable_edits());  // the first tick builds the room
    v1::QueryRequest* query = batch.add_queries();
    query->set_client_id(5);
    *query->mutable_move_characters() = Fall(position);
    v1::QueryBatchResponse response = Run(batch);
    ASSERT_EQ(response.code(), 0) << response.message();
    if (tick == 0) {
      EXPECT_EQ(response.version(), response.edit_ack().version());
    }
    ASSERT_EQ(response.results_size(), 1);
    const v1::QueryResult& result = response.results(0);
    ASSERT_EQ(result.code(), 0) << result.message();
    EXPECT_EQ(result.client_id(), 5u);
    ASSERT_EQ(result.move_characters().results_size(), 1);
    path.push_back(result.move_characters().results(0));
    position = path.back().position();
  }
  ExpectLandedAndStayed(path);
}

TEST_F(MoveCharactersTest, BadMovesAreInvalidArgumentNamingTheField) {
  v1::Vec3 position;
  SetVec(&position, 0, 0, 0);
  v1::MoveCharactersRequest bad = Fall(position);
  *bad.add_moves() = bad.moves(0);
  bad.mutable_moves(1)->mutable_settings()->set_skin_width(2);
  {
    grpc::ClientContext context;
    v1::MoveCharactersResponse response;
    grpc::Status status = query_->MoveCharacters(&context, bad, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(status.error_message().rfind("moves[1].settings.skin_width", 0), 0u)
        << status.error_message();
  }
  {
    v1::MoveCharactersRequest many = Fall(position);
    for (int i = 0; i < 4; ++i) *many.add_moves() = many.moves(0);  // 5 > the server's 4
    grpc::ClientContext context;
    v1::MoveCharactersResponse response;
    grpc::Status status = query_->MoveCharacters(&context, many, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("--max_characters_per_request"), std::string::npos)
        << status.error_message();
  }
  // In a batch the bad query fails alone; the good one next to it is answered.
  v1::QueryBatchRequest batch;
  *batch.add_queries()->mutable_move_characters() = bad;
  *batch.add_queries()->mutable_move_characters() = Fall(position);
  v1::QueryBatchResponse response = Run(batch);
  ASSERT_EQ(response.code(), 0) << response.message();
  ASSERT_EQ(response.results_size(), 2);
  EXPECT_EQ(response.results(0).code(), int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(response.results(0).message().rfind("moves[1].settings.skin_width", 0), 0u)
      << response.results(0).message();
  EXPECT_EQ(response.results(1).code(), 0) << response.results(1).message();
  EXPECT_EQ(response.results(1).move_characters().results_size(), 1);
  // And the unary RPC still serves.
  grpc::ClientContext context;
  v1::MoveCharactersResponse ok;
  EXPECT_TRUE(query_->MoveCharacters(&context, Fall(position), &ok).ok());
  EXPECT_EQ(ok.results_size(), 1);
}

}  // namespace
}  // namespace voxcol
