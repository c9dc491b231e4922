// Many worlds per server (issue 22), against the real server binary on loopback: worlds copied
// from a template share its chunks (memory measured from /proc/<pid>/status), edits stay in their
// world, ListWorlds/DeleteWorld, bad ids, per-world cache budgets, and reopening at restart.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/http_get.h"
#include "tests/integration/process_memory.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"
#include "voxcol/v1/world_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::ServerProcess;
using testing::TempDir;

struct Size {
  int x, y, z;  // voxels
};

class WorldsTest : public ::testing::Test {
 protected:
  // Size: X,Y,Z voxels of the default world (and of generated ones).
  void Start(std::vector<std::string> extra = {}, const std::string& size = "256,128,256") {
    std::vector<std::string> args = {"--data_dir=" + dir_.path() + "/data", "--seed=5",
                                     "--world_size=" + size, "--max_worlds=128"};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH, args, dir_.path())) << server_.Log();
    grpc::ChannelArguments channel_args;
    channel_args.SetMaxReceiveMessageSize(-1);
    auto channel = grpc::CreateCustomChannel(server_.address(), grpc::InsecureChannelCredentials(),
                                             channel_args);
    worlds_ = v1::WorldService::NewStub(channel);
    edits_ = v1::EditService::NewStub(channel);
    queries_ = v1::QueryService::NewStub(channel);
  }

  grpc::Status Create(const std::string& id, const std::string& template_world,
                      v1::WorldSummary* out = nullptr) {
    v1::CreateWorldRequest request;
    request.set_world(id);
    if (!template_world.empty()) {
      request.set_template_world(template_world);
    } else {
      request.mutable_settings();
    }
    v1::WorldSummary summary;
    grpc::ClientContext context;
    grpc::Status status = worlds_->CreateWorld(&context, request, &summary);
    if (out != nullptr) *out = summary;
    return status;
  }

  grpc::Status Delete(const std::string& id) {
    v1::DeleteWorldRequest request;
    request.set_world(id);
    v1::DeleteWorldResponse response;
    grpc::ClientContext context;
    return worlds_->DeleteWorld(&context, request, &response);
  }

  std::vector<v1::WorldSummary> List() {
    v1::ListWorldsResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(worlds_->ListWorlds(&context, {}, &response).ok());
    return {response.worlds().begin(), response.worlds().end()};
  }

  v1::WorldSummary Find(const std::string& id) {
    for (const v1::WorldSummary& w : List()) {
      if (w.world() == id) return w;
    }
    ADD_FAILURE() << "no world " << id;
    return {};
  }

  // Fills a ball of `material` in `world`; returns the new version.
  uint64_t Fill(const std::string& world, float x, float y, float z, uint32_t material) {
    v1::FillBallRequest request;
    request.set_world(world);
    request.mutable_center()->set_x(x);
    request.mutable_center()->set_y(y);
    request.mutable_center()->set_z(z);
    request.set_radius(3);
    request.set_material(material);
    v1::EditAck ack;
    grpc::ClientContext context;
    grpc::Status status = edits_->FillBall(&context, request, &ack);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return ack.version();
  }

  // The material of voxel (x, y, z) in `world`.
  uint32_t Material(const std::string& world, int x, int y, int z) {
    v1::ReadVoxelsRequest request;
    request.set_world(world);
    auto* r = request.mutable_region();
    r->mutable_min()->set_x(x);
    r->mutable_min()->set_y(y);
    r->mutable_min()->set_z(z);
    r->mutable_max()->set_x(x + 1);
    r->mutable_max()->set_y(y + 1);
    r->mutable_max()->set_z(z + 1);
    v1::ReadVoxelsResponse response;
    grpc::ClientContext context;
    grpc::Status status = edits_->ReadVoxels(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.voxels().materials().empty() ? 999 : uint8_t(response.voxels().materials()[0]);
  }

  // ApplyEdits in `world`: one ball of `material` at (x, 0, z) under idempotency `key`.
  v1::EditAck Keyed(const std::string& world, const std::string& key, float x, float z,
                    uint32_t material) {
    v1::ApplyEditsRequest request;
    request.set_world(world);
    request.set_idempotency_key(key);
    *request.add_primitives()->mutable_fill_ball() = Ball(x, z, material);
    v1::EditAck ack;
    grpc::ClientContext context;
    grpc::Status status = edits_->ApplyEdits(&context, request, &ack);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return ack;
  }

  // One EditStream batch: the stream names `world`, its edits `edits_world`; the batch's answer.
  v1::EditStreamResponse StreamOne(const std::string& world, const std::string& edits_world,
                                   const std::string& key, float x, float z, uint32_t material) {
    v1::EditStreamRequest request;
    request.set_batch_id(7);
    request.set_world(world);
    request.mutable_edits()->set_world(edits_world);
    request.mutable_edits()->set_idempotency_key(key);
    *request.mutable_edits()->add_primitives()->mutable_fill_ball() = Ball(x, z, material);
    grpc::ClientContext context;
    auto stream = edits_->EditStream(&context);
    v1::EditStreamResponse response;
    EXPECT_TRUE(stream->Write(request));
    stream->WritesDone();
    EXPECT_TRUE(stream->Read(&response));
    EXPECT_TRUE(stream->Finish().ok());
    EXPECT_EQ(response.batch_id(), 7u);
    return response;
  }

  static v1::FillBallRequest Ball(float x, float z, uint32_t material) {
    v1::FillBallRequest ball;
    ball.mutable_center()->set_x(x);
    ball.mutable_center()->set_z(z);
    ball.set_radius(3);
    ball.set_material(material);
    ball.set_mode(v1::EDIT_MODE_SET);
    return ball;
  }

  // Reads every voxel of `world`, of `size` voxels (makes all its chunks resident).
  void TouchAll(const std::string& world, Size size = {256, 128, 256}) {
    // Thin slices: small responses, so that transient buffers hardly move the RSS measured.
    const int step = 8;
    for (int x = -size.x / 2; x < size.x / 2; x += step) {
      v1::ReadVoxelsRequest request;
      request.set_world(world);
      auto* r = request.mutable_region();
      r->mutable_min()->set_x(x);
      r->mutable_min()->set_y(-size.y / 2);
      r->mutable_min()->set_z(-size.z / 2);
      r->mutable_max()->set_x(std::min(x + step, size.x / 2));
      r->mutable_max()->set_y(size.y / 2);
      r->mutable_max()->set_z(size.z / 2);
      v1::ReadVoxelsResponse response;
      grpc::ClientContext context;
      grpc::Status status = edits_->ReadVoxels(&context, request, &response);
      ASSERT_TRUE(status.ok()) << status.error_message();
    }
  }

  // A straight-down smooth raycast in `world` at (x, z); the status, and the hit's y.
  grpc::Status RaycastDown(const std::string& world, float x, float z, float* hit_y = nullptr) {
    v1::RaycastRequest request;
    request.set_world(world);
    request.mutable_origin()->set_x(x);
    request.mutable_origin()->set_y(60);
    request.mutable_origin()->set_z(z);
    request.mutable_direction()->set_y(-1);
    request.set_max_distance(120);
    v1::RaycastResponse response;
    grpc::ClientContext context;
    grpc::Status status = queries_->Raycast(&context, request, &response);
    if (hit_y != nullptr) *hit_y = response.first().position().y();
    return status;
  }

  TempDir dir_;
  ServerProcess server_;
  std::unique_ptr<v1::WorldService::Stub> worlds_;
  std::unique_ptr<v1::EditService::Stub> edits_;
  std::unique_ptr<v1::QueryService::Stub> queries_;
};

