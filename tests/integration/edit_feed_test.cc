// End to end for edit batches, region I/O and the change feed: the real voxcol_server, driven by
// the C++ client library (concurrent editors and a subscriber) and by the real CLI.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
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

v1::VoxelBox Box(int x0, int y0, int z0, int x1, int y1, int z1) {
  v1::VoxelBox b;
  b.mutable_min()->set_x(x0), b.mutable_min()->set_y(y0), b.mutable_min()->set_z(z0);
  b.mutable_max()->set_x(x1), b.mutable_max()->set_y(y1), b.mutable_max()->set_z(z1);
  return b;
}

// Batch i of editor c: a set-mode FillRegion with material 10 + c (the cave generator never
// produces materials above 5, so every batch changes voxels) in a 2x2x2 box of its own, plus a
// small FillBlock beside it. Boxes of different batches never overlap.
v1::ApplyEditsRequest EditorBatch(int c, int i) {
  v1::ApplyEditsRequest request;
  int x = -60 + 4 * i, z = -60 + 40 * c;
  v1::FillRegion* region = request.add_primitives()->mutable_fill_region();
  *region->mutable_region() = Box(x, 0, z, x + 2, 2, z + 2);
  region->set_material(10 + c);
  region->set_mode(v1::EDIT_MODE_SET);
  v1::FillBlock* block = request.add_primitives()->mutable_fill_block();
  block->mutable_center()->set_x(x + 1.0f), block->mutable_center()->set_y(10.0f),
      block->mutable_center()->set_z(z + 10.0f);
  block->mutable_size()->set_x(1.5f), block->mutable_size()->set_y(1.5f),
      block->mutable_size()->set_z(1.5f);
  block->set_material(20 + c);
  block->set_mode(v1::EDIT_MODE_SET);
  request.set_idempotency_key("editor-" + std::to_string(c) + "/" + std::to_string(i));
  return request;
}

