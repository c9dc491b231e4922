// Client values with newlines, quotes and `key=value` text in every logged field (request id,
// checkpoint paths, idempotency keys): the server log and the audit log are parsed back and hold
// exactly the lines and fields the server wrote, each value decoding to the client's text.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "absl/strings/str_split.h"
#include "tests/integration/security_fixture.h"
#include "voxcol/v1/admin_service.grpc.pb.h"
#include "voxcol/v1/edit_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::SecurityFixture;

// One logfmt line after `time level`: key=value pairs, values bare or "quoted" with \" \\ \n \r
// \t \xNN escapes. False if the line is not of that shape or a key repeats.
bool ParseLogfmt(const std::string& line, std::map<std::string, std::string>* fields) {
  size_t i = 0;
  auto skip_spaces = [&] {
    while (i < line.size() && line[i] == ' ') ++i;
  };
  while (true) {
    skip_spaces();
    if (i == line.size()) return true;
    size_t eq = line.find('=', i);
    if (eq == std::string::npos) return false;
    std::string key = line.substr(i, eq - i);
    if (key.empty() || key.find_first_of(" \"") != std::string::npos) return false;
    i = eq + 1;
    std::string value;
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size()) return false;
        char c = line[i++];
        if (c == '"') break;
        if (c != '\\') {
          value += c;
          continue;
        }
        if (i >= line.size()) return false;
        char e = line[i++];
        if (e == 'n')
          value += '\n';
        else if (e == 'r')
          value += '\r';
        else if (e == 't')
          value += '\t';
        else if (e == 'x' && i + 2 <= line.size()) {
          value += char(std::stoi(line.substr(i, 2), nullptr, 16));
          i += 2;
        } else
          value += e;
      }
      if (i < line.size() && line[i] != ' ') return false;
    } else {
      size_t end = line.find(' ', i);
      value = line.substr(i, end == std::string::npos ? std::string::npos : end - i);
      if (value.find('"') != std::string::npos) return false;
      i = end == std::string::npos ? line.size() : end;
    }
    if (!fields->emplace(key, value).second) return false;
  }
}

class SecurityLogTest : public SecurityFixture {};

