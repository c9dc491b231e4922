// QueryBatcher (client/query_batcher.h) against the real server: batches split at
// max_batch_queries answer like the unary RPCs, a broken stream fails its futures with UNAVAILABLE
// and a later Flush reconnects, destruction cancels what is left.
#include "client/query_batcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/server_process.h"

namespace voxcol::client {
namespace {

using voxcol::testing::ServerProcess;
using voxcol::testing::TempDir;

v1::RaycastRequest DownRay(float x, float z) {
  v1::RaycastRequest ray;
  ray.mutable_origin()->set_x(x);
  ray.mutable_origin()->set_y(40);
  ray.mutable_origin()->set_z(z);
  ray.mutable_direction()->set_y(-1);
  ray.set_max_distance(90);
  return ray;
}

std::vector<std::string> ServerArgs(const TempDir& dir) {
  return {"--data_dir=" + dir.path() + "/data", "--world_size=128,96,128"};
}

TEST(QueryBatcherTest, SplitBatchesAnswerLikeTheUnaryCalls) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH, ServerArgs(dir), dir.path()));
  Client client(server.address());
  QueryBatcherOptions options;
  options.max_batch_queries = 3;
  options.batch_timeout = std::chrono::seconds(10);
  QueryBatcher batcher(client, options);

  std::vector<std::future<QueryAnswer>> answers;
  for (int i = 0; i < 8; ++i) answers.push_back(batcher.Raycast(DownRay(4.5f * i - 20, 3.5f * i)));
  EXPECT_EQ(batcher.queued(), 8u);
  EXPECT_EQ(batcher.Flush(), 8u);
  EXPECT_EQ(batcher.queued(), 0u);
  for (int i = 0; i < 8; ++i) {
    QueryAnswer answer = answers[i].get();
    ASSERT_TRUE(answer.status.ok()) << i << ": " << answer.status.error_message();
    v1::RaycastResponse unary;
    ASSERT_TRUE(client.Raycast(DownRay(4.5f * i - 20, 3.5f * i), &unary).ok());
    ASSERT_TRUE(unary.hit());
    EXPECT_EQ(answer.version, unary.version());
    EXPECT_EQ(answer.result.raycast().first().position().y(), unary.first().position().y()) << i;
  }
  EXPECT_EQ(batcher.in_flight(), 0u);
  EXPECT_TRUE(batcher.Close().ok());
}

// Packed raycasts: one batch of arrays answers like the unary calls ray by ray, and leaves the
// queued queries queued.
TEST(QueryBatcherTest, PackedRaycastsAnswerLikeTheUnaryCalls) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH, ServerArgs(dir), dir.path()));
  Client client(server.address());
  QueryBatcher batcher(client);
  std::future<QueryAnswer> queued = batcher.Raycast(DownRay(1.5f, 2.5f));
  v1::RaycastArrays rays;
  for (int i = 0; i < 8; ++i) {
    const v1::RaycastRequest ray = DownRay(4.5f * i - 20, 3.5f * i);
    for (const v1::Vec3* v : {&ray.origin(), &ray.direction()}) {
      auto* out = v == &ray.origin() ? rays.mutable_origins() : rays.mutable_directions();
      out->Add(v->x());
      out->Add(v->y());
      out->Add(v->z());
    }
  }
  rays.add_max_distances(90);
  BatchAnswer answer = batcher.Raycasts(rays).get();
  ASSERT_TRUE(answer.status.ok()) << answer.status.error_message();
  ASSERT_EQ(answer.raycasts.codes_size(), 8);
  for (int i = 0; i < 8; ++i) {
    v1::RaycastResponse unary;
    ASSERT_TRUE(client.Raycast(DownRay(4.5f * i - 20, 3.5f * i), &unary).ok());
    ASSERT_TRUE(unary.hit());
    EXPECT_EQ(answer.raycasts.codes(i), 0) << i;
    EXPECT_EQ(answer.raycasts.flags(i) & v1::RAYCAST_FLAG_HIT, uint32_t(v1::RAYCAST_FLAG_HIT));
    EXPECT_EQ(answer.raycasts.positions(3 * i + 1), unary.first().position().y()) << i;
  }
  EXPECT_EQ(batcher.queued(), 1u);
  batcher.Flush();
  EXPECT_TRUE(queued.get().status.ok());
}

