// Streams under authentication: every EditStream batch and the edits of a Query tick batch are
// audited with their author, and a query-role token cannot edit through a tick batch.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace voxcol
