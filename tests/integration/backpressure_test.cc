// Clients that stop reading (issue 38, backpressure): a Query stream whose client keeps sending
// batches but never reads their answers, and Subscribe streams that never read while edits flow,
// each hold at most the documented bytes on the real server (its pending/buffered-bytes gauges
// and its resident memory from /proc), are ended with RESOURCE_EXHAUSTED naming the flag, and the
// server answers other clients meanwhile. docs/reliability-backpressure.md has the bounds.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/voxcol_client.h"
#include "tests/integration/http_get.h"
#include "tests/integration/process_memory.h"
#include "tests/integration/query_batch_client.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::kRssMeasuresTheServer;
using testing::ResidentBytes;
using testing::ServerProcess;
using testing::TempDir;
using Clock = std::chrono::steady_clock;
constexpr double kMiB = 1024.0 * 1024.0;

double Metric(const ServerProcess& server, const std::string& name) {
  return testing::MetricValue(testing::HttpGet(server.metrics_port(), "/metrics"), name);
}

// A channel of its own (a distinct argument keeps it off the others' connection) whose HTTP/2
// window stays at the initial 64 KiB: no BDP probing, so a client that does not read soon
// stops the server's writes to it.
std::shared_ptr<grpc::Channel> SlowReaderChannel(const std::string& address, int id) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt("voxcol.test_connection", id);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

// `rays` packed rays of 8 world units through the cave world (box -64..64 x -48..48 x -64..64):
// about 28 bytes of request and 40 of answer per ray.
v1::QueryBatchRequest RayBatch(int rays) {
  v1::QueryBatchRequest batch;
  v1::RaycastArrays* arrays = batch.mutable_raycasts();
  for (int i = 0; i < rays; ++i) {
    for (float v : {-60.0f + float(i % 120), -40.0f + float(i / 120 % 80), -60.0f + float(i % 97)})
      arrays->add_origins(v);
    for (float v : {0.3f, -1.0f, 0.2f}) arrays->add_directions(v);
  }
  arrays->add_max_distances(8);
  return batch;
}