class EditFeedTest : public ::testing::Test {
 protected:
  void StartServer(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--data_dir=" + dir_.path() + "/data", "--seed=77",
                                     "--world_size=128,96,128"};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH, args, dir_.path())) << server_.Log();
    client_ = std::make_unique<client::Client>(server_.address());
  }
  uint64_t Version() {
    v1::GetWorldInfoResponse info;
    EXPECT_TRUE(client_->GetWorldInfo(&info).ok());
    return info.version();
  }
  v1::ReadVoxelsResponse Read(const v1::VoxelBox& box) {
    v1::ReadVoxelsRequest request;
    *request.mutable_region() = box;
    v1::ReadVoxelsResponse response;
    grpc::Status status = client_->ReadVoxels(request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }
  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {VOXCOL_CLI_PATH, "--server=" + server_.address()});
    return RunCommand(args, dir_.path());
  }

  TempDir dir_;
  ServerProcess server_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(EditFeedTest, TwoEditorsAndASubscriberAgreeOnEveryBatchInOrder) {
  StartServer();
  constexpr int kBatches = 15;
  // Versions 1..2k are the editors' batches, 2k+1 the final precondition batch below.
  const uint64_t last_version = 2 * kBatches + 1;
  // The subscriber starts first, from version 0, and collects through the last version.
  std::vector<v1::SubscribeResponse> events;
  grpc::ClientContext sub_context;
  sub_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  client::Client sub_client(server_.address());
  v1::SubscribeRequest sub_request;
  sub_request.set_from_version(0);
  auto reader = sub_client.Subscribe(&sub_context, sub_request);
  std::thread subscriber([&] {
    v1::SubscribeResponse event;
    while (reader->Read(&event)) {
      events.push_back(event);
      if (event.version() >= last_version) break;
    }
  });

  std::vector<std::vector<v1::EditAck>> acks(2);  // one list per editor thread
  std::vector<std::thread> editors;
  for (int c = 0; c < 2; ++c) {
    editors.emplace_back([&, c] {
      client::Client editor(server_.address());
      for (int i = 0; i < kBatches; ++i) {
        v1::EditAck ack;
        grpc::Status status = editor.ApplyEdits(EditorBatch(c, i), &ack);
        ASSERT_TRUE(status.ok()) << status.error_message();
        acks[c].push_back(ack);
      }
    });
  }
  for (auto& t : editors) t.join();

  // Versions strictly increase per editor and are all distinct: 2 * kBatches versions in total.
  std::set<uint64_t> acked;
  for (const auto& list : acks) {
    ASSERT_EQ(list.size(), size_t(kBatches));
    for (size_t i = 1; i < list.size(); ++i) EXPECT_GT(list[i].version(), list[i - 1].version());
    for (const v1::EditAck& a : list) acked.insert(a.version());
  }
  EXPECT_EQ(acked.size(), size_t(2 * kBatches));
  EXPECT_EQ(Version(), uint64_t(2 * kBatches));

  // A retried batch is answered with its original ack and applies nothing.
  v1::EditAck retry;
  ASSERT_TRUE(client_->ApplyEdits(EditorBatch(0, 3), &retry).ok());
  EXPECT_TRUE(retry.replayed());
  EXPECT_EQ(retry.version(), acks[0][3].version());
  EXPECT_EQ(retry.changed_chunks(), acks[0][3].changed_chunks());
  EXPECT_EQ(Version(), uint64_t(2 * kBatches));

  // A violated precondition changes nothing.
  v1::VoxelBox target = Box(40, 0, 40, 42, 2, 42);
  v1::ReadVoxelsResponse before = Read(target);
  v1::ApplyEditsRequest stale;
  v1::FillRegion* fill = stale.add_primitives()->mutable_fill_region();
  *fill->mutable_region() = target;
  fill->set_material(30);
  stale.set_expected_version(1);
  v1::EditAck stale_ack;
  grpc::Status status = client_->ApplyEdits(stale, &stale_ack);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  EXPECT_EQ(Version(), uint64_t(2 * kBatches));
  v1::ReadVoxelsResponse after = Read(target);
  EXPECT_EQ(after.voxels().materials(), before.voxels().materials());
  EXPECT_EQ(after.voxels().occupancies(), before.voxels().occupancies());

  // One more batch (a matching precondition) tells the subscriber where to stop.
  stale.set_expected_version(2 * kBatches);
  ASSERT_TRUE(client_->ApplyEdits(stale, &stale_ack).ok());
  ASSERT_EQ(stale_ack.version(), last_version);
  acked.insert(stale_ack.version());
  subscriber.join();
  sub_context.TryCancel();
  reader->Finish();

  // The subscriber saw every acknowledged batch exactly once, in version order, and nothing else.
  std::vector<uint64_t> seen;
  for (const v1::SubscribeResponse& e : events) seen.push_back(e.version());
  EXPECT_EQ(seen, std::vector<uint64_t>(acked.begin(), acked.end()));

  // Every acknowledged batch is visible: each editor's boxes hold its material, fully.
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < kBatches; ++i) {
      const v1::VoxelBox box = EditorBatch(c, i).primitives(0).fill_region().region();
      v1::ReadVoxelsResponse r = Read(box);
      EXPECT_EQ(r.voxels().materials(), std::string(8, char(10 + c))) << c << "/" << i;
      EXPECT_EQ(r.voxels().occupancies(), std::string(8, char(255))) << c << "/" << i;
    }
}

TEST_F(EditFeedTest, BadInputIsInvalidArgumentNamingTheFieldAndServerKeepsServing) {
  StartServer({"--max_region_voxels=100000"});
  v1::ApplyEditsRequest batch = EditorBatch(0, 0);
  v1::FillWedge* wedge = batch.add_primitives()->mutable_fill_wedge();
  wedge->mutable_size()->set_x(2), wedge->mutable_size()->set_y(2), wedge->mutable_size()->set_z(2);
  wedge->mutable_rotation()->set_w(0.5f);  // not unit length
  v1::EditAck ack;
  grpc::Status status = client_->ApplyEdits(batch, &ack);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("primitives[2].fill_wedge.rotation"), std::string::npos)
      << status.error_message();
  EXPECT_EQ(Version(), 0u);

  v1::ReadVoxelsRequest big;
  *big.mutable_region() = Box(-64, -48, -64, 64, 48, 64);
  v1::ReadVoxelsResponse read;
  status = client_->ReadVoxels(big, &read);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("region"), std::string::npos) << status.error_message();

  v1::WriteVoxelsRequest write;
  *write.mutable_voxels()->mutable_region() = Box(0, 0, 0, 2, 2, 2);
  write.mutable_voxels()->set_materials(std::string(7, '\2'));
  write.mutable_voxels()->set_occupancies(std::string(8, '\377'));
  status = client_->WriteVoxels(write, &ack);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("voxels.materials"), std::string::npos)
      << status.error_message();

  grpc::ClientContext context;
  v1::SubscribeRequest future;
  future.set_from_version(5);
  v1::SubscribeResponse event;
  auto reader = client_->Subscribe(&context, future);
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::OUT_OF_RANGE);

  EXPECT_TRUE(server_.Running());
  EXPECT_EQ(Version(), 0u);
  ASSERT_TRUE(client_->ApplyEdits(EditorBatch(0, 0), &ack).ok());
  EXPECT_EQ(ack.version(), 1u);
}

