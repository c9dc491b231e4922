// Characters as bodies through the real server (issue 42, done-means 2): MoveCharacters with a
// body filter makes the characters of a request collide with each other and with the bodies sent
// by UpdateBodies. Two characters walking into each other stop at contact (the gap at most the
// skin width), never overlap (an independent capsule distance in double precision every tick),
// and the whole run is bit-identical with the moves given in reverse order. A character walks up
// to a box body and stops at it; its own body (same id) is never in its way.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/proto_values.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/body_service.grpc.pb.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::SetVec;

constexpr float kFloor = -25;  // the room's floor: rock below, air above up to kFloor + 12
constexpr float kRadius = 0.4f, kHalfHeight = 0.5f, kSkin = 0.02f;  // kSkin: the default
constexpr float kRest = kFloor + kRadius + kHalfHeight + 0.1f;      // starts just above the floor

v1::EditPrimitive Block(float y0, float y1, uint32_t material) {
  v1::EditPrimitive p;
  v1::FillBlock* block = p.mutable_fill_block();
  SetVec(block->mutable_center(), 0, (y0 + y1) / 2, 0);
  SetVec(block->mutable_size(), 20, y1 - y0, 20);
  block->set_material(material);
  block->set_mode(v1::EDIT_MODE_SET);
  return p;
}

// Distance between two upright capsules (centres a, b; same radius and half height), computed
// in double precision from their vertical core segments: the independent oracle.
double CapsuleGap(const v1::Vec3& a, const v1::Vec3& b) {
  const double dx = double(a.x()) - b.x(), dz = double(a.z()) - b.z();
  const double dy = std::max(0.0, std::abs(double(a.y()) - b.y()) - 2.0 * kHalfHeight);
  return std::sqrt(dx * dx + dy * dy + dz * dz) - 2.0 * kRadius;
}

struct Server {
  testing::TempDir dir;
  testing::ServerProcess process;
  std::unique_ptr<v1::QueryService::Stub> query;
  std::unique_ptr<v1::BodyService::Stub> bodies;

