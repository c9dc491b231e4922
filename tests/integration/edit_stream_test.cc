// Issue 17, Done-means 1: the EditStream RPC against the real server binary. Several clients
// stream thousands of batches with many in flight; acks come back in order per stream with unique
// versions; a bad batch fails alone; after kill -9 every acknowledged batch is stored and retries
// with the same idempotency keys are replays; a flooding client is held to the in-flight bound.
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "client/voxcol_client.h"
#include "tests/integration/http_get.h"
#include "tests/integration/server_process.h"

namespace voxcol {
namespace {

using testing::ServerProcess;
using testing::TempDir;

constexpr int kClients = 4;
constexpr int kInFlight = 32;

// Batch i sets one voxel of its own (a FillRegion of one voxel) to a material derived from i, so
// that a re-read tells whether it is stored. Positions lie inside the 128x96x128 world.
struct Signature {
  int x, y, z;
  uint32_t material;
};
Signature SignatureOf(int i) {
  return {-60 + i % 120, -40 + i / 14400, -60 + (i / 120) % 120, uint32_t(6 + i % 200)};
}

v1::ApplyEditsRequest SignatureBatch(int i) {
  const Signature s = SignatureOf(i);
  v1::ApplyEditsRequest request;
  v1::FillRegion* fill = request.add_primitives()->mutable_fill_region();
  fill->mutable_region()->mutable_min()->set_x(s.x);
  fill->mutable_region()->mutable_min()->set_y(s.y);
  fill->mutable_region()->mutable_min()->set_z(s.z);
  fill->mutable_region()->mutable_max()->set_x(s.x + 1);
  fill->mutable_region()->mutable_max()->set_y(s.y + 1);
  fill->mutable_region()->mutable_max()->set_z(s.z + 1);
  fill->set_material(s.material);
  fill->set_mode(v1::EDIT_MODE_SET);
  return request;
}

// A batch whose only primitive has a negative radius.
v1::ApplyEditsRequest BadBatch() {
  v1::ApplyEditsRequest request;
  v1::FillBallRequest* ball = request.add_primitives()->mutable_fill_ball();
  ball->mutable_center()->set_x(1);
  ball->set_radius(-1);
  ball->set_material(7);
  return request;
}

class EditStreamTest : public ::testing::Test {
 protected:
  std::vector<std::string> ServerArgs() {
    return {"--data_dir=" + dir_.path() + "/data", "--seed=3", "--world_size=128,96,128"};
  }