TEST_F(EditFeedTest, SubscribingBeforeTheRetentionWindowIsOutOfRange) {
  StartServer({"--change_log_versions=3"});
  v1::EditAck ack;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(client_->ApplyEdits(EditorBatch(1, i), &ack).ok());
  grpc::ClientContext old_context;
  v1::SubscribeRequest old_request;
  old_request.set_from_version(2);
  v1::SubscribeResponse event;
  auto old_reader = client_->Subscribe(&old_context, old_request);
  EXPECT_FALSE(old_reader->Read(&event));
  grpc::Status status = old_reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_NE(status.error_message().find("ReadVoxels"), std::string::npos) << status.error_message();

  grpc::ClientContext context;
  v1::SubscribeRequest request;
  request.set_from_version(3);
  request.set_include_voxels(true);
  auto reader = client_->Subscribe(&context, request);
  for (uint64_t v = 4; v <= 6; ++v) {
    ASSERT_TRUE(reader->Read(&event));
    EXPECT_EQ(event.version(), v);
    ASSERT_GT(event.changes_size(), 0);
    EXPECT_GT(event.changes(0).voxels().materials().size(), 0u);  // include_voxels
  }
  context.TryCancel();
  reader->Finish();
}

// Issue 40: an edit that changes no voxel (the same carve twice) is acknowledged at the current
// version with no changed chunk, creates no version and sends nothing to subscribers; the next
// real edit is the next version. With an idempotency key it is recorded and gets a version.
TEST_F(EditFeedTest, AnEditThatChangesNothingCreatesNoVersionAndNoFeedEntry) {
  StartServer();
  auto unkeyed = [](int i) {
    v1::ApplyEditsRequest batch = EditorBatch(1, i);
    batch.clear_idempotency_key();
    return batch;
  };
  v1::EditAck first, again;
  ASSERT_TRUE(client_->ApplyEdits(unkeyed(0), &first).ok());
  ASSERT_GT(first.changed_chunks(), 0u);
  grpc::ClientContext context;
  v1::SubscribeRequest request;
  request.set_from_version(first.version());
  auto reader = client_->Subscribe(&context, request);
  ASSERT_TRUE(client_->ApplyEdits(unkeyed(0), &again).ok());
  EXPECT_EQ(again.version(), first.version());
  EXPECT_EQ(again.changed_chunks(), 0u);
  EXPECT_EQ(Version(), first.version());
  v1::EditAck next;
  ASSERT_TRUE(client_->ApplyEdits(unkeyed(1), &next).ok());
  EXPECT_EQ(next.version(), first.version() + 1);
  v1::SubscribeResponse event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.version(), next.version());  // nothing in between for the no-op
  context.TryCancel();
  reader->Finish();
  v1::ApplyEditsRequest keyed = unkeyed(1);
  keyed.set_idempotency_key("noop-with-key");
  v1::EditAck recorded;
  ASSERT_TRUE(client_->ApplyEdits(keyed, &recorded).ok());
  EXPECT_EQ(recorded.changed_chunks(), 0u);
  EXPECT_EQ(recorded.version(), next.version() + 1);
}

// On shutdown the server sends a graceful GOAWAY ping and waits for the client's answer. In this
// process no thread polls an idle channel, so the answer would come only when gRPC's client backup
// poller runs (every 5 s by default), and the test would time the client library, not the server.
// A short interval (read at gRPC's initialization, before any channel exists) makes the client as
// responsive as one with an active poller.
const bool kFastClientBackupPoll =
    setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50", 0) == 0;