// Done-means 2 of issue 22: 100 copies of a resident template (the server's default world size)
// cost < 5% of its resident size each until edited, and deleting them frees that memory. The
// template's size is ListWorlds' resident bytes: the payload of its non-uniform chunks (the
// uniform ones are interned), smaller than what the template takes in RSS. A copy's own cost is
// about 0.5 MiB (its RocksDB instance, a thread, tables) plus the broadphase slot pages its
// queries write: about 4% of a fully resident 512x192x512 template, 7.5% of a 256x128x256 one
// (docs/testing.md).
TEST_F(WorldsTest, HundredCopiesShareTheTemplatesChunksAndDeletingFreesThem) {
  Start({"--store_cache_mb=0"}, "512,192,512");
  Fill("default", 10, 0, 10, 9);  // the template has an edit of its own
  TouchAll("default", {512, 192, 512});
  const uint64_t template_bytes = Find("default").resident_bytes();
  ASSERT_GT(template_bytes, uint64_t(4) << 20);
  // A first copy and a query in it, so that one-off costs (thread pools, caches of the process)
  // are not charged to the copies.
  ASSERT_TRUE(Create("warmup", "default").ok());
  ASSERT_TRUE(RaycastDown("warmup", 1, 1).ok());
  ASSERT_TRUE(Delete("warmup").ok());
  const uint64_t before = uint64_t(testing::ResidentBytes(server_.pid()));
  constexpr int kCopies = 100;
  for (int i = 0; i < kCopies; ++i) {
    v1::WorldSummary summary;
    grpc::Status status = Create("match-" + std::to_string(i), "default", &summary);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(summary.template_world(), "default");
    float y = 0;
    ASSERT_TRUE(RaycastDown("match-" + std::to_string(i), 10, 10, &y).ok());
  }
  const uint64_t with_copies = uint64_t(testing::ResidentBytes(server_.pid()));
  const double per_world = (double(with_copies) - double(before)) / kCopies;
  ASSERT_TRUE(Delete("match-0").ok());
  for (int i = 1; i < kCopies; ++i) ASSERT_TRUE(Delete("match-" + std::to_string(i)).ok());
  const uint64_t after = uint64_t(testing::ResidentBytes(server_.pid()));
  std::printf(
      "template resident %.1f MiB (VmRSS %.1f MiB before the copies); 100 copies: VmRSS %.1f MiB, "
      "%.0f KiB per world = %.2f%% of the template; after deleting them: %.1f MiB\n",
      template_bytes / 1048576.0, before / 1048576.0, with_copies / 1048576.0, per_world / 1024,
      100.0 * per_world / double(template_bytes), after / 1048576.0);
  if (testing::kRssMeasuresTheServer) {
    EXPECT_LT(per_world, 0.05 * double(template_bytes));
    // Deleting gives back at least 80% of what the copies took.
    EXPECT_LT(double(after) - double(before), 0.2 * (double(with_copies) - double(before)) + 1e6);
  }
  EXPECT_EQ(List().size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/data/worlds/match-7"));
}

// Done-means 3 of issue 39: an idle server of a world 8192x256x8192 voxels (33.5M chunks) stays
// under 40 MiB resident, after a query, a metrics scrape and ListWorlds. Its broadphase slot
// array alone is 268 MiB of address space: only the pages queries write are resident.
TEST_F(WorldsTest, AnIdleServerOfAHugeWorldStaysUnder40MiBResident) {
  Start({}, "8192,256,8192");
  float y = 0;
  ASSERT_TRUE(RaycastDown("default", 10, 10, &y).ok());
  EXPECT_NE(testing::HttpGet(server_.metrics_port(), "/metrics").find("voxcol_"),
            std::string::npos);
  EXPECT_EQ(List().size(), 1u);
  const uint64_t rss = uint64_t(testing::ResidentBytes(server_.pid()));
  std::printf("idle server, 8192x256x8192 world: VmRSS %.1f MiB\n", rss / 1048576.0);
  if (testing::kRssMeasuresTheServer) {
    EXPECT_GT(rss, 0u);
    EXPECT_LT(rss, uint64_t(40) << 20);
  }
}

TEST_F(WorldsTest, EditsStayInTheirWorldBothWaysAndWorldsReopenAtRestart) {
  Start();
  const uint32_t original = Material("default", 40, 0, 40);
  const uint64_t template_version = Fill("default", 0, 0, 0, 7);  // before the copies
  ASSERT_TRUE(Create("a", "default").ok());
  ASSERT_TRUE(Create("b", "default").ok());
  EXPECT_EQ(Material("a", 0, 0, 0), 7u);  // the template's edit came along
  EXPECT_EQ(Find("a").version(), template_version);
  // An edit in a copy: invisible in the template and in the other copy.
  EXPECT_EQ(Fill("a", 40, 0, 40, 11), template_version + 1);
  EXPECT_EQ(Material("a", 40, 0, 40), 11u);
  EXPECT_EQ(Material("default", 40, 0, 40), original);
  EXPECT_EQ(Material("b", 40, 0, 40), original);
  // An edit in the template after the copies: invisible in them.
  Fill("default", -40, 0, -40, 12);
  EXPECT_EQ(Material("default", -40, 0, -40), 12u);
  EXPECT_NE(Material("a", -40, 0, -40), 12u);
  EXPECT_NE(Material("b", -40, 0, -40), 12u);
  // A generated world has none of it.
  ASSERT_TRUE(Create("fresh", "").ok());
  EXPECT_NE(Material("fresh", 0, 0, 0), 7u);
  EXPECT_EQ(Find("fresh").version(), 0u);
  // Per-world metrics, labelled `world`.
  const std::string metrics = testing::HttpGet(server_.metrics_port(), "/metrics");
  EXPECT_EQ(testing::MetricValue(metrics, "voxcol_worlds_version{world=\"a\"}"),
            double(template_version + 1));
  EXPECT_EQ(testing::MetricValue(metrics, "voxcol_worlds_version{world=\"fresh\"}"), 0.0);
  EXPECT_NE(metrics.find("voxcol_worlds_resident_chunks{world=\"default\"}"), std::string::npos);

  ASSERT_EQ(server_.Stop(), 0);
  Start();
  std::vector<v1::WorldSummary> worlds = List();
  ASSERT_EQ(worlds.size(), 4u);
  EXPECT_EQ(worlds[0].world(), "a");
  EXPECT_EQ(worlds[0].template_world(), "default");
  EXPECT_EQ(worlds[0].template_version(), template_version);
  EXPECT_EQ(Material("a", 40, 0, 40), 11u);
  EXPECT_EQ(Material("b", 40, 0, 40), original);
  EXPECT_EQ(Material("default", -40, 0, -40), 12u);
  EXPECT_NE(Material("b", -40, 0, -40), 12u);
  EXPECT_EQ(Material("b", 0, 0, 0), 7u);
}

// Edits reach the world their request names, also through EditStream (whose edits may repeat
// the stream's world but not name another), and idempotency keys are per world and survive a
// restart in a created world as in the default one: a retry after the restart is a replay there.
TEST_F(WorldsTest, EditStreamWorldsAndIdempotencyKeysAcrossARestart) {
  Start({}, "128,64,128");
  ASSERT_TRUE(Create("a", "").ok());
  const v1::EditAck in_a = Keyed("a", "k", 10, 10, 21);
  EXPECT_FALSE(in_a.replayed());
  // The same key in another world is another batch.
  const v1::EditAck in_default = Keyed("default", "k", 10, 10, 22);
  EXPECT_FALSE(in_default.replayed());
  EXPECT_EQ(Material("a", 10, 0, 10), 21u);
  EXPECT_EQ(Material("default", 10, 0, 10), 22u);

  // EditStream: the stream's world, with the edits' world empty or the same.
  const uint32_t default_before = Material("default", -10, 0, -10);
  v1::EditStreamResponse streamed = StreamOne("a", "", "s", -10, -10, 23);
  ASSERT_TRUE(streamed.has_ack()) << streamed.DebugString();
  EXPECT_EQ(Material("a", -10, 0, -10), 23u);
  EXPECT_EQ(Material("default", -10, 0, -10), default_before);
  streamed = StreamOne("a", "a", "", -20, -20, 24);
  ASSERT_TRUE(streamed.has_ack()) << streamed.DebugString();
  EXPECT_EQ(Material("a", -20, 0, -20), 24u);
  streamed = StreamOne("a", "default", "", 20, 20, 25);
  ASSERT_TRUE(streamed.has_error()) << streamed.DebugString();
  EXPECT_EQ(streamed.error().code(), int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(streamed.error().message().find("edits.world"), std::string::npos);
  EXPECT_NE(Material("a", 20, 0, 20), 25u);
  EXPECT_NE(Material("default", 20, 0, 20), 25u);
  const uint64_t a_version = Find("a").version();
  const uint64_t default_version = Find("default").version();

  ASSERT_EQ(server_.Stop(), 0);
  Start({}, "128,64,128");
  // Retries after the restart are replays of their own world's batch, and change nothing.
  const v1::EditAck retry_a = Keyed("a", "k", 10, 10, 21);
  EXPECT_TRUE(retry_a.replayed());
  EXPECT_EQ(retry_a.version(), in_a.version());
  const v1::EditAck retry_default = Keyed("default", "k", 10, 10, 22);
  EXPECT_TRUE(retry_default.replayed());
  EXPECT_EQ(retry_default.version(), in_default.version());
  streamed = StreamOne("a", "", "s", -10, -10, 23);
  ASSERT_TRUE(streamed.has_ack()) << streamed.DebugString();
  EXPECT_TRUE(streamed.ack().replayed());
  EXPECT_EQ(Find("a").version(), a_version);
  EXPECT_EQ(Find("default").version(), default_version);
}

TEST_F(WorldsTest, BadIdsAndDeletedWorldsAreRefusedNamingTheField) {
  Start();
  auto expect = [](const grpc::Status& status, grpc::StatusCode code, const std::string& field) {
    EXPECT_EQ(status.error_code(), code) << status.error_message();
    EXPECT_NE(status.error_message().find(field), std::string::npos) << status.error_message();
  };
  expect(Create("", ""), grpc::StatusCode::INVALID_ARGUMENT, "world");
  expect(Create("Upper", ""), grpc::StatusCode::INVALID_ARGUMENT, "world");
  expect(Create("a/b", ""), grpc::StatusCode::INVALID_ARGUMENT, "world");
  expect(Create(std::string(65, 'x'), ""), grpc::StatusCode::INVALID_ARGUMENT, "world");
  expect(Create("copy", "nope"), grpc::StatusCode::NOT_FOUND, "template_world");
  expect(Create("copy", "Bad!"), grpc::StatusCode::INVALID_ARGUMENT, "template_world");
  ASSERT_TRUE(Create("match_1-x", "").ok());
  expect(Create("match_1-x", ""), grpc::StatusCode::ALREADY_EXISTS, "world");
  expect(Create("default", ""), grpc::StatusCode::ALREADY_EXISTS, "world");
  expect(RaycastDown("nope", 0, 0), grpc::StatusCode::NOT_FOUND, "world");
  expect(RaycastDown("No Way", 0, 0), grpc::StatusCode::INVALID_ARGUMENT, "world");
  expect(Delete("default"), grpc::StatusCode::FAILED_PRECONDITION, "world");
  expect(Delete("nope"), grpc::StatusCode::NOT_FOUND, "world");
  EXPECT_TRUE(RaycastDown("match_1-x", 0, 0).ok());
  EXPECT_TRUE(RaycastDown("", 0, 0).ok());  // empty = the default world
  EXPECT_TRUE(RaycastDown("default", 0, 0).ok());
  ASSERT_TRUE(Delete("match_1-x").ok());
  expect(RaycastDown("match_1-x", 0, 0), grpc::StatusCode::NOT_FOUND, "world");
  ASSERT_EQ(List().size(), 1u);
  // The id is free again.
  EXPECT_TRUE(Create("match_1-x", "").ok());
}

// Each created world has its own share of the collision-cache budget: a busy world evicts its own
// entries, never the other worlds'.
TEST_F(WorldsTest, ABusyWorldEvictsOnlyItsOwnCache) {
  Start({"--chunk_collision_cache_mb=4", "--max_worlds=4"});  // 1 MiB per created world
  ASSERT_TRUE(Create("quiet", "").ok());
  ASSERT_TRUE(Create("busy", "").ok());
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(RaycastDown("quiet", 3.5f * i, 2).ok());
  const v1::WorldSummary quiet = Find("quiet");
  ASSERT_GT(quiet.collision_cache_bytes(), 0u);
  for (int x = -120; x < 120; x += 6) {
    for (int z = -120; z < 120; z += 6) ASSERT_TRUE(RaycastDown("busy", x + 0.5f, z + 0.5f).ok());
  }
  const v1::WorldSummary busy = Find("busy");
  std::printf(
      "busy world: cache %llu bytes, %llu evictions; quiet world: %llu bytes before, "
      "%llu after, %llu evictions\n",
      (unsigned long long)busy.collision_cache_bytes(),
      (unsigned long long)busy.collision_cache_evictions(),
      (unsigned long long)quiet.collision_cache_bytes(),
      (unsigned long long)Find("quiet").collision_cache_bytes(),
      (unsigned long long)Find("quiet").collision_cache_evictions());
  EXPECT_GT(busy.collision_cache_evictions(), 0u);
  EXPECT_LE(busy.collision_cache_bytes(), uint64_t(1) << 20);
  EXPECT_EQ(Find("quiet").collision_cache_bytes(), quiet.collision_cache_bytes());
  EXPECT_EQ(Find("quiet").collision_cache_evictions(), 0u);
}

}  // namespace
}  // namespace voxcol
