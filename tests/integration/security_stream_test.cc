// Streams under authentication: every EditStream batch and the edits of a Query tick batch are
// audited with their author, and a query-role token cannot edit through a tick batch.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "tests/integration/security_fixture.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::SecurityFixture;

v1::ApplyEditsRequest Ball(float y, const std::string& key) {
  v1::ApplyEditsRequest edits;
  edits.set_idempotency_key(key);
  auto* ball = edits.add_primitives()->mutable_fill_ball();
  ball->mutable_center()->set_y(y);
  ball->set_radius(2);
  ball->set_material(2);
  return edits;
}

std::vector<google::protobuf::Struct> ReadAudit(const std::string& path) {
  std::vector<google::protobuf::Struct> entries;
  const std::vector<std::string> lines =
      absl::StrSplit(testing::ReadText(path), '\n', absl::SkipEmpty());
  for (const std::string& line : lines) {
    google::protobuf::Struct entry;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(line, &entry).ok()) << line;
    entries.push_back(entry);
  }
  return entries;
}

class SecurityStreamTest : public SecurityFixture {};

TEST_F(SecurityStreamTest, StreamEditsAreAuditedAndNeedTheEditRole) {
  const std::string audit_path = dir_.path() + "/audit.jsonl";
  StartServer({"--auth_tokens=" + Cert("tokens"), "--audit_log=" + audit_path});
  auto builder = MakeClient(Security("edit-secret", false));
  auto reader = MakeClient(Security("query-secret", false));

  // Two EditStream batches by the edit token.
  {
    grpc::ClientContext context;
    auto stream = builder->EditStream(&context);
    for (uint64_t id : {7u, 8u}) {
      v1::EditStreamRequest request;
      request.set_batch_id(id);
      *request.mutable_edits() = Ball(float(id), "stream-" + std::to_string(id));
      ASSERT_TRUE(stream->Write(request));
      v1::EditStreamResponse response;
      ASSERT_TRUE(stream->Read(&response));
      ASSERT_TRUE(response.has_ack()) << response.error().message();
      EXPECT_EQ(response.ack().version(), id - 6);
    }
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
  }
  // A tick batch with edits by the edit token: applied and audited.
  auto tick = [](const std::unique_ptr<client::Client>& client, uint64_t id,
                 v1::QueryBatchResponse* out) {
    auto stub = v1::QueryService::NewStub(client->channel());
    grpc::ClientContext context;
    auto stream = stub->Query(&context);
    v1::QueryBatchRequest batch;
    batch.set_batch_id(id);
    *batch.mutable_edits() = Ball(20, "tick-" + std::to_string(id));
    if (!stream->Write(batch)) return stream->Finish();
    bool read = stream->Read(out);
    stream->WritesDone();
    grpc::Status status = stream->Finish();
    return read && status.ok()
               ? grpc::Status::OK
               : (status.ok() ? grpc::Status(grpc::StatusCode::UNKNOWN, "no answer") : status);
  };
  v1::QueryBatchResponse answer;
  grpc::Status applied = tick(builder, 31, &answer);
  ASSERT_TRUE(applied.ok()) << applied.error_message();
  EXPECT_EQ(answer.edit_ack().version(), 3u);

  // The same from a query token: the stream ends before the batch runs, nothing is applied.
  v1::QueryBatchResponse refused_answer;
  grpc::Status refused = tick(reader, 32, &refused_answer);
  EXPECT_FALSE(refused.ok());
  EXPECT_FALSE(refused_answer.has_edit_ack());
  v1::GetWorldInfoResponse info;
  ASSERT_TRUE(reader->GetWorldInfo(&info).ok());
  EXPECT_EQ(info.version(), 3u);
  server_.Stop();
  EXPECT_NE(server_.Log().find("event=permission_denied"), std::string::npos) << server_.Log();

  std::vector<google::protobuf::Struct> entries = ReadAudit(audit_path);
  ASSERT_EQ(entries.size(), 3u);
  const char* keys[] = {"stream-7", "stream-8", "tick-31"};
  for (int i = 0; i < 3; ++i) {
    const auto& f = entries[i].fields();
    EXPECT_EQ(f.at("event").string_value(), "edit");
    EXPECT_EQ(f.at("identity").string_value(), "builder");
    EXPECT_EQ(f.at("version").number_value(), i + 1);
    const auto& what = f.at("what").struct_value().fields();
    EXPECT_EQ(what.at("edits").struct_value().fields().at("idempotency_key").string_value(),
              keys[i]);
  }
}