  void Start() {
    ASSERT_TRUE(process.Start(VOXCOL_SERVER_PATH,
                              {"--data_dir=" + dir.path() + "/data", "--world_size=128,96,128",
                               "--nav=false", "--store_sync=false"},
                              dir.path()))
        << process.Log();
    auto channel = grpc::CreateChannel(process.address(), grpc::InsecureChannelCredentials());
    query = v1::QueryService::NewStub(channel);
    bodies = v1::BodyService::NewStub(channel);
    auto edit = v1::EditService::NewStub(channel);
    v1::ApplyEditsRequest room;
    *room.add_primitives() = Block(kFloor, kFloor + 12, 0);
    *room.add_primitives() = Block(kFloor - 4, kFloor, 2);
    grpc::ClientContext context;
    v1::EditAck ack;
    grpc::Status status = edit->ApplyEdits(&context, room, &ack);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  grpc::Status Move(const v1::MoveCharactersRequest& request, v1::MoveCharactersResponse* out) {
    grpc::ClientContext context;
    return query->MoveCharacters(&context, request, out);
  }
};

v1::CharacterMove Walker(uint64_t id, const v1::Vec3& at, float dx) {
  v1::CharacterMove m;
  m.set_client_id(id);
  m.set_radius(kRadius);
  m.set_half_height(kHalfHeight);
  *m.mutable_position() = at;
  SetVec(m.mutable_displacement(), dx, -0.1f, 0);
  return m;
}

// 60 ticks of two characters walking toward each other along X (ids 1 from -3 and 2 from +3, at
// 0.1 per tick); `reversed` lists id 2's move first. Returns every tick's positions by id.
std::vector<std::map<uint64_t, v1::Vec3>> HeadOn(Server& s, bool collide, bool reversed) {
  std::map<uint64_t, v1::Vec3> at;
  SetVec(&at[1], -3, kRest, 0);
  SetVec(&at[2], 3, kRest, 0);
  std::vector<std::map<uint64_t, v1::Vec3>> ticks;
  for (int tick = 0; tick < 60; ++tick) {
    v1::MoveCharactersRequest request;
    if (collide) request.mutable_body_filter()->set_scope(v1::BODY_SCOPE_TERRAIN);
    for (uint64_t id : reversed ? std::vector<uint64_t>{2, 1} : std::vector<uint64_t>{1, 2}) {
      *request.add_moves() = Walker(id, at[id], id == 1 ? 0.1f : -0.1f);
    }
    v1::MoveCharactersResponse response;
    grpc::Status status = s.Move(request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    if (!status.ok() || response.results_size() != 2) return ticks;
    EXPECT_EQ(response.results(0).client_id(), request.moves(0).client_id());  // caller's order
    for (const v1::CharacterResult& r : response.results()) at[r.client_id()] = r.position();
    ticks.push_back(at);
  }
  return ticks;
}

TEST(CharactersAsBodies, HeadOnPairStopsAtContactNeverOverlapsAndAnyOrderGivesTheSameRun) {
  Server s;
  ASSERT_NO_FATAL_FAILURE(s.Start());
  const auto forward = HeadOn(s, true, false);
  const auto backward = HeadOn(s, true, true);
  ASSERT_EQ(forward.size(), 60u);
  ASSERT_EQ(backward.size(), 60u);
  double smallest = 1e9;
  int differ = 0;
  for (size_t t = 0; t < forward.size(); ++t) {
    const double gap = CapsuleGap(forward[t].at(1), forward[t].at(2));
    smallest = std::min(smallest, gap);
    EXPECT_GE(gap, 0.0) << "overlap at tick " << t;
    for (uint64_t id : {1u, 2u}) {
      const v1::Vec3 &a = forward[t].at(id), &b = backward[t].at(id);
      differ += a.x() != b.x() || a.y() != b.y() || a.z() != b.z();
    }
  }
  const double final_gap = CapsuleGap(forward.back().at(1), forward.back().at(2));
  std::printf("head on: final gap %.6f (skin %.2f), smallest %.6f; %d positions differ reversed\n",
              final_gap, kSkin, smallest, differ);
  EXPECT_LE(final_gap, kSkin + 1e-5);  // stopped at contact: no further than the skin apart
  EXPECT_EQ(differ, 0);
  // Without the filter the same moves pass through each other (the old behaviour).
  const auto through = HeadOn(s, false, false);
  ASSERT_EQ(through.size(), 60u);
  EXPECT_GT(through.back().at(1).x(), 2.0f);
}

// A box body (id 50, half extents 0.5) stands at x = 2; character 7 walks +X from x = -2 through
// a body with its own id (a sphere at x = 0, as a game server registers its players' hitboxes):
// it stops a skin width short of the box; ignoring the box, it walks on.
TEST(CharactersAsBodies, WalksUpToABoxBodyAndStopsThereButNotAtItsOwnBody) {
  Server s;
  ASSERT_NO_FATAL_FAILURE(s.Start());
  v1::UpdateBodiesRequest update;
  update.set_tick(1);
  v1::BodyCreate* box = update.add_create();
  box->set_id(50);
  SetVec(box->mutable_position(), 2, kFloor + 1.2f, 0);
  SetVec(box->add_parts()->mutable_shape()->mutable_box()->mutable_half_extents(), 0.5f, 1, 0.5f);
  v1::BodyCreate* own = update.add_create();
  own->set_id(7);
  SetVec(own->mutable_position(), 0, kRest, 0);  // on the way: would stop it at x -1.02
  own->add_parts()->mutable_shape()->mutable_sphere()->set_radius(0.6f);
  {
    grpc::ClientContext context;
    v1::UpdateBodiesResponse response;
    grpc::Status status = s.bodies->UpdateBodies(&context, update, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  auto walk = [&](bool ignore_box) {
    v1::Vec3 at;
    SetVec(&at, -2, kRest, 0);
    for (int tick = 0; tick < 60; ++tick) {
      v1::MoveCharactersRequest request;
      if (ignore_box)
        request.mutable_body_filter()->add_ignore_ids(50);
      else
        request.mutable_body_filter()->set_scope(v1::BODY_SCOPE_TERRAIN_AND_BODIES);
      *request.add_moves() = Walker(7, at, 0.1f);
      v1::MoveCharactersResponse response;
      grpc::Status status = s.Move(request, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      if (!status.ok()) return at;
      at = response.results(0).position();
      if (!ignore_box) {
        EXPECT_LE(at.x() + kRadius, 1.5f + 1e-5f) << "inside the box, tick " << tick;
      }
    }
    return at;
  };
  const v1::Vec3 stopped = walk(false);
  std::printf("stopped at x %.6f: gap to the box %.6f\n", stopped.x(), 1.5 - stopped.x() - kRadius);
  EXPECT_GE(1.5 - stopped.x() - kRadius, 0.0);
  EXPECT_LE(1.5 - stopped.x() - kRadius, kSkin + 1e-5);
  EXPECT_GT(walk(true).x(), 3.0f);  // the box ignored: on through it
}

TEST(CharactersAsBodies, BadRequestsNameTheField) {
  Server s;
  ASSERT_NO_FATAL_FAILURE(s.Start());
  v1::Vec3 a, b;
  SetVec(&a, -3, kRest, 0);
  SetVec(&b, 3, kRest, 0);
  auto expect = [&](const v1::MoveCharactersRequest& r, grpc::StatusCode code,
                    const std::string& field) {
    v1::MoveCharactersResponse response;
    grpc::Status status = s.Move(r, &response);
    EXPECT_EQ(status.error_code(), code) << status.error_message();
    EXPECT_EQ(status.error_message().rfind(field, 0), 0u) << status.error_message();
  };
  v1::MoveCharactersRequest twice;
  twice.mutable_body_filter();
  *twice.add_moves() = Walker(4, a, 0.1f);
  *twice.add_moves() = Walker(4, b, -0.1f);
  expect(twice, grpc::StatusCode::INVALID_ARGUMENT, "moves[1].client_id: ");
  v1::MoveCharactersRequest bodies_only;
  bodies_only.mutable_body_filter()->set_scope(v1::BODY_SCOPE_BODIES);
  *bodies_only.add_moves() = Walker(4, a, 0.1f);
  expect(bodies_only, grpc::StatusCode::INVALID_ARGUMENT, "body_filter.scope: ");
  v1::MoveCharactersRequest bad_move;
  bad_move.mutable_body_filter();
  *bad_move.add_moves() = Walker(4, a, 0.1f);
  bad_move.mutable_moves(0)->set_radius(-1);
  expect(bad_move, grpc::StatusCode::INVALID_ARGUMENT, "moves[0].radius");
  v1::MoveCharactersRequest no_such_tick;
  no_such_tick.mutable_body_filter()->set_tick(99);
  *no_such_tick.add_moves() = Walker(4, a, 0.1f);
  expect(no_such_tick, grpc::StatusCode::OUT_OF_RANGE, "body_filter.tick");
  // The same ids without a filter are fine: characters without collisions need no ids.
  twice.clear_body_filter();
  v1::MoveCharactersResponse response;
  EXPECT_TRUE(s.Move(twice, &response).ok());
}

}  // namespace
}  // namespace voxcol