  // Material of every signature voxel 0..count-1, read in one consistent ReadVoxels.
  std::vector<uint32_t> ReadSignatures(client::Client& client, int count, uint64_t* version) {
    v1::ReadVoxelsRequest request;
    request.mutable_region()->mutable_min()->set_x(-64);
    request.mutable_region()->mutable_min()->set_y(-48);
    request.mutable_region()->mutable_min()->set_z(-64);
    request.mutable_region()->mutable_max()->set_x(64);
    request.mutable_region()->mutable_max()->set_y(48);
    request.mutable_region()->mutable_max()->set_z(64);
    v1::ReadVoxelsResponse response;
    grpc::Status status = client.ReadVoxels(request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    *version = response.version();
    std::vector<uint32_t> materials;
    const std::string& bytes = response.voxels().materials();
    for (int i = 0; i < count && status.ok(); ++i) {
      const Signature s = SignatureOf(i);
      const size_t at = size_t(s.x + 64) + size_t(s.z + 64) * 128 + size_t(s.y + 48) * 128 * 128;
      materials.push_back(uint8_t(bytes[at]));
    }
    return materials;
  }

  TempDir dir_;
  ServerProcess server_;
};

// Done-means 1 (first half): 4 streams, 10,000 batches, 32 in flight each, one bad batch per
// stream.
TEST_F(EditStreamTest, AcksArriveInOrderWithUniqueVersionsAndABadBatchFailsAlone) {
  ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH, ServerArgs(), dir_.path())) << server_.Log();
  constexpr int kBatches = 10000 / kClients;
  constexpr int kBadAt = 100;  // the position of the bad batch in each stream
  std::mutex mu;
  std::vector<uint64_t> all_versions;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      client::Client client(server_.address());
      client::EditStreamSession session(client);
      std::vector<uint64_t> versions;
      int sent = 0, answered = 0;
      while (answered < kBatches + 1) {
        if (sent < kBatches + 1 && int(session.unacknowledged()) < kInFlight) {
          const int i = sent < kBadAt ? c * kBatches + sent : c * kBatches + sent - 1;
          ASSERT_TRUE(session.Send(sent == kBadAt ? BadBatch() : SignatureBatch(i)));
          ++sent;
          continue;
        }
        v1::EditStreamResponse response;
        ASSERT_TRUE(session.Next(&response)) << "stream " << c << " ended early";
        ASSERT_EQ(response.batch_id(), uint64_t(answered + 1)) << "acks out of order";
        if (answered == kBadAt) {
          ASSERT_TRUE(response.has_error());
          EXPECT_EQ(response.error().code(), int(grpc::StatusCode::INVALID_ARGUMENT));
          EXPECT_NE(response.error().message().find("edits.primitives[0].fill_ball.radius"),
                    std::string::npos)
              << response.error().message();
        } else {
          ASSERT_TRUE(response.has_ack()) << response.error().message();
          EXPECT_FALSE(response.ack().replayed());
          if (!versions.empty()) {
            EXPECT_GT(response.ack().version(), versions.back());
          }
          versions.push_back(response.ack().version());
        }
        ++answered;
      }
      grpc::Status finished = session.Finish();
      EXPECT_TRUE(finished.ok()) << finished.error_message();
      std::lock_guard<std::mutex> lock(mu);
      all_versions.insert(all_versions.end(), versions.begin(), versions.end());
    });
  }
  for (std::thread& t : clients) t.join();
  ASSERT_EQ(all_versions.size(), size_t(10000));
  const std::set<uint64_t> unique(all_versions.begin(), all_versions.end());
  EXPECT_EQ(unique.size(), all_versions.size()) << "two batches share a version";
  EXPECT_EQ(*unique.begin(), 1u);  // a fresh world is at version 0; the bad batches took none
  EXPECT_EQ(*unique.rbegin(), 10000u);
  // Every batch of every stream is in the world.
  client::Client client(server_.address());
  uint64_t version = 0;
  std::vector<uint32_t> materials = ReadSignatures(client, 10000, &version);
  EXPECT_EQ(version, *unique.rbegin());
  for (int i = 0; i < int(materials.size()); ++i)
    ASSERT_EQ(materials[i], SignatureOf(i).material) << "batch " << i;
}