TEST_F(SecurityLogTest, ClientTextCannotForgeALogLineOrField) {
  const std::string audit_path = dir_.path() + "/audit.jsonl";
  StartServer({"--auth_tokens=" + Cert("tokens"), "--audit_log=" + audit_path});
  auto admin = MakeClient(Security("admin-secret", false));
  auto edit = v1::EditService::NewStub(admin->channel());
  auto admin_stub = v1::AdminService::NewStub(admin->channel());

  // Metadata cannot carry a newline (gRPC refuses it), but quotes, spaces and key=value can.
  const std::string request_id = "r1\" peer=forged code=OK event=rpc x=\"y";
  const std::string newline_dir = "cp\n2026-01-01T00:00:00.000Z INFO event=checkpoint dir=/etc";
  const std::string quoted_dir = "cp2\" version=999 identity=\"root";
  const std::string key = "k\n{\"event\":\"edit\",\"identity\":\"root\"}\" peer=forged";

  // A failing call is logged with its request id and message.
  {
    grpc::ClientContext context;
    context.AddMetadata("x-request-id", request_id);
    v1::FillBallRequest bad;
    bad.set_radius(-1);
    v1::EditAck ack;
    EXPECT_EQ(edit->FillBall(&context, bad, &ack).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  // Checkpoints: the dir is logged (INFO event=checkpoint) and audited.
  for (const std::string& dir : {newline_dir, quoted_dir}) {
    grpc::ClientContext context;
    context.AddMetadata("x-request-id", request_id);
    v1::CreateCheckpointRequest request;
    request.set_dir(dir);
    v1::CreateCheckpointResponse response;
    grpc::Status status = admin_stub->CreateCheckpoint(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  // An edit with a hostile idempotency key, audited.
  {
    grpc::ClientContext context;
    context.AddMetadata("x-request-id", request_id);
    v1::ApplyEditsRequest request;
    request.set_idempotency_key(key);
    auto* ball = request.add_primitives()->mutable_fill_ball();
    ball->mutable_center()->set_y(10);
    ball->set_radius(2);
    ball->set_material(3);
    v1::EditAck ack;
    grpc::Status status = edit->ApplyEdits(&context, request, &ack);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(ack.version(), 1u);
  }
  server_.Stop();

  // The server log: every line is `time LEVEL key=value...` with unique keys.
  const std::regex prefix(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (INFO|WARN|ERROR) (.*)$)");
  int checkpoint_lines = 0, rpc_lines = 0;
  std::vector<std::string> dirs_logged;
  const std::vector<std::string> log_lines = absl::StrSplit(server_.Log(), '\n', absl::SkipEmpty());
  for (const std::string& line : log_lines) {
    if (line.rfind("E1", 0) == 0 || line.rfind("I1", 0) == 0 || line.rfind("W1", 0) == 0) {
      continue;  // gRPC's own log lines
    }
    std::smatch match;
    ASSERT_TRUE(std::regex_match(line, match, prefix)) << "forged or broken line: " << line;
    std::map<std::string, std::string> fields;
    ASSERT_TRUE(ParseLogfmt(match[2], &fields)) << "unparsable or repeated field: " << line;
    ASSERT_TRUE(fields.count("event")) << line;
    EXPECT_EQ(fields.count("x"), 0u) << line;
    if (fields["event"] == "checkpoint") {
      ++checkpoint_lines;
      dirs_logged.push_back(fields["dir"]);
      EXPECT_EQ(fields.size(), 3u) << line;  // event, dir, version
      EXPECT_NE(fields["version"], "999");
    }
    if (fields["event"] == "rpc" && fields["method"] == "/voxcol.v1.EditService/FillBall") {
      ++rpc_lines;
      EXPECT_EQ(fields["request_id"], request_id) << line;
      EXPECT_EQ(fields["code"], "INVALID_ARGUMENT") << line;
      EXPECT_NE(fields["peer"], "forged") << line;
    }
  }
  EXPECT_EQ(checkpoint_lines, 2);
  EXPECT_EQ(rpc_lines, 1);
  ASSERT_EQ(dirs_logged.size(), 2u);
  EXPECT_EQ(dirs_logged[0], dir_.path() + "/backups/" + newline_dir);
  EXPECT_EQ(dirs_logged[1], dir_.path() + "/backups/" + quoted_dir);

  // The audit log: one JSON object per accepted change, values exactly the client's text.
  std::vector<google::protobuf::Struct> entries;
  const std::vector<std::string> audit_lines =
      absl::StrSplit(testing::ReadText(audit_path), '\n', absl::SkipEmpty());
  for (const std::string& line : audit_lines) {
    google::protobuf::Struct entry;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &entry).ok()) << line;
    entries.push_back(entry);
  }
  ASSERT_EQ(entries.size(), 3u);  // two checkpoints and one edit batch
  for (const auto& entry : entries) {
    const auto& f = entry.fields();
    EXPECT_EQ(f.at("identity").string_value(), "operator");
    EXPECT_EQ(f.at("request_id").string_value(), request_id);
    EXPECT_EQ(f.at("peer").string_value().rfind("ipv4:127.0.0.1:", 0), 0u);
  }
  EXPECT_EQ(entries[0].fields().at("event").string_value(), "checkpoint");
  EXPECT_EQ(entries[0].fields().at("what").struct_value().fields().at("dir").string_value(),
            newline_dir);
  EXPECT_EQ(entries[1].fields().at("what").struct_value().fields().at("dir").string_value(),
            quoted_dir);
  EXPECT_EQ(entries[1].fields().at("version").number_value(), 0);
  const auto& edit_entry = entries[2].fields();
  EXPECT_EQ(edit_entry.at("event").string_value(), "edit");
  EXPECT_EQ(edit_entry.at("version").number_value(), 1);
  EXPECT_EQ(edit_entry.at("what").struct_value().fields().at("idempotency_key").string_value(),
            key);
}

}  // namespace
}  // namespace voxcol