TEST_F(EditFeedTest, ShutdownWithAnOpenSubscribeDoesNotHang) {
  ASSERT_TRUE(kFastClientBackupPoll);
  // A long grace period: the stream must end because the server closes the feed, not because the
  // grace period expires and gRPC cancels it.
  StartServer({"--shutdown_grace_seconds=60"});
  grpc::ClientContext context;
  auto reader = client_->Subscribe(&context, v1::SubscribeRequest());
  grpc::Status stream_status;
  std::thread subscriber([&] {
    v1::SubscribeResponse event;
    while (reader->Read(&event)) {
    }
    stream_status = reader->Finish();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(server_.Stop(SIGTERM, std::chrono::seconds(20)), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << server_.Log();
  subscriber.join();
  EXPECT_FALSE(stream_status.ok());
}

TEST_F(EditFeedTest, CliReadWriteVoxelsRoundTripAndSubscribeTail) {
  StartServer();
  CommandResult block =
      Cli({"fill-block", "--center=0.5,0.5,0.5", "--size=5,3,4",
           "--rotation=0.9238795,0,0.3826834,0", "--material=sand", "--idempotency_key=cli-1"});
  ASSERT_EQ(block.exit_code, 0) << block.err;
  CommandResult again =
      Cli({"fill-block", "--center=0.5,0.5,0.5", "--size=5,3,4",
           "--rotation=0.9238795,0,0.3826834,0", "--material=sand", "--idempotency_key=cli-1"});
  EXPECT_NE(again.out.find("replayed"), std::string::npos) << again.out;
  // A key over 128 bytes is refused at the wire boundary, naming the field (exit 1: the server
  // answered an error).
  CommandResult long_key = Cli({"fill-block", "--center=0.5,0.5,0.5", "--size=5,3,4",
                                "--material=sand", "--idempotency_key=" + std::string(129, 'k')});
  EXPECT_EQ(long_key.exit_code, 1);
  EXPECT_NE(long_key.err.find("INVALID_ARGUMENT"), std::string::npos) << long_key.err;
  EXPECT_NE(long_key.err.find("idempotency_key"), std::string::npos) << long_key.err;
  std::string file = dir_.path() + "/voxels.bin";
  ASSERT_EQ(Cli({"read-voxels", "--min=-4,-4,-4", "--max=5,5,5", "--out=" + file}).exit_code, 0);
  CommandResult write = Cli({"--json", "write-voxels", "--in=" + file, "--at=20,-4,20"});
  ASSERT_EQ(write.exit_code, 0) << write.err;
  EXPECT_EQ(Read(Box(-4, -4, -4, 5, 5, 5)).voxels().SerializeAsString().size(),
            Read(Box(20, -4, 20, 29, 5, 29)).voxels().SerializeAsString().size());
  EXPECT_EQ(Read(Box(-4, -4, -4, 5, 5, 5)).voxels().materials(),
            Read(Box(20, -4, 20, 29, 5, 29)).voxels().materials());
  EXPECT_EQ(Read(Box(-4, -4, -4, 5, 5, 5)).voxels().occupancies(),
            Read(Box(20, -4, 20, 29, 5, 29)).voxels().occupancies());

  CommandResult tail = Cli({"--json", "subscribe", "--from_version=0", "--max_events=2"});
  ASSERT_EQ(tail.exit_code, 0) << tail.err;
  std::vector<std::string> lines = absl::StrSplit(tail.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << tail.out;
  for (size_t i = 0; i < lines.size(); ++i) {
    v1::SubscribeResponse e;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(lines[i], &e).ok()) << lines[i];
    EXPECT_EQ(e.version(), i + 1);
  }
  CommandResult bad = Cli({"fill-cylinder", "--center=0,0,0", "--height=2", "--radius=nan"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("INVALID_ARGUMENT: primitives[0].fill_cylinder.radius"), std::string::npos)
      << bad.err;
  EXPECT_EQ(Cli({"clear", "--min=1,2"}).exit_code, 2);
}

}  // namespace
}  // namespace voxcol