// One client's run across a crash: sends batches first..first+count-1, survives the stream
// breaking by reconnecting once `restarted` is set, and records each batch's ack in send order.
void StreamAcrossRestart(const std::string& address, int first, int count,
                         const std::atomic<bool>& restarted, std::atomic<int>& acked_total,
                         std::vector<v1::EditAck>* acks, std::string* key_prefix) {
  client::Client client(address);
  client::EditStreamSession session(client);
  *key_prefix = session.key_prefix();
  int sent = 0;
  while (int(acks->size()) < count) {
    if (sent < count && int(session.unacknowledged()) < kInFlight) {
      session.Send(SignatureBatch(first + sent++));  // kept for a resend even if the send fails
      continue;
    }
    v1::EditStreamResponse response;
    if (session.Next(&response)) {
      ASSERT_TRUE(response.has_ack()) << response.error().message();
      acks->push_back(response.ack());
      acked_total.fetch_add(1);
      continue;
    }
    // The server died: wait for its restart, then resend what was not acknowledged.
    while (!restarted.load()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(session.Reconnect(std::chrono::seconds(30))) << "could not reconnect";
  }
  EXPECT_TRUE(session.Finish().ok());
}

// Done-means 1 (second half): kill -9 while 4 streams run; after the restart on the same data dir
// and port, every acknowledged batch is stored, resent batches are applied at most once, and a
// second session resending the same keys gets replays with the original versions.
TEST_F(EditStreamTest, AcknowledgedBatchesSurviveKill9AndRetriesAreReplays) {
  ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH, ServerArgs(), dir_.path())) << server_.Log();
  const std::string address = server_.address();
  constexpr int kBatches = 1000;  // per client
  std::atomic<bool> restarted{false};
  std::atomic<int> acked_total{0};
  std::vector<std::vector<v1::EditAck>> acks(kClients);
  std::vector<std::string> key_prefixes(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      StreamAcrossRestart(address, c * kBatches, kBatches, restarted, acked_total, &acks[c],
                          &key_prefixes[c]);
    });
  }
  while (acked_total.load() < kClients * kBatches / 4)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const int acked_before_kill = acked_total.load();
  server_.Stop(SIGKILL);
  std::vector<std::string> args = ServerArgs();
  args.push_back("--listen=" + address);  // the last --listen wins: same port as before
  ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH, args, dir_.path())) << server_.Log();
  restarted.store(true);
  for (std::thread& t : clients) t.join();
  EXPECT_LT(acked_before_kill, kClients * kBatches) << "the kill came after the run";

  // Every batch was acknowledged exactly once, in order per stream, and none applied twice: the
  // acked versions are exactly 1..N and the world is at N.
  std::set<uint64_t> versions;
  int replayed = 0;
  for (int c = 0; c < kClients; ++c) {
    ASSERT_EQ(acks[c].size(), size_t(kBatches));
    for (int i = 0; i < kBatches; ++i) {
      replayed += acks[c][i].replayed();
      if (i > 0) {
        EXPECT_GT(acks[c][i].version(), acks[c][i - 1].version()) << "stream " << c;
      }
      versions.insert(acks[c][i].version());
    }
  }
  // Resent batches that were applied before the kill but not acknowledged come back replayed.
  std::printf("acked before the kill: %d of %d; resends answered as replays: %d\n",
              acked_before_kill, kClients * kBatches, replayed);
  EXPECT_EQ(versions.size(), size_t(kClients * kBatches));
  EXPECT_EQ(*versions.rbegin(), uint64_t(kClients * kBatches));
  client::Client client(address);
  uint64_t version = 0;
  std::vector<uint32_t> materials = ReadSignatures(client, kClients * kBatches, &version);
  EXPECT_EQ(version, uint64_t(kClients * kBatches));
  for (int i = 0; i < int(materials.size()); ++i)
    ASSERT_EQ(materials[i], SignatureOf(i).material) << "batch " << i;

  // The same keys again (a session with the same prefix numbers its batches alike): replays.
  for (int c = 0; c < kClients; ++c) {
    client::EditStreamSession again(client, key_prefixes[c]);
    constexpr int kResent = 100;
    for (int i = 0; i < kResent; ++i) ASSERT_TRUE(again.Send(SignatureBatch(c * kBatches + i)));
    for (int i = 0; i < kResent; ++i) {
      v1::EditStreamResponse response;
      ASSERT_TRUE(again.Next(&response));
      ASSERT_TRUE(response.has_ack()) << response.error().message();
      EXPECT_TRUE(response.ack().replayed());
      EXPECT_EQ(response.ack().version(), acks[c][i].version());
    }
    EXPECT_TRUE(again.Finish().ok());
  }
  v1::GetWorldInfoResponse info;
  ASSERT_TRUE(client.GetWorldInfo(&info).ok());
  EXPECT_EQ(info.version(), uint64_t(kClients * kBatches)) << "a replay was applied again";
}