// A client that opens a Query stream and writes 4,096-ray batches without ever reading, on a
// server with --max_stream_pending_mb=8: the server's queued responses (its gauge) never exceed
// the 8 MiB, its resident memory grows by at most that plus the batches in flight and a stated
// slack, the stream is ended with RESOURCE_EXHAUSTED naming the flag (counted in
// voxcol_query_streams_ended_slow_total), the client receives at most the response that was being
// written, and another client's batches are answered all along. Without the limit the server kept
// reading and queued every answer (600 batches: ~100 MB).
TEST(BackpressureTest, QueryStreamThatStopsReadingIsEndedAtItsPendingLimit) {
  constexpr int kLimitMb = 8, kBatches = 600, kRays = 4096;
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(
      server.Start(VOXCOL_SERVER_PATH,
                   {"--data_dir=" + dir.path() + "/data", "--world_size=128,96,128",
                    "--query_threads=2", "--max_stream_pending_mb=" + std::to_string(kLimitMb)},
                   dir.path()))
      << server.Log();
  v1::QueryBatchRequest batch = RayBatch(kRays);
  auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  auto stub = v1::QueryService::NewStub(channel);
  // Warm up (the chunks' collision meshes, the heaps) and learn the answer's size.
  size_t response_bytes = 0;
  for (int i = 0; i < 20; ++i) {
    v1::QueryBatchResponse warm = testing::RunOneBatch(*stub, batch);
    ASSERT_EQ(warm.code(), 0) << warm.message();
    response_bytes = warm.ByteSizeLong();
  }
  const double rss_before = ResidentBytes(server.pid());
  ASSERT_GT(rss_before, 0);

  auto stalled_stub = v1::QueryService::NewStub(SlowReaderChannel(server.address(), 1));
  grpc::ClientContext stalled_context;
  stalled_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(50));
  auto stalled = stalled_stub->Query(&stalled_context);
  std::atomic<int> written{0};
  std::thread writer([&] {
    v1::QueryBatchRequest next = batch;
    for (int i = 0; i < kBatches; ++i) {
      next.set_batch_id(uint64_t(i));
      if (!stalled->Write(next)) break;  // the server ended the stream
      written.fetch_add(1);
    }
  });
  // Until the server ends the stream: its memory and pending bytes, and another client's batches.
  double max_rss = rss_before, max_pending = 0, max_other_ms = 0;
  int other_batches = 0;
  const auto give_up = Clock::now() + std::chrono::seconds(30);
  while (Metric(server, "voxcol_query_streams_ended_slow_total") < 1 && Clock::now() < give_up) {
    max_rss = std::max(max_rss, ResidentBytes(server.pid()));
    max_pending = std::max(max_pending, Metric(server, "voxcol_query_stream_pending_bytes"));
    const auto start = Clock::now();
    v1::QueryBatchResponse other = testing::RunOneBatch(*stub, batch);
    max_other_ms = std::max(
        max_other_ms, std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    EXPECT_EQ(other.code(), 0) << other.message();
    ++other_batches;
  }
  max_rss = std::max(max_rss, ResidentBytes(server.pid()));
  const double pending_after_end = Metric(server, "voxcol_query_stream_pending_bytes");
  std::printf(
      "stalled Query stream: %d batches written, response %zu bytes, max pending %.2f MiB, "
      "pending after the end %.0f bytes, server RSS +%.1f MiB (limit %d MiB); other client: %d "
      "batches, slowest %.1f ms\n",
      written.load(), response_bytes, max_pending / kMiB, pending_after_end,
      (max_rss - rss_before) / kMiB, kLimitMb, other_batches, max_other_ms);
  if (Metric(server, "voxcol_query_streams_ended_slow_total") != 1) {
    stalled_context.TryCancel();  // the writer may wait for flow control for ever
    writer.join();
    FAIL() << "the stream was not ended within 30 s (" << written.load()
           << " batches written, max pending " << max_pending / kMiB << " MiB)";
  }
  EXPECT_GT(other_batches, 0);

  // Now the client reads: at most the answer that was being written, then the status.
  int received = 0;
  v1::QueryBatchResponse response;
  while (stalled->Read(&response)) ++received;
  writer.join();
  grpc::Status status = stalled->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_NE(status.error_message().find("--max_stream_pending_mb"), std::string::npos)
      << status.error_message();
  EXPECT_LE(received, 1);
  EXPECT_LT(written.load(), kBatches / 2) << "the server kept reading the stalled stream";

  // The bound: queued answers at most the limit (the first always fits, and these are smaller);
  // after the end only the one being written. Memory: the limit, the 8 batches in flight
  // (requests and answers), and 24 MiB of slack for the heaps' free lists and gRPC's buffers.
  EXPECT_LE(max_pending, kLimitMb * kMiB);
  EXPECT_LE(pending_after_end, double(response_bytes) + 1024);
  const double in_flight = 8.0 * (batch.ByteSizeLong() + response_bytes);
  if (kRssMeasuresTheServer) {
    EXPECT_LE(max_rss - rss_before, kLimitMb * kMiB + in_flight + 24 * kMiB);
  }
  double pending = -1;
  for (int i = 0; i < 100 && pending != 0; ++i) {  // the last write's completion runs after it
    pending = Metric(server, "voxcol_query_stream_pending_bytes");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(pending, 0);
}

// Edit i: a set-mode FillRegion of 32^3 voxels with its own material, in one of 16 places.
v1::ApplyEditsRequest Fill(int i) {
  constexpr int kEdge = 32;
  v1::ApplyEditsRequest request;
  v1::FillRegion* fill = request.add_primitives()->mutable_fill_region();
  const int x = -64 + (i * kEdge) % 128, z = -64 + kEdge * ((i * kEdge) / 128 % 4);
  fill->mutable_region()->mutable_min()->set_x(x);
  fill->mutable_region()->mutable_min()->set_y(-8);
  fill->mutable_region()->mutable_min()->set_z(z);
  fill->mutable_region()->mutable_max()->set_x(x + kEdge);
  fill->mutable_region()->mutable_max()->set_y(-8 + kEdge);
  fill->mutable_region()->mutable_max()->set_z(z + kEdge);
  fill->set_material(10 + i % 200);
  fill->set_mode(v1::EDIT_MODE_SET);
  return request;
}

// 8 subscribers with include_voxels that never read, each on its own region (so that none shares
// another's encoded responses: each holds its own bytes), on a server with --subscribe_buffer_mb=1,
// while 200 edits of 32^3 voxels (64 KiB of voxels per response) are applied: the buffered bytes
// (voxcol_subscribe_buffered_bytes) never exceed 8 x 1 MiB, afterwards only the responses being
// written, the server's resident memory grows by at most that plus the change feed's copy of the
// edits and a stated slack, and every one of them is ended with RESOURCE_EXHAUSTED naming the
// flag. (SubscribeScaleTest.SubscriberThatStopsReading* check the versions received and the
// resume.) Without the byte limit each stream buffered all 200 responses (8 x 13 MiB).
TEST(BackpressureTest, SubscribersThatStopReadingHoldAtMostTheirBuffer) {
  constexpr int kStalled = 8, kEdits = 200, kBufferMb = 1;
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(
      server.Start(VOXCOL_SERVER_PATH,
                   {"--data_dir=" + dir.path() + "/data", "--seed=4", "--world_size=128,96,128",
                    "--store_sync=false", "--subscribe_buffer_mb=" + std::to_string(kBufferMb)},
                   dir.path()))
      << server.Log();
  client::Client editor(server.address());
  auto stalled_stub = v1::EditService::NewStub(SlowReaderChannel(server.address(), 1));
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::SubscribeResponse>>> stalled;
  for (int s = 0; s < kStalled; ++s) {
    v1::SubscribeRequest request;
    request.set_from_version(0);
    request.set_include_voxels(true);
    v1::VoxelBox* region = request.mutable_region();
    region->mutable_min()->set_x(-64);
    region->mutable_min()->set_y(-48);
    region->mutable_min()->set_z(-64);
    region->mutable_max()->set_x(64);
    region->mutable_max()->set_y(48 - s);  // every edit (y -8..24) is inside each region
    region->mutable_max()->set_z(64);
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    contexts.back()->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(50));
    stalled.push_back(stalled_stub->Subscribe(contexts.back().get(), request));
  }
  for (int i = 0; i < 500 && Metric(server, "voxcol_subscribers") != kStalled; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(Metric(server, "voxcol_subscribers"), kStalled);
  const double rss_before = ResidentBytes(server.pid());
  double max_rss = rss_before, max_buffered = 0;
  for (int i = 0; i < kEdits; ++i) {
    v1::EditAck ack;
    grpc::Status status = editor.ApplyEdits(Fill(i), &ack);
    ASSERT_TRUE(status.ok()) << status.error_message();
    max_buffered = std::max(max_buffered, Metric(server, "voxcol_subscribe_buffered_bytes"));
    if (i % 10 == 0) max_rss = std::max(max_rss, ResidentBytes(server.pid()));
  }
  for (int i = 0; i < 500 && Metric(server, "voxcol_subscribers_fell_behind_total") < kStalled;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  max_rss = std::max(max_rss, ResidentBytes(server.pid()));
  const double buffered_after = Metric(server, "voxcol_subscribe_buffered_bytes");
  std::printf(
      "%d stalled subscribers, %d edits: max buffered %.2f MiB (limit %d x %d MiB), after the end "
      "%.0f bytes, server RSS +%.1f MiB\n",
      kStalled, kEdits, max_buffered / kMiB, kStalled, kBufferMb, buffered_after,
      (max_rss - rss_before) / kMiB);
  EXPECT_EQ(Metric(server, "voxcol_subscribers_fell_behind_total"), kStalled);
  // Each stream holds at most its buffer (its first response always fits; these are ~64 KiB).
  EXPECT_LE(max_buffered, kStalled * kBufferMb * kMiB);
  // Ended, each keeps the one response being written (32^3 voxels, 2 bytes each, and framing).
  EXPECT_LE(buffered_after, kStalled * 80.0 * 1024);
  // Memory: the buffers, the change feed's copy of the edits (~13 MiB), the shared encodings'
  // cache (at most 16 MiB) and 24 MiB of slack for the heaps.
  if (kRssMeasuresTheServer) {
    EXPECT_LE(max_rss - rss_before, kStalled * kBufferMb * kMiB + (13 + 16 + 24) * kMiB);
  }
  for (int s = 0; s < kStalled; ++s) {
    v1::SubscribeResponse event;
    while (stalled[s]->Read(&event)) {
    }
    grpc::Status status = stalled[s]->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << "subscriber " << s << ": " << status.error_message();
    EXPECT_NE(status.error_message().find("--subscribe_buffer_mb"), std::string::npos)
        << status.error_message();
  }
}

}  // namespace
}  // namespace voxcol