// Issue 36: edits are audited when they commit, not when their answer is sent. Four clients
// (two on EditStream, two sending Query tick batches with edits) each write streams of 1-16
// batches, read a random part of the answers and then cancel the call at a random moment (or,
// one time in four, finish it), until 1,200 batches are written. Batches that committed before
// the cancel may never be answered; every one of them must still be in the audit log: the
// non-replayed records hold each world version 1..V exactly once, V being the world's version at
// the end (read after a restart: every committed batch is durable).
TEST_F(SecurityStreamTest, CancelledStreamsAuditEveryCommittedBatchExactlyOnce) {
  const std::string audit_path = dir_.path() + "/audit.jsonl";
  StartServer({"--auth_tokens=" + Cert("tokens"), "--audit_log=" + audit_path});
  auto builder = MakeClient(Security("edit-secret", false));
  constexpr int kBatchesPerClient = 300;
  std::atomic<int> cancelled{0}, answered{0}, total_written{0};

  auto run = [&](int seed, bool tick) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> xz(-24, 24), y(-20, 20);
    auto query = v1::QueryService::NewStub(builder->channel());
    int written = 0;
    uint64_t next_id = 0;
    while (written < kBatchesPerClient) {
      grpc::ClientContext context;
      const int count = 1 + int(rng() % 16);
      v1::ApplyEditsRequest edits;
      auto* ball = edits.add_primitives()->mutable_fill_ball();
      ball->set_radius(1.5f);
      auto fill = [&] {
        ball->mutable_center()->set_x(xz(rng));
        ball->mutable_center()->set_y(y(rng));
        ball->mutable_center()->set_z(xz(rng));
        ball->set_material(2 + rng() % 200);
      };
      int reads = 0;
      const int to_read = int(rng() % uint32_t(count + 1));
      const bool cancel = rng() % 4 != 0;
      // The same steps on either stream: `request` is an empty request, `response` an answer.
      auto drive = [&](auto& stream, auto request, auto response) {
        for (int i = 0; i < count; ++i, ++written) {
          request.set_batch_id(++next_id);
          fill();
          *request.mutable_edits() = edits;
          if (!stream->Write(request)) break;
        }
        while (reads < to_read && stream->Read(&response)) ++reads;
        if (cancel) {
          std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
          context.TryCancel();
        } else {
          stream->WritesDone();
          while (stream->Read(&response)) ++reads;
        }
        (void)stream->Finish();
      };
      if (tick) {
        auto stream = query->Query(&context);
        drive(stream, v1::QueryBatchRequest(), v1::QueryBatchResponse());
      } else {
        auto stream = builder->EditStream(&context);
        drive(stream, v1::EditStreamRequest(), v1::EditStreamResponse());
      }
      cancelled += cancel ? 1 : 0;
      answered += reads;
      total_written += count;
    }
  };
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) clients.emplace_back(run, 100 + c, c % 2 == 1);
  for (std::thread& t : clients) t.join();

  // Batches a cancelled stream had already handed to an edit thread may still commit after its
  // client returned: the world's final version is read after a clean stop (which finishes them
  // and completes the audit log), from the server restarted on its data directory.
  server_.Stop();
  const std::vector<google::protobuf::Struct> entries = ReadAudit(audit_path);
  StartServer({"--auth_tokens=" + Cert("tokens")});
  auto reader = MakeClient(Security("query-secret", false));
  v1::GetWorldInfoResponse info;
  ASSERT_TRUE(reader->GetWorldInfo(&info).ok());
  const uint64_t version = info.version();
  std::vector<uint64_t> audited;
  for (const google::protobuf::Struct& entry : entries) {
    const auto& f = entry.fields();
    if (f.at("event").string_value() != "edit" || f.at("replayed").bool_value()) continue;
    audited.push_back(uint64_t(f.at("version").number_value()));
  }
  std::sort(audited.begin(), audited.end());
  std::printf(
      "%d batches sent, %d streams cancelled, %d answers read, %llu committed, %zu audited\n",
      total_written.load(), cancelled.load(), answered.load(),
      static_cast<unsigned long long>(version), audited.size());
  EXPECT_GT(version, 100u);                       // the cancels left most batches committed
  EXPECT_LT(uint64_t(answered.load()), version);  // some committed batches were never answered
  std::vector<uint64_t> expected(version);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_EQ(audited, expected);
}

}  // namespace
}  // namespace voxcol