// Backpressure: a client writing as fast as it can never has more than the bound in flight on the
// server, every batch is still answered in order, and unary calls are answered meanwhile.
TEST_F(EditStreamTest, AFloodingClientIsHeldToTheInFlightBound) {
  constexpr int kBound = 8;
  std::vector<std::string> args = ServerArgs();
  args.push_back("--max_in_flight_edit_batches_per_stream=" + std::to_string(kBound));
  ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH, args, dir_.path())) << server_.Log();
  client::Client client(server_.address());
  grpc::ClientContext context;
  auto stream = client.EditStream(&context);
  constexpr int kBatches = 1000;
  std::atomic<bool> reading{true};
  std::thread writer([&] {
    for (int i = 0; i < kBatches; ++i) {
      v1::EditStreamRequest request;
      request.set_batch_id(uint64_t(i + 1));
      *request.mutable_edits() = SignatureBatch(i);
      if (!stream->Write(request)) break;
    }
    stream->WritesDone();
  });
  std::thread reader([&] {
    v1::EditStreamResponse response;
    uint64_t expected = 1;
    while (stream->Read(&response)) {
      EXPECT_EQ(response.batch_id(), expected++);
      EXPECT_TRUE(response.has_ack()) << response.error().message();
    }
    EXPECT_EQ(expected, uint64_t(kBatches + 1));
    reading.store(false);
  });
  // The server stays responsive while the stream is throttled (each call has a 10 s deadline).
  int unary_calls = 0;
  while (reading.load()) {
    v1::GetWorldInfoResponse info;
    grpc::Status status = client.GetWorldInfo(&info);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ++unary_calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  writer.join();
  reader.join();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_GT(unary_calls, 0);
  const std::string metrics = testing::HttpGet(server_.metrics_port(), "/metrics");
  const double peak = testing::MetricValue(metrics, "voxcol_edit_stream_in_flight_peak");
  EXPECT_LE(peak, kBound) << metrics;
  EXPECT_GE(peak, 2) << "the client never had two batches in flight";
  EXPECT_EQ(testing::MetricValue(metrics, "voxcol_edit_stream_batches_in_flight"), 0);
}

// A message that is not an EditStreamRequest ends the stream with INVALID_ARGUMENT naming it,
// after the batch before it was answered (raw bytes need the generic stub).
TEST_F(EditStreamTest, AnUnparsableMessageEndsTheStreamWithInvalidArgument) {
  ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH, ServerArgs(), dir_.path())) << server_.Log();
  client::Client client(server_.address());
  grpc::CompletionQueue cq;
  auto done = [&cq](intptr_t tag) {
    void* got = nullptr;
    bool ok = false;
    EXPECT_TRUE(cq.Next(&got, &ok));
    EXPECT_EQ(reinterpret_cast<intptr_t>(got), tag);
    return ok;
  };
  auto raw = [](const std::string& bytes) {
    grpc::Slice slice(bytes);
    return grpc::ByteBuffer(&slice, 1);
  };
  grpc::GenericStub stub(client.channel());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto call = stub.PrepareCall(&context, "/voxcol.v1.EditService/EditStream", &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(done(1));
  v1::EditStreamRequest good;
  good.set_batch_id(7);
  *good.mutable_edits() = SignatureBatch(0);
  grpc::ByteBuffer first = raw(good.SerializeAsString());
  call->Write(first, reinterpret_cast<void*>(2));
  ASSERT_TRUE(done(2));
  grpc::ByteBuffer answer;
  call->Read(&answer, reinterpret_cast<void*>(3));
  ASSERT_TRUE(done(3));
  v1::EditStreamResponse response;
  ASSERT_TRUE(
      grpc::SerializationTraits<v1::EditStreamResponse>::Deserialize(&answer, &response).ok());
  EXPECT_EQ(response.batch_id(), 7u);
  EXPECT_TRUE(response.has_ack());
  // Field 2 (edits) as length-delimited with a length past the end: not an EditStreamRequest.
  grpc::ByteBuffer garbage = raw(std::string("\x12\x7f", 2));
  call->Write(garbage, reinterpret_cast<void*>(4));
  done(4);
  call->WritesDone(reinterpret_cast<void*>(5));
  done(5);  // may fail: the server may have ended the stream already
  call->Read(&answer, reinterpret_cast<void*>(6));
  EXPECT_FALSE(done(6)) << "an answer after the unparsable message";
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(7));
  ASSERT_TRUE(done(7));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("message 2 on the stream is not an EditStreamRequest"),
            std::string::npos)
      << status.error_message();
  v1::GetWorldInfoResponse info;
  EXPECT_TRUE(client.GetWorldInfo(&info).ok());
}

}  // namespace
}  // namespace voxcol
