// The durable change feed end to end: a subscriber that read up to version V resumes after the
// server was killed with SIGKILL and restarted on the same data directory, and receives exactly
// the batches after V, once, in order, each with the chunks its ack reported.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_split.h"
#include "client/voxcol_client.h"
#include "tests/integration/server_process.h"

namespace voxcol {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::ServerProcess;
using testing::TempDir;

// Batch i: a set-mode FillRegion of a 2x2x2 box inside one chunk (material 10 + i % 200, never
// produced by the generator), so it changes exactly that chunk and those 8 voxels.
v1::VoxelBox BoxOf(int i) {
  const int x = -64 + 8 * (i % 16), z = -64 + 8 * ((i / 16) % 16), y = -48 + 8 * (i / 256);
  v1::VoxelBox box;
  box.mutable_min()->set_x(x + 2), box.mutable_min()->set_y(y + 2), box.mutable_min()->set_z(z + 2);
  box.mutable_max()->set_x(x + 4), box.mutable_max()->set_y(y + 4), box.mutable_max()->set_z(z + 4);
  return box;
}

v1::ApplyEditsRequest BatchOf(int i) {
  v1::ApplyEditsRequest request;
  v1::FillRegion* fill = request.add_primitives()->mutable_fill_region();
  *fill->mutable_region() = BoxOf(i);
  fill->set_material(10 + i % 200);
  fill->set_mode(v1::EDIT_MODE_SET);
  return request;
}

std::vector<std::string> ServerArgs(const TempDir& dir) {
  return {"--data_dir=" + dir.path() + "/data", "--seed=11", "--world_size=128,96,128"};
}

// Reads events until one has version >= `last` (or the stream ends); returns them.
std::vector<v1::SubscribeResponse> ReadThrough(client::Client& client, uint64_t from, uint64_t last,
                                               grpc::Status* status, bool include_voxels = false) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::SubscribeRequest request;
  request.set_from_version(from);
  request.set_include_voxels(include_voxels);
  auto reader = client.Subscribe(&context, request);
  std::vector<v1::SubscribeResponse> events;
  v1::SubscribeResponse event;
  bool open = true;
  while (events.empty() || events.back().version() < last) {
    if (!(open = reader->Read(&event))) break;
    events.push_back(event);
  }
  if (open) context.TryCancel();  // else the server's status is what Finish reports
  *status = reader->Finish();
  return events;
}

TEST(SubscribeResumeTest, ResumesAfterKill9WithExactlyTheMissedBatchesInOrder) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH, ServerArgs(dir), dir.path())) << server.Log();
  // Acked batches by version, from an editor that runs until the server dies.
  std::mutex mu;
  std::map<uint64_t, int> acked;  // version -> batch
  std::atomic<int> sent{0};
  std::thread editor([&] {
    client::Client client(server.address(), std::chrono::seconds(5));
    for (int i = 0; i < 3000; ++i) {
      v1::EditAck ack;
      sent = i + 1;
      if (!client.ApplyEdits(BatchOf(i), &ack).ok()) return;  // the kill
      EXPECT_EQ(ack.changed_chunks(), 1u);
      std::lock_guard<std::mutex> lock(mu);
      acked[ack.version()] = i;
    }
  });
  // The subscriber reads up to version V = 20 and goes away.
  client::Client client(server.address());
  grpc::Status status;
  std::vector<v1::SubscribeResponse> first = ReadThrough(client, 0, 20, &status);
  ASSERT_EQ(first.size(), 20u);
  const uint64_t v = first.back().version();
  EXPECT_EQ(v, 20u);
  // Let at least 100 more batches commit, then kill the server mid-stream.
  while (sent.load() < 130) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  server.Stop(SIGKILL);
  editor.join();

  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH, ServerArgs(dir), dir.path())) << server.Log();
  client::Client restarted(server.address());
  v1::GetWorldInfoResponse info;
  ASSERT_TRUE(restarted.GetWorldInfo(&info).ok());
  const uint64_t newest = info.version();
  ASSERT_GE(newest, acked.rbegin()->first);  // every ack is durable
  std::vector<v1::SubscribeResponse> resumed = ReadThrough(restarted, v, newest, &status, true);
  // Exactly versions v+1 .. newest, once each, in order (a batch committed without its ack
  // reaching the client before the kill is a version too).
  ASSERT_EQ(resumed.size(), newest - v) << status.error_message();
  for (size_t k = 0; k < resumed.size(); ++k) {
    const v1::SubscribeResponse& e = resumed[k];
    ASSERT_EQ(e.version(), v + 1 + k);
    auto it = acked.find(e.version());
    if (it == acked.end()) continue;
    // Each acknowledged batch's one chunk and its exact box.
    ASSERT_EQ(e.changes_size(), 1) << e.version();
    const v1::VoxelBox box = BoxOf(it->second);
    EXPECT_EQ(e.changes(0).chunk().x(), (box.min().x() - 2) / 8);
    EXPECT_EQ(e.changes(0).chunk().z(), (box.min().z() - 2) / 8);
    EXPECT_EQ(e.changes(0).changed_voxels().SerializeAsString(), box.SerializeAsString());
    // include_voxels after the restart: the batch's own voxels, from the stored feed.
    EXPECT_EQ(e.changes(0).voxels().materials(), std::string(8, char(10 + it->second % 200)));
    EXPECT_EQ(e.changes(0).voxels().occupancies(), std::string(8, char(255)));
  }
  // The CLI resumes the same way: `voxcol subscribe --from=V`.
  CommandResult cli = RunCommand({VOXCOL_CLI_PATH, "--server=" + server.address(), "--json",
                                  "subscribe", "--from=" + std::to_string(v), "--max_events=3"},
                                 dir.path());
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::vector<std::string> lines = absl::StrSplit(cli.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << cli.out;
  for (size_t k = 0; k < lines.size(); ++k) {
    v1::SubscribeResponse e;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(lines[k], &e).ok()) << lines[k];
    EXPECT_EQ(e.version(), v + 1 + k);
  }
}

TEST(SubscribeResumeTest, AfterARestartWithASmallerWindowOlderVersionsAreOutOfRange) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH, ServerArgs(dir), dir.path())) << server.Log();
  {
    client::Client client(server.address());
    v1::EditAck ack;
    for (int i = 0; i < 12; ++i) ASSERT_TRUE(client.ApplyEdits(BatchOf(i), &ack).ok());
  }
  ASSERT_EQ(server.Stop(SIGTERM), 0);
  std::vector<std::string> args = ServerArgs(dir);
  args.push_back("--change_log_versions=5");
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH, args, dir.path())) << server.Log();
  client::Client client(server.address());
  grpc::Status status;
  // Versions 8..12 are kept: from 6 is out of range, naming 7; from 7 gets exactly 8..12.
  std::vector<v1::SubscribeResponse> events = ReadThrough(client, 6, 12, &status);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_NE(status.error_message().find("oldest resumable version 7"), std::string::npos)
      << status.error_message();
  events = ReadThrough(client, 7, 12, &status);
  ASSERT_EQ(events.size(), 5u) << status.error_message();
  for (size_t k = 0; k < events.size(); ++k) EXPECT_EQ(events[k].version(), 8 + k);
}

}  // namespace
}  // namespace voxcol