TEST(QueryBatcherTest, BrokenStreamFailsFuturesAndFlushReconnects) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH, ServerArgs(dir), dir.path()));
  const int port = server.port();
  Client client(server.address());
  QueryBatcherOptions options;
  options.reconnect_backoff = std::chrono::milliseconds(50);
  options.max_reconnect_backoff = std::chrono::milliseconds(200);
  QueryBatcher batcher(client, options);
  std::future<QueryAnswer> before = batcher.Raycast(DownRay(0.5f, 0.5f));
  batcher.Flush();
  QueryAnswer first = before.get();
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();

  ASSERT_EQ(server.Stop(), 0);
  std::future<QueryAnswer> down = batcher.Raycast(DownRay(0.5f, 0.5f));
  batcher.Flush();
  EXPECT_EQ(down.get().status.error_code(), grpc::StatusCode::UNAVAILABLE);

  // Same port and data: the next Flush after the backoff opens a new stream (gRPC's own channel
  // reconnect may take a few attempts).
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH,
                           {"--data_dir=" + dir.path() + "/data", "--world_size=128,96,128",
                            "--listen=127.0.0.1:" + std::to_string(port)},
                           dir.path()));
  ASSERT_EQ(server.port(), port);
  QueryAnswer again;
  for (int attempt = 0; attempt < 600; ++attempt) {
    std::future<QueryAnswer> answer = batcher.Raycast(DownRay(0.5f, 0.5f));
    batcher.Flush();
    again = answer.get();
    if (again.status.ok()) break;
    EXPECT_EQ(again.status.error_code(), grpc::StatusCode::UNAVAILABLE);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_EQ(again.result.raycast().first().position().y(),
            first.result.raycast().first().position().y());
  EXPECT_TRUE(batcher.Close().ok());
}

TEST(QueryBatcherTest, TickAppliesEditsBeforeItsQueries) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH, ServerArgs(dir), dir.path()));
  Client client(server.address());
  v1::RaycastResponse ground;
  ASSERT_TRUE(client.Raycast(DownRay(10.5f, -9.5f), &ground).ok());
  ASSERT_TRUE(ground.hit());
  QueryBatcher batcher(client);
  v1::ApplyEditsRequest edits;
  v1::FillBlock* block = edits.add_primitives()->mutable_fill_block();
  *block->mutable_center() = ground.first().position();
  block->mutable_center()->set_y(ground.first().position().y() + 2);
  block->mutable_size()->set_x(3);
  block->mutable_size()->set_y(4);
  block->mutable_size()->set_z(3);
  block->set_material(2);
  std::future<QueryAnswer> after = batcher.Raycast(DownRay(10.5f, -9.5f));
  BatchAnswer tick = batcher.FlushTick(edits, ground.version()).get();
  ASSERT_TRUE(tick.status.ok()) << tick.status.error_message();
  ASSERT_TRUE(tick.has_edit_ack);
  EXPECT_EQ(tick.version, tick.edit_ack.version());
  QueryAnswer answer = after.get();
  ASSERT_TRUE(answer.status.ok());
  EXPECT_EQ(answer.version, tick.edit_ack.version());
  // The ray now meets the block's top face, 4 above the old ground (within a voxel: the face is
  // voxelized and meshed).
  EXPECT_NEAR(answer.result.raycast().first().position().y(), ground.first().position().y() + 4,
              1.0);

  // A tick whose edits fail answers none of its queries, with the edits' code.
  std::future<QueryAnswer> unanswered = batcher.Raycast(DownRay(10.5f, -9.5f));
  v1::ApplyEditsRequest stale = edits;
  stale.set_expected_version(ground.version());
  BatchAnswer failed = batcher.FlushTick(stale).get();
  EXPECT_EQ(failed.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(unanswered.get().status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST(QueryBatcherTest, DestructionCancelsQueuedQueries) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH, ServerArgs(dir), dir.path()));
  Client client(server.address());
  std::future<QueryAnswer> never_sent;
  {
    QueryBatcher batcher(client);
    never_sent = batcher.Raycast(DownRay(0.5f, 0.5f));
  }
  EXPECT_EQ(never_sent.get().status.error_code(), grpc::StatusCode::CANCELLED);
}

}  // namespace
}  // namespace voxcol::client
